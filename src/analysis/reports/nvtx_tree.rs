//! The NVTX range tree that `nvtx_pushpop_trace`, `nvtx_kern_sum` and the GPU projection
//! reports share (Nsight Systems 2023.4.4 `nvtx_pushpop_trace.py`, `nvtx_kern_sum.py`,
//! `nvtx_gpu_proj_trace.py`, `nvtx_gpu_proj_sum.py`): which ranges a report looks at, the end it
//! gives an unclosed one, and each range's parent, level and range stack.
//!
//! nsys's rule for the parent (its `NVTX_PARENT` table): of the other ranges of the same thread
//! that enclose a range (`start <= child.start && end >= child.end`), the one with the least
//! `(child.start - start) + (end - child.end)`, i.e. the shortest. The level is the depth in the
//! resulting forest and the range stack the rowids from the root down (`:3:4`). Found here by one
//! sweep per thread in start order with a prefix-minimum tree over the ends, so start/end ranges
//! that overlap without nesting get the same parent nsys gives them, in O(n log n).

use std::cmp::Reverse;
use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use crate::analysis::NsysFormat;
use crate::analysis::filter::{EventTable, Filter};
use crate::analysis::table::CellText;
use crate::trace::{NO_INDEX, NvtxStyle, StrId, StringTable, Trace};

/// The name the NVTX reports print for a range (the rule of
/// [`super::classic::nvtx_printed_name`], from the ids). Nsight Systems 2023.4 (`CASE WHEN
/// d.name NOT NULL …`): `domain:text`, or `text` in the default domain, and `None` for a range
/// without text, which `d.name || ':' || text` makes NULL even in a named domain. 2025.3
/// (`coalesce(d.name, '') || ':' || coalesce(text, '')`): always `domain:text`, so `:text` in the
/// default domain and `domain:` without text. The model keeps no difference between a NULL and
/// an empty text, so an empty one is taken for NULL.
pub fn printed_name(
    trace: &Trace,
    domain: StrId,
    text: StrId,
    format: NsysFormat,
) -> Option<String> {
    match format {
        NsysFormat::V2023_4 if text == StringTable::EMPTY => None,
        NsysFormat::V2023_4 if domain == StringTable::EMPTY => Some(trace.str(text).to_string()),
        _ => Some(format!("{}:{}", trace.str(domain), trace.str(text))),
    }
}

/// [`printed_name`] as a cell's text: the trace's own strings referred to, not copied, so a
/// row dump naming one long text on many rows holds it once.
pub fn printed_text(
    trace: &Trace,
    domain: StrId,
    text: StrId,
    format: NsysFormat,
) -> Option<CellText> {
    match format {
        NsysFormat::V2023_4 if text == StringTable::EMPTY => None,
        NsysFormat::V2023_4 if domain == StringTable::EMPTY => Some(trace.shared_str(text).into()),
        _ => Some(CellText::joined([
            trace.shared_str(domain),
            Arc::from(":"),
            trace.shared_str(text),
        ])),
    }
}

/// Which NVTX ranges a report relates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKinds {
    /// Push/pop ranges only (`nvtx_pushpop_trace`).
    PushPop,
    /// Push/pop and start/end ranges, less start/end ranges ended on another thread
    /// (`endGlobalTid IS NULL`: `nvtx_kern_sum`, the GPU projection).
    SameThreadRanges,
}

impl RangeKinds {
    /// Does the report's timestamp extent (`NVTX_EVENTS_MINMAXTS`) count ranges of `style`?
    fn counts_style(self, style: NvtxStyle) -> bool {
        match self {
            RangeKinds::PushPop => style == NvtxStyle::PushPop,
            RangeKinds::SameThreadRanges => style != NvtxStyle::Mark,
        }
    }
}

/// The ranges a report sees, ordered by (thread, start, longest first, rowid), with their tree.
/// A "position" is an index into [`RangeForest::ranges`].
#[derive(Debug, Default)]
pub struct RangeForest {
    /// Indices into `trace.nvtx`.
    pub ranges: Vec<u32>,
    /// End of each range: an unclosed one ends at the largest start or end among the ranges the
    /// report counts (its `NVTX_EVENTS_MINMAXTS`), which is not the end `nvtx_sum` gives it.
    pub end_ns: Vec<i64>,
    /// Position of the parent, [`NO_INDEX`] for a root.
    pub parent: Vec<u32>,
    /// Depth in the forest, 0 for a root.
    pub level: Vec<u32>,
    /// Each thread's `globalTid` and positions.
    pub threads: Vec<(i64, Range<usize>)>,
}

