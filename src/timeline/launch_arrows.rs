//! Launch latency made visible: an arrow from each CUDA call that launched a kernel to the
//! kernel, for every kernel in view (the "Launch arrows" toggle). Thinned like every other row:
//! on one stream row, at most one arrow per [`MIN_SPACING_PX`] of width, and at most
//! [`MAX_ARROWS`] a frame, so a zoomed-out 10M-event trace costs a few thousand lines. Headless
//! (shapes out, no painter) so tests can count what is drawn.

use egui::{Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState};
use super::painter::{RowPlacement, event_rect};
use super::rows::{EventKind, EventRef, GroupId, RowKind, TimelineModel};
use crate::timeline::palette::Palette;
use crate::trace::{NO_INDEX, Trace};

/// Two arrows on one stream row are at least this far apart, in points.
pub const MIN_SPACING_PX: f32 = 8.0;
/// At most this many arrows a frame.
pub const MAX_ARROWS: usize = 3000;

/// The arrows for the kernels starting in view on the placed `rows`, and how many were drawn.
pub fn launch_arrows(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    palette: &Palette,
) -> (Vec<Shape>, usize) {
    let map = TimeToX::new(view, area.left(), area.width());
    let mut shapes = Vec::new();
    let mut drawn = 0;
    let stroke = Stroke::new(1.0, palette.correlation_line.gamma_multiply(0.8));
    let kernels = &trace.kernels;
    for p in rows {
        let Some(row) = model.rows.get(p.row) else {
            continue;
        };
        // A stream row, or a collapsed GPU's summary row standing in for its streams.
        let streams: Vec<usize> = match row.kind {
            RowKind::Stream { stream } => vec![stream],
            RowKind::GpuSummary { device } if view.collapsed.contains(&GroupId::Gpu(device)) => (0
                ..trace.streams.len())
                .filter(|&s| trace.streams[s].key.device == device)
                .collect(),
            _ => continue,
        };
        for s in streams {
            let slice = &trace.streams[s].kernels;
            let starts = &kernels.spans.start_ns[slice.range.clone()];
            let mut next_t = view.start_ns;
            let mut last_launch = None;
            loop {
                if drawn >= MAX_ARROWS {
                    return (shapes, drawn);
                }
                let at = starts.partition_point(|&t| (t as f64) < next_t);
                let Some(&start) = starts.get(at) else {
                    break;
                };
                if start as f64 > view.end_ns {
                    break;
                }
                let k = slice.range.start + at;
                next_t = map.t(map.x(start) + MIN_SPACING_PX).max(start as f64 + 1.0);
                let call = kernels.api_call[k];
                if call == NO_INDEX {
                    continue;
                }
                // A collapsed graph launch gets one arrow, to the block.
                let kernel = super::graph_brackets::stand_in(
                    trace,
                    view,
                    EventRef::new(EventKind::Kernel, k),
                );
                if kernel.kind == EventKind::GraphLaunch {
                    if last_launch == Some(kernel) {
                        continue;
                    }
                    last_launch = Some(kernel);
                }
                let call = EventRef::new(EventKind::ApiCall, call as usize);
                let (Some(kr), Some(cr)) = (
                    event_rect(trace, model, view, rows, area, kernel),
                    event_rect(trace, model, view, rows, area, call),
                ) else {
                    continue;
                };
                shapes.extend(arrow(cr, kr, area, stroke));
                drawn += 1;
            }
        }
    }
    (shapes, drawn)
}

/// A line from the call's start to the kernel's start, with a head at the kernel.
fn arrow(call: Rect, kernel: Rect, area: Rect, stroke: Stroke) -> Vec<Shape> {
    let clamp = |x: f32| x.clamp(area.left() - 2.0, area.right() + 2.0);
    let (from, to) = if call.center().y > kernel.center().y {
        (
            Pos2::new(clamp(call.left()), call.top()),
            Pos2::new(clamp(kernel.left()), kernel.bottom()),
        )
    } else {
        (
            Pos2::new(clamp(call.left()), call.bottom()),
            Pos2::new(clamp(kernel.left()), kernel.top()),
        )
    };
    let dir = (to - from).normalized();
    let side = egui::vec2(-dir.y, dir.x) * 3.0;
    let back = to - dir * 6.0;
    vec![
        Shape::line_segment([from, to], stroke),
        Shape::convex_polygon(
            vec![to, back + side, back - side],
            stroke.color,
            Stroke::NONE,
        ),
    ]
}
