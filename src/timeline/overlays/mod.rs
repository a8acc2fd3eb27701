//! What the analysis side draws over the timeline: the selected time range, time excluded by
//! warm-up exclusion (a grey veil), GPU idle gaps (hatched on their GPU or stream rows), events
//! highlighted from a statistics row, rulers measuring the time between two points, and a path
//! through the trace (the critical path: [`path`]).
//!
//! The state is plain data kept by the window (`ui::timeline::TimelineState`). [`overlay_shapes`]
//! turns it into shapes without a window (like [`super::build_shapes`], so tests can count what is
//! drawn); only the text of the labels waits for [`paint`], which has the fonts. Ruler snapping
//! ([`rulers`]) and the hatch geometry ([`gaps`]) are pure functions tested beside them.

mod gaps;
pub mod path;
mod rulers;

pub use gaps::hatch_lines;
pub use path::{PathMark, PathOverlay, PathRow};
pub use rulers::{Ruler, RulerTool, events_near, snap_to_edges, snapped_time};

use egui::{Align2, FontId, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState, format_duration};
use super::painter::{RowPlacement, event_rect};
use super::palette::Palette;
use super::rows::{EventRef, TimelineModel};
use crate::analysis::gap_causes::{GapCause, GapCauseInfo};
use crate::analysis::{IdleGap, WarmupExclusion, intervals};
use crate::trace::{StreamKey, Trace};

/// Snapping distance of a ruler end to an event edge, in points.
pub const SNAP_PX: f32 = 6.0;
/// Spacing of the hatching lines of idle gaps, in points.
pub const HATCH_STEP_PX: f32 = 6.0;
/// At most this many highlighted events are outlined per frame (those in view).
const MAX_OUTLINED: usize = 4000;
/// Vertical position of the first ruler's measuring line below the top of the event area, and
/// the spacing of the next ones, so coexisting rulers' labels do not overlap.
const RULER_FIRST_Y_PX: f32 = 44.0;
const RULER_SPACING_PX: f32 = 22.0;

/// An idle gap to hatch: on the rows of its GPU (whole-GPU gap) or of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapMark {
    pub device: u32,
    /// `None`: the whole GPU was idle, hatched on its summary row and every stream row of it.
    /// `Some`: one stream was idle, hatched on that stream's row only (not on the summary row,
    /// where other streams may have been busy).
    pub stream: Option<StreamKey>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Why the GPU waited; the hatching takes the cause's colour.
    pub cause: Option<GapCause>,
    /// The cause with what it rests on (launching call, host-time split), for the tooltip.
    pub info: Option<GapCauseInfo>,
}

impl From<&IdleGap> for GapMark {
    fn from(g: &IdleGap) -> Self {
        Self {
            device: g.device,
            stream: g.stream,
            start_ns: g.start_ns,
            end_ns: g.end_ns,
            cause: None,
            info: None,
        }
    }
}

/// The chosen gap's link from the GPU back to the call that launched the work ending it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapLink {
    pub device: u32,
    /// The gap's end: where the next work starts on the GPU.
    pub end_ns: i64,
    pub cause: GapCause,
    /// The launching CUDA call; `None` when the trace has none.
    pub call: Option<EventRef>,
}

/// Everything the analysis asks the timeline to show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlays {
    /// Excluded time (e.g. warm-up), merged intervals `[start, end)`. Shaded over the whole
    /// height rather than per process: a warm-up phase concerns every row of the run, and the
    /// GPU work it launched runs on GPU rows shared by all processes.
    pub excluded: Vec<(i64, i64)>,
    pub gaps: Vec<GapMark>,
    /// Events of the chosen statistics row, outlined.
    pub highlighted: Vec<EventRef>,
    /// The gap chosen in the Gaps tab, joined to its launching call.
    pub gap_link: Option<GapLink>,
    /// CPU samples to outline (indices into `trace.cpu_samples`, sorted): those of the function
    /// chosen in the CPU samples tab.
    pub highlighted_samples: Vec<u32>,
}

