//! What bounds a step: the critical path of a time range — the chain of dependent work across CPU
//! threads, CUDA streams, copies and synchronizations that runs from the range's start to its end
//! — and its breakdown by what each part of the chain is.
//!
//! The graph follows HTA's `critical_path_analysis` (hta/analyzers/critical_path_analysis.py,
//! 0.5) where it applies, and goes further where one thread waits for another; nodes are the
//! starts and ends of events, edges carry time:
//! - **CPU** ([`threads`]): on each thread of the step's process, its CUDA calls, CPU ranges
//!   (PyTorch operators, as HTA; in an nsys export, which has no operators, the NVTX ranges inside
//!   the range, the iteration's own included; not those around it) and OS-runtime calls, walked
//!   in nesting order; the time between consecutive boundaries inside a top-level event is CPU
//!   work of that thread. The time between two top-level events is the thread's untraced time
//!   (counted as its CPU at half the weight); where the thread waits — there, in a blocking
//!   OS-runtime call, in a host synchronization — the path may follow another thread's work and
//!   come back when the wait ends (HTA keeps the path on one thread).
//! - **Launch**: a GPU operation whose stream had nothing queued when its call began (the
//!   operation before it on the stream had ended) depends on the call: the edge from the call's
//!   start to the operation's start is launch latency. Otherwise it depends on the operation
//!   before it on its stream: the time between is GPU idle.
//! - **Cross-stream**: an operation launched after a `cudaStreamWaitEvent` on its thread (since
//!   the stream's previous launch) depends on the work the event was recorded after: where the
//!   trace names the event (an nsys synchronization row of type stream-wait with its `eventId`,
//!   and the event's record in `CUPTI_ACTIVITY_KIND_CUDA_EVENT`), the last operation launched to
//!   the recorded stream before the record call; where it does not (PyTorch traces whose sync
//!   events write `wait_on_cuda_event_record_corr_id: -1`, older nsys exports), the operation of
//!   another stream of its device that ended last before it started. The time between is GPU
//!   idle. HTA takes this edge only from a PyTorch sync event that names the record.
//! - **Host waits**: a stream, event, device or context synchronize, or a copy whose operation
//!   ends inside its call, carries no weight of its own (as in HTA): the path runs through the GPU
//!   work the call waited for (the last operation to end inside the call on the stream the
//!   synchronization row names, or on each stream of the process), then on from the call's return.
//! - **GPU work**: kernels, CUDA graph executions (as kernels), copies by direction and memsets
//!   weigh their duration; NCCL and other collective kernels are communication.
//!
//! The path is the one with the most traced work; its time before its first event, after its
//! last, and on edges that carry no time (a wait's hand-over to another thread, a sync's return)
//! is [`Part::Unattributed`], so that its parts always sum to the range's length.
//!
//! Where we differ from HTA: the path spans the step across threads; copies and memsets are parts
//! of their own (HTA counts them as GPU compute); nsys exports are read too; cross-stream edges are
//! inferred where the trace does not name the event record; every time is clipped to the range.

mod graph;
pub mod prepare;
mod threads;

use std::sync::Arc;

use rayon::prelude::*;

pub use prepare::Prepared;
pub use threads::is_blocking_os_call;

use crate::trace::{StreamKey, Trace, TraceFormat};

/// What a stretch of the path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    Cpu,
    Kernels,
    CopyH2D,
    CopyD2H,
    CopyOther,
    Memset,
    Communication,
    LaunchLatency,
    GpuIdle,
    Unattributed,
}

impl Part {
    pub const ALL: [Part; 10] = [
        Part::Cpu,
        Part::Kernels,
        Part::CopyH2D,
        Part::CopyD2H,
        Part::CopyOther,
        Part::Memset,
        Part::Communication,
        Part::LaunchLatency,
        Part::GpuIdle,
        Part::Unattributed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Part::Cpu => "CPU",
            Part::Kernels => "Kernels",
            Part::CopyH2D => "Copies H2D",
            Part::CopyD2H => "Copies D2H",
            Part::CopyOther => "Copies Other",
            Part::Memset => "Memset",
            Part::Communication => "Communication",
            Part::LaunchLatency => "Launch Latency",
            Part::GpuIdle => "GPU Idle",
            Part::Unattributed => "Unattributed",
        }
    }

    /// Work that runs on the GPU (not CPU, latency, idle or unattributed).
    pub fn is_gpu_work(self) -> bool {
        !matches!(
            self,
            Part::Cpu | Part::LaunchLatency | Part::GpuIdle | Part::Unattributed
        )
    }
}

/// The timeline row a segment lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathRow {
    Stream(StreamKey),
    /// A CPU thread, by `globalTid`.
    Thread(i64),
}

/// One stretch of the path: a part, on one row, inside one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub part: Part,
    pub row: PathRow,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The event the time is attributed to (a kernel, a call, an operator).
    pub event: Arc<str>,
}

/// The critical path of a range.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CriticalPath {
    pub start_ns: i64,
    pub end_ns: i64,
    /// In path order; each starts at or after the end of the one before.
    pub segments: Vec<Segment>,
    /// Time per part, in [`Part::ALL`] order; sums to [`CriticalPath::path_ns`], which is the
    /// range's length.
    pub parts_ns: [i64; 10],
    /// CPU time per thread (`globalTid`, ns), largest first.
    pub cpu_by_thread: Vec<(i64, i64)>,
    /// What the trace could not tell (edges unknown, and what to record next time).
    pub notes: Vec<String>,
}

