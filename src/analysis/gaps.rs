//! GPU idle gaps and busy time: per device (or per stream), the intervals between the first and
//! the last GPU operation where no kernel, memcpy or memset runs, with what ran before and after.
//!
//! Range semantics are those of every Sightline analysis: an operation belongs to `[A, B)` when
//! its start lies in it (issue #4), and it then counts whole, even if it ends after `B`. A
//! device's *window* is the active span — first start to last end — of its operations in range
//! ([`MeasureOver::ActiveSpan`], the whole trace's figures). Within a selection the user chose
//! ([`MeasureOver::Range`], issue #33) the window is the selection itself: an operation that
//! straddles an edge counts clipped to it, and the idle time between an edge and the first (or
//! last) operation is a gap cut at that edge ([`IdleGap::edge`]) — a GPU idle for the first
//! third of a selected step is idle for a third of it, not busier than it was.
//!
//! Exclusions (warm-up) cut time out rather than pretend it was idle: a GPU running warm-up work
//! is not idle, and the gaps inside and at the borders of the warm-up phase are not steady-state
//! gaps. So holes are found among *all* operations; a hole next to an excluded operation (one
//! ends at its start or starts at its end) is excluded too; the *measured time* is the window less
//! the excluded operations and holes. Busy time counts kept operations inside the measured time;
//! idle time is the kept holes. Without exclusions measured time is the window.

use super::filter::{EventTable, Filter};
use super::intervals::{self, Interval};
use crate::trace::{StreamKey, Trace};
pub use selection::{MeasureOver, SelectionEdge};
use selection::{edge_holes, edges, runs_anything};

mod selection;

/// Default shortest gap worth listing: 100 µs.
pub const DEFAULT_MIN_GAP_NS: i64 = 100_000;

/// The kind of a GPU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GpuOpKind {
    Kernel,
    Memcpy,
    Memset,
    /// A CUDA graph execution traced as a whole (`trace.graphs`): GPU work, mostly compute.
    Graph,
}

/// One GPU operation: its kind and its index in that table of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GpuOpRef {
    pub kind: GpuOpKind,
    pub index: usize,
}

impl GpuOpRef {
    /// The name the reports use: demangled kernel name, `[CUDA memcpy …]`, `[CUDA memset]`.
    pub fn name<'t>(&self, trace: &'t Trace) -> &'t str {
        let spans = match self.kind {
            GpuOpKind::Kernel => &trace.kernels.spans,
            GpuOpKind::Memcpy => &trace.memcpys.spans,
            GpuOpKind::Memset => &trace.memsets.spans,
            GpuOpKind::Graph => &trace.graphs.spans,
        };
        spans.name.get(self.index).map_or("", |&id| trace.str(id))
    }
}

/// A GPU operation's time span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GpuOp {
    pub start_ns: i64,
    pub end_ns: i64,
    pub op: GpuOpRef,
    /// Dropped by the filter's exclusions (e.g. launched during warm-up).
    pub excluded: bool,
}

/// Every operation of every stream of `device` (or of one stream), unsorted, with the filter's
/// exclusion flag: those starting in the filter's range and, over [`MeasureOver::Range`], those
/// running at its start too, clipped to its edges.
pub(crate) fn gpu_ops(
    trace: &Trace,
    filter: &Filter,
    device: u32,
    stream: Option<StreamKey>,
    over: MeasureOver,
) -> Vec<GpuOp> {
    let (a, b) = edges(filter, over);
    let mut ops = gpu_ops_where(trace, filter, device, stream, |start, end| {
        filter.range.contains(start)
            || a.is_some_and(|a| start < a && end > a && filter.range.contains(a))
    });
    for o in &mut ops {
        o.start_ns = a.map_or(o.start_ns, |a| o.start_ns.max(a));
        o.end_ns = b.map_or(o.end_ns, |b| o.end_ns.min(b)).max(o.start_ns);
    }
    ops
}

