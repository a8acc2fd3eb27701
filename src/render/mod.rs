//! Headless rendering of the timeline, for `sightline render` on servers and in reports.
//!
//! There is no second drawing code: an [`egui::Context`] runs a few frames with no window, and
//! inside a central panel [`crate::timeline::paint_still`] paints the trace with the same model,
//! view and palette the window would use, as the window's timeline looks with nothing selected. What egui paints then goes out
//! either way:
//! - PNG: the shapes are tessellated by egui into triangle meshes and filled by our small
//!   software rasteriser ([`raster`]), using the font atlas egui handed out in its texture
//!   deltas (a full image, then patches, accumulated here);
//! - SVG: the same shapes, before tessellation, written as vectors ([`svg`]).
//!
//! A layer above [`crate::timeline`] and below the command line and the report; it knows
//! nothing of the window.

pub mod raster;
pub mod svg;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::epaint::ClippedShape;
use egui::{Color32, ColorImage, ImageData, Pos2, RawInput, Rect, TextureId, ViewportId, vec2};
use regex::Regex;

use crate::analysis::TimeRange;
use crate::analysis::comm_overlap::{CommTimeline, DEFAULT_COMM_PATTERN, default_comm_regex};
use crate::timeline::{
    self, GroupId, OverlayInput, Overlays, Palette, PaletteKind, PathOverlay, TimelineModel,
    ViewState,
};
use crate::trace::Trace;

/// Image size when none is asked for.
pub const DEFAULT_WIDTH_PX: u32 = 1600;
pub const DEFAULT_HEIGHT_PX: u32 = 900;
/// Smallest image that still leaves room for events right of the row titles and below the axis.
pub const MIN_WIDTH_PX: u32 = timeline::TITLE_WIDTH_PX as u32 + 50;
pub const MIN_HEIGHT_PX: u32 = timeline::AXIS_HEIGHT_PX as u32 + 40;
/// Largest side: keeps the canvas (16 bytes a pixel while drawing) within a few GiB.
pub const MAX_SIDE_PX: u32 = 8192;
/// Frames run before the shapes are taken: the first lays out and fills the font atlas, the
/// second draws with both settled.
const FRAMES: usize = 2;

/// What went wrong rendering a trace.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "image size {width}×{height} px is out of bounds: width {MIN_WIDTH_PX}–{MAX_SIDE_PX}, height {MIN_HEIGHT_PX}–{MAX_SIDE_PX}"
    )]
    Size { width: u32, height: u32 },
    #[error(
        "the range {start_ns}:{end_ns} (ns) does not overlap the trace, which spans {first_ns}:{last_ns}"
    )]
    RangeOutside {
        start_ns: i64,
        end_ns: i64,
        first_ns: i64,
        last_ns: i64,
    },
    #[error("no row title matches '{pattern}'; row titles look like: {examples}")]
    NoRowMatches { pattern: String, examples: String },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot encode the PNG {}: {source}", path.display())]
    Png {
        path: PathBuf,
        source: png::EncodingError,
    },
}

/// What to draw and how big.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub width_px: u32,
    pub height_px: u32,
    /// The visible span; [`TimeRange::ALL`] shows the whole trace as Home does in the window.
    pub range: TimeRange,
    /// Only rows whose title matches (see [`select_rows`]).
    pub rows: Option<Regex>,
    pub dark: bool,
    /// Standard or colour-blind-safe colours.
    pub palette: PaletteKind,
    /// Query results drawn as tracks, first (`--sql-track`).
    pub sql_tracks: Vec<Arc<crate::sql::track::SqlTrack>>,
    /// A path outlined over the rows, with arrows between them (the critical path).
    pub critical_path: Option<PathOverlay>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            width_px: DEFAULT_WIDTH_PX,
            height_px: DEFAULT_HEIGHT_PX,
            range: TimeRange::ALL,
            rows: None,
            dark: true,
            palette: PaletteKind::Standard,
            sql_tracks: Vec::new(),
            critical_path: None,
        }
    }
}

/// One frame of the timeline drawn headlessly: egui's shapes, the textures they sample and the
/// context that can tessellate them.
pub struct RenderedFrame {
    pub width_px: u32,
    pub height_px: u32,
    pub shapes: Vec<ClippedShape>,
    /// The textures as of the last frame (the font atlas is `TextureId::Managed(0)`).
    pub textures: HashMap<TextureId, ColorImage>,
    /// What the window clears to before painting.
    pub background: Color32,
    /// Rows the timeline laid out on screen.
    pub rows_drawn: usize,
    /// Events and merged blocks drawn.
    pub events_drawn: usize,
    pub merged_drawn: usize,
    ctx: egui::Context,
}

