//! Time queries over one track's events, which are sorted by start.
//!
//! [`SpanIndex`] is a B-ary summary tree over the sorted events: each level groups `FANOUT` nodes
//! of the level below into a block that records the earliest start, the latest end and the event
//! count. The same tree answers two questions:
//! - "which events overlap [t0, t1)?" — descend only into blocks whose `[start, max_end)`
//!   overlaps the window: O(log n + k) for the non-nested events of a stream or NVTX level;
//! - "what should a zoomed-out view draw?" — stop descending at blocks narrower than a pixel and
//!   draw them as one merged block (the level-of-detail pyramid), so the work follows what is on
//!   screen rather than what is in the trace.
//!
//! It knows nothing of the trace model: it sees two slices, `start_ns` and `end_ns`.

/// Children per block.
pub const FANOUT: usize = 16;

/// Summary of a run of consecutive events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    pub start_ns: i64,
    pub max_end_ns: i64,
    pub count: u32,
}

/// Summary tree over one sorted slice of events.
#[derive(Debug, Default, Clone)]
pub struct SpanIndex {
    /// `levels[0]` summarises runs of `FANOUT` events, `levels[1]` runs of `FANOUT²`, ...
    levels: Vec<Vec<Block>>,
}

/// What a level-of-detail walk yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LodItem {
    /// One event, by its index in the slice.
    Event(usize),
    /// Several events too close to tell apart at this zoom, drawn as one block.
    Merged(Block),
}

impl SpanIndex {
    /// Builds the tree over `start_ns` (sorted ascending) and `end_ns` of the same length.
    pub fn build(start_ns: &[i64], end_ns: &[i64]) -> Self {
        debug_assert_eq!(start_ns.len(), end_ns.len());
        let mut levels = Vec::new();
        if start_ns.len() <= 1 {
            return Self { levels };
        }
        let mut level: Vec<Block> = start_ns
            .chunks(FANOUT)
            .zip(end_ns.chunks(FANOUT))
            .map(|(s, e)| Block {
                start_ns: s[0],
                max_end_ns: e.iter().copied().max().unwrap_or(s[0]),
                count: s.len() as u32,
            })
            .collect();
        loop {
            let done = level.len() <= 1;
            let next: Vec<Block> = level
                .chunks(FANOUT)
                .map(|c| Block {
                    start_ns: c[0].start_ns,
                    max_end_ns: c
                        .iter()
                        .map(|b| b.max_end_ns)
                        .max()
                        .unwrap_or(c[0].max_end_ns),
                    count: c.iter().map(|b| b.count).sum(),
                })
                .collect();
            levels.push(level);
            if done {
                break;
            }
            level = next;
        }
        Self { levels }
    }

    /// Bytes held by the summary levels.
    pub fn heap_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.len() * std::mem::size_of::<Block>())
            .sum()
    }

    /// Calls `visit` with the index of every event overlapping `[t0, t1)`, in start order.
    /// An event overlaps when `start < t1 && end > t0`; an instant (`start == end`) overlaps
    /// when `t0 <= start < t1`.
    pub fn for_each_overlapping(
        &self,
        start_ns: &[i64],
        end_ns: &[i64],
        t0: i64,
        t1: i64,
        mut visit: impl FnMut(usize),
    ) {
        self.walk(start_ns, end_ns, t0, t1, 0, &mut |item| {
            if let LodItem::Event(i) = item {
                visit(i)
            }
        });
    }

    /// Collects the overlapping events into a vector (see [`Self::for_each_overlapping`]).
    pub fn overlapping(&self, start_ns: &[i64], end_ns: &[i64], t0: i64, t1: i64) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_overlapping(start_ns, end_ns, t0, t1, |i| out.push(i));
        out
    }

    /// Level-of-detail walk of `[t0, t1)`: blocks whose whole extent is shorter than
    /// `merge_below_ns` come out as one [`LodItem::Merged`] instead of their events.
    pub fn walk(
        &self,
        start_ns: &[i64],
        end_ns: &[i64],
        t0: i64,
        t1: i64,
        merge_below_ns: i64,
        visit: &mut impl FnMut(LodItem),
    ) {
        if self.levels.is_empty() {
            for i in 0..start_ns.len() {
                if overlaps(start_ns[i], end_ns[i], t0, t1) {
                    visit(LodItem::Event(i));
                }
            }
            return;
        }
        let top = self.levels.len() - 1;
        for b in 0..self.levels[top].len() {
            self.descend(start_ns, end_ns, top, b, t0, t1, merge_below_ns, visit);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        start_ns: &[i64],
        end_ns: &[i64],
        level: usize,
        block: usize,
        t0: i64,
        t1: i64,
        merge_below_ns: i64,
        visit: &mut impl FnMut(LodItem),
    ) {
        let b = self.levels[level][block];
        if !overlaps(b.start_ns, b.max_end_ns, t0, t1) {
            return;
        }
        if b.count > 1 && b.max_end_ns - b.start_ns < merge_below_ns {
            visit(LodItem::Merged(b));
            return;
        }
        let first_child = block * FANOUT;
        if level == 0 {
            let end = (first_child + FANOUT).min(start_ns.len());
            for i in first_child..end {
                if start_ns[i] >= t1 {
                    return;
                }
                if overlaps(start_ns[i], end_ns[i], t0, t1) {
                    visit(LodItem::Event(i));
                }
            }
        } else {
            let below = &self.levels[level - 1];
            let end = (first_child + FANOUT).min(below.len());
            for (offset, child) in below[first_child..end].iter().enumerate() {
                if child.start_ns >= t1 {
                    return;
                }
                let index = first_child + offset;
                self.descend(
                    start_ns,
                    end_ns,
                    level - 1,
                    index,
                    t0,
                    t1,
                    merge_below_ns,
                    visit,
                );
            }
        }
    }
}

