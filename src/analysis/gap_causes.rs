//! Why a GPU sat idle: a cause for every idle gap (issue #10), from the export alone.
//!
//! For a gap `[g0, g1)` of a device (or of one stream), let N be the operation that starts at
//! `g1` — of several starting at that instant, the one whose launching call started first (ops
//! with a launching call before those without, then table order) — and L the CUDA runtime or
//! driver call that launched N (same process, same `correlationId`: the loader's link):
//! - [`GapCause::LaunchLate`] when L started at or after `g0`: the host had not begun launching;
//! - [`GapCause::LaunchOverhead`] when L started before `g0` and ended at or after it: the launch
//!   was in flight;
//! - [`GapCause::Dependency`] when L had ended before `g0`: the work was queued but waited (an
//!   event, another stream, another GPU, a host callback);
//! - [`GapCause::Unknown`] when N has no launching call in the trace (e.g. a unified-memory
//!   migration, which no call launches).
//!
//! Before all of these, [`GapCause::UntracedGraph`]: a `cudaGraphLaunch*` call of a process whose
//! work runs on the gap's device (for a stream's gap, the stream's process) started inside
//! `[g0, g1)` or was in flight at `g0` (started before, ended at or after it), and no kernel,
//! memcpy, memset or graph execution of the export is linked to it. nsys 2022.4–2023.4 traced a
//! graph as a whole without exporting its GPU work (`stress.sqlite`: `graph_replay`), so the GPU
//! was most likely running that graph, not idle. The export does not say which device or stream a
//! graph ran on: a process with work on several GPUs marks the gap of each.
//!
//! For a late launch, the window `[g0, min(L.start, g1))` on L's thread is split into time inside
//! synchronising CUDA calls ([`is_sync_call`]), inside other CUDA calls, inside OS-runtime calls,
//! and untraced time (CPU work nsys did not record). Calls of one thread nest (the driver calls
//! `ioctl` inside `cudaStreamSynchronize`), so each instant counts once, in the first of those
//! classes that covers it.

use std::collections::HashMap;
use std::sync::LazyLock;

use rayon::prelude::*;
use regex::Regex;

use super::gap_host_ranges::HostRanges;
use super::gaps::{GpuOpKind, GpuOpRef, IdleGap};
use super::intervals::{self, Interval};
use crate::trace::{NO_INDEX, Needs, Slice, Spans, StrId, Trace, pid_of};

/// Why the GPU waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapCause {
    LaunchLate,
    LaunchOverhead,
    Dependency,
    /// A CUDA graph launched during the gap has no GPU work in the export (older nsys, graph
    /// mode): the GPU probably ran it. Checked before the others.
    UntracedGraph,
    Unknown,
}

impl GapCause {
    pub const ALL: [GapCause; 5] = [
        GapCause::LaunchLate,
        GapCause::LaunchOverhead,
        GapCause::Dependency,
        GapCause::UntracedGraph,
        GapCause::Unknown,
    ];

    /// The name the command line prints: `launch-late`, ….
    pub fn label(self) -> &'static str {
        match self {
            GapCause::LaunchLate => "launch-late",
            GapCause::LaunchOverhead => "launch-overhead",
            GapCause::Dependency => "dependency",
            GapCause::UntracedGraph => "graph-untraced",
            GapCause::Unknown => "unknown",
        }
    }

    /// One line for a person: what the cause means.
    pub fn explanation(self) -> &'static str {
        match self {
            GapCause::LaunchLate => "the host had not begun launching the next work",
            GapCause::LaunchOverhead => "the call launching the next work was in flight",
            GapCause::Dependency => {
                "the next work was launched before the gap but waited (event, stream, host callback)"
            }
            GapCause::UntracedGraph => {
                "a CUDA graph launched then has no GPU work in this export (traced as a whole by an \
                 nsys older than 2024)"
            }
            GapCause::Unknown => "no launching call of the next work is in the trace",
        }
    }
}

/// Where the launching thread's time went before a late launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostBreakdown {
    /// Inside synchronising CUDA calls (device/context/stream/event synchronize, sync memcpy/memset).
    pub sync_ns: i64,
    /// Inside other CUDA runtime/driver calls.
    pub cuda_api_ns: i64,
    /// Inside OS-runtime calls (outside CUDA calls).
    pub osrt_ns: i64,
    /// Inside none of them: CPU work nsys did not trace.
    pub untraced_ns: i64,
}