impl Overlays {
    /// The shaded time of a warm-up exclusion: its per-process intervals merged.
    pub fn excluded_from(exclusion: &WarmupExclusion) -> Vec<(i64, i64)> {
        intervals::union(
            exclusion
                .intervals
                .iter()
                .map(|i| (i.start_ns, i.end_ns))
                .collect(),
        )
    }

    /// The gaps to hatch for a list of idle gaps, coloured by their causes when given (one per
    /// gap, in the same order).
    pub fn gaps_from(gaps: &[IdleGap], causes: &[GapCauseInfo]) -> Vec<GapMark> {
        gaps.iter()
            .enumerate()
            .map(|(i, g)| GapMark {
                cause: causes.get(i).map(|c| c.cause),
                info: causes.get(i).copied(),
                ..GapMark::from(g)
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.excluded.is_empty()
            && self.gaps.is_empty()
            && self.highlighted.is_empty()
            && self.highlighted_samples.is_empty()
            && self.gap_link.is_none()
    }
}

/// Text an overlay wants drawn; laid out by [`paint`], which has the fonts.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayLabel {
    pub anchor: Pos2,
    pub align: Align2,
    pub text: String,
    /// Drawn on a filled box (ruler labels, readable over any bar).
    pub boxed: bool,
}

/// How many of each overlay a frame drew.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OverlayCounts {
    /// Excluded intervals shaded (those in view).
    pub veils: usize,
    /// Hatched areas: one per gap and row it is drawn on, after merging gaps closer than a
    /// pixel on the same row.
    pub hatched: usize,
    /// Highlighted events outlined.
    pub outlined: usize,
    /// Whether the selected range's band was drawn.
    pub range: bool,
    /// Rulers drawn (the one being placed included).
    pub rulers: usize,
    /// Whether the chosen gap's mark (its point and label at the gap's end) was drawn: only
    /// while that time is in view.
    pub gap_link: bool,
    /// Segments of the path outlined (those in view, on a row on screen).
    pub path_segments: usize,
    /// Arrows drawn between path segments on different rows.
    pub path_arrows: usize,
}

/// The overlay part of a frame.
#[derive(Debug, Clone, Default)]
pub struct OverlayShapes {
    pub shapes: Vec<Shape>,
    pub labels: Vec<OverlayLabel>,
    pub counts: OverlayCounts,
}

/// What to draw over the events in one frame: the panel's overlays and the user's marks.
#[derive(Debug, Clone, Copy)]
pub struct OverlayInput<'a> {
    pub overlays: &'a Overlays,
    /// The selected range `[start, end)`.
    pub range: Option<(i64, i64)>,
    pub rulers: &'a [Ruler],
    /// A path to outline with arrows between its rows (the critical path); `None` draws none.
    pub path: Option<&'a PathOverlay>,
}

