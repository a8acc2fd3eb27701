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
//! For a late launch, the window `[g0, min(L.start, g1))` on L's thread is split into time inside
//! synchronising CUDA calls ([`is_sync_call`]), inside other CUDA calls, inside OS-runtime calls,
//! and untraced time (CPU work nsys did not record). Calls of one thread nest (the driver calls
//! `ioctl` inside `cudaStreamSynchronize`), so each instant counts once, in the first of those
//! classes that covers it.

use std::collections::HashMap;
use std::sync::LazyLock;

use rayon::prelude::*;
use regex::Regex;

use super::gaps::{GpuOpKind, GpuOpRef, IdleGap};
use super::intervals::{self, Interval};
use crate::trace::{NO_INDEX, Slice, Spans, Trace};

/// Why the GPU waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GapCause {
    LaunchLate,
    LaunchOverhead,
    Dependency,
    Unknown,
}

impl GapCause {
    pub const ALL: [GapCause; 4] = [
        GapCause::LaunchLate,
        GapCause::LaunchOverhead,
        GapCause::Dependency,
        GapCause::Unknown,
    ];

    /// The name the command line prints: `launch-late`, ….
    pub fn label(self) -> &'static str {
        match self {
            GapCause::LaunchLate => "launch-late",
            GapCause::LaunchOverhead => "launch-overhead",
            GapCause::Dependency => "dependency",
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
    /// N: the operation that ended the gap.
    pub next: GpuOpRef,
    /// L: index into `trace.api_calls` of the call that launched N.
    pub launch_call: Option<usize>,
    /// `[g0, min(L.start, g1))`, split by what L's thread did; only for [`GapCause::LaunchLate`].
    pub host: Option<HostBreakdown>,
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
}

impl<'t> CauseContext<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        let thread_of_tid = trace
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| (t.global_tid, i))
            .collect();
        Self {
            trace,
            thread_of_tid,
        }
    }

    /// The cause of `gap` (see the module comment).
    pub fn cause(&self, gap: &IdleGap) -> GapCauseInfo {
        let trace = self.trace;
        let next = self.next_op(gap).unwrap_or(gap.after);
        let call = launch_call(trace, next);
        let Some(l) = call else {
            return GapCauseInfo {
                cause: GapCause::Unknown,
                next,
                launch_call: None,
                host: None,
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
        GapCauseInfo {
            cause,
            next,
            launch_call: call,
            host,
        }
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
