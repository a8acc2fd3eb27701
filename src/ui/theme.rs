//! Colours of the timeline and the legend that explains them.
//!
//! Memory copies are coloured by direction (the convention of nsys-ui: host→device blue,
//! device→host green, device→device orange, peer→peer purple, memset grey), kernels by a colour
//! derived from a hash of their name so the same kernel has the same colour in every trace, and
//! NVTX ranges by the ARGB colour the application gave them when it gave one. Communication
//! kernels (NCCL, or what the Overlap tab's regex names) get their own family of deep crimsons,
//! darker and more saturated than any hashed kernel colour and unlike every copy direction.
//!
//! Each theme has a second, colour-blind-safe palette ([`PaletteKind::ColourBlind`]): its copy
//! directions, memset, API calls and gap causes are taken from Okabe and Ito's palette (2008),
//! their lightness tuned so that every pair of legend colours stays apart for deuteranopes and
//! protanopes, and its kernels take colours picked ([`colour_vision`]) to look unlike every legend
//! colour to them too.

pub mod colour_vision;

use std::sync::OnceLock;

use egui::Color32;
use serde::{Deserialize, Serialize};

use crate::analysis::gap_causes::GapCause;
use crate::trace::CopyKind;

/// Which set of colours the window paints with (one of each per theme).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum PaletteKind {
    /// nsys-ui's conventions: H2D blue, D2H green, D2D orange, P2P purple.
    #[default]
    Standard,
    /// Okabe–Ito based: every legend colour and kernel colour stays distinguishable with
    /// deuteranopia or protanopia.
    ColourBlind,
}

impl PaletteKind {
    /// The name a menu shows.
    pub fn label(self) -> &'static str {
        match self {
            PaletteKind::Standard => "Standard colours",
            PaletteKind::ColourBlind => "Colour-blind-safe colours",
        }
    }

    fn memory_id() -> egui::Id {
        egui::Id::unique("sightline_palette_kind")
    }

    /// The kind chosen in this window (kept in egui's memory, persisted with it when eframe
    /// persists). Until one is chosen: `SIGHTLINE_PALETTE=colour-blind` in the environment picks
    /// the colour-blind palette, anything else the standard one.
    pub fn current(ctx: &egui::Context) -> Self {
        ctx.data_mut(|d| {
            d.get_persisted::<PaletteKind>(Self::memory_id())
                .unwrap_or_else(|| {
                    let kind = Self::from_env();
                    d.insert_persisted(Self::memory_id(), kind);
                    kind
                })
        })
    }

    /// Chooses the kind for this window (what a menu toggle calls).
    pub fn set(ctx: &egui::Context, kind: PaletteKind) {
        ctx.data_mut(|d| d.insert_persisted(Self::memory_id(), kind));
    }

    fn from_env() -> Self {
        match std::env::var("SIGHTLINE_PALETTE") {
            Ok(v) if matches!(v.as_str(), "colour-blind" | "color-blind" | "colourblind") => {
                PaletteKind::ColourBlind
            }
            _ => PaletteKind::Standard,
        }
    }
}

/// The colours one frame paints with; one set per theme (dark, light) and [`PaletteKind`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Palette {
    pub dark: bool,
    pub kind: PaletteKind,
    pub row_even: Color32,
    pub row_odd: Color32,
    pub header_row: Color32,
    pub text: Color32,
    pub weak_text: Color32,
    /// Text drawn on top of a coloured bar.
    pub bar_text: Color32,
    pub grid_line: Color32,
    pub memcpy_htod: Color32,
    pub memcpy_dtoh: Color32,
    pub memcpy_dtod: Color32,
    pub memcpy_ptop: Color32,
    pub memcpy_other: Color32,
    pub memset: Color32,
    /// Communication: the legend's swatch and the exposed-communication rows.
    pub comm: Color32,
    pub api_call: Color32,
    pub api_sync: Color32,
    pub osrt: Color32,
    pub nvtx_default: Color32,
    /// Merged blocks of kernels (too many within one pixel to tell apart).
    pub merged: Color32,
    pub memory_fill: Color32,
    pub memory_line: Color32,
    pub selection: Color32,
    pub search_match: Color32,
    pub correlation_line: Color32,
    pub zoom_band: Color32,
    /// Veil over time excluded by warm-up exclusion.
    pub excluded_veil: Color32,
    /// Hatching of GPU idle gaps.
    pub gap_hatch: Color32,
    /// Outline of events of the chosen statistics row.
    pub highlight: Color32,
    /// The selected time range and its edges.
    pub range_band: Color32,
    pub range_edge: Color32,
    pub ruler: Color32,
    pub ruler_label_bg: Color32,
    /// A thread's running intervals (the strip on its CPU row).
    pub thread_running: Color32,
    /// A CPU sample's tick.
    pub sample_tick: Color32,
    /// Unified-memory migrations (memcpy copyKind 11–13), apart from the copy directions: they
    /// are the driver moving pages, not a copy the program asked for.
    pub um_migration: Color32,
    /// Unified-memory page faults (CPU and GPU), in the migrations' family.
    pub um_fault: Color32,
}

