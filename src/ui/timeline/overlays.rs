//! What the analysis side draws over the timeline: the selected time range, time excluded by
//! warm-up exclusion (a grey veil), GPU idle gaps (hatched on their GPU or stream rows), events
//! highlighted from a statistics row, and rulers measuring the time between two points.
//!
//! The state is plain data kept in [`super::TimelineState`]; the snapping and unit formatting of
//! rulers are pure functions tested below.

use egui::{Align2, Color32, FontId, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, format_duration};
use super::painter::{FrameShapes, event_rect};
use super::rows::{EventRef, RowKind, TimelineModel};
use crate::trace::{StreamKey, Trace};
use crate::ui::theme::Palette;

/// Snapping distance of a ruler end to an event edge, in points.
pub const SNAP_PX: f32 = 6.0;

/// An idle gap to hatch: on the rows of its GPU (whole-GPU gap) or of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapMark {
    pub device: u32,
    pub stream: Option<StreamKey>,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Everything the analysis asks the timeline to show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overlays {
    /// Excluded time (e.g. warm-up), merged intervals; shaded over the whole height, since a
    /// warm-up phase concerns every row of the run.
    pub excluded: Vec<(i64, i64)>,
    pub gaps: Vec<GapMark>,
    /// Events of the chosen statistics row, outlined.
    pub highlighted: Vec<EventRef>,
}

/// A measurement between two instants.
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

/// Ruler end for a click at `pos`: snapped to an edge of the events under or beside the pointer.
pub fn snapped_time(
    trace: &Trace,
    model: &TimelineModel,
    view: &super::ViewState,
    rows: &[super::RowPlacement],
    area: Rect,
    pos: Pos2,
) -> f64 {
    let map = TimeToX::new(view, area.left(), area.width());
    let mut candidates = Vec::new();
    for dx in [0.0, -SNAP_PX, SNAP_PX] {
        let p = Pos2::new(pos.x + dx, pos.y);
        if let Some(e) = super::painter::event_at(trace, model, view, rows, area, p) {
            candidates.push((e.start_ns(trace), e.end_ns(trace)));
        }
    }
    snap_to_edges(
        map.t(pos.x),
        &candidates,
        f64::from(SNAP_PX) * map.ns_per_px(),
    )
}