impl CriticalPath {
    /// The path's length: the sum of its parts.
    pub fn path_ns(&self) -> i64 {
        self.parts_ns.iter().sum()
    }

    pub fn part_ns(&self, part: Part) -> i64 {
        let i = Part::ALL.iter().position(|&p| p == part).unwrap_or(0);
        self.parts_ns[i]
    }

    /// The part holding most of the path, `None` for an empty path.
    /// Unattributed time bounds nothing: it is what the trace cannot say.
    pub fn bound_by(&self) -> Option<Part> {
        Part::ALL
            .iter()
            .zip(self.parts_ns)
            .filter(|&(&p, ns)| ns > 0 && p != Part::Unattributed)
            .max_by_key(|&(_, ns)| ns)
            .map(|(&p, _)| p)
    }
}

/// Whose work a path may run through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// Only the threads of this process (a step's); `None`: every process.
    pub pid: Option<u32>,
    /// The thread the range is on (a step's range): its time from the range's start to its
    /// first event and from its last event to the range's end is its own.
    pub home: Option<i64>,
    /// Threads of the process left out: those that run steps of their own (one thread per GPU,
    /// a server's workers), whose work is their steps', not this one's.
    pub excluded: Arc<Vec<i64>>,
}

impl Scope {
    /// The scope of a range of the trace's ranges (`trace.nvtx` index): its thread and process.
    pub fn of_range(trace: &Trace, nvtx: usize) -> Self {
        let home = trace.nvtx.global_tid.get(nvtx).copied();
        Self {
            pid: home.map(crate::trace::pid_of),
            home,
            excluded: Arc::default(),
        }
    }

    /// Does the path run through thread `global_tid` of process `pid`?
    pub fn includes(&self, pid: u32, global_tid: i64) -> bool {
        self.pid.is_none_or(|p| p == pid)
            && (Some(global_tid) == self.home || !self.excluded.contains(&global_tid))
    }
}

/// The critical path of `[start_ns, end_ns]` over the threads of `scope`.
pub fn critical_path(
    trace: &Trace,
    prepared: &Prepared,
    start_ns: i64,
    end_ns: i64,
    scope: Scope,
) -> CriticalPath {
    let mut path = graph::longest_path(trace, prepared, start_ns, end_ns, &scope);
    path.notes = notes(trace);
    path
}

/// The critical paths of many ranges over every process (a selection), in parallel, in the
/// order given.
pub fn critical_paths(trace: &Trace, ranges: &[(i64, i64)]) -> Vec<CriticalPath> {
    let scoped: Vec<(i64, i64, Scope)> = ranges
        .iter()
        .map(|&(s, e)| (s, e, Scope::default()))
        .collect();
    scoped_paths(trace, &scoped)
}

/// The critical path of each iteration, through every thread of its process but those that run
/// iterations of their own, in parallel.
pub fn step_paths(
    trace: &Trace,
    steps: &[crate::analysis::iterations::Iteration],
) -> Vec<CriticalPath> {
    let homes: Vec<i64> = steps
        .iter()
        .filter_map(|it| trace.nvtx.global_tid.get(it.nvtx).copied())
        .collect();
    let excluded = Arc::new(crate::analysis::iterations::instance_threads(&homes));
    let scoped: Vec<(i64, i64, Scope)> = steps
        .iter()
        .map(|it| {
            let scope = Scope {
                excluded: Arc::clone(&excluded),
                ..Scope::of_range(trace, it.nvtx)
            };
            (it.start_ns, it.end_ns, scope)
        })
        .collect();
    scoped_paths(trace, &scoped)
}

/// The critical paths of ranges with their scopes, in parallel, in the order given.
pub fn scoped_paths(trace: &Trace, ranges: &[(i64, i64, Scope)]) -> Vec<CriticalPath> {
    let prepared = Prepared::new(trace);
    let notes = notes(trace);
    ranges
        .par_iter()
        .map(|(s, e, scope)| {
            let mut path = graph::longest_path(trace, &prepared, *s, *e, scope);
            path.notes = notes.clone();
            path
        })
        .collect()
}

/// What the trace cannot tell, and what to record next time.
pub fn notes(trace: &Trace) -> Vec<String> {
    let mut out = Vec::new();
    if trace.api_calls.spans.is_empty() {
        out.push(
            "No CUDA calls in the trace: launches and host waits are unknown, so the path is \
             the GPU work alone. Record CUDA API calls (nsys profile -t cuda; PyTorch's profiler \
             with ProfilerActivity.CUDA)."
                .into(),
        );
    }
    if trace.syncs.spans.is_empty() && !trace.api_calls.spans.is_empty() {
        out.push(match trace.format {
            TraceFormat::Kineto => "No CUDA sync events: which stream each synchronize waited \
                for is unknown (every stream of the process is assumed). Record them with \
                torch.profiler.profile(experimental_config=torch._C._profiler._ExperimentalConfig(\
                enable_cuda_sync_events=True))."
                .into(),
            _ => "No CUDA synchronization rows: which stream each synchronize waited for is \
                unknown (every stream of the process is assumed)."
                .into(),
        });
    }
    out
}
