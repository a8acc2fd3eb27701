//! The report's pictures, all inline: the timeline as `sightline render` draws it (the window's
//! own drawing, run headlessly by [`crate::render`]) as a PNG `data:` URI, and the bar of idle
//! time by cause as an inline SVG.

use serde::Serialize;

use crate::analysis::TimeRange;
use crate::analysis::gap_causes::{CauseTotal, GapCause};
use crate::analysis::headline::format_ns;
use crate::render::{self, RenderOptions};
use crate::trace::Trace;

/// Size of the timeline pictures (at most: the empty space below the last row is cut).
pub const TIMELINE_WIDTH_PX: u32 = 1400;
pub const TIMELINE_HEIGHT_PX: u32 = 900;

/// A rendered timeline picture.
#[derive(Debug, Clone)]
pub struct Picture {
    pub caption: String,
    /// `data:image/png;base64,…`
    pub data_uri: String,
}

/// Draws `range` of `trace` (light theme: it prints) and returns it as a PNG `data:` URI;
/// `None` (with the reason) when it cannot be drawn.
pub fn timeline_png(trace: &Trace, range: TimeRange) -> Result<String, String> {
    timeline_png_with(trace, range, None)
}

/// As [`timeline_png`], with a critical path outlined (as `sightline render --critical-path`).
pub fn timeline_png_with(
    trace: &Trace,
    range: TimeRange,
    path: Option<&crate::analysis::critical_path::CriticalPath>,
) -> Result<String, String> {
    let options = RenderOptions {
        width_px: TIMELINE_WIDTH_PX,
        height_px: TIMELINE_HEIGHT_PX,
        range,
        dark: false,
        critical_path: path.map(crate::timeline::PathOverlay::of),
        ..Default::default()
    };
    let frame = render::render(trace, &options).map_err(|e| e.to_string())?;
    let canvas = frame.rasterize();
    let rgba = canvas.to_rgba8();
    let width = canvas.width_px;
    let height = drawn_height(&rgba, width * 4, canvas.height_px);
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(&rgba[..width * 4 * height]))
        .map_err(|e| e.to_string())?;
    Ok(format!("data:image/png;base64,{}", base64(&png)))
}

/// The picture's height without the empty rows below the timeline's last row: every pixel row
/// after the last one that differs from the bottom row is the same empty background (and grid
/// lines), cut but for a margin.
fn drawn_height(rgba: &[u8], stride: usize, height: usize) -> usize {
    const MARGIN_PX: usize = 8;
    let row = |y: usize| rgba.get(y * stride..(y + 1) * stride);
    let Some(bottom) = height.checked_sub(1).and_then(row) else {
        return height;
    };
    let last_drawn = (0..height).rev().find(|&y| row(y) != Some(bottom));
    last_drawn.map_or(height, |y| (y + 1 + MARGIN_PX).min(height))
}

/// The span the whole-run picture shows: the report's range when one was given, else the GPU
/// work with 2 % on each side (a Python program's seconds of start-up say nothing about it),
/// else the whole trace.
pub fn whole_run_range(trace: &Trace, range: TimeRange) -> TimeRange {
    if range != TimeRange::ALL {
        return range;
    }
    match trace.gpu_span() {
        Some((a, b)) => {
            let margin = ((b - a) as f64 * 0.02).round() as i64;
            TimeRange::new(a - margin, b + margin)
        }
        None => TimeRange::new(trace.first_ns, trace.last_ns + 1),
    }
}

/// A gap zoomed: the gap in the middle third of the picture.
pub fn around(start_ns: i64, end_ns: i64) -> TimeRange {
    let d = (end_ns - start_ns).max(1);
    TimeRange::new(start_ns - d, end_ns + d)
}

/// Standard base64 (RFC 4648, padded).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Idle time of one cause over all GPUs (the JSON block's `idle_by_cause`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseShare {
    pub cause: &'static str,
    pub gaps: usize,
    pub idle_ns: i64,
}

/// Per cause, in cause order, the gaps and idle time of every GPU together.
pub fn idle_by_cause(totals: &[CauseTotal]) -> Vec<CauseShare> {
    GapCause::ALL
        .iter()
        .filter_map(|&cause| {
            let of: Vec<&CauseTotal> = totals.iter().filter(|t| t.cause == cause).collect();
            (!of.is_empty()).then(|| CauseShare {
                cause: cause.label(),
                gaps: of.iter().map(|t| t.gaps).sum(),
                idle_ns: of.iter().map(|t| t.total_ns).sum(),
            })
        })
        .collect()
}

/// Colour of a cause in the bar.
fn cause_colour(cause: &str) -> &'static str {
    match cause {
        "launch-late" => "#d9534f",
        "launch-overhead" => "#f0ad4e",
        "dependency" => "#5b8dd9",
        "graph-untraced" => "#c9a227",
        _ => "#9a9a9a",
    }
}

/// One horizontal bar, each cause's share of the idle time a segment, with a legend; `None`
/// when there is no idle gap.
pub fn idle_bar_svg(shares: &[CauseShare]) -> Option<String> {
    let total: i64 = shares.iter().map(|s| s.idle_ns).sum();
    if total <= 0 {
        return None;
    }
    let (width, bar_h) = (900.0, 28.0);
    let mut svg = format!(
        "<svg class=\"idle-bar\" width=\"{width}\" height=\"{}\" \
         viewBox=\"0 0 {width} {}\" role=\"img\" aria-label=\"Idle time by cause\">",
        bar_h + 22.0 * shares.len() as f64 + 10.0,
        bar_h + 22.0 * shares.len() as f64 + 10.0
    );
    let mut x = 0.0;
    for s in shares {
        let w = width * s.idle_ns as f64 / total as f64;
        svg.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"{bar_h}\" fill=\"{}\"><title>{}: {}</title></rect>",
            cause_colour(s.cause),
            s.cause,
            format_ns(s.idle_ns as f64)
        ));
        x += w;
    }
    for (i, s) in shares.iter().enumerate() {
        let y = bar_h + 10.0 + 22.0 * i as f64;
        svg.push_str(&format!(
            "<rect x=\"0\" y=\"{y}\" width=\"14\" height=\"14\" fill=\"{}\"/>\
             <text x=\"20\" y=\"{}\" font-size=\"13\">{} — {} in {} gap{} ({:.1} %)</text>",
            cause_colour(s.cause),
            y + 12.0,
            s.cause,
            format_ns(s.idle_ns as f64),
            s.gaps,
            if s.gaps == 1 { "" } else { "s" },
            100.0 * s.idle_ns as f64 / total as f64
        ));
    }
    svg.push_str("</svg>");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_rows_below_the_drawing_are_cut() {
        // 2 px wide, 4 bytes a pixel: rows 0..3 differ, rows 3..20 are the empty pattern.
        let stride = 8;
        let mut rgba = vec![0u8; stride * 20];
        for y in 0..20 {
            rgba[y * stride] = if y < 3 { y as u8 + 1 } else { 9 };
        }
        assert_eq!(drawn_height(&rgba, stride, 20), 3 + 8);
        let flat = vec![7u8; stride * 20];
        assert_eq!(
            drawn_height(&flat, stride, 20),
            20,
            "nothing drawn: kept whole"
        );
        assert_eq!(drawn_height(&[], stride, 0), 0);
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
    }
}
