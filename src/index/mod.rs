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
//! Each block also records its longest event and the widest gap between its events, so that a
//! painter that already draws a stretch as one merged run can take a whole block into that run
//! without opening it ([`SpanIndex::walk_absorbing`]).
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
    /// The longest event's duration (ns), saturated at `u32::MAX`.
    pub max_duration_ns: u32,
    /// At least the widest gap (ns, saturated) between an event's start and the latest end of
    /// the block's events before it; 0 when each event starts before the earlier ones have
    /// ended. Exact for the lowest level; above it, a gap inside a child block counts unless an
    /// earlier child ends after all of that child's events, though a long event of an earlier
    /// child may cover it in part.
    pub max_gap_ns: u32,
}

impl Block {
    /// The block of one event.
    fn of_event(start_ns: i64, end_ns: i64) -> Self {
        Self {
            start_ns,
            max_end_ns: end_ns,
            count: 1,
            max_duration_ns: saturate(end_ns - start_ns),
            max_gap_ns: 0,
        }
    }

    /// The block of consecutive blocks (or events), in start order.
    fn of_run(run: impl IntoIterator<Item = Block>) -> Option<Self> {
        let mut run = run.into_iter();
        let mut block = run.next()?;
        for next in run {
            let gap = saturate(next.start_ns - block.max_end_ns);
            let inner = if block.max_end_ns >= next.max_end_ns {
                0
            } else {
                next.max_gap_ns
            };
            block.max_gap_ns = block.max_gap_ns.max(inner).max(gap);
            block.max_duration_ns = block.max_duration_ns.max(next.max_duration_ns);
            block.max_end_ns = block.max_end_ns.max(next.max_end_ns);
            block.count += next.count;
        }
        Some(block)
    }
}

