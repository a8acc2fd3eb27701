//! What the analysis side draws over the timeline: the selected time range, time excluded by
//! warm-up exclusion (a grey veil), GPU idle gaps (hatched on their GPU or stream rows), events
//! highlighted from a statistics row, and rulers measuring the time between two points.
//!
//! The state is plain data kept in [`super::TimelineState`]. [`overlay_shapes`] turns it into
//! shapes without a window (like [`super::build_shapes`], so tests can count what is drawn);
//! only the text of the labels waits for [`paint`], which has the fonts. Ruler snapping and the
//! hatch geometry are pure functions tested below.

use egui::{Align2, FontId, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState, format_duration};
use super::painter::{RowPlacement, event_at, event_rect, row_lanes};
use super::rows::{EventRef, RowKind, TimelineModel};
use crate::analysis::gap_causes::{GapCause, GapCauseInfo};
use crate::analysis::{IdleGap, WarmupExclusion, intervals};
use crate::index::LodItem;
use crate::trace::{StreamKey, Trace};
use crate::ui::theme::Palette;

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

/// A measurement between two instants, anchored in time (it stays put while zooming/panning).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ruler {
    pub from_ns: f64,
    pub to_ns: f64,
}

impl Ruler {
    pub fn delta_ns(&self) -> f64 {
        (self.to_ns - self.from_ns).abs()
    }

    /// "Δt 1.234 ms".
    pub fn label(&self) -> String {
        format!("Δt {}", format_duration(self.delta_ns()))
    }
}

/// The ruler tool's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RulerTool {
    /// R toggles it; while on, clicks place ruler ends instead of selecting.
    pub active: bool,
    /// First end of the ruler being placed.
    pub pending_ns: Option<f64>,
    pub rulers: Vec<Ruler>,
}

impl RulerTool {
    /// Places one end at `t_ns`; the second end completes a ruler.
    pub fn click(&mut self, t_ns: f64) {
        match self.pending_ns.take() {
            None => self.pending_ns = Some(t_ns),
            Some(from) => self.rulers.push(Ruler {
                from_ns: from,
                to_ns: t_ns,
            }),
        }
    }

    pub fn clear(&mut self) {
        self.pending_ns = None;
        self.rulers.clear();
    }
}

/// The edge (start or end, ns) of `candidates` nearest to `t_ns` within `max_ns`, else `t_ns`.
pub fn snap_to_edges(t_ns: f64, candidates: &[(i64, i64)], max_ns: f64) -> f64 {
    let mut best = t_ns;
    let mut best_d = max_ns;
    for &(s, e) in candidates {
        for edge in [s as f64, e as f64] {
            let d = (edge - t_ns).abs();
            if d <= best_d {
                best_d = d;
                best = edge;
            }
        }
    }
    best
}

/// The events of the row under `pos` that start or end within `radius_px` of it, as
/// `(start_ns, end_ns)`; the candidates a ruler end snaps to.
pub fn events_near(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    pos: Pos2,
    radius_px: f32,
) -> Vec<(i64, i64)> {
    let Some(placement) = rows
        .iter()
        .find(|p| pos.y >= p.top && pos.y < p.top + p.height)
    else {
        return Vec::new();
    };
    let Some(row) = model.rows.get(placement.row) else {
        return Vec::new();
    };
    let map = TimeToX::new(view, area.left(), area.width());
    let t = map.t(pos.x);
    let reach = f64::from(radius_px) * map.ns_per_px();
    let (t0, t1) = ((t - reach).floor() as i64, (t + reach).ceil() as i64 + 1);
    // Blocks narrower than a pixel come out merged: their edges are not resolvable anyway.
    let merge_below = (map.ns_per_px().floor() as i64).max(1);
    let mut out = Vec::new();
    for (slice, kind) in row_lanes(trace, row.kind) {
        if slice.is_empty() {
            continue;
        }
        let spans = super::rows::spans_of(trace, kind);
        let starts = &spans.start_ns[slice.range.clone()];
        let ends = &spans.end_ns[slice.range.clone()];
        slice
            .index
            .walk(starts, ends, t0, t1, merge_below, &mut |item| {
                if let LodItem::Event(i) = item {
                    out.push((starts[i], ends[i]));
                }
            });
    }
    out
}