/// Shapes of the overlays over the event area `area`, whose rows are placed as `rows`: veils,
/// then hatching, outlines, the path, the range band and the rulers, in drawing order. Headless.
#[allow(clippy::too_many_arguments)]
pub fn overlay_shapes(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    palette: &Palette,
    input: &OverlayInput<'_>,
) -> OverlayShapes {
    let mut out = OverlayShapes::default();
    let map = TimeToX::new(view, area.left(), area.width());
    let x_of = |t: f64| map.left_px + ((t - map.start_ns) * map.px_per_ns) as f32;
    // Clamped to a little beyond the area so huge zooms do not make huge coordinates.
    let x_clamped = |t: f64| x_of(t).clamp(area.left() - 2.0, area.right() + 2.0);
    let visible = |s: i64, e: i64| (e as f64) >= view.start_ns && (s as f64) <= view.end_ns;
    let overlays = input.overlays;

    for &(s, e) in &overlays.excluded {
        if visible(s, e) {
            let r = Rect::from_x_y_ranges(
                x_clamped(s as f64)..=x_clamped(e as f64).max(x_clamped(s as f64) + 1.0),
                area.y_range(),
            );
            out.shapes
                .push(Shape::rect_filled(r, 0.0, palette.excluded_veil));
            out.counts.veils += 1;
        }
    }

    gaps::hatch_gaps(
        trace,
        model,
        &map,
        rows,
        area,
        palette,
        &overlays.gaps,
        &mut out,
    );
    if let Some(link) = &overlays.gap_link {
        gaps::gap_link_shapes(trace, model, view, rows, area, palette, link, &mut out);
    }

    for &e in &overlays.highlighted {
        if out.counts.outlined >= MAX_OUTLINED {
            break;
        }
        if !visible(e.start_ns(trace), e.end_ns(trace)) {
            continue;
        }
        if let Some(r) = event_rect(trace, model, view, rows, area, e) {
            out.shapes.push(Shape::rect_stroke(
                r.expand(1.0),
                0.0,
                Stroke::new(1.5, palette.highlight),
                egui::StrokeKind::Outside,
            ));
            out.counts.outlined += 1;
        }
    }

    out.counts.outlined += super::cpu_row::outline_samples(
        (trace, model),
        &map,
        rows,
        (view.start_ns.floor() as i64, view.end_ns.ceil() as i64 + 1),
        area,
        (&overlays.highlighted_samples, palette.highlight),
        &mut out.shapes,
    );

    if let Some(path) = input.path {
        path::path_shapes(trace, model, view, rows, area, path, &mut out);
    }

    if let Some((s, e)) = input.range
        && visible(s, e)
    {
        let (x0, x1) = (x_clamped(s as f64), x_clamped(e as f64));
        let r = Rect::from_x_y_ranges(x0..=x1, area.y_range());
        out.shapes
            .push(Shape::rect_filled(r, 0.0, palette.range_band));
        for x in [x0, x1] {
            out.shapes.push(Shape::line_segment(
                [Pos2::new(x, area.top()), Pos2::new(x, area.bottom())],
                Stroke::new(1.0, palette.range_edge),
            ));
        }
        out.counts.range = true;
        out.labels.push(OverlayLabel {
            anchor: Pos2::new(
                ((x0.max(area.left()) + x1.min(area.right())) / 2.0).clamp(
                    area.left() + 70.0,
                    (area.right() - 70.0).max(area.left() + 70.0),
                ),
                area.top() + 4.0,
            ),
            align: Align2::CENTER_TOP,
            text: format!("selection {}", format_duration((e - s) as f64)),
            boxed: true,
        });
    }

    let stroke = Stroke::new(1.5, palette.ruler);
    for (n, r) in input.rulers.iter().enumerate() {
        let y = area.top() + RULER_FIRST_Y_PX + RULER_SPACING_PX * n as f32;
        let (a, b) = (x_clamped(r.from_ns), x_clamped(r.to_ns));
        let (a, b) = (a.min(b), a.max(b));
        for x in [a, b] {
            out.shapes.push(Shape::line_segment(
                [Pos2::new(x, area.top()), Pos2::new(x, area.bottom())],
                Stroke::new(1.0, palette.ruler),
            ));
        }
        // The measured line with end ticks.
        out.shapes.push(Shape::line_segment(
            [Pos2::new(a, y), Pos2::new(b, y)],
            stroke,
        ));
        for x in [a, b] {
            out.shapes.push(Shape::line_segment(
                [Pos2::new(x, y - 5.0), Pos2::new(x, y + 5.0)],
                stroke,
            ));
        }
        let mid = (a.max(area.left()) + b.min(area.right())) / 2.0;
        out.labels.push(OverlayLabel {
            anchor: Pos2::new(mid, y - 3.0),
            align: Align2::CENTER_BOTTOM,
            text: r.label(),
            boxed: true,
        });
        out.counts.rulers += 1;
    }
    out
}

/// Paints the overlay shapes and their labels (the text needs the painter's fonts).
pub fn paint(painter: &egui::Painter, overlay: &OverlayShapes, palette: &Palette) {
    painter.extend(overlay.shapes.iter().cloned());
    for label in &overlay.labels {
        let galley =
            painter.layout_no_wrap(label.text.clone(), FontId::proportional(12.0), palette.text);
        let rect = label.align.anchor_size(label.anchor, galley.size());
        if label.boxed {
            painter.rect_filled(rect.expand(2.0), 2.0, palette.ruler_label_bg);
        }
        painter.galley(rect.min, galley, palette.text);
    }
}
