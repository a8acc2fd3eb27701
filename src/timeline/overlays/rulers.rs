//! Rulers: a measurement between two instants, placed by two clicks, its ends snapped to the
//! edges of the events near the pointer.

use egui::{Pos2, Rect};

use super::SNAP_PX;
use crate::index::LodItem;
use crate::timeline::navigation::{TimeToX, ViewState, format_duration};
use crate::timeline::painter::{RowPlacement, event_at, row_lanes};
use crate::timeline::rows::TimelineModel;
use crate::trace::Trace;

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
        let spans = crate::timeline::rows::spans_of(trace, kind);
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
}