impl Palette {
    pub fn dark() -> Self {
        Self {
            dark: true,
            kind: PaletteKind::Standard,
            row_even: Color32::from_rgb(27, 29, 33),
            row_odd: Color32::from_rgb(33, 35, 40),
            header_row: Color32::from_rgb(44, 47, 54),
            text: Color32::from_rgb(225, 228, 232),
            weak_text: Color32::from_rgb(150, 155, 162),
            bar_text: Color32::from_rgb(12, 12, 12),
            grid_line: Color32::from_rgba_unmultiplied(255, 255, 255, 22),
            memcpy_htod: Color32::from_rgb(66, 135, 245),
            memcpy_dtoh: Color32::from_rgb(60, 179, 88),
            memcpy_dtod: Color32::from_rgb(245, 145, 40),
            memcpy_ptop: Color32::from_rgb(163, 92, 230),
            memcpy_other: Color32::from_rgb(120, 170, 200),
            memset: Color32::from_rgb(150, 150, 150),
            comm: Color32::from_rgb(200, 24, 72),
            api_call: Color32::from_rgb(70, 180, 190),
            api_sync: Color32::from_rgb(215, 90, 90),
            osrt: Color32::from_rgb(176, 140, 100),
            nvtx_default: Color32::from_rgb(130, 140, 155),
            merged: Color32::from_rgb(170, 180, 80),
            memory_fill: Color32::from_rgba_unmultiplied(90, 160, 230, 90),
            memory_line: Color32::from_rgb(110, 180, 250),
            selection: Color32::from_rgb(255, 230, 0),
            search_match: Color32::from_rgb(255, 80, 200),
            correlation_line: Color32::from_rgb(255, 230, 0),
            zoom_band: Color32::from_rgba_unmultiplied(100, 160, 255, 60),
            excluded_veil: Color32::from_rgba_unmultiplied(0, 0, 0, 150),
            gap_hatch: Color32::from_rgb(230, 70, 70),
            highlight: Color32::from_rgb(80, 255, 220),
            range_band: Color32::from_rgba_unmultiplied(255, 255, 255, 28),
            range_edge: Color32::from_rgb(240, 240, 240),
            ruler: Color32::from_rgb(255, 200, 40),
            ruler_label_bg: Color32::from_rgba_unmultiplied(20, 20, 20, 220),
            thread_running: Color32::from_rgb(190, 172, 104),
            sample_tick: Color32::from_rgb(205, 208, 215),
            um_migration: Color32::from_rgb(236, 128, 166),
            um_fault: Color32::from_rgb(222, 92, 160),
        }
    }

    pub fn light() -> Self {
        Self {
            dark: false,
            kind: PaletteKind::Standard,
            row_even: Color32::from_rgb(250, 250, 251),
            row_odd: Color32::from_rgb(240, 241, 244),
            header_row: Color32::from_rgb(222, 225, 231),
            text: Color32::from_rgb(25, 27, 30),
            weak_text: Color32::from_rgb(95, 100, 108),
            bar_text: Color32::from_rgb(10, 10, 10),
            grid_line: Color32::from_rgba_unmultiplied(0, 0, 0, 28),
            memcpy_htod: Color32::from_rgb(60, 125, 235),
            memcpy_dtoh: Color32::from_rgb(50, 165, 75),
            memcpy_dtod: Color32::from_rgb(240, 135, 30),
            memcpy_ptop: Color32::from_rgb(150, 80, 215),
            memcpy_other: Color32::from_rgb(110, 160, 190),
            memset: Color32::from_rgb(155, 155, 155),
            comm: Color32::from_rgb(190, 20, 65),
            api_call: Color32::from_rgb(60, 170, 180),
            api_sync: Color32::from_rgb(210, 80, 80),
            osrt: Color32::from_rgb(170, 130, 90),
            nvtx_default: Color32::from_rgb(150, 160, 175),
            merged: Color32::from_rgb(140, 150, 50),
            memory_fill: Color32::from_rgba_unmultiplied(60, 125, 235, 70),
            memory_line: Color32::from_rgb(40, 100, 210),
            selection: Color32::from_rgb(230, 120, 0),
            search_match: Color32::from_rgb(220, 0, 160),
            correlation_line: Color32::from_rgb(230, 120, 0),
            zoom_band: Color32::from_rgba_unmultiplied(60, 120, 230, 50),
            excluded_veil: Color32::from_rgba_unmultiplied(120, 120, 120, 110),
            gap_hatch: Color32::from_rgb(210, 40, 40),
            highlight: Color32::from_rgb(0, 150, 130),
            range_band: Color32::from_rgba_unmultiplied(0, 0, 0, 22),
            range_edge: Color32::from_rgb(40, 40, 40),
            ruler: Color32::from_rgb(200, 120, 0),
            ruler_label_bg: Color32::from_rgba_unmultiplied(255, 255, 255, 230),
            thread_running: Color32::from_rgb(176, 160, 98),
            sample_tick: Color32::from_rgb(70, 74, 84),
            um_migration: Color32::from_rgb(212, 84, 138),
            um_fault: Color32::from_rgb(176, 40, 120),
        }
    }

