//! The colours that do not depend on the theme: a kernel's colour from a hash of its name (the
//! same kernel has the same colour in every trace), the communication family of deep crimsons,
//! the colour-blind palette's kernel and communication colours, NVTX colours from their ARGB, and
//! the text colour that reads on a fill.

use std::sync::OnceLock;

use egui::Color32;

use super::colour_vision;
use super::{Palette, PaletteKind};
/// FNV-1a: a hash that does not change between runs or Rust versions, so a kernel keeps its colour.
pub fn stable_hash(text: &str) -> u64 {
    stable_hash_bytes(text.as_bytes())
}

pub(super) fn stable_hash_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The colour-blind palette's communication swatch: Okabe–Ito vermilion (#D55E00), darkened so
/// that it stays apart from the D2D orange for deuteranopes.
pub(super) const COLOUR_BLIND_COMM: Color32 = Color32::from_rgb(178, 79, 0);

/// Smallest ΔE (CIELAB, normal vision, deuteranopia and protanopia) between a colour-blind
/// palette's kernel colour and any of its legend colours or communication colours.
pub const COLOUR_BLIND_KERNEL_MIN_DELTA_E: f32 = 15.0;

/// The colour-blind palette's communication kernels: vermilions (hue 18°–32°) darker and more
/// saturated than its compute kernels, around [`COLOUR_BLIND_COMM`]; white label text.
pub fn colour_blind_comm_colours() -> &'static [Color32] {
    static FAMILY: OnceLock<Vec<Color32>> = OnceLock::new();
    FAMILY.get_or_init(|| {
        let mut family = Vec::new();
        for hue in (18..=32u16).step_by(2) {
            for saturation in [0.9, 0.95, 1.0] {
                for lightness in [0.30, 0.33, 0.36, 0.39] {
                    family.push(hsl(f32::from(hue), saturation, lightness));
                }
            }
        }
        family
    })
}

/// The colour-blind palette's compute-kernel colours for a theme: every colour of a band of
/// hue, saturation 0.3–0.6 and lightness 0.55–0.69 (like [`kernel_color`]'s) that stays at least
/// [`COLOUR_BLIND_KERNEL_MIN_DELTA_E`] from each legend colour of that theme's colour-blind
/// palette and from each communication colour, for normal vision, deuteranopia and protanopia.
pub fn colour_blind_kernel_colours(dark: bool) -> &'static [Color32] {
    static TABLES: OnceLock<[Vec<Color32>; 2]> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        [false, true].map(|dark| {
            use colour_vision::{Vision, lab};
            let palette = Palette::new(dark, PaletteKind::ColourBlind);
            let avoid: Vec<[[f32; 3]; 3]> = palette
                .legend()
                .iter()
                .map(|&(_, c)| c)
                .chain(colour_blind_comm_colours().iter().copied())
                .map(|c| Vision::ALL.map(|v| lab(c, v)))
                .collect();
            let mut colours = Vec::new();
            for hue in (0..360u16).step_by(3) {
                for saturation in [0.3, 0.4, 0.5, 0.6] {
                    for lightness in [0.55, 0.62, 0.69] {
                        let c = hsl(f32::from(hue), saturation, lightness);
                        let seen = Vision::ALL.map(|v| lab(c, v));
                        let clear = avoid.iter().all(|a| {
                            (0..3).all(|v| {
                                let d = (0..3).map(|i| (a[v][i] - seen[v][i]).powi(2)).sum::<f32>();
                                d.sqrt() >= COLOUR_BLIND_KERNEL_MIN_DELTA_E
                            })
                        });
                        if clear {
                            colours.push(c);
                        }
                    }
                }
            }
            colours
        })
    });
    &tables[usize::from(dark)]
}

/// CUDA graph executions traced as a whole: a gold more saturated (0.83) than any kernel colour
/// (at most 0.64) and far from the legend's colours.
pub const GRAPH: Color32 = Color32::from_rgb(214, 162, 20);

