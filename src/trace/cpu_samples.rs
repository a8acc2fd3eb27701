//! CPU samples (`COMPOSITE_EVENTS`, `--sample=process-tree`): one instant per sample on a thread,
//! with the id of its interned call stack. Sixteen bytes a sample; sorted by (thread, time), so
//! the samples of a thread are the contiguous range [`super::ThreadTrack::samples`].

use super::call_stacks::StackId;

/// Every CPU sample of the trace, sorted by (thread, time).
#[derive(Debug, Clone, Default)]
pub struct CpuSamples {
    pub time_ns: Vec<i64>,
    /// Index into `trace.threads`.
    pub thread: Vec<u32>,
    /// The sample's call stack ([`super::NO_STACK`] when the export has none for it).
    pub stack: Vec<StackId>,
}

impl CpuSamples {
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Bytes held on the heap (16 per sample).
    pub fn heap_bytes(&self) -> usize {
        self.len() * (8 + 4 + 4)
    }

    /// Indices of the samples of `range` (one thread's samples) taken in `[t0, t1)`.
    pub fn in_window(
        &self,
        range: std::ops::Range<usize>,
        t0: i64,
        t1: i64,
    ) -> std::ops::Range<usize> {
        let times = &self.time_ns[range.clone()];
        let a = times.partition_point(|&t| t < t0);
        let b = times.partition_point(|&t| t < t1);
        range.start + a..range.start + b
    }
}
