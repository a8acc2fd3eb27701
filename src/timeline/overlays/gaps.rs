//! Idle gaps over the rows: hatched in their cause's colour on the rows they concern, and the
//! chosen gap's link back to the call that launched the work ending it.

use egui::{Align2, Pos2, Rect, Shape, Stroke};

use super::{GapLink, GapMark, HATCH_STEP_PX, OverlayLabel, OverlayShapes};
use crate::analysis::gap_causes::GapCause;
use crate::timeline::navigation::{TimeToX, ViewState};
use crate::timeline::painter::{RowPlacement, event_rect};
use crate::timeline::palette::Palette;
use crate::timeline::rows::{RowKind, TimelineModel};
use crate::trace::Trace;

/// Hatches each gap on the rows it concerns; on one row, gaps closer than a pixel are drawn
/// as one area, so a zoomed-out view costs at most one hatched area per pixel of width.
#[allow(clippy::too_many_arguments)]
pub(super) fn hatch_gaps(
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
pub(super) fn gap_link_shapes(
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
pub(super) fn clip_to_x(a: Pos2, b: Pos2, x0: f32, x1: f32) -> Option<[Pos2; 2]> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