impl RangeForest {
    /// The ranges of `kinds` that `filter` keeps, with their parents and levels.
    pub fn build(trace: &Trace, filter: &Filter, kinds: RangeKinds) -> RangeForest {
        let n = &trace.nvtx;
        let kept: Vec<usize> = filter
            .indices(trace, EventTable::Nvtx)
            .into_iter()
            .filter(|&i| n.style.get(i).is_some_and(|&s| kinds.counts_style(s)))
            .collect();
        let unclosed = |i: usize| n.unclosed.get(i).copied().unwrap_or(false);
        let last_ns = kept
            .iter()
            .map(|&i| {
                let start = n.spans.start_ns[i];
                if unclosed(i) {
                    start
                } else {
                    start.max(n.spans.end_ns[i])
                }
            })
            .max()
            .unwrap_or(0);
        let tid = |i: usize| n.global_tid.get(i).copied().unwrap_or(0);
        let row_id = |i: usize| n.row_id.get(i).copied().unwrap_or(i as i64);
        let end = |i: usize| {
            if unclosed(i) {
                last_ns
            } else {
                n.spans.end_ns[i]
            }
        };
        let mut ranges: Vec<u32> = kept
            .into_iter()
            .filter(|&i| {
                kinds == RangeKinds::PushPop
                    || !n.ended_on_other_thread.get(i).copied().unwrap_or(false)
            })
            .map(|i| i as u32)
            .collect();
        ranges.sort_unstable_by_key(|&i| {
            let i = i as usize;
            (tid(i), n.spans.start_ns[i], Reverse(end(i)), row_id(i))
        });
        let end_ns: Vec<i64> = ranges.iter().map(|&i| end(i as usize)).collect();
        let mut threads: Vec<(i64, Range<usize>)> = Vec::new();
        for (p, &i) in ranges.iter().enumerate() {
            let t = tid(i as usize);
            match threads.last_mut() {
                Some((last, r)) if *last == t => r.end = p + 1,
                _ => threads.push((t, p..p + 1)),
            }
        }
        let mut forest = RangeForest {
            parent: vec![NO_INDEX; ranges.len()],
            level: vec![0; ranges.len()],
            ranges,
            end_ns,
            threads,
        };
        for t in 0..forest.threads.len() {
            let rows = forest.threads[t].1.clone();
            forest.link_thread(trace, rows);
        }
        forest
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Index into `trace.nvtx` of position `p`.
    pub fn nvtx_index(&self, p: usize) -> usize {
        self.ranges[p] as usize
    }

    pub fn start_ns(&self, trace: &Trace, p: usize) -> i64 {
        trace.nvtx.spans.start_ns[self.nvtx_index(p)]
    }

    pub fn duration_ns(&self, trace: &Trace, p: usize) -> i64 {
        self.end_ns[p] - self.start_ns(trace, p)
    }

    /// The NVTX_EVENTS rowid nsys prints as `RangeId`.
    pub fn range_id(&self, trace: &Trace, p: usize) -> i64 {
        let i = self.nvtx_index(p);
        trace.nvtx.row_id.get(i).copied().unwrap_or(i as i64)
    }

    /// Position of the parent of `p`, if any.
    pub fn parent_of(&self, p: usize) -> Option<usize> {
        let parent = self.parent[p];
        (parent != NO_INDEX).then_some(parent as usize)
    }

    /// `:root:…:p`, the rowids from the root down to `p` (nsys's `RangeStack`).
    pub fn range_stack(&self, trace: &Trace, p: usize) -> String {
        let mut chain = vec![p];
        while let Some(parent) = chain.last().and_then(|&q| self.parent_of(q)) {
            chain.push(parent);
        }
        let mut out = String::new();
        for &q in chain.iter().rev() {
            let _ = write!(out, ":{}", self.range_id(trace, q));
        }
        out
    }

    /// Sets parent and level of the positions `rows` (one thread, in start order).
    ///
    /// Every range before `p` starts no later than it, so the candidates for its parent are the
    /// earlier ranges that end no earlier; a prefix-minimum tree over the ends, ranked from the
    /// latest, gives the shortest of them. Equal durations go to the later position, so that
    /// identical ranges nest in file order and a range inside them hangs from the last one
    /// (nsys leaves such ties to SQLite's scan order).
    fn link_thread(&mut self, trace: &Trace, rows: Range<usize>) {
        let mut ends: Vec<i64> = self.end_ns[rows.clone()].to_vec();
        ends.sort_unstable_by_key(|&e| Reverse(e));
        ends.dedup();
        let rank = |e: i64| ends.partition_point(|&x| x > e);
        let mut shortest = PrefixMin::new(ends.len());
        for p in rows {
            let r = rank(self.end_ns[p]);
            if let Some((_, Reverse(parent))) = shortest.min_upto(r) {
                self.parent[p] = parent;
                self.level[p] = self.level[parent as usize] + 1;
            }
            shortest.insert(r, (self.duration_ns(trace, p), Reverse(p as u32)));
        }
    }
}

/// (duration, position) of a candidate parent: the least wins.
type Candidate = (i64, Reverse<u32>);

/// A Fenwick tree answering "least value among slots `0..=i`" under inserts.
struct PrefixMin {
    tree: Vec<Option<Candidate>>,
}

impl PrefixMin {
    fn new(len: usize) -> Self {
        Self {
            tree: vec![None; len + 1],
        }
    }