fn overlaps(start: i64, end: i64, t0: i64, t1: i64) -> bool {
    start < t1 && (end > t0 || (start == end && start >= t0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small deterministic generator so the test needs no extra crate.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, bound: i64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % bound as u64) as i64
        }
    }

    fn random_track(rng: &mut Lcg, n: usize) -> (Vec<i64>, Vec<i64>) {
        let mut events: Vec<(i64, i64)> = (0..n)
            .map(|_| {
                let s = rng.next(1_000_000);
                // Mostly short, some long (nested-looking) and some instants.
                let len = match rng.next(10) {
                    0 => rng.next(200_000),
                    1 => 0,
                    _ => rng.next(500),
                };
                (s, s + len)
            })
            .collect();
        events.sort();
        events.into_iter().unzip()
    }

    #[test]
    fn overlap_query_equals_brute_force_on_random_intervals() {
        let mut rng = Lcg(42);
        for n in [0usize, 1, 2, 15, 16, 17, 255, 256, 257, 5000] {
            let (s, e) = random_track(&mut rng, n);
            let index = SpanIndex::build(&s, &e);
            for _ in 0..200 {
                let a = rng.next(1_100_000) - 50_000;
                let b = a + rng.next(300_000);
                let fast = index.overlapping(&s, &e, a, b);
                let slow: Vec<usize> = (0..n).filter(|&i| overlaps(s[i], e[i], a, b)).collect();
                assert_eq!(fast, slow, "n={n} window=[{a},{b})");
            }
        }
    }

    /// Back-to-back events like a CUDA stream's or one NVTX depth's: no two overlap.
    fn stream_track(rng: &mut Lcg, n: usize) -> (Vec<i64>, Vec<i64>) {
        let mut t = 0;
        (0..n)
            .map(|_| {
                let start = t + rng.next(100);
                let end = start + 1 + rng.next(50);
                t = end;
                (start, end)
            })
            .unzip()
    }

    fn walk_counts(s: &[i64], e: &[i64], merge: i64) -> (u64, usize) {
        let index = SpanIndex::build(s, e);
        let (mut seen, mut items) = (0u64, 0usize);
        index.walk(s, e, i64::MIN / 2, i64::MAX / 2, merge, &mut |item| {
            items += 1;
            seen += match item {
                LodItem::Event(_) => 1,
                LodItem::Merged(b) => u64::from(b.count),
            }
        });
        (seen, items)
    }

    #[test]
    fn lod_walk_covers_every_event_exactly_once() {
        let mut rng = Lcg(7);
        let (s, e) = random_track(&mut rng, 20_000);
        for merge in [0, 100, 10_000, 1_000_000] {
            let (seen, items) = walk_counts(&s, &e, merge);
            assert_eq!(seen, 20_000, "merge={merge}");
            if merge == 0 {
                assert_eq!(items, 20_000);
            }
        }
        // Zoomed out over a stream-like track (about 100 events per pixel), the walk yields far
        // fewer items than events.
        let (s, e) = stream_track(&mut rng, 20_000);
        let span = s[s.len() - 1] - s[0];
        let (seen, items) = walk_counts(&s, &e, span / 200);
        assert_eq!(seen, 20_000);
        assert!(
            items < 20_000 / 4,
            "merging should shrink the walk: {items}"
        );
        let (_, all) = walk_counts(&s, &e, 0);
        assert_eq!(all, 20_000);
    }
}