/// The cause of one gap and what it rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GapCauseInfo {
    pub cause: GapCause,
    /// N: the operation that ended the gap; `None` for a gap cut by the selection's end after
    /// which the device (or stream) ran nothing more.
    pub next: Option<GpuOpRef>,
    /// L: index into `trace.api_calls` of the call that launched N.
    pub launch_call: Option<usize>,
    /// `[g0, min(L.start, g1))`, split by what L's thread did; only for [`GapCause::LaunchLate`].
    pub host: Option<HostBreakdown>,
    /// Index into `trace.api_calls` of the `cudaGraphLaunch*` with no GPU work that makes the gap
    /// [`GapCause::UntracedGraph`] (the earliest, when several do).
    pub graph_launch: Option<usize>,
    /// Where the launching thread was ([`super::gap_host_ranges`]): the outermost and the
    /// innermost range (indices into `trace.nvtx`) open on it; `None` outside any, or without a
    /// launching call.
    pub inside: Option<(usize, usize)>,
}

impl GapCauseInfo {
    /// [`Self::inside`] as one line: `workload > Token_Preparation`, or the one name when the
    /// outermost range is the innermost; empty outside any range.
    pub fn inside_line(&self, trace: &Trace) -> String {
        match self.inside {
            Some((outer, inner)) if outer == inner => {
                trace.str(trace.nvtx.spans.name[outer]).to_string()
            }
            Some((outer, inner)) => format!(
                "{} > {}",
                trace.str(trace.nvtx.spans.name[outer]),
                trace.str(trace.nvtx.spans.name[inner])
            ),
            None => String::new(),
        }
    }
}

// A constant pattern, checked by the unit test below: it cannot fail on a user's input.
#[allow(clippy::expect_used)]
static SYNC_CALL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(cuda|cu)(Device|Ctx|Stream|Event)Synchronize|^cudaMemcpy(2D|3D|ToSymbol|FromSymbol)?(_v\d+)?$|^cudaMemset(2D|3D)?(_v\d+)?$",
    )
    .expect("the sync-call pattern is a valid regex")
});

/// Does a CUDA call of this (raw) name make the host wait for the GPU?
pub fn is_sync_call(name: &str) -> bool {
    SYNC_CALL.is_match(name)
}

/// Per-trace lookups the causes need, built once for a batch of gaps.
pub struct CauseContext<'t> {
    trace: &'t Trace,
    /// `trace.threads` index by `globalTid`.
    thread_of_tid: HashMap<i64, usize>,
    /// Per process, its `cudaGraphLaunch*` calls with no GPU work (see [`UntracedLaunches`]).
    untraced_graphs: HashMap<u32, UntracedLaunches>,
    /// Per device, the processes with work on it.
    processes_of_device: HashMap<u32, Vec<u32>>,
    /// Each thread's ranges, for where a launching thread was.
    host_ranges: HostRanges<'t>,
}

/// One process's graph launches with no GPU work: by start, with the running maximum of their ends
/// (so the earliest one still in flight at an instant is one binary search away).
#[derive(Debug, Default)]
struct UntracedLaunches {
    start_ns: Vec<i64>,
    max_end_ns: Vec<i64>,
    call: Vec<usize>,
}

impl UntracedLaunches {
    /// The earliest launch that started before `to` and ended at or after `from`.
    fn first_overlapping(&self, from: i64, to: i64) -> Option<(i64, usize)> {
        let before_end = self.start_ns.partition_point(|&s| s < to);
        let first = self.max_end_ns.partition_point(|&e| e < from);
        (first < before_end).then(|| (self.start_ns[first], self.call[first]))
    }
}

