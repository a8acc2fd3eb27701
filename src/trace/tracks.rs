//! Tracks: the rows of the timeline. A track does not own events; it names the contiguous slice of
//! each event table that belongs to it and carries a [`SpanIndex`] per slice for time queries.

use std::ops::Range;

use super::events::RangeKind;
use super::strings::StrId;
use crate::index::SpanIndex;

/// A contiguous run of one event table plus its time index.
#[derive(Debug, Clone, Default)]
pub struct Slice {
    pub range: Range<usize>,
    pub index: SpanIndex,
}

impl Slice {
    /// Builds the slice over `range` of a table whose starts and ends are given.
    pub fn new(range: Range<usize>, start_ns: &[i64], end_ns: &[i64]) -> Self {
        let index = SpanIndex::build(&start_ns[range.clone()], &end_ns[range.clone()]);
        Self { range, index }
    }

    pub fn len(&self) -> usize {
        self.range.len()
    }

    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }

    /// Table indices of the events overlapping `[t0, t1)`.
    pub fn overlapping(&self, start_ns: &[i64], end_ns: &[i64], t0: i64, t1: i64) -> Vec<usize> {
        let base = self.range.start;
        let s = &start_ns[self.range.clone()];
        let e = &end_ns[self.range.clone()];
        let mut out = Vec::new();
        self.index
            .for_each_overlapping(s, e, t0, t1, |i| out.push(base + i));
        out
    }
}

/// Identifies a CUDA stream: nsys stream ids are only unique within a process and context.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamKey {
    pub device: u32,
    pub pid: u32,
    pub context: u32,
    pub stream: u32,
}

/// The GPU operations of one CUDA stream.
#[derive(Debug, Clone, Default)]
pub struct StreamTrack {
    pub key: StreamKey,
    /// Name given with `nvtxNameCudaStream`, if any.
    pub name: Option<StrId>,
    pub kernels: Slice,
    pub memcpys: Slice,
    pub memsets: Slice,
    /// CUDA graph executions traced as a whole (`trace.graphs`).
    pub graphs: Slice,
    /// CUDA graph launches traced node by node (`trace.graph_launches`): groups of this stream's
    /// kernels, memcpys and memsets, not operations of their own.
    pub graph_launches: Slice,
}

impl StreamTrack {
    pub fn op_count(&self) -> usize {
        self.kernels.len() + self.memcpys.len() + self.memsets.len() + self.graphs.len()
    }
}

/// The CPU-side events of one thread.
#[derive(Debug, Clone, Default)]
pub struct ThreadTrack {
    pub global_tid: i64,
    pub pid: u32,
    pub tid: u32,
    pub name: StrId,
    /// `name` is the one the export's `ThreadNames` table gives (rather than one set with NVTX).
    pub name_from_thread_names: bool,
    /// Scheduling priority from `ThreadNames`, when the thread is listed there with one.
    pub priority: Option<i32>,
    pub api_calls: Slice,
    pub osrt: Slice,
    /// NVTX ranges, one slice per nesting depth (index 0 outermost). In a PyTorch trace, the
    /// levels of each [`RangeKind`] follow one another (annotations, operators, Python frames):
    /// `level_kinds` says which kind each level holds.
    pub nvtx_levels: Vec<Slice>,
    /// The kind of each of `nvtx_levels`; empty when all are NVTX.
    pub level_kinds: Vec<RangeKind>,
    /// Set for a lane of GPU-side ranges (a PyTorch trace's `gpu_user_annotation` of that device):
    /// drawn under the GPU, not under a process.
    pub gpu_lane: Option<u32>,
    /// The thread's CPU samples: a range of `trace.cpu_samples`, by time.
    pub samples: Range<usize>,
    /// The thread's running intervals: a slice of `trace.thread_states`.
    pub running: Slice,
    /// Times of the thread's first and last scheduling event (sched-in or out), when it has any.
    pub sched_span: Option<(i64, i64)>,
}

impl ThreadTrack {
    /// What the ranges of level `level` of `nvtx_levels` are.
    pub fn level_kind(&self, level: usize) -> RangeKind {
        self.level_kinds.get(level).copied().unwrap_or_default()
    }

    /// The level of `nvtx_levels` that holds ranges of `kind` at nesting `depth`.
    pub fn level_of(&self, kind: RangeKind, depth: usize) -> Option<usize> {
        if self.level_kinds.is_empty() {
            return (depth < self.nvtx_levels.len()).then_some(depth);
        }
        let first = self.level_kinds.iter().position(|&k| k == kind)?;
        let level = first + depth;
        (self.level_kinds.get(level) == Some(&kind)).then_some(level)
    }
}

/// GPU memory in use by one process on one device, as a step function.
#[derive(Debug, Clone, Default)]
pub struct MemoryUsageTrack {
    pub pid: u32,
    pub device: u32,
    pub samples: Vec<super::events::MemoryUsageSample>,
}
