//! Hit testing against a frame's layout: the lanes a row draws, the placed row under a point,
//! the event under the pointer and where an event is drawn.

use egui::{Pos2, Rect};

use super::RowPlacement;
use crate::index::LodItem;
use crate::timeline::navigation::{TimeToX, ViewState};
use crate::timeline::rows::{EventKind, EventRef, RowKind, TimelineModel};
use crate::trace::{Slice, Trace};

/// The slices (with their table) a row draws, for hit testing.
pub fn row_lanes<'a>(trace: &'a Trace, kind: RowKind) -> Vec<(&'a Slice, EventKind)> {
    let mut out = Vec::new();
    let stream = |s: &'a crate::trace::StreamTrack, out: &mut Vec<(&'a Slice, EventKind)>| {
        out.push((&s.kernels, EventKind::Kernel));
        out.push((&s.memcpys, EventKind::Memcpy));
        out.push((&s.memsets, EventKind::Memset));
        out.push((&s.graphs, EventKind::Graph));
    };
    match kind {
        RowKind::GpuSummary { device } => {
            for s in trace.streams.iter().filter(|s| s.key.device == device) {
                stream(s, &mut out);
            }
        }
        RowKind::Stream { stream: i } => {
            if let Some(s) = trace.streams.get(i) {
                stream(s, &mut out);
            }
        }
        RowKind::Nvtx { thread, depth } => {
            if let Some(l) = trace
                .threads
                .get(thread)
                .and_then(|t| t.nvtx_levels.get(depth))
            {
                out.push((l, EventKind::Nvtx));
            }
        }
        RowKind::ApiCalls { thread } => {
            if let Some(t) = trace.threads.get(thread) {
                out.push((&t.api_calls, EventKind::ApiCall));
            }
        }
        RowKind::Osrt { thread } => {
            if let Some(t) = trace.threads.get(thread) {
                out.push((&t.osrt, EventKind::Osrt));
            }
        }
        _ => {}
    }
    out
}

/// The placed row under `pos`, when `pos` lies in the event area `rect`.
pub fn placement_at(rows: &[RowPlacement], rect: Rect, pos: Pos2) -> Option<&RowPlacement> {
    if !rect.contains(pos) {
        return None;
    }
    rows.iter()
        .find(|p| pos.y >= p.top && pos.y < p.top + p.height)
}

/// The event under `pos`, if any: among events within a few pixels of the pointer in the row
/// under it, the shortest one containing the pointer's time, else the nearest. A CUDA call nested
/// in a longer call of the same correlationId (nsys 2023.4 records the runtime's versioned entry,
/// `cudaLaunchKernel_v7000`, inside the `cudaLaunchKernel` the program made) stands for that
/// outer call, which has the launch link and the backtrace.
pub fn event_at(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    pos: Pos2,
) -> Option<EventRef> {
    let placement = placement_at(rows, rect, pos)?;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let t = map.t(pos.x);
    let tolerance = map.ns_per_px() * 3.0;
    let (t0, t1) = (
        (t - tolerance).floor() as i64,
        (t + tolerance).ceil() as i64 + 1,
    );
    let row_kind = model.rows[placement.row].kind;
    if model.unified_memory.lane(row_kind).is_some() {
        return crate::timeline::unified_memory::fault_near(
            &model.unified_memory,
            row_kind,
            t,
            tolerance,
        );
    }
    let merge_below = (map.ns_per_px().floor() as i64).max(1);
    let mut best: Option<(f64, i64, EventRef)> = None;
    // CUDA calls containing the pointer's time, with their durations.
    let mut calls_here: Vec<(i64, EventRef)> = Vec::new();
    for (slice, kind) in row_lanes(trace, model.rows[placement.row].kind) {
        if slice.is_empty() {
            continue;
        }
        let spans = crate::timeline::rows::spans_of(trace, kind);
        let base = slice.range.start;
        let starts = &spans.start_ns[slice.range.clone()];
        let ends = &spans.end_ns[slice.range.clone()];
        slice
            .index
            .walk(starts, ends, t0, t1, merge_below, &mut |item| {
                if let LodItem::Event(i) = item {
                    let (s, e) = (starts[i] as f64, ends[i] as f64);
                    let distance = if t >= s && t <= e {
                        0.0
                    } else {
                        (s - t).abs().min((e - t).abs())
                    };
                    let duration = ends[i] - starts[i];
                    if distance == 0.0 && kind == EventKind::ApiCall {
                        calls_here.push((duration, EventRef::new(kind, base + i)));
                    }
                    let better = match best {
                        None => true,
                        Some((d, len, _)) => distance < d || (distance == d && duration < len),
                    };
                    if better {
                        best = Some((distance, duration, EventRef::new(kind, base + i)));
                    }
                }
            });
    }
    let (distance, _, picked) = best?;
    if distance == 0.0 && picked.kind == EventKind::ApiCall {
        let correlation = |e: EventRef| trace.api_calls.correlation_id.get(e.index as usize);
        let outer = calls_here
            .iter()
            .filter(|(_, e)| correlation(*e) == correlation(picked))
            .max_by_key(|(duration, _)| *duration);
        if let Some(&(_, e)) = outer {
            return Some(e);
        }
    }
    Some(picked)
}

/// Where an event is drawn this frame (its own row, or the header standing for it when its
/// group is collapsed); `None` when that row is off screen.
pub fn event_rect(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    event: EventRef,
) -> Option<Rect> {
    let row = model.shown_row(model.row_of_event(trace, event)?, view);
    let p = rows.iter().find(|p| p.row == row)?;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let x0 = map.x(event.start_ns(trace));
    let x1 = map.x(event.end_ns(trace)).max(x0 + 1.0);
    Some(Rect::from_x_y_ranges(
        x0..=x1,
        p.top + 1.0..=p.top + p.height - 1.0,
    ))
}
