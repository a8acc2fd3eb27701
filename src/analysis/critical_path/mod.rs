//! What bounds a step: the critical path of a time range — the chain of dependent work across CPU
//! threads, CUDA streams, copies and synchronizations that sets the range's length — and its
//! breakdown by what each part of the chain is.
//!
//! The graph follows HTA's `critical_path_analysis` (hta/analyzers/critical_path_analysis.py,
//! 0.5) where it applies; nodes are the starts and ends of events, edges carry time:
//! - **CPU**: on each thread, its CUDA calls and CPU ranges (PyTorch operators, as HTA; in an
//!   nsys export, which has no operators, the NVTX ranges inside the range, the iteration's own
//!   included, so that the thread's time between CUDA calls counts; not those around it) that
//!   start in the range, walked in nesting order; the time between consecutive boundaries inside
//!   a top-level event is CPU work of that thread, the time between two top-level events is free
//!   (a zero-weight edge), as in HTA.
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
//! Where we differ from HTA: copies and memsets are parts of their own (HTA counts them as GPU
//! compute); nsys exports are read too; cross-stream edges are inferred where the trace does not
//! name the event record; every time is clipped to the range, so the path is never longer than the
//! range and its parts sum to it.

mod graph;
pub mod prepare;

use std::sync::Arc;

use rayon::prelude::*;

pub use prepare::Prepared;

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
}

impl Part {
    pub const ALL: [Part; 9] = [
        Part::Cpu,
        Part::Kernels,
        Part::CopyH2D,
        Part::CopyD2H,
        Part::CopyOther,
        Part::Memset,
        Part::Communication,
        Part::LaunchLatency,
        Part::GpuIdle,
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
        }
    }

    /// Work that runs on the GPU (not CPU, latency or idle).
    pub fn is_gpu_work(self) -> bool {
        !matches!(self, Part::Cpu | Part::LaunchLatency | Part::GpuIdle)
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
    /// Time per part, in [`Part::ALL`] order; sums to [`CriticalPath::path_ns`].
    pub parts_ns: [i64; 9],
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
    pub fn bound_by(&self) -> Option<Part> {
        Part::ALL
            .iter()
            .zip(self.parts_ns)
            .filter(|&(_, ns)| ns > 0)
            .max_by_key(|&(_, ns)| ns)
            .map(|(&p, _)| p)
    }
}

/// The critical path of `[start_ns, end_ns]`.
pub fn critical_path(
    trace: &Trace,
    prepared: &Prepared,
    start_ns: i64,
    end_ns: i64,
) -> CriticalPath {
    let mut path = graph::longest_path(trace, prepared, start_ns, end_ns);
    path.notes = notes(trace);
    path
}

/// The critical paths of many ranges, in parallel, in the order given.
pub fn critical_paths(trace: &Trace, ranges: &[(i64, i64)]) -> Vec<CriticalPath> {
    let prepared = Prepared::new(trace);
    let notes = notes(trace);
    ranges
        .par_iter()
        .map(|&(s, e)| {
            let mut path = graph::longest_path(trace, &prepared, s, e);
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