/// The `cudaGraphLaunch*` calls no GPU operation of the trace is linked to, per process.
fn untraced_graph_launches(trace: &Trace) -> HashMap<u32, UntracedLaunches> {
    let mut out: HashMap<u32, UntracedLaunches> = HashMap::new();
    let api = &trace.api_calls;
    // One test per distinct name, not per call.
    let is_launch: Vec<bool> = (0..trace.strings.len())
        .map(|id| trace.str(id as StrId).starts_with("cudaGraphLaunch"))
        .collect();
    let launch = |i: usize| is_launch.get(api.spans.name[i] as usize) == Some(&true);
    if !(0..api.spans.len()).any(launch) {
        return out;
    }
    let mut has_work = vec![false; api.spans.len()];
    for links in [
        &trace.kernels.api_call,
        &trace.memcpys.api_call,
        &trace.memsets.api_call,
        &trace.graphs.api_call,
    ] {
        for &c in links {
            if let Some(flag) = has_work.get_mut(c as usize) {
                *flag = true;
            }
        }
    }
    let mut launches: Vec<(u32, i64, i64, usize)> = (0..api.spans.len())
        .filter(|&i| !has_work[i] && launch(i))
        .map(|i| {
            let pid = pid_of(api.global_tid[i]);
            (pid, api.spans.start_ns[i], api.spans.end_ns[i], i)
        })
        .collect();
    launches.sort_unstable();
    for (pid, start, end, call) in launches {
        let l = out.entry(pid).or_default();
        let max_end = l.max_end_ns.last().map_or(end, |&m| m.max(end));
        l.start_ns.push(start);
        l.max_end_ns.push(max_end);
        l.call.push(call);
    }
    out
}