/// A stable colour for a kernel name: hue from the hash, saturation and lightness kept in a band
/// where black label text stays readable in both themes.
pub fn kernel_color(name: &str) -> Color32 {
    let h = stable_hash(name);
    let hue = kernel_hue(h);
    let saturation = 0.45 + ((h >> 16) % 20) as f32 / 100.0;
    let lightness = 0.55 + ((h >> 24) % 12) as f32 / 100.0;
    hsl(hue, saturation, lightness)
}

/// Hues the legend gives meaning to, in degrees: the copy directions (H2D blue, D2H green, D2D
/// orange, P2P purple), unified-memory migrations (rose) and communication (crimson, 340°–4°).
/// Kernels never take a hue within [`HUE_MARGIN`] of these, so no kernel reads as a copy.
const LEGEND_HUES: [f32; 6] = [217.0, 134.0, 30.0, 271.0, 333.0, 352.0];
/// Half-width of the band around each legend hue that kernel colours leave free.
pub const HUE_MARGIN: f32 = 16.0;
/// The arc kernel colours leave free between the two blue copy colours, in degrees: from a
/// little before Host→Device blue (217°, whose light sky blues read as it) to past Peer→Peer
/// purple (271°). The blue-violets between the two read as either copy: transformer's kernels
/// were drawn in (94, 94, 217), hue 240°, before this arc was left out.
pub const BLUE_PURPLE_ARC: (f32, f32) = (193.0, 287.0);
/// The greens kernel colours leave free, in degrees (from, to): wider than [`HUE_MARGIN`], as
/// greens from 84° to 162° all read as Device→Host green (134°) — moe's gemm kernels, drawn in
/// a lime (126, 202, 78), hue 97°, between its device-to-host copies, read as copies in a new
/// user's first hour.
pub const GREEN_ARC: (f32, f32) = (84.0, 162.0);
/// The oranges kernel colours leave free: up to 52° they read as Device→Device orange (30°).
pub const ORANGE_ARC: (f32, f32) = (8.0, 52.0);
/// The magentas kernel colours leave free, in degrees: between Peer→Peer purple (271°) and the
/// unified-memory rose (333°) a kernel read as either (cpu_side's `scale` kernel beside the
/// migrations, p2p_2gpu's kernel beside its P2P copies, in a new user's first hour).
pub const MAGENTA_ARC: (f32, f32) = (287.0, 317.0);
/// Circular distance between two hues, in degrees.
pub fn hue_distance(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

/// The hue of a kernel colour for hash `h`: one of the whole degrees outside the legend's bands,
/// chosen by the hash (so a name keeps its hue from run to run).
fn kernel_hue(h: u64) -> f32 {
    let allowed = || {
        (0..360u16).filter(|&d| {
            let d = f32::from(d);
            LEGEND_HUES.iter().all(|&l| hue_distance(d, l) > HUE_MARGIN)
                && [BLUE_PURPLE_ARC, GREEN_ARC, ORANGE_ARC, MAGENTA_ARC]
                    .iter()
                    .all(|&(from, to)| !(from..=to).contains(&d))
        })
    };
    let n = allowed().count().max(1) as u64;
    allowed().nth((h % n) as usize).map_or(0.0, f32::from)
}

/// A stable colour for a communication kernel: hue from 340° (crimson) to 4° (red), saturation 0.82–0.93
/// and lightness 0.36–0.43 — outside the band of [`kernel_color`] (lightness from 0.55,
/// saturation up to 0.64), so communication reads as one family (white label text).
pub fn comm_kernel_color(name: &str) -> Color32 {
    let h = stable_hash(name);
    let hue = (340 + h % 25) as f32 % 360.0;
    let saturation = 0.82 + ((h >> 16) % 12) as f32 / 100.0;
    let lightness = 0.36 + ((h >> 24) % 8) as f32 / 100.0;
    hsl(hue, saturation, lightness)
}

/// NVTX colour from the application's ARGB value; `None` when it set none (0).
pub fn nvtx_color(argb: u32) -> Option<Color32> {
    if argb == 0 {
        return None;
    }
    let [_, r, g, b] = argb.to_be_bytes();
    Some(Color32::from_rgb(r, g, b))
}

/// Black or white, whichever reads better on `background`.
pub fn text_on(background: Color32) -> Color32 {
    let luma = 0.299 * f32::from(background.r())
        + 0.587 * f32::from(background.g())
        + 0.114 * f32::from(background.b());
    if luma > 140.0 {
        Color32::from_rgb(10, 10, 10)
    } else {
        Color32::from_rgb(245, 245, 245)
    }
}

fn hsl(hue: f32, saturation: f32, lightness: f32) -> Color32 {
    let c = (1.0 - (2.0 * lightness - 1.0).abs()) * saturation;
    let hp = hue / 60.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = lightness - c / 2.0;
    let to_u8 = |v: f32| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Color32::from_rgb(to_u8(r), to_u8(g), to_u8(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_colour_is_stable_and_differs_between_names() {
        assert_eq!(kernel_color("gemm_kernel"), kernel_color("gemm_kernel"));
        assert_ne!(kernel_color("gemm_kernel"), kernel_color("softmax_kernel"));
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
    }

    /// Red at least twice green and twice blue: crimson to red, not orange, purple or pink.
    fn deep_red(c: Color32) -> bool {
        u16::from(c.r()) > 2 * u16::from(c.g()) && u16::from(c.r()) > 2 * u16::from(c.b())
    }

    /// Lightness and saturation as HSL computes them from RGB.
    fn lightness_saturation(c: Color32) -> (f32, f32) {
        let [r, g, b] = [c.r(), c.g(), c.b()].map(|v| f32::from(v) / 255.0);
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        let l = (max + min) / 2.0;
        let s = if max == min {
            0.0
        } else {
            (max - min) / (1.0 - (2.0 * l - 1.0).abs())
        };
        (l, s)
    }

    #[test]
    fn comm_colours_are_a_family_apart_from_kernel_and_copy_colours() {
        let names = [
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            "ncclKernel_AllGather",
            "gemm",
            "x",
        ];
        for name in names {
            let comm = comm_kernel_color(name);
            let (l, s) = lightness_saturation(comm);
            assert!((0.34..0.45).contains(&l) && s > 0.78, "{name}: {l} {s}");
            assert!(deep_red(comm), "{name}: {comm:?}");
            let (kl, ks) = lightness_saturation(kernel_color(name));
            assert!(kl > 0.53 && ks < 0.67, "{name}: {kl} {ks}");
        }
        for p in [Palette::dark(), Palette::light()] {
            let copies = [
                p.memcpy_htod,
                p.memcpy_dtoh,
                p.memcpy_dtod,
                p.memcpy_ptop,
                p.memset,
            ];
            assert!(deep_red(p.comm));
            assert!(!copies.into_iter().any(deep_red), "{copies:?}");
        }
    }

    /// Hue of an RGB colour, in degrees.
    fn hue_of(c: Color32) -> f32 {
        let [r, g, b] = [c.r(), c.g(), c.b()].map(|v| f32::from(v) / 255.0);
        let (max, min) = (r.max(g).max(b), r.min(g).min(b));
        let d = max - min;
        if d == 0.0 {
            return 0.0;
        }
        let h = if max == r {
            ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            (b - r) / d + 2.0
        } else {
            (r - g) / d + 4.0
        };
        h * 60.0
    }

    /// No kernel name gets a colour whose hue is near a legend colour's (copy directions,
    /// migrations, communication) in either palette: `add`, once drawn in the P2P purple,
    /// among them. The legend hues are read from the palettes, not from the constant.
    #[test]
    fn kernel_colours_stay_clear_of_the_legends_hues() {
        let mut names: Vec<String> = (0..20_000).map(|i| format!("kernel_{i}")).collect();
        names.extend(["add", "gemm", "softmax_kernel", "elementwise_kernel"].map(String::from));
        for p in [Palette::dark(), Palette::light()] {
            let legend = [
                p.memcpy_htod,
                p.memcpy_dtoh,
                p.memcpy_dtod,
                p.memcpy_ptop,
                p.um_migration,
                p.comm,
            ]
            .map(hue_of);
            // Between the blue copies: none (the arc from H2D blue, less a margin, to P2P purple).
            let (blue, purple) = (hue_of(p.memcpy_htod), hue_of(p.memcpy_ptop));
            for name in &names {
                let k = hue_of(kernel_color(name));
                for l in legend {
                    // Rounding to 8-bit RGB moves a hue by a few degrees at most.
                    assert!(
                        hue_distance(k, l) > HUE_MARGIN - 6.0,
                        "{name}: hue {k} near legend hue {l}"
                    );
                }
                assert!(
                    !(blue - HUE_MARGIN..=purple + HUE_MARGIN - 6.0).contains(&k),
                    "{name}: hue {k} between the blue copy colours {blue} and {purple}"
                );
                // Nor between the P2P purple and the migrations' rose.
                let rose = hue_of(p.um_migration);
                assert!(
                    !(purple..=rose).contains(&k),
                    "{name}: hue {k} between P2P purple {purple} and migration rose {rose}"
                );
            }
        }
        let hues: std::collections::BTreeSet<u32> = names
            .iter()
            .map(|n| hue_of(kernel_color(n)) as u32)
            .collect();
        // Yellows (53°–83°) and teals to cyans (163°–192°) are left: 61 whole degrees, each
        // name's saturation and lightness varying within them.
        assert!(hues.len() > 55, "kernel hues still spread: {}", hues.len());
    }

    /// Communication's hue band (340°–4°) belongs to it alone: no compute kernel and no other
    /// legend colour of the standard palettes has a hue inside it.
    #[test]
    fn the_communication_hue_band_is_communications_alone() {
        // Greys (memset) have no hue.
        let in_band =
            |c: Color32| lightness_saturation(c).1 > 0.1 && hue_distance(hue_of(c), 352.0) <= 12.0;
        for name in ["ncclKernel_AllGather", "cross_device_reduce_1stage", "gemm"] {
            assert!(in_band(comm_kernel_color(name)), "{name}");
        }
        for i in 0..20_000 {
            let c = kernel_color(&format!("kernel_{i}"));
            assert!(!in_band(c), "kernel_{i}: {c:?}");
        }
        for p in [Palette::dark(), Palette::light()] {
            for (name, c) in p.legend() {
                assert_eq!(in_band(c), name == "Communication", "{name}");
            }
            // The standard palette draws kernels in the colours the timeline keeps.
            assert_eq!(p.kernel_fill(Color32::GRAY), Color32::GRAY);
        }
    }

    #[test]
    fn colour_blind_kernel_fills_are_stable_and_keep_communication_apart() {
        for dark in [true, false] {
            let p = Palette::new(dark, PaletteKind::ColourBlind);
            assert!(colour_blind_kernel_colours(dark).len() > 100);
            let gemm = p.kernel_fill(kernel_color("gemm"));
            assert_eq!(gemm, p.kernel_fill(kernel_color("gemm")));
            assert!(colour_blind_kernel_colours(dark).contains(&gemm));
            let nccl = p.kernel_fill(comm_kernel_color("ncclKernel_AllGather"));
            assert!(colour_blind_comm_colours().contains(&nccl));
            assert_eq!(text_on(nccl), Color32::from_rgb(245, 245, 245));
        }
    }

    #[test]
    fn nvtx_colour_uses_rgb_of_argb_and_zero_means_none() {
        assert_eq!(nvtx_color(0), None);
        assert_eq!(
            nvtx_color(0xFF12_3456),
            Some(Color32::from_rgb(0x12, 0x34, 0x56))
        );
    }
}