impl RenderedFrame {
    /// The frame as pixels: egui tessellates, [`raster`] fills.
    pub fn rasterize(&self) -> raster::Canvas {
        let primitives = self.ctx.tessellate(self.shapes.clone(), 1.0);
        let mut canvas = raster::Canvas::new(
            self.width_px as usize,
            self.height_px as usize,
            self.background,
        );
        canvas.draw(&primitives, &self.textures);
        canvas
    }

    /// The frame as the bytes of a PNG file.
    pub fn png_bytes(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut bytes = Vec::new();
        self.rasterize().write_png(&mut bytes)?;
        Ok(bytes)
    }

    /// The frame as an SVG document.
    pub fn to_svg(&self) -> String {
        svg::to_svg(&self.shapes, self.width_px, self.height_px, self.background)
    }

    /// Writes the PNG to `path`.
    pub fn write_png(&self, path: &Path) -> Result<(), RenderError> {
        let file = std::fs::File::create(path).map_err(|source| RenderError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        self.rasterize()
            .write_png(std::io::BufWriter::new(file))
            .map_err(|source| RenderError::Png {
                path: path.to_path_buf(),
                source,
            })
    }

    /// Writes the SVG to `path`.
    pub fn write_svg(&self, path: &Path) -> Result<(), RenderError> {
        std::fs::write(path, self.to_svg()).map_err(|source| RenderError::Write {
            path: path.to_path_buf(),
            source,
        })
    }
}

/// Draws `trace` as the window's timeline would, with no display.
pub fn render(trace: &Trace, options: &RenderOptions) -> Result<RenderedFrame, RenderError> {
    let (width, height) = (options.width_px, options.height_px);
    if !(MIN_WIDTH_PX..=MAX_SIDE_PX).contains(&width)
        || !(MIN_HEIGHT_PX..=MAX_SIDE_PX).contains(&height)
    {
        return Err(RenderError::Size { width, height });
    }
    let mut model = TimelineModel::new(trace);
    // The window colours communication kernels and adds exposed-communication rows once its
    // worker has computed this with the default pattern; headless, it is computed right away.
    let comm = CommTimeline::new(trace, DEFAULT_COMM_PATTERN, &default_comm_regex());
    model.set_comm(trace, Arc::new(comm));
    let mut view = ViewState::first_view(trace, &model);
    if let Some(pattern) = &options.rows {
        select_rows(&mut model, &mut view, pattern)?;
    }
    if !options.sql_tracks.is_empty() {
        model.set_sql_tracks(options.sql_tracks.clone());
    }
    if options.range != TimeRange::ALL {
        let (start_ns, end_ns) = options.range.resolve(trace.first_ns, trace.last_ns);
        if end_ns <= trace.first_ns || start_ns > trace.last_ns {
            return Err(RenderError::RangeOutside {
                start_ns,
                end_ns,
                first_ns: trace.first_ns,
                last_ns: trace.last_ns,
            });
        }
        view.zoom_to(start_ns as f64, end_ns as f64);
    }

    let ctx = egui::Context::default();
    ctx.set_theme(if options.dark {
        egui::Theme::Dark
    } else {
        egui::Theme::Light
    });
    timeline::fonts::install_cjk_fallback(&ctx);
    let palette = Palette::new(options.dark, options.palette);
    let screen = Rect::from_min_size(Pos2::ZERO, vec2(width as f32, height as f32));
    let mut textures = HashMap::new();
    let mut shapes = Vec::new();
    let mut background = palette.row_even;
    let overlays = Overlays::default();
    let input = OverlayInput {
        overlays: &overlays,
        range: None,
        rulers: &[],
        path: options.critical_path.as_ref(),
    };
    let axis_origin_ns = trace.time_origin_ns();
    let mut drawn = None;
    for _ in 0..FRAMES {
        let output = ctx.run_ui(raw_input(screen), |ui| {
            background = ui.visuals().panel_fill;
            egui::CentralPanel::default()
                .frame(egui::Frame::central_panel(ui.style()).inner_margin(0.0))
                .show(ui, |ui| {
                    let full = ui.available_rect_before_wrap();
                    ui.allocate_rect(full, egui::Sense::hover());
                    drawn = timeline::paint_still(
                        &ui.painter_at(full),
                        trace,
                        &model,
                        &view,
                        full,
                        &palette,
                        &input,
                        axis_origin_ns,
                    );
                });
        });
        apply_texture_deltas(&mut textures, &output.textures_delta);
        shapes = output.shapes;
    }
    Ok(RenderedFrame {
        width_px: width,
        height_px: height,
        shapes,
        textures,
        background,
        rows_drawn: drawn.as_ref().map_or(0, |f| f.rows.len()),
        events_drawn: drawn.as_ref().map_or(0, |f| f.events_drawn),
        merged_drawn: drawn.as_ref().map_or(0, |f| f.merged_drawn),
        ctx,
    })
}

/// The input of a frame with no window: the screen, one pixel per point, no events.
fn raw_input(screen: Rect) -> RawInput {
    let mut input = RawInput {
        screen_rect: Some(screen),
        max_texture_side: Some(MAX_SIDE_PX as usize),
        ..Default::default()
    };
    let viewport = input.viewports.entry(ViewportId::ROOT).or_default();
    viewport.native_pixels_per_point = Some(1.0);
    viewport.inner_rect = Some(screen);
    input
}

/// Does to `textures` what a GPU backend does with its textures: a delta without a position
/// replaces the whole image, one with a position patches it; freed textures go after painting
/// (here: when the next frame's deltas come).
fn apply_texture_deltas(
    textures: &mut HashMap<TextureId, ColorImage>,
    delta: &egui::TexturesDelta,
) {
    for (id, deltas) in &delta.set {
        for d in deltas {
            let ImageData::Color(image) = &d.image;
            match d.pos {
                None => {
                    textures.insert(*id, (**image).clone());
                }
                Some([x0, y0]) => {
                    let Some(target) = textures.get_mut(id) else {
                        continue;
                    };
                    let [tw, th] = target.size;
                    let [pw, ph] = image.size;
                    for y in 0..ph.min(th.saturating_sub(y0)) {
                        for x in 0..pw.min(tw.saturating_sub(x0)) {
                            if let (Some(src), Some(dst)) = (
                                image.pixels.get(y * pw + x),
                                target.pixels.get_mut((y0 + y) * tw + x0 + x),
                            ) {
                                *dst = *src;
                            }
                        }
                    }
                }
            }
        }
    }
    for id in &delta.free {
        if !delta.set.contains_key(id) {
            textures.remove(id);
        }
    }
}

/// Keeps the rows whose title matches `pattern`, and what they need to make sense:
/// - a matching group header (a GPU, a process, a thread, "GPU memory in use", "Metrics") keeps
///   its whole group, opened;
/// - every kept row keeps the headers of its groups, and its groups are opened so it shows.
///
/// The other rows leave the model (the view's row lookups follow), so nothing else changes in how
/// the timeline draws.
pub fn select_rows(
    model: &mut TimelineModel,
    view: &mut ViewState,
    pattern: &Regex,
) -> Result<(), RenderError> {
    let matched: Vec<bool> = model
        .rows
        .iter()
        .map(|r| pattern.is_match(&r.title))
        .collect();
    if !matched.contains(&true) {
        let mut examples: Vec<&str> = Vec::new();
        for r in &model.rows {
            if !examples.contains(&r.title.as_str()) {
                examples.push(&r.title);
            }
            if examples.len() == 6 {
                break;
            }
        }
        return Err(RenderError::NoRowMatches {
            pattern: pattern.as_str().to_string(),
            examples: examples.join(", "),
        });
    }
    let chosen_groups: HashSet<GroupId> = model
        .rows
        .iter()
        .zip(&matched)
        .filter(|(_, m)| **m)
        .filter_map(|(r, _)| r.toggles)
        .collect();
    let mut keep: Vec<bool> = model
        .rows
        .iter()
        .zip(&matched)
        .map(|(r, m)| *m || r.hidden_by.iter().any(|g| chosen_groups.contains(g)))
        .collect();
    let needed_headers: HashSet<GroupId> = model
        .rows
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .flat_map(|(r, _)| r.hidden_by.iter().copied())
        .collect();
    for (r, k) in model.rows.iter().zip(keep.iter_mut()) {
        if r.toggles.is_some_and(|g| needed_headers.contains(&g)) {
            *k = true;
        }
    }
    for (r, _) in model.rows.iter().zip(&matched).filter(|(_, m)| **m) {
        for g in r.hidden_by.iter().chain(r.toggles.as_ref()) {
            view.collapsed.remove(g);
        }
    }
    model.retain_rows(|i, _| keep.get(i).copied().unwrap_or(false));
    Ok(())
}