impl<'t> CauseContext<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        let thread_of_tid = trace
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| (t.global_tid, i))
            .collect();
        let untraced_graphs = untraced_graph_launches(trace);
        let mut processes_of_device: HashMap<u32, Vec<u32>> = HashMap::new();
        if !untraced_graphs.is_empty() {
            for s in &trace.streams {
                let pids = processes_of_device.entry(s.key.device).or_default();
                if !pids.contains(&s.key.pid) {
                    pids.push(s.key.pid);
                }
            }
        }
        Self {
            trace,
            thread_of_tid,
            untraced_graphs,
            processes_of_device,
            host_ranges: HostRanges::new(trace),
        }
    }

    /// The earliest `cudaGraphLaunch*` with no GPU work, of a process with work where the gap is,
    /// that started inside the gap or was in flight at its start.
    fn untraced_graph_in(&self, gap: &IdleGap) -> Option<usize> {
        if self.untraced_graphs.is_empty() {
            return None;
        }
        let of_stream;
        let pids: &[u32] = match gap.stream {
            Some(key) => {
                of_stream = [key.pid];
                &of_stream
            }
            None => self.processes_of_device.get(&gap.device)?,
        };
        pids.iter()
            .filter_map(|pid| self.untraced_graphs.get(pid))
            .filter_map(|l| l.first_overlapping(gap.start_ns, gap.end_ns))
            .min()
            .map(|(_, call)| call)
    }

    /// The cause of `gap` (see the module comment).
    pub fn cause(&self, gap: &IdleGap) -> GapCauseInfo {
        let trace = self.trace;
        let next = self.next_op(gap).or(gap.after);
        let call = next.and_then(|op| launch_call(trace, op));
        let graph_launch = self.untraced_graph_in(gap);
        if graph_launch.is_some() {
            return GapCauseInfo {
                cause: GapCause::UntracedGraph,
                next,
                launch_call: call,
                host: None,
                graph_launch,
                inside: None,
            };
        }
        let Some(l) = call else {
            return GapCauseInfo {
                cause: GapCause::Unknown,
                next,
                launch_call: None,
                host: None,
                graph_launch: None,
                inside: None,
            };
        };
        let spans = &trace.api_calls.spans;
        let (l_start, l_end) = (spans.start_ns[l], spans.end_ns[l]);
        let g0 = gap.start_ns;
        let cause = if l_start >= g0 {
            GapCause::LaunchLate
        } else if l_end >= g0 {
            GapCause::LaunchOverhead
        } else {
            GapCause::Dependency
        };
        let host = (cause == GapCause::LaunchLate).then(|| {
            self.host_breakdown(trace.api_calls.global_tid[l], g0, l_start.min(gap.end_ns))
        });
        let mut info = GapCauseInfo {
            cause,
            next,
            launch_call: call,
            host,
            graph_launch: None,
            inside: None,
        };
        let open = self.host_ranges.of_gap(gap, &info);
        info.inside = open.first().zip(open.last()).map(|(&a, &b)| (a, b));
        info
    }

    /// Causes of many gaps, in their order, in parallel.
    pub fn causes(&self, gaps: &[IdleGap]) -> Vec<GapCauseInfo> {
        gaps.par_iter().map(|g| self.cause(g)).collect()
    }

    /// N: of the operations of the gap's device (or stream) that start at its end, the one whose
    /// launching call started first; ops with a call before ops without; then kind and index.
    fn next_op(&self, gap: &IdleGap) -> Option<GpuOpRef> {
        let trace = self.trace;
        let t = gap.end_ns;
        let mut best: Option<((bool, i64), GpuOpRef)> = None;
        for track in &trace.streams {
            if track.key.device != gap.device || gap.stream.is_some_and(|k| k != track.key) {
                continue;
            }
            let tables = [
                (GpuOpKind::Kernel, &track.kernels, &trace.kernels.spans),
                (GpuOpKind::Memcpy, &track.memcpys, &trace.memcpys.spans),
                (GpuOpKind::Memset, &track.memsets, &trace.memsets.spans),
                (GpuOpKind::Graph, &track.graphs, &trace.graphs.spans),
            ];
            for (kind, slice, spans) in tables {
                for index in starting_at(slice, spans, t) {
                    let op = GpuOpRef { kind, index };
                    let key = match launch_call(trace, op) {
                        Some(c) => (false, trace.api_calls.spans.start_ns[c]),
                        None => (true, 0),
                    };
                    if best.is_none_or(|(k, o)| (key, op) < (k, o)) {
                        best = Some((key, op));
                    }
                }
            }
        }
        best.map(|(_, op)| op)
    }

    /// Splits `[from, to)` on thread `global_tid` into sync / CUDA / OS runtime / untraced time.
    fn host_breakdown(&self, global_tid: i64, from: i64, to: i64) -> HostBreakdown {
        let window = to.saturating_sub(from).max(0);
        let mut out = HostBreakdown {
            untraced_ns: window,
            ..HostBreakdown::default()
        };
        if window == 0 {
            return out;
        }
        let Some(&ti) = self.thread_of_tid.get(&global_tid) else {
            return out;
        };
        let thread = &self.trace.threads[ti];
        let api = &self.trace.api_calls.spans;
        let (mut sync, mut cuda) = (Vec::new(), Vec::new());
        for i in overlapping(&thread.api_calls, api, from, to) {
            let span = (api.start_ns[i], api.end_ns[i]);
            // Only the calls inside a late launch's window are named: no pass over the table.
            if is_sync_call(self.trace.str(api.name[i])) {
                sync.push(span);
            } else {
                cuda.push(span);
            }
        }
        let osrt = &self.trace.osrt.spans;
        let os: Vec<Interval> = overlapping(&thread.osrt, osrt, from, to)
            .into_iter()
            .map(|i| (osrt.start_ns[i], osrt.end_ns[i]))
            .collect();
        let clip = |spans: Vec<Interval>| intervals::clip(&intervals::union(spans), from, to);
        let sync = clip(sync);
        let cuda = intervals::subtract(&clip(cuda), &sync);
        let covered = intervals::union(sync.iter().chain(&cuda).copied().collect());
        let os = intervals::subtract(&clip(os), &covered);
        out.sync_ns = intervals::total_ns(&sync);
        out.cuda_api_ns = intervals::total_ns(&cuda);
        out.osrt_ns = intervals::total_ns(&os);
        out.untraced_ns = window - out.sync_ns - out.cuda_api_ns - out.osrt_ns;
        out
    }
}

/// The causes of `gaps`, in their order (a [`CauseContext`] built for the call).
/// What gaps and their causes read: the GPU work, the calls that launched it and the host calls
/// around a gap.
pub const NEEDS: Needs = Needs::GPU_LINKS.union(Needs::OSRT).union(Needs::NVTX);

pub fn gap_causes(trace: &Trace, gaps: &[IdleGap]) -> Vec<GapCauseInfo> {
    CauseContext::new(trace).causes(gaps)
}

