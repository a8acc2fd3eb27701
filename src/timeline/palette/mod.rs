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
mod colours;

pub use colours::*;

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
