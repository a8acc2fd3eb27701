//! Gaps inside a selection ([`MeasureOver::Range`], issue #33): the selection's edges bound the
//! measured time, and the idle stretch between an edge and the first or last operation is a gap
//! cut there ([`SelectionEdge`]), with the operation beyond the edge as its outer neighbour.

use super::{GpuOp, Hole, gpu_ops_where};
use crate::analysis::filter::Filter;
use crate::analysis::intervals::Interval;
use crate::analysis::range::TimeRange;
use crate::trace::{StreamKey, Trace};

/// Over which time a device's busy and idle time are measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MeasureOver {
    /// From the first start to the last end of the operations starting in the range: the whole
    /// trace's figures, as the reports, rules and the summary of a whole trace give them.
    #[default]
    ActiveSpan,
    /// The range itself (a selection the user chose): each edge it has bounds the measured time,
    /// operations straddling an edge count clipped to it, and the idle time at an edge is a gap
    /// cut there. An open side falls back to the active span.
    Range,
}

/// Which edge of the selection cut an idle gap ([`MeasureOver::Range`]): the GPU was idle up to
/// (or from) that edge and may have been idle beyond it, outside the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectionEdge {
    Start,
    End,
    /// Nothing ran on the device (or stream) in the whole selection.
    Both,
}

impl SelectionEdge {
    /// What the gap list, its tooltip and the command line print.
    pub fn label(self) -> &'static str {
        match self {
            SelectionEdge::Start => "selection start",
            SelectionEdge::End => "selection end",
            SelectionEdge::Both => "whole selection",
        }
    }

    pub(super) fn of(at_start: bool, at_end: bool) -> Option<SelectionEdge> {
        match (at_start, at_end) {
            (true, true) => Some(SelectionEdge::Both),
            (true, false) => Some(SelectionEdge::Start),
            (false, true) => Some(SelectionEdge::End),
            (false, false) => None,
        }
    }
}

/// The edges of `filter`'s range that bound the measured time (none for the active span).
pub(super) fn edges(filter: &Filter, over: MeasureOver) -> (Option<i64>, Option<i64>) {
    match over {
        MeasureOver::ActiveSpan => (None, None),
        MeasureOver::Range => (filter.range.start_ns, filter.range.end_ns),
    }
}

/// Does `device` (or the stream) run anything in the whole trace?
pub(super) fn runs_anything(trace: &Trace, device: u32, stream: Option<StreamKey>) -> bool {
    trace.streams.iter().any(|t| {
        t.key.device == device
            && stream.is_none_or(|k| k == t.key)
            && !(t.kernels.range.is_empty()
                && t.memcpys.range.is_empty()
                && t.memsets.range.is_empty()
                && t.graphs.range.is_empty())
    })
}

/// The idle stretches between the selection's edges (`window`, where the filter's range has
/// edges) and the first start / last end of `ops` (sorted, clipped to it). Their outer
/// neighbour is the operation of the whole trace that ended last before the start edge, or
/// started first after the end edge; an excluded neighbour excludes the stretch, as it does a
/// hole between operations.
pub(super) fn edge_holes(
    trace: &Trace,
    filter: &Filter,
    device: u32,
    stream: Option<StreamKey>,
    ops: &[GpuOp],
    (lo, hi): Interval,
) -> Vec<Hole> {
    let (a, b) = edges(filter, MeasureOver::Range);
    let first_start = ops.first().map_or(hi, |o| o.start_ns);
    let last_end = ops.iter().map(|o| o.end_ns).max().unwrap_or(lo);
    let gap_at_start = a.is_some() && first_start > lo;
    let gap_at_end = b.is_some() && last_end < hi;
    if !gap_at_start && !gap_at_end {
        return Vec::new();
    }
    // Operations outside the range, for the neighbours beyond its edges.
    let everything = Filter {
        range: TimeRange::ALL,
        excluded: filter.excluded,
    };
    let outside = gpu_ops_where(trace, &everything, device, stream, |start, end| {
        a.is_some_and(|a| end <= a && start < a) || b.is_some_and(|b| start >= b)
    });
    let before_a = a.and_then(|a| {
        outside
            .iter()
            .filter(|o| o.start_ns < a)
            .max_by_key(|o| (o.end_ns, o.start_ns, o.op))
    });
    let after_b = b.and_then(|b| {
        outside
            .iter()
            .filter(|o| o.start_ns >= b)
            .min_by_key(|o| (o.start_ns, o.end_ns, o.op))
    });
    // Inside: the first operations to start and the last to end (all of them at that instant).
    let first = ops.first();
    let first_excluded = ops
        .iter()
        .take_while(|o| o.start_ns == first_start)
        .any(|o| o.excluded);
    let last = ops.iter().rev().find(|o| o.end_ns == last_end);
    let last_excluded = ops.iter().any(|o| o.end_ns == last_end && o.excluded);
    let outer_excluded = |o: Option<&GpuOp>| o.is_some_and(|o| o.excluded);
    if ops.is_empty() {
        // Both edges exist here: the caller measures an empty window only between two edges.
        return vec![Hole {
            span: (lo, hi),
            before: before_a.map(|o| o.op),
            after: after_b.map(|o| o.op),
            excluded: outer_excluded(before_a) || outer_excluded(after_b),
            edge: Some(SelectionEdge::Both),
        }];
    }
    let mut out = Vec::new();
    if gap_at_start {
        out.push(Hole {
            span: (lo, first_start),
            before: before_a.map(|o| o.op),
            after: first.map(|o| o.op),
            excluded: first_excluded || outer_excluded(before_a),
            edge: SelectionEdge::of(true, false),
        });
    }
    if gap_at_end {
        out.push(Hole {
            span: (last_end, hi),
            before: last.map(|o| o.op),
            after: after_b.map(|o| o.op),
            excluded: last_excluded || outer_excluded(after_b),
            edge: SelectionEdge::of(false, true),
        });
    }
    out
}