/// Ruler end for a click at `pos`: the nearest edge of an event in the row under the pointer
/// within [`SNAP_PX`], else the pointer's own time.
pub fn snapped_time(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    pos: Pos2,
) -> f64 {
    let map = TimeToX::new(view, area.left(), area.width());
    let mut candidates = events_near(trace, model, view, rows, area, pos, SNAP_PX);
    // The event under the pointer even when both its edges are farther than the snap reach
    // is no candidate: a click in the middle of a long kernel measures from that instant.
    if candidates.is_empty()
        && let Some(e) = event_at(trace, model, view, rows, area, pos)
    {
        candidates.push((e.start_ns(trace), e.end_ns(trace)));
    }
    snap_to_edges(
        map.t(pos.x),
        &candidates,
        f64::from(SNAP_PX) * map.ns_per_px(),
    )
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
}

/// Shapes of the overlays over the event area `area`, whose rows are placed as `rows`: veils,
/// then hatching, outlines, the range band and the rulers, in drawing order. Headless.
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

    hatch_gaps(
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
        gap_link_shapes(trace, model, view, rows, area, palette, link, &mut out);
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

/// Hatches each gap on the rows it concerns; on one row, gaps closer than a pixel are drawn
/// as one area, so a zoomed-out view costs at most one hatched area per pixel of width.
#[allow(clippy::too_many_arguments)]
fn hatch_gaps(
    trace: &Trace,
    model: &TimelineModel,
    map: &TimeToX,
    rows: &[RowPlacement],
    area: Rect,
    palette: &Palette,
    gaps: &[GapMark],
    out: &mut OverlayShapes,
) {
    if gaps.is_empty() {
        return;
    }
    let x_of = |t: i64| map.x(t).clamp(area.left() - 2.0, area.right() + 2.0);
    for p in rows {
        let Some(row) = model.rows.get(p.row) else {
            continue;
        };
        let on_row = |gap: &GapMark| match row.kind {
            RowKind::GpuSummary { device } => device == gap.device && gap.stream.is_none(),
            RowKind::Stream { stream } => trace.streams.get(stream).is_some_and(|s| {
                s.key.device == gap.device && gap.stream.is_none_or(|k| k == s.key)
            }),
            _ => false,
        };
        // Spans by cause (then x), so gaps closer than a pixel merge only with their own cause.
        let mut spans: Vec<(Option<GapCause>, f32, f32)> = gaps
            .iter()
            .filter(|g| on_row(g))
            .map(|g| (g.cause, x_of(g.start_ns), x_of(g.end_ns)))
            .filter(|&(_, x0, x1)| x1 >= area.left() && x0 <= area.right())
            .collect();
        if spans.is_empty() {
            continue;
        }
        spans.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut merged: Vec<(Option<GapCause>, f32, f32)> = Vec::with_capacity(spans.len());
        for (cause, x0, x1) in spans {
            match merged.last_mut() {
                Some(last) if last.0 == cause && x0 <= last.2 + 1.0 => last.2 = last.2.max(x1),
                _ => merged.push((cause, x0, x1)),
            }
        }
        let top = p.top.max(area.top());
        let bottom = (p.top + p.height).min(area.bottom());
        if bottom <= top {
            continue;
        }
        for (cause, x0, x1) in merged {
            let color = palette.gap_cause(cause);
            let r = Rect::from_x_y_ranges(x0..=x1.max(x0 + 1.0), top..=bottom);
            out.shapes
                .push(Shape::rect_filled(r, 0.0, color.gamma_multiply(0.25)));
            let stroke = Stroke::new(1.0, color);
            out.shapes.extend(
                hatch_lines(r, HATCH_STEP_PX)
                    .into_iter()
                    .map(|l| Shape::line_segment(l, stroke)),
            );
            out.counts.hatched += 1;
        }
    }
}

/// A line in the cause's colour from the gap's end on its GPU row back to the launching call,
/// with the cause as its label; when the call's row is hidden, the label says so.
#[allow(clippy::too_many_arguments)]
fn gap_link_shapes(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    palette: &Palette,
    link: &GapLink,
    out: &mut OverlayShapes,
) {
    let Some(gpu_row) = rows.iter().find(|p| {
        model.rows.get(p.row).is_some_and(
            |r| matches!(r.kind, RowKind::GpuSummary { device } if device == link.device),
        )
    }) else {
        return;
    };
    let map = TimeToX::new(view, area.left(), area.width());
    // Where the gap is, in view or not: a mark off-screen is not drawn at the edge (it would
    // claim a time it is not at); the line to its call is clipped by the painter.
    let gpu = Pos2::new(map.x(link.end_ns), gpu_row.top + gpu_row.height / 2.0);
    let gpu_in_view = gpu.x >= area.left() && gpu.x <= area.right();
    let color = palette.gap_cause(Some(link.cause));
    let stroke = Stroke::new(2.0, color);
    let call_rect = link
        .call
        .and_then(|c| event_rect(trace, model, view, rows, area, c));
    if let Some(r) = call_rect {
        let call = Pos2::new(r.left(), r.center().y);
        if let Some(line) = clip_to_x(gpu, call, area.left() - 2.0, area.right() + 2.0) {
            out.shapes.push(Shape::line_segment(line, stroke));
        }
        if call.x >= area.left() && call.x <= area.right() {
            out.shapes.push(Shape::circle_filled(call, 3.5, color));
        }
        out.shapes.push(Shape::rect_stroke(
            r.expand(1.5),
            0.0,
            stroke,
            egui::StrokeKind::Outside,
        ));
    }
    if !gpu_in_view {
        return;
    }
    out.shapes.push(Shape::circle_filled(gpu, 3.5, color));
    out.counts.gap_link = true;
    let text = match (link.call, call_rect) {
        (None, _) => format!("{}: no launching call in the trace", link.cause.label()),
        (Some(_), None) => format!("{}: the launching call's row is hidden", link.cause.label()),
        (Some(c), Some(_)) => format!("{} · {}", link.cause.label(), c.name(trace)),
    };
    out.labels.push(OverlayLabel {
        // Below the point: the GPU header is often the top row, with no room above it.
        anchor: Pos2::new(gpu.x + 6.0, gpu.y + 6.0),
        align: Align2::LEFT_TOP,
        text,
        boxed: true,
    });
}

/// The part of the segment `a`–`b` with x in `[x0, x1]`, if any.
fn clip_to_x(a: Pos2, b: Pos2, x0: f32, x1: f32) -> Option<[Pos2; 2]> {
    let (a, b) = if a.x <= b.x { (a, b) } else { (b, a) };
    if b.x < x0 || a.x > x1 {
        return None;
    }
    let at = |x: f32| {
        if (b.x - a.x).abs() < f32::EPSILON {
            a
        } else {
            a + (b - a) * ((x - a.x) / (b.x - a.x))
        }
    };
    Some([at(a.x.max(x0)), at(b.x.min(x1))])
}

/// The 45° lines (bottom-left to top-right) hatching `r`, `step` apart on the x axis and
/// anchored to multiples of `step` (so the pattern does not crawl as a gap resizes), each
/// clipped to `r`.
pub fn hatch_lines(r: Rect, step: f32) -> Vec<[Pos2; 2]> {
    let (w, h) = (r.width(), r.height());
    if w <= 0.0 || h <= 0.0 || step <= 0.0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    // A line through (x0, bottom) rises to (x0 + h, top); its x at height y is x0 + (bottom - y).
    let mut x0 = ((r.left() - h) / step).ceil() * step;
    while x0 < r.right() {
        // Part of the line with x in [left, right]: parameter u = x - x0 in [0, h].
        let u0 = (r.left() - x0).max(0.0);
        let u1 = (r.right() - x0).min(h);
        if u1 > u0 {
            out.push([
                Pos2::new(x0 + u0, r.bottom() - u0),
                Pos2::new(x0 + u1, r.bottom() - u1),
            ]);
        }
        x0 += step;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snaps_to_the_nearest_edge_within_reach() {
        let events = [(100, 200), (205, 300)];
        assert_eq!(snap_to_edges(198.0, &events, 6.0), 200.0);
        assert_eq!(snap_to_edges(203.0, &events, 6.0), 205.0);
        assert_eq!(snap_to_edges(250.0, &events, 6.0), 250.0);
        assert_eq!(snap_to_edges(50.0, &[], 6.0), 50.0);
        // Exactly at the reach still snaps; just beyond does not.
        assert_eq!(snap_to_edges(94.0, &events, 6.0), 100.0);
        assert_eq!(snap_to_edges(93.9, &events, 6.0), 93.9);
    }

    #[test]
    fn rulers_need_two_clicks_and_measure_in_fitting_units() {
        let mut tool = RulerTool::default();
        tool.click(1_000.0);
        assert!(tool.rulers.is_empty());
        tool.click(2_501_000.0);
        assert_eq!(tool.rulers.len(), 1);
        assert_eq!(tool.rulers[0].delta_ns(), 2_500_000.0);
        assert_eq!(tool.rulers[0].label(), "Δt 2.500 ms");
        tool.click(10.0);
        tool.click(5.0);
        assert_eq!(tool.rulers[1].delta_ns(), 5.0);
        assert_eq!(tool.rulers[1].label(), "Δt 5 ns");
        tool.clear();
        assert!(tool.rulers.is_empty() && tool.pending_ns.is_none());
    }

    #[test]
    fn ruler_labels_pick_the_unit_that_fits() {
        let label = |d: f64| {
            Ruler {
                from_ns: 1_000.0,
                to_ns: 1_000.0 + d,
            }
            .label()
        };
        assert_eq!(label(850.0), "Δt 850 ns");
        assert_eq!(label(999.0), "Δt 999 ns");
        assert_eq!(label(1_000.0), "Δt 1.000 µs");
        assert_eq!(label(12_346.0), "Δt 12.35 µs");
        assert_eq!(label(456_700.0), "Δt 456.7 µs");
        assert_eq!(label(4_560_000.0), "Δt 4.560 ms");
        assert_eq!(label(1_234_000_000.0), "Δt 1.234 s");
        // Direction does not matter.
        assert_eq!(
            Ruler {
                from_ns: 5_000.0,
                to_ns: 2_000.0
            }
            .label(),
            "Δt 3.000 µs"
        );
    }

    #[test]
    fn hatch_lines_stay_inside_the_area_and_are_45_degrees() {
        let r = Rect::from_min_max(Pos2::new(10.0, 100.0), Pos2::new(50.0, 120.0));
        let lines = hatch_lines(r, 6.0);
        // Lines start at multiples of 6 from ceil((10 - 20) / 6) * 6 = -6 up to 48: 10 lines.
        assert_eq!(lines.len(), 10);
        for [a, b] in &lines {
            for p in [a, b] {
                assert!(r.expand(1e-3).contains(*p), "{p:?} outside {r:?}");
            }
            assert!(
                ((b.x - a.x) - (a.y - b.y)).abs() < 1e-4,
                "not 45°: {a:?} {b:?}"
            );
            assert!(b.x > a.x);
        }
        // A sub-pixel-wide gap still gets a hatched sliver, and an empty one nothing.
        assert!(
            !hatch_lines(
                Rect::from_min_max(Pos2::new(0.0, 0.0), Pos2::new(1.0, 20.0)),
                6.0
            )
            .is_empty()
        );
        assert!(
            hatch_lines(
                Rect::from_min_max(Pos2::new(0.0, 0.0), Pos2::new(0.0, 20.0)),
                6.0
            )
            .is_empty()
        );
    }
}