fn saturate(ns: i64) -> u32 {
    ns.clamp(0, i64::from(u32::MAX)) as u32
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

/// What [`SpanIndex::walk_absorbing`] asks and hands out.
pub trait LodVisitor {
    /// Called before the walk opens `opening`'s block: true when the visitor accounts for
    /// every item the block would yield, so that the walk skips it.
    fn absorb(&mut self, opening: &Opening<'_>) -> bool;
    fn visit(&mut self, item: LodItem);
}

/// A block that [`SpanIndex::walk_absorbing`] is about to open: too wide to merge, and with
/// every event inside the walked window, so that the walk would yield each of its events or
/// merged sub-blocks.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub block: Block,
    index: &'a SpanIndex,
    start_ns: &'a [i64],
    level: usize,
    position: usize,
    merge_below_ns: i64,
}

impl Opening<'_> {
    /// Start of the last item the walk would yield for the block (its last event, or the start
    /// of its last merged sub-block): down its last children to a merged block or an event.
    pub fn last_item_start_ns(&self) -> i64 {
        let (mut level, mut position) = (self.level, self.position);
        loop {
            let first_child = position * FANOUT;
            if level == 0 {
                let last = (first_child + FANOUT).min(self.start_ns.len()) - 1;
                return self.start_ns[last];
            }
            let below = &self.index.levels[level - 1];
            let last = (first_child + FANOUT).min(below.len()) - 1;
            let c = below[last];
            if c.count > 1 && c.max_end_ns - c.start_ns < self.merge_below_ns {
                return c.start_ns;
            }
            level -= 1;
            position = last;
        }
    }

    /// Whether one of the block's children would come out merged ([`LodItem::Merged`]).
    pub fn merges_a_child(&self) -> bool {
        if self.level == 0 {
            return false;
        }
        let below = &self.index.levels[self.level - 1];
        let first_child = self.position * FANOUT;
        below[first_child..(first_child + FANOUT).min(below.len())]
            .iter()
            .any(|c| c.count > 1 && c.max_end_ns - c.start_ns < self.merge_below_ns)
    }

    /// The block's events (indices into the slice) when it is a block of events (the lowest
    /// level), whose items are then exactly these events.
    pub fn events(&self) -> Option<std::ops::Range<usize>> {
        let first = self.position * FANOUT;
        (self.level == 0).then(|| first..(first + FANOUT).min(self.start_ns.len()))
    }
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
            .filter_map(|(s, e)| {
                Block::of_run(s.iter().zip(e).map(|(&s, &e)| Block::of_event(s, e)))
            })
            .collect();
        loop {
            let done = level.len() <= 1;
            let next: Vec<Block> = level
                .chunks(FANOUT)
                .filter_map(|c| Block::of_run(c.iter().copied()))
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

    /// [`Self::walk`], asking the visitor before opening a block that lies wholly inside
    /// `[t0, t1)` whether it absorbs it ([`LodVisitor::absorb`]): the walk then skips it.
    pub fn walk_absorbing(
        &self,
        start_ns: &[i64],
        end_ns: &[i64],
        t0: i64,
        t1: i64,
        merge_below_ns: i64,
        visitor: &mut impl LodVisitor,
    ) {
        if self.levels.is_empty() {
            self.walk(start_ns, end_ns, t0, t1, merge_below_ns, &mut |item| {
                visitor.visit(item)
            });
            return;
        }
        let top = self.levels.len() - 1;
        let mut walk = Walk {
            start_ns,
            end_ns,
            t0,
            t1,
            merge_below_ns,
            visitor,
        };
        for b in 0..self.levels[top].len() {
            self.descend_absorbing(&mut walk, top, b);
        }
    }

    fn descend_absorbing(&self, w: &mut Walk<'_, impl LodVisitor>, level: usize, block: usize) {
        let b = self.levels[level][block];
        if !overlaps(b.start_ns, b.max_end_ns, w.t0, w.t1) {
            return;
        }
        if b.count > 1 && b.max_end_ns - b.start_ns < w.merge_below_ns {
            w.visitor.visit(LodItem::Merged(b));
            return;
        }
        if b.count > 1 && b.start_ns >= w.t0 && b.max_end_ns < w.t1 {
            let opening = Opening {
                block: b,
                index: self,
                start_ns: w.start_ns,
                level,
                position: block,
                merge_below_ns: w.merge_below_ns,
            };
            if w.visitor.absorb(&opening) {
                return;
            }
        }
        let first_child = block * FANOUT;
        if level == 0 {
            let end = (first_child + FANOUT).min(w.start_ns.len());
            for i in first_child..end {
                if w.start_ns[i] >= w.t1 {
                    return;
                }
                if overlaps(w.start_ns[i], w.end_ns[i], w.t0, w.t1) {
                    w.visitor.visit(LodItem::Event(i));
                }
            }
        } else {
            let end = (first_child + FANOUT).min(self.levels[level - 1].len());
            for index in first_child..end {
                if self.levels[level - 1][index].start_ns >= w.t1 {
                    return;
                }
                self.descend_absorbing(w, level - 1, index);
            }
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

/// The state of one [`SpanIndex::walk_absorbing`].
struct Walk<'a, V> {
    start_ns: &'a [i64],
    end_ns: &'a [i64],
    t0: i64,
    t1: i64,
    merge_below_ns: i64,
    visitor: &'a mut V,
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

    /// The events (indices) under block `position` of `level`.
    fn block_events(level: usize, position: usize, n: usize) -> std::ops::Range<usize> {
        let width = FANOUT.pow(level as u32 + 1);
        (position * width).min(n)..((position + 1) * width).min(n)
    }

    #[test]
    fn block_summaries_equal_brute_force() {
        let mut rng = Lcg(11);
        for n in [2usize, 16, 17, 300, 5_000] {
            let (s, e) = random_track(&mut rng, n);
            let index = SpanIndex::build(&s, &e);
            for (level, blocks) in index.levels.iter().enumerate() {
                for (position, b) in blocks.iter().enumerate() {
                    let events = block_events(level, position, n);
                    let mut latest_end = i64::MIN;
                    let mut max_gap = 0;
                    for i in events.clone() {
                        if i > events.start {
                            max_gap = max_gap.max(s[i] - latest_end);
                        }
                        latest_end = latest_end.max(e[i]);
                    }
                    let longest = events.clone().map(|i| e[i] - s[i]).max().unwrap_or(0);
                    assert_eq!(b.start_ns, s[events.start]);
                    assert_eq!(b.max_end_ns, latest_end);
                    assert_eq!(b.count as usize, events.len());
                    assert_eq!(i64::from(b.max_duration_ns), longest);
                    if level == 0 {
                        assert_eq!(i64::from(b.max_gap_ns), max_gap);
                    } else {
                        assert!(i64::from(b.max_gap_ns) >= max_gap);
                    }
                }
            }
        }
    }

    /// What an opening says: its level and position, its last item's start, whether a child
    /// merges, its events when it is a block of events.
    type Said = (usize, usize, i64, bool, Option<std::ops::Range<usize>>);

    /// Records what each opening says, absorbing none.
    struct Openings(Vec<Said>);

    impl LodVisitor for Openings {
        fn absorb(&mut self, o: &Opening<'_>) -> bool {
            let said = (o.last_item_start_ns(), o.merges_a_child(), o.events());
            self.0.push((o.level, o.position, said.0, said.1, said.2));
            false
        }
        fn visit(&mut self, _: LodItem) {}
    }

    #[test]
    fn openings_describe_the_items_the_walk_yields() {
        let mut rng = Lcg(12);
        let (s, e) = random_track(&mut rng, 5_000);
        let index = SpanIndex::build(&s, &e);
        let mut opened = 0;
        for merge in [0, 50, 500, 5_000, 50_000] {
            for _ in 0..20 {
                let t0 = rng.next(1_100_000) - 50_000;
                let t1 = t0 + rng.next(600_000);
                let mut items = Vec::new();
                index.walk(&s, &e, t0, t1, merge, &mut |item| items.push(item));
                // Each item's first event: an event, or the first event of a merged block.
                let first_event = |item: &LodItem| match item {
                    LodItem::Event(i) => *i,
                    LodItem::Merged(b) => s.partition_point(|&x| x < b.start_ns),
                };
                let mut openings = Openings(Vec::new());
                index.walk_absorbing(&s, &e, t0, t1, merge, &mut openings);
                for (level, position, last_start, merges, events) in openings.0 {
                    opened += 1;
                    let range = block_events(level, position, s.len());
                    let inside: Vec<&LodItem> = items
                        .iter()
                        .filter(|item| range.contains(&first_event(item)))
                        .collect();
                    let last = inside.last().expect("an opened block yields items");
                    let last_start = match last {
                        LodItem::Event(i) => s[*i] == last_start,
                        LodItem::Merged(b) => b.start_ns == last_start,
                    };
                    assert!(last_start, "level {level} block {position}");
                    if merges {
                        assert!(inside.iter().any(|i| matches!(i, LodItem::Merged(_))));
                    }
                    if let Some(events) = events {
                        assert_eq!(level, 0);
                        let yielded: Vec<usize> = inside.iter().map(|i| first_event(i)).collect();
                        assert_eq!(yielded, events.collect::<Vec<_>>());
                    }
                }
            }
        }
        assert!(opened > 100, "{opened} openings");
    }
}
