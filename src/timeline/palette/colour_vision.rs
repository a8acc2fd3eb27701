//! How a colour looks to a person with red–green colour blindness, and how far apart two colours
//! look: the colour-blind palette picks its kernel colours with this, so that no kernel is drawn
//! in a colour that a deuteranope or protanope would take for a copy direction or communication.
//!
//! Simulation: the matrices of Machado, Oliveira and Fernandes (2009, "A Physiologically-based
//! Model for Simulation of Color Vision Deficiency"), severity 1.0, applied in linear sRGB.
//! Distance: CIE 1976 ΔE in CIELAB (D65), where about 2.3 is a just-noticeable difference.

use egui::Color32;

/// The ways of seeing a palette must work for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vision {
    Normal,
    /// No working M cones (about 5% of men).
    Deuteranopia,
    /// No working L cones (about 1% of men).
    Protanopia,
}

impl Vision {
    pub const ALL: [Vision; 3] = [Vision::Normal, Vision::Deuteranopia, Vision::Protanopia];

    fn matrix(self) -> Option<[[f32; 3]; 3]> {
        match self {
            Vision::Normal => None,
            Vision::Deuteranopia => Some([
                [0.367_322, 0.860_646, -0.227_968],
                [0.280_085, 0.672_501, 0.047_413],
                [-0.011_820, 0.042_940, 0.968_881],
            ]),
            Vision::Protanopia => Some([
                [0.152_286, 1.052_583, -0.204_868],
                [0.114_503, 0.786_281, 0.099_216],
                [-0.003_882, -0.048_116, 1.051_998],
            ]),
        }
    }
}

fn linear(v: u8) -> f32 {
    let c = f32::from(v) / 255.0;
    if c <= 0.040_45 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// CIELAB (D65) of an opaque colour as seen with `vision`.
pub fn lab(color: Color32, vision: Vision) -> [f32; 3] {
    let rgb = [color.r(), color.g(), color.b()].map(linear);
    let [r, g, b] = match vision.matrix() {
        None => rgb,
        Some(m) => {
            m.map(|row| (row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]).clamp(0.0, 1.0))
        }
    };
    let x = (0.412_4 * r + 0.357_6 * g + 0.180_5 * b) / 0.950_47;
    let y = 0.212_6 * r + 0.715_2 * g + 0.072_2 * b;
    let z = (0.019_3 * r + 0.119_2 * g + 0.950_5 * b) / 1.088_83;
    let f = |t: f32| {
        if t > 216.0 / 24_389.0 {
            t.cbrt()
        } else {
            (24_389.0 / 27.0 * t + 16.0) / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// ΔE (CIE 1976) between two colours as seen with `vision`.
pub fn distance(a: Color32, b: Color32, vision: Vision) -> f32 {
    let (la, lb) = (lab(a, vision), lab(b, vision));
    ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt()
}

/// The smallest ΔE between two colours over normal vision, deuteranopia and protanopia.
pub fn worst_distance(a: Color32, b: Color32) -> f32 {
    Vision::ALL
        .into_iter()
        .map(|v| distance(a, b, v))
        .fold(f32::INFINITY, f32::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn white_and_black_have_the_reference_lab_values() {
        let white = lab(Color32::WHITE, Vision::Normal);
        assert!((white[0] - 100.0).abs() < 0.1 && white[1].abs() < 0.1 && white[2].abs() < 0.1);
        assert!(lab(Color32::BLACK, Vision::Normal)[0].abs() < 0.01);
        // Greys look the same to everyone: the matrices keep white white.
        let grey = Color32::from_rgb(128, 128, 128);
        assert!(distance(grey, grey, Vision::Deuteranopia) < 0.01);
        assert!(worst_distance(grey, Color32::from_gray(130)) < 1.5);
    }

    #[test]
    fn red_and_green_collapse_for_the_colour_blind_only() {
        // A red and a green of similar lightness: far apart normally, close without M or L cones.
        let (red, green) = (
            Color32::from_rgb(200, 80, 60),
            Color32::from_rgb(110, 130, 40),
        );
        assert!(distance(red, green, Vision::Normal) > 50.0);
        assert!(distance(red, green, Vision::Deuteranopia) < 15.0);
        assert!(distance(red, green, Vision::Protanopia) < 30.0);
    }
}