/// The operations of `device` (or of one stream) whose span `keep` accepts, with the filter's
/// exclusion flag.
fn gpu_ops_where(
    trace: &Trace,
    filter: &Filter,
    device: u32,
    stream: Option<StreamKey>,
    keep: impl Fn(i64, i64) -> bool,
) -> Vec<GpuOp> {
    let mut ops = Vec::new();
    let excluded =
        |table: EventTable, i: usize| filter.excluded.is_some_and(|e| e.is_excluded(table, i));
    for track in &trace.streams {
        if track.key.device != device || stream.is_some_and(|k| k != track.key) {
            continue;
        }
        let tables = [
            (
                GpuOpKind::Kernel,
                EventTable::Kernels,
                &trace.kernels.spans,
                &track.kernels,
            ),
            (
                GpuOpKind::Memcpy,
                EventTable::Memcpys,
                &trace.memcpys.spans,
                &track.memcpys,
            ),
            (
                GpuOpKind::Memset,
                EventTable::Memsets,
                &trace.memsets.spans,
                &track.memsets,
            ),
        ];
        // A graph execution has no exclusion flags of its own: it follows its launching call.
        for index in track.graphs.range.clone() {
            let spans = &trace.graphs.spans;
            if !keep(spans.start_ns[index], spans.end_ns[index]) {
                continue;
            }
            let call = trace
                .graphs
                .api_call
                .get(index)
                .copied()
                .unwrap_or(u32::MAX);
            ops.push(GpuOp {
                start_ns: spans.start_ns[index],
                end_ns: spans.end_ns[index],
                op: GpuOpRef {
                    kind: GpuOpKind::Graph,
                    index,
                },
                excluded: call != u32::MAX && excluded(EventTable::ApiCalls, call as usize),
            });
        }
        for (kind, table, spans, slice) in tables {
            for index in slice.range.clone() {
                if !keep(spans.start_ns[index], spans.end_ns[index]) {
                    continue;
                }
                ops.push(GpuOp {
                    start_ns: spans.start_ns[index],
                    end_ns: spans.end_ns[index],
                    op: GpuOpRef { kind, index },
                    excluded: excluded(table, index),
                });
            }
        }
    }
    ops
}

/// A hole between operations, with the op that ended last before it and the first op after
/// (`None` where the device ran nothing before or after it in the whole trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hole {
    pub span: Interval,
    pub before: Option<GpuOpRef>,
    pub after: Option<GpuOpRef>,
    /// An operation ending at its start or starting at its end is excluded: the hole belongs to
    /// the excluded phase (or its border), so it is neither idle nor measured.
    pub excluded: bool,
    /// Cut by an edge of the selection ([`MeasureOver::Range`]).
    pub edge: Option<SelectionEdge>,
}

/// Holes between `ops` (all of them, excluded ones too: a GPU running warm-up work is busy).
fn holes(ops: &mut [GpuOp]) -> Vec<Hole> {
    ops.sort_unstable_by_key(|o| (o.start_ns, o.end_ns, o.op));
    let mut out = Vec::new();
    let Some(first) = ops.first() else {
        return out;
    };
    let (mut busy_until, mut last_to_end, mut end_excluded) =
        (first.end_ns, first.op, first.excluded);
    for (j, o) in ops.iter().enumerate().skip(1) {
        if o.start_ns > busy_until {
            let start_excluded = ops[j..]
                .iter()
                .take_while(|n| n.start_ns == o.start_ns)
                .any(|n| n.excluded);
            out.push(Hole {
                span: (busy_until, o.start_ns),
                before: Some(last_to_end),
                after: Some(o.op),
                excluded: end_excluded || start_excluded,
                edge: None,
            });
        }
        if o.end_ns > busy_until {
            (busy_until, last_to_end, end_excluded) = (o.end_ns, o.op, o.excluded);
        } else if o.end_ns == busy_until {
            last_to_end = o.op;
            end_excluded |= o.excluded;
        }
    }
    out
}

/// The time of one device (or stream) that the analyses measure.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeasuredTime {
    /// Active span `[first start, last end)` of its operations in range, or the selection
    /// ([`MeasureOver::Range`]; an open side is the active span's).
    pub window: Option<Interval>,
    /// The window less excluded time (excluded operations and the holes bordering them).
    pub region: Vec<Interval>,
    /// Holes that are not excluded, clipped to the window.
    pub idle: Vec<Hole>,
    /// The kept operations.
    pub kept: Vec<GpuOp>,
}