    /// Background of the `n`-th visible row: headers stand out, other rows alternate.
    pub fn row_background(&self, is_header: bool, n: usize) -> Color32 {
        if is_header {
            self.header_row
        } else if n.is_multiple_of(2) {
            self.row_even
        } else {
            self.row_odd
        }
    }

    /// The standard palette of a theme.
    pub fn for_dark_mode(dark: bool) -> Self {
        Self::new(dark, PaletteKind::Standard)
    }

    /// The palette this `ui` paints with: its theme, and the kind chosen for the window
    /// ([`PaletteKind::current`]).
    pub fn for_ui(ui: &egui::Ui) -> Self {
        Self::new(ui.visuals().dark_mode, PaletteKind::current(ui.ctx()))
    }

    /// The palette of a theme (`dark` or light) and kind.
    pub fn new(dark: bool, kind: PaletteKind) -> Self {
        match (dark, kind) {
            (true, PaletteKind::Standard) => Self::dark(),
            (false, PaletteKind::Standard) => Self::light(),
            (true, PaletteKind::ColourBlind) => Self::colour_blind_dark(),
            (false, PaletteKind::ColourBlind) => Self::colour_blind_light(),
        }
    }

    /// The colour-blind-safe palette on the dark theme. Okabe–Ito hues: H2D blue (#0072B2),
    /// D2H bluish green, D2D orange (#E69F00), P2P reddish purple, unified memory yellow,
    /// communication a dark vermilion; their lightness set so that every pair of legend
    /// colours is at least ΔE 20 apart for deuteranopes and protanopes, and each stands out
    /// from the row background.
    pub fn colour_blind_dark() -> Self {
        let sky = Color32::from_rgb(86, 180, 233);
        Self {
            kind: PaletteKind::ColourBlind,
            memcpy_htod: Color32::from_rgb(0, 114, 178),
            memcpy_dtoh: Color32::from_rgb(0, 250, 182),
            memcpy_dtod: Color32::from_rgb(230, 159, 0),
            memcpy_ptop: Color32::from_rgb(214, 148, 185),
            memcpy_other: Color32::from_rgb(160, 175, 190),
            memset: Color32::from_rgb(105, 105, 105),
            comm: COLOUR_BLIND_COMM,
            api_call: sky,
            api_sync: Color32::from_rgb(213, 94, 0),
            osrt: Color32::from_rgb(176, 160, 130),
            um_migration: Color32::from_rgb(245, 237, 127),
            um_fault: Color32::from_rgb(240, 228, 66),
            memory_fill: Color32::from_rgba_unmultiplied(86, 180, 233, 90),
            gap_hatch: Color32::from_rgb(235, 235, 235),
            memory_line: sky,
            ..Self::dark()
        }
    }

    /// The colour-blind-safe palette on the light theme (see [`Palette::colour_blind_dark`]).
    pub fn colour_blind_light() -> Self {
        Self {
            kind: PaletteKind::ColourBlind,
            memcpy_htod: Color32::from_rgb(0, 114, 178),
            memcpy_dtoh: Color32::from_rgb(0, 209, 152),
            memcpy_dtod: Color32::from_rgb(230, 159, 0),
            memcpy_ptop: Color32::from_rgb(203, 118, 165),
            memcpy_other: Color32::from_rgb(120, 140, 160),
            memset: Color32::from_rgb(94, 94, 94),
            comm: COLOUR_BLIND_COMM,
            api_call: Color32::from_rgb(86, 180, 233),
            api_sync: Color32::from_rgb(213, 94, 0),
            osrt: Color32::from_rgb(160, 140, 105),
            um_migration: Color32::from_rgb(245, 237, 127),
            um_fault: Color32::from_rgb(200, 185, 20),
            memory_fill: Color32::from_rgba_unmultiplied(0, 114, 178, 70),
            gap_hatch: Color32::from_rgb(35, 35, 35),
            memory_line: Color32::from_rgb(0, 114, 178),
            ..Self::light()
        }
    }