/// Shapes for the overlays, in the event area's coordinates.
#[allow(clippy::too_many_arguments)]
pub fn paint(
    painter: &egui::Painter,
    trace: &Trace,
    model: &TimelineModel,
    view: &super::ViewState,
    frame: &FrameShapes,
    area: Rect,
    palette: &Palette,
    overlays: &Overlays,
    range: Option<(i64, i64)>,
    ruler: &RulerTool,
) {
    let map = TimeToX::new(view, area.left(), area.width());
    let x_of = |t: f64| map.left_px + ((t - map.start_ns) * map.px_per_ns) as f32;
    let visible = |s: i64, e: i64| (e as f64) >= view.start_ns && (s as f64) <= view.end_ns;
    for &(s, e) in &overlays.excluded {
        if visible(s, e) {
            let r = Rect::from_x_y_ranges(x_of(s as f64)..=x_of(e as f64), area.y_range());
            painter.rect_filled(r.intersect(area), 0.0, palette.excluded_veil);
        }
    }
    for gap in &overlays.gaps {
        if !visible(gap.start_ns, gap.end_ns) {
            continue;
        }
        let x0 = x_of(gap.start_ns as f64).max(area.left());
        let x1 = x_of(gap.end_ns as f64).min(area.right());
        for p in &frame.rows {
            let on_row = match model.rows[p.row].kind {
                RowKind::GpuSummary { device } => device == gap.device,
                RowKind::Stream { stream } => trace.streams.get(stream).is_some_and(|s| {
                    s.key.device == gap.device && gap.stream.is_none_or(|k| k == s.key)
                }),
                _ => false,
            };
            if on_row {
                let r = Rect::from_x_y_ranges(x0..=x1, p.top..=p.top + p.height);
                hatch(painter, r, palette.gap_hatch);
            }
        }
    }
    for &e in overlays.highlighted.iter().take(4000) {
        if let Some(r) = event_rect(trace, model, view, &frame.rows, area, e) {
            painter.rect_stroke(
                r.expand(1.0),
                0.0,
                Stroke::new(1.5, palette.highlight),
                egui::StrokeKind::Outside,
            );
        }
    }
    if let Some((s, e)) = range {
        let r = Rect::from_x_y_ranges(x_of(s as f64)..=x_of(e as f64), area.y_range());
        painter.rect_filled(r.intersect(area), 0.0, palette.range_band);
        for x in [r.left(), r.right()] {
            painter.line_segment(
                [Pos2::new(x, area.top()), Pos2::new(x, area.bottom())],
                Stroke::new(1.0, palette.range_edge),
            );
        }
        let label = format!("selection {}", format_duration((e - s) as f64));
        painter.text(
            Pos2::new(
                r.center().x.clamp(area.left() + 60.0, area.right() - 60.0),
                area.top() + 4.0,
            ),
            Align2::CENTER_TOP,
            label,
            FontId::proportional(12.0),
            palette.text,
        );
    }
    let mut y = area.top() + 44.0;
    let rulers = ruler.rulers.iter().copied().chain(
        ruler
            .pending_ns
            .and_then(|from| {
                painter
                    .ctx()
                    .pointer_latest_pos()
                    .map(|p| (from, map.t(p.x)))
            })
            .filter(|_| ruler.active)
            .map(|(from_ns, to_ns)| Ruler { from_ns, to_ns }),
    );
    for r in rulers {
        let (a, b) = (x_of(r.from_ns), x_of(r.to_ns));
        let stroke = Stroke::new(1.5, palette.ruler);
        for x in [a, b] {
            painter.line_segment(
                [Pos2::new(x, area.top()), Pos2::new(x, area.bottom())],
                stroke,
            );
        }
        painter.line_segment([Pos2::new(a, y), Pos2::new(b, y)], stroke);
        let galley = painter.layout_no_wrap(r.label(), FontId::proportional(12.0), palette.text);
        let pos = Pos2::new(
            (a + b) / 2.0 - galley.size().x / 2.0,
            y - galley.size().y - 2.0,
        );
        let bg = Rect::from_min_size(pos, galley.size()).expand(2.0);
        painter.rect_filled(bg, 2.0, palette.ruler_label_bg);
        painter.galley(pos, galley, palette.text);
        y += 22.0;
    }
}

/// Diagonal hatching inside `r`.
fn hatch(painter: &egui::Painter, r: Rect, color: Color32) {
    if r.width() <= 0.0 || r.height() <= 0.0 {
        return;
    }
    painter.rect_filled(r, 0.0, color.gamma_multiply(0.25));
    let painter = painter.with_clip_rect(r.intersect(painter.clip_rect()));
    let step = 6.0;
    let mut x = r.left() - r.height();
    let stroke = Stroke::new(1.0, color);
    let mut lines = Vec::new();
    while x < r.right() {
        lines.push(Shape::line_segment(
            [Pos2::new(x, r.bottom()), Pos2::new(x + r.height(), r.top())],
            stroke,
        ));
        x += step;
    }
    painter.extend(lines);
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
    }

    #[test]
    fn rulers_need_two_clicks_and_measure_in_fitting_units() {
        let mut tool = RulerTool::default();
        tool.click(1_000.0);
        assert!(tool.rulers.is_empty());
        tool.click(2_501_000.0);
        assert_eq!(tool.rulers.len(), 1);
        assert_eq!(tool.rulers[0].delta_ns(), 2_500_000.0);
        assert!(
            tool.rulers[0].label().contains("ms"),
            "{}",
            tool.rulers[0].label()
        );
        tool.click(10.0);
        tool.click(5.0);
        assert_eq!(tool.rulers[1].delta_ns(), 5.0);
        assert!(
            tool.rulers[1].label().ends_with("ns"),
            "{}",
            tool.rulers[1].label()
        );
        tool.clear();
        assert!(tool.rulers.is_empty() && tool.pending_ns.is_none());
    }
}