impl MeasuredTime {
    /// |union of the kept ops `pick` chooses| inside the region, and that union.
    pub fn busy(&self, pick: impl Fn(GpuOpKind) -> bool) -> Vec<Interval> {
        let spans = self
            .kept
            .iter()
            .filter(|o| pick(o.op.kind))
            .map(|o| (o.start_ns, o.end_ns))
            .collect();
        intervals::intersect(&intervals::union(spans), &self.region)
    }

    pub fn region_ns(&self) -> i64 {
        intervals::total_ns(&self.region)
    }
}

/// Measured time of `device` (or one stream of it) under `filter` (see the module comment).
pub(crate) fn measured_time(
    trace: &Trace,
    filter: &Filter,
    device: u32,
    stream: Option<StreamKey>,
    over: MeasureOver,
) -> MeasuredTime {
    let mut ops = gpu_ops(trace, filter, device, stream, over);
    let (a, b) = edges(filter, over);
    let lo = a.or_else(|| ops.iter().map(|o| o.start_ns).min());
    let hi = b.or_else(|| ops.iter().map(|o| o.end_ns).max());
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return MeasuredTime::default();
    };
    // A selection with nothing in it on a device that ran elsewhere is all idle; a device that
    // never ran is not measured.
    if hi <= lo || (ops.is_empty() && !runs_anything(trace, device, stream)) {
        return MeasuredTime::default();
    }
    let mut all_holes = holes(&mut ops);
    if a.is_some() || b.is_some() {
        all_holes.extend(edge_holes(trace, filter, device, stream, &ops, (lo, hi)));
    }
    let mut excluded_time: Vec<Interval> = ops
        .iter()
        .filter(|o| o.excluded)
        .map(|o| (o.start_ns, o.end_ns))
        .collect();
    excluded_time.extend(all_holes.iter().filter(|h| h.excluded).map(|h| h.span));
    let region = intervals::subtract(&[(lo, hi)], &intervals::union(excluded_time));
    let mut idle: Vec<Hole> = all_holes
        .into_iter()
        .filter(|h| !h.excluded)
        .filter_map(|h| {
            let (s, e) = (h.span.0.max(lo), h.span.1.min(hi));
            (e > s).then_some(Hole { span: (s, e), ..h })
        })
        .collect();
    idle.sort_unstable_by_key(|h| h.span);
    ops.retain(|o| !o.excluded);
    MeasuredTime {
        window: Some((lo, hi)),
        region,
        idle,
        kept: ops,
    }
}

/// An interval where a GPU (or one stream of it) ran nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleGap {
    pub device: u32,
    /// The stream, for per-stream gaps; `None` when the whole GPU was idle.
    pub stream: Option<StreamKey>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The operation whose end opened the gap, and the one whose start closed it; for a gap cut
    /// by the selection, the one beyond the edge. `None` where the device (or stream) ran nothing
    /// before, or after, in the whole trace.
    pub before: Option<GpuOpRef>,
    pub after: Option<GpuOpRef>,
    /// Set when an edge of the selection cut the gap ([`MeasureOver::Range`]).
    pub edge: Option<SelectionEdge>,
}

impl IdleGap {
    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// The name of the operation before the gap, or "" where there is none.
    pub fn before_name<'t>(&self, trace: &'t Trace) -> &'t str {
        self.before.map_or("", |op| op.name(trace))
    }

    /// The name of the operation after the gap, or "" where there is none.
    pub fn after_name<'t>(&self, trace: &'t Trace) -> &'t str {
        self.after.map_or("", |op| op.name(trace))
    }
}

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapOptions {
    /// Shortest gap listed (a gap of exactly `min_ns` is listed).
    pub min_ns: i64,
    /// Gaps of each stream instead of gaps of the whole GPU.
    pub per_stream: bool,
    /// Idle time inside the operations' active span, or inside the whole selection.
    pub over: MeasureOver,
}

impl Default for GapOptions {
    fn default() -> Self {
        Self {
            min_ns: DEFAULT_MIN_GAP_NS,
            per_stream: false,
            over: MeasureOver::ActiveSpan,
        }
    }
}