    fn insert(&mut self, slot: usize, value: Candidate) {
        let mut i = slot + 1;
        while i < self.tree.len() {
            let cell = &mut self.tree[i];
            if cell.is_none_or(|c| value < c) {
                *cell = Some(value);
            }
            i += i & i.wrapping_neg();
        }
    }

    fn min_upto(&self, slot: usize) -> Option<Candidate> {
        let mut i = (slot + 1).min(self.tree.len() - 1);
        let mut best: Option<Candidate> = None;
        while i > 0 {
            if let Some(c) = self.tree[i] {
                best = Some(best.map_or(c, |b| b.min(c)));
            }
            i -= i & i.wrapping_neg();
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace_of(ranges: &[(i64, i64, i64, NvtxStyle)]) -> Trace {
        let mut t = Trace::default();
        for (k, &(tid, s, e, style)) in ranges.iter().enumerate() {
            let n = &mut t.nvtx;
            n.spans.push(s, e, StringTable::EMPTY);
            n.style.push(style);
            n.global_tid.push(tid);
            n.unclosed.push(false);
            n.row_id.push(k as i64 + 1);
            n.ended_on_other_thread.push(false);
            n.domain.push(StringTable::EMPTY);
        }
        t
    }

    fn parents(f: &RangeForest, t: &Trace) -> Vec<(i64, Option<i64>, u32)> {
        (0..f.len())
            .map(|p| {
                (
                    f.range_id(t, p),
                    f.parent_of(p).map(|q| f.range_id(t, q)),
                    f.level[p],
                )
            })
            .collect()
    }

    #[test]
    fn nested_ranges_get_the_innermost_parent() {
        use NvtxStyle::PushPop as P;
        let t = trace_of(&[
            (1, 0, 100, P),
            (1, 10, 50, P),
            (1, 20, 30, P),
            (1, 60, 90, P),
        ]);
        let f = RangeForest::build(&t, &Filter::all(), RangeKinds::PushPop);
        assert_eq!(
            parents(&f, &t),
            vec![
                (1, None, 0),
                (2, Some(1), 1),
                (3, Some(2), 2),
                (4, Some(1), 1)
            ]
        );
        assert_eq!(f.range_stack(&t, 2), ":1:2:3");
    }

    #[test]
    fn overlapping_start_end_ranges_pick_the_shortest_encloser() {
        use NvtxStyle::StartEnd as S;
        // 3 lies inside both 1 (length 100) and 2 (length 60): the shorter one is its parent.
        let t = trace_of(&[
            (1, 0, 100, S),
            (1, 40, 100, S),
            (1, 50, 60, S),
            (2, 50, 60, S),
        ]);
        let f = RangeForest::build(&t, &Filter::all(), RangeKinds::SameThreadRanges);
        assert_eq!(
            parents(&f, &t),
            vec![(1, None, 0), (2, Some(1), 1), (3, Some(2), 2), (4, None, 0)]
        );
        let only_push_pop = RangeForest::build(&t, &Filter::all(), RangeKinds::PushPop);
        assert!(only_push_pop.is_empty());
    }

    #[test]
    fn equal_ranges_nest_in_file_order() {
        use NvtxStyle::PushPop as P;
        let t = trace_of(&[(1, 0, 10, P), (1, 0, 10, P), (1, 0, 4, P)]);
        let f = RangeForest::build(&t, &Filter::all(), RangeKinds::PushPop);
        assert_eq!(
            parents(&f, &t),
            vec![(1, None, 0), (2, Some(1), 1), (3, Some(2), 2)]
        );
    }

    #[test]
    fn unclosed_ranges_end_at_the_last_timestamp_of_the_kinds_counted() {
        use NvtxStyle::{PushPop as P, StartEnd as S};
        let mut t = trace_of(&[(1, 0, 5, P), (1, 2, 2, P), (1, 3, 40, S)]);
        t.nvtx.unclosed[1] = true;
        let f = RangeForest::build(&t, &Filter::all(), RangeKinds::PushPop);
        assert_eq!(f.end_ns, vec![5, 5]);
        let f = RangeForest::build(&t, &Filter::all(), RangeKinds::SameThreadRanges);
        assert_eq!(f.end_ns, vec![5, 40, 40]);
    }
}