    /// Fill of a kernel whose standard colour — [`kernel_color`] or, for communication,
    /// [`comm_kernel_color`], which the timeline keeps per name — is `standard`. The standard
    /// palette draws it as it is; the colour-blind one swaps it for a colour of its own
    /// families, chosen by that colour (so a name keeps its colour): communication's crimsons
    /// (HSL lightness below ½, every compute kernel colour is above) for its vermilions,
    /// every other kernel for one of [`colour_blind_kernel_colours`].
    pub fn kernel_fill(&self, standard: Color32) -> Color32 {
        if self.kind == PaletteKind::Standard {
            return standard;
        }
        let h = stable_hash_bytes(&[standard.r(), standard.g(), standard.b()]);
        let lightness_x2 = u16::from(standard.r().max(standard.g()).max(standard.b()))
            + u16::from(standard.r().min(standard.g()).min(standard.b()));
        let family = if lightness_x2 < 255 {
            colour_blind_comm_colours()
        } else {
            colour_blind_kernel_colours(self.dark)
        };
        if family.is_empty() {
            return standard;
        }
        family[(h % family.len() as u64) as usize]
    }

    /// Colour of a memory copy of this direction.
    pub fn memcpy(&self, kind: CopyKind) -> Color32 {
        match kind.0 {
            1 => self.memcpy_htod,
            2 => self.memcpy_dtoh,
            8 => self.memcpy_dtod,
            10 => self.memcpy_ptop,
            11..=13 => self.um_migration,
            _ => self.memcpy_other,
        }
    }

    /// Hatching of an idle gap of this cause (`None`: causes not computed), one hue per cause,
    /// away from the copy-direction colours of the GPU rows.
    pub fn gap_cause(&self, cause: Option<GapCause>) -> Color32 {
        let (dark, light) = match (self.kind, cause) {
            (_, None) => return self.gap_hatch,
            (PaletteKind::Standard, Some(GapCause::LaunchLate)) => ((235, 75, 75), (205, 35, 35)),
            (PaletteKind::Standard, Some(GapCause::LaunchOverhead)) => {
                ((240, 205, 60), (185, 140, 0))
            }
            (PaletteKind::Standard, Some(GapCause::Dependency)) => ((70, 215, 235), (0, 145, 170)),
            // Hatching in near-white (near-black on light), Okabe–Ito yellow and sky blue: apart
            // in lightness as well as hue, and none the communication vermilion.
            (PaletteKind::ColourBlind, Some(GapCause::LaunchLate)) => {
                ((235, 235, 235), (35, 35, 35))
            }
            (PaletteKind::ColourBlind, Some(GapCause::LaunchOverhead)) => {
                ((240, 228, 66), (190, 170, 0))
            }
            (PaletteKind::ColourBlind, Some(GapCause::Dependency)) => {
                ((86, 180, 233), (0, 114, 178))
            }
            // Lime for a graph the export lost: the graph executions' own gold would be too near
            // launch-overhead's yellow.
            (PaletteKind::Standard, Some(GapCause::UntracedGraph)) => {
                ((165, 230, 60), (85, 145, 0))
            }
            // Okabe–Ito reddish purple.
            (PaletteKind::ColourBlind, Some(GapCause::UntracedGraph)) => {
                ((204, 121, 167), (160, 60, 120))
            }
            (_, Some(GapCause::Unknown)) => ((175, 175, 175), (110, 110, 110)),
        };
        let (r, g, b) = if self.dark { dark } else { light };
        Color32::from_rgb(r, g, b)
    }

    /// The legend: what each colour of a GPU row means.
    pub fn legend(&self) -> [(&'static str, Color32); 7] {
        [
            ("Host to Device", self.memcpy_htod),
            ("Device to Host", self.memcpy_dtoh),
            ("Device to Device", self.memcpy_dtod),
            ("Peer to Peer", self.memcpy_ptop),
            ("memset", self.memset),
            ("Unified memory migration", self.um_migration),
            ("Communication", self.comm),
        ]
    }
}

/// FNV-1a: a hash that does not change between runs or Rust versions, so a kernel keeps its colour.
pub fn stable_hash(text: &str) -> u64 {
    stable_hash_bytes(text.as_bytes())
}

fn stable_hash_bytes(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The colour-blind palette's communication swatch: Okabe–Ito vermilion (#D55E00), darkened so
/// that it stays apart from the D2D orange for deuteranopes.
const COLOUR_BLIND_COMM: Color32 = Color32::from_rgb(178, 79, 0);

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