/// GPU idle gaps of at least `options.min_ns` inside each device's window (see the module
/// comment), longest first; ties by device, stream and start.
pub fn gpu_idle_gaps(trace: &Trace, filter: &Filter, options: &GapOptions) -> Vec<IdleGap> {
    let mut gaps = Vec::new();
    for device in trace.devices() {
        let streams: Vec<Option<StreamKey>> = if options.per_stream {
            trace
                .streams
                .iter()
                .filter(|s| s.key.device == device)
                .map(|s| Some(s.key))
                .collect()
        } else {
            vec![None]
        };
        for stream in streams {
            let measured = measured_time(trace, filter, device, stream, options.over);
            for h in measured.idle {
                let (start_ns, end_ns) = h.span;
                if end_ns - start_ns >= options.min_ns {
                    gaps.push(IdleGap {
                        device,
                        stream,
                        start_ns,
                        end_ns,
                        before: h.before,
                        after: h.after,
                        edge: h.edge,
                    });
                }
            }
        }
    }
    gaps.sort_by(|a, b| {
        b.duration_ns()
            .cmp(&a.duration_ns())
            .then_with(|| (a.device, a.stream, a.start_ns).cmp(&(b.device, b.stream, b.start_ns)))
    });
    gaps
}

/// How busy one GPU was inside its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceActivity {
    pub device: u32,
    /// The window (active span within the range, or the selection: [`MeasureOver`]); `None`
    /// when nothing was measured.
    pub window: Option<Interval>,
    /// Window length less excluded time (equal to the window's length without exclusions).
    pub measured_ns: i64,
    /// Time at least one kept operation ran (union over all streams).
    pub busy_ns: i64,
    /// Measured time less busy time: every idle interval, however short.
    pub idle_ns: i64,
}

impl DeviceActivity {
    /// Busy time over measured time, in percent; `None` when nothing was measured.
    pub fn busy_percent(&self) -> Option<f64> {
        (self.measured_ns > 0).then(|| self.busy_ns as f64 * 100.0 / self.measured_ns as f64)
    }
}

/// Busy and idle time of every device that ran anything, ascending by device, each inside its
/// active span ([`MeasureOver::ActiveSpan`]).
pub fn gpu_activity(trace: &Trace, filter: &Filter) -> Vec<DeviceActivity> {
    gpu_activity_over(trace, filter, MeasureOver::ActiveSpan)
}

/// [`gpu_activity`] measured over `over`.
pub fn gpu_activity_over(trace: &Trace, filter: &Filter, over: MeasureOver) -> Vec<DeviceActivity> {
    trace
        .devices()
        .into_iter()
        .map(|device| {
            let measured = measured_time(trace, filter, device, None, over);
            let busy_ns = intervals::total_ns(&measured.busy(|_| true));
            let measured_ns = measured.region_ns();
            DeviceActivity {
                device,
                window: measured.window,
                measured_ns,
                busy_ns,
                idle_ns: measured_ns - busy_ns,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(start_ns: i64, end_ns: i64, index: usize, excluded: bool) -> GpuOp {
        GpuOp {
            start_ns,
            end_ns,
            op: GpuOpRef {
                kind: GpuOpKind::Kernel,
                index,
            },
            excluded,
        }
    }

    #[test]
    fn holes_name_the_op_that_ended_last_and_the_next_to_start() {
        // 0: [0,10)  1: [2,30) (ends last)  2: [5,8)  3: [40,50)  4: [50,60) touching
        // 5: [70,71) excluded  6: [90,95)  7: [71, 80) kept, ends last before 6
        let mut ops = vec![
            op(0, 10, 0, false),
            op(2, 30, 1, false),
            op(5, 8, 2, false),
            op(50, 60, 4, false),
            op(40, 50, 3, false),
            op(70, 71, 5, true),
            op(90, 95, 6, false),
            op(71, 80, 7, false),
        ];
        let index = |op: Option<GpuOpRef>| op.map_or(usize::MAX, |o| o.index);
        let holes: Vec<(Interval, usize, usize, bool)> = holes(&mut ops)
            .into_iter()
            .map(|h| (h.span, index(h.before), index(h.after), h.excluded))
            .collect();
        assert_eq!(
            holes,
            vec![
                ((30, 40), 1, 3, false),
                ((60, 70), 4, 5, true),
                ((80, 90), 7, 6, false)
            ]
        );
    }
}
