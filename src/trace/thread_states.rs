//! Thread scheduling (`SCHED_EVENTS`, `--cpuctxsw=process-tree`): the intervals each thread ran
//! on a CPU. A sched-in paired with the next scheduling event of the same thread when that event
//! is a sched-out makes one running interval; anything else is dropped. Sorted by (thread,
//! start): a thread's intervals are the slice [`super::ThreadTrack::running`].

/// The running intervals of every thread, sorted by (thread, start).
#[derive(Debug, Clone, Default)]
pub struct ThreadStates {
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    /// The CPU each interval ran on.
    pub cpu: Vec<u16>,
}

impl ThreadStates {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn heap_bytes(&self) -> usize {
        self.len() * (8 + 8 + 2)
    }
}

/// Running time of one thread's intervals (sorted by start and disjoint, so sorted by end too)
/// clipped to `[t0, t1)`. Two binary searches and a pass over the intervals that overlap.
pub fn running_ns_in(start_ns: &[i64], end_ns: &[i64], t0: i64, t1: i64) -> i64 {
    let lo = end_ns.partition_point(|&e| e <= t0);
    let hi = start_ns.partition_point(|&s| s < t1).max(lo);
    start_ns[lo..hi]
        .iter()
        .zip(&end_ns[lo..hi])
        .map(|(&s, &e)| (e.min(t1) - s.max(t0)).max(0))
        .sum()
}