/// Index into `trace.api_calls` of the call that launched `op`.
pub fn launch_call(trace: &Trace, op: GpuOpRef) -> Option<usize> {
    let links = match op.kind {
        GpuOpKind::Kernel => &trace.kernels.api_call,
        GpuOpKind::Memcpy => &trace.memcpys.api_call,
        GpuOpKind::Memset => &trace.memsets.api_call,
        GpuOpKind::Graph => &trace.graphs.api_call,
    };
    links
        .get(op.index)
        .copied()
        .filter(|&c| c != NO_INDEX && (c as usize) < trace.api_calls.spans.len())
        .map(|c| c as usize)
}

/// Table indices of the events of `slice` (sorted by start) that start exactly at `t`.
fn starting_at(slice: &Slice, spans: &Spans, t: i64) -> std::ops::Range<usize> {
    let starts = &spans.start_ns[slice.range.clone()];
    let lo = starts.partition_point(|&s| s < t);
    let hi = starts.partition_point(|&s| s <= t);
    slice.range.start + lo..slice.range.start + hi
}

/// Table indices of the events of `slice` overlapping `[from, to)`.
fn overlapping(slice: &Slice, spans: &Spans, from: i64, to: i64) -> Vec<usize> {
    slice.overlapping(&spans.start_ns, &spans.end_ns, from, to)
}

/// Gaps and total idle time of one cause on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CauseTotal {
    pub device: u32,
    pub cause: GapCause,
    pub gaps: usize,
    pub total_ns: i64,
}

/// Per device, the gaps and idle time of each cause that occurs; by device, then cause order.
pub fn totals_by_cause(gaps: &[IdleGap], causes: &[GapCauseInfo]) -> Vec<CauseTotal> {
    let mut map: HashMap<(u32, GapCause), (usize, i64)> = HashMap::new();
    for (g, c) in gaps.iter().zip(causes) {
        let e = map.entry((g.device, c.cause)).or_default();
        e.0 += 1;
        e.1 += g.duration_ns();
    }
    let mut out: Vec<CauseTotal> = map
        .into_iter()
        .map(|((device, cause), (gaps, total_ns))| CauseTotal {
            device,
            cause,
            gaps,
            total_ns,
        })
        .collect();
    out.sort_unstable_by_key(|t| (t.device, t.cause));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untraced_launch_counts_when_it_starts_in_the_gap_or_is_in_flight_at_its_start() {
        // Launches [10, 20), [15, 60) (long, overlapping the next), [30, 35), [80, 90).
        let mut l = UntracedLaunches::default();
        for (call, (s, e)) in [(10, 20), (15, 60), (30, 35), (80, 90)]
            .into_iter()
            .enumerate()
        {
            let max_end = l.max_end_ns.last().map_or(e, |&m: &i64| m.max(e));
            l.start_ns.push(s);
            l.max_end_ns.push(max_end);
            l.call.push(call);
        }
        let first = |from, to| l.first_overlapping(from, to).map(|(_, c)| c);
        assert_eq!(first(0, 10), None, "a launch at the gap's end is not in it");
        assert_eq!(first(0, 11), Some(0));
        assert_eq!(
            first(20, 25),
            Some(0),
            "ended exactly at the gap's start: in flight"
        );
        assert_eq!(first(21, 25), Some(1));
        assert_eq!(first(61, 80), None);
        assert_eq!(first(61, 81), Some(3));
        assert_eq!(first(36, 40), Some(1));
        assert_eq!(first(91, 100), None);
    }

    #[test]
    fn sync_calls_are_the_ones_the_issue_names() {
        for name in [
            "cudaDeviceSynchronize",
            "cudaStreamSynchronize_v3020",
            "cuCtxSynchronize",
            "cuEventSynchronize",
            "cudaMemcpy",
            "cudaMemcpy_v3020",
            "cudaMemcpy2D",
            "cudaMemcpyToSymbol_v3020",
            "cudaMemset",
            "cudaMemset3D_v3020",
        ] {
            assert!(is_sync_call(name), "{name}");
        }
        for name in [
            "cudaMemcpyAsync",
            "cudaMemcpyAsync_v3020",
            "cudaMemsetAsync",
            "cudaLaunchKernel_v7000",
            "cudaStreamWaitEvent",
            "cudaEventRecord",
            "cudaMemcpyPeerAsync",
        ] {
            assert!(!is_sync_call(name), "{name}");
        }
    }
}
