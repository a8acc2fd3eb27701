//! GPU work seen through the NVTX ranges around its launch, for `nvtx_kern_sum` and the GPU
//! projection reports (Nsight Systems 2023.4.4 `nvtx_kern_sum.py`, `nvtx_gpu_proj_trace.py`,
//! `nvtx_gpu_proj_sum.py`).
//!
//! nsys joins a GPU operation to *every* CUDA API row of its process with its correlationId (an
//! export can hold several: a runtime call and its driver call, both traced), and a call to every
//! range of [`RangeForest`] on its thread that encloses it whole (`range.start <= call.start &&
//! range.end >= call.end`). [`Launches`] holds those calls (the "members" of each launch, one
//! launch per correlationId) per thread in start order, so that:
//! - the (range, call) pairs come from one binary search and a short scan per range;
//! - whether any range encloses a call is a prefix-maximum lookup;
//! - each range's projection (first op start, last op end, launches inside) is one offline sweep
//!   per thread — ranges by end, calls entering by end — over a Fenwick tree indexed by call
//!   start, so nesting depth costs nothing: O((ranges + calls) log calls).

use std::collections::HashMap;
use std::ops::Range;

use super::nvtx_tree::RangeForest;
use crate::analysis::filter::{EventTable, Filter};
use crate::analysis::table::EventRef;
use crate::trace::{GlobalTid, NO_INDEX, Trace};
use suffix_aggregate::SuffixAggregate;

mod suffix_aggregate;

/// Start and end of a GPU operation.
pub fn op_span(trace: &Trace, op: EventRef) -> (i64, i64) {
    let spans = match op.table {
        EventTable::Memcpys => &trace.memcpys.spans,
        EventTable::Memsets => &trace.memsets.spans,
        _ => &trace.kernels.spans,
    };
    let i = op.index as usize;
    (spans.start_ns[i], spans.end_ns[i])
}

/// The kept GPU operations of some tables grouped by launch, and the API calls of each launch.
#[derive(Debug, Default)]
pub struct Launches {
    /// API calls (indices into `trace.api_calls`) sharing a correlationId with a kept GPU
    /// operation of their process, ordered by (thread, start, index).
    pub calls: Vec<u32>,
    /// The launch each entry of `calls` belongs to.
    pub launch_of_call: Vec<u32>,
    /// Each thread's `globalTid` and entries of `calls`.
    pub threads: Vec<(i64, Range<usize>)>,
    /// The operations of launch `l` are `ops[op_start[l]..op_start[l + 1]]`.
    op_start: Vec<u32>,
    ops: Vec<EventRef>,
    /// The correlationId of each launch.
    pub correlation_id: Vec<u32>,
    /// First op start and last op end of each launch.
    pub first_start: Vec<i64>,
    pub last_end: Vec<i64>,
    /// Kept operations whose launching call is not in the trace (nsys's join finds no call).
    pub unlaunched: Vec<EventRef>,
}

impl Launches {
    /// The operations of `tables` (kernels, memcpys, memsets) that `filter` keeps. The launching
    /// calls themselves are not filtered: a kept operation counts through its call wherever that
    /// call lies.
    pub fn build(trace: &Trace, filter: &Filter, tables: &[EventTable]) -> Launches {
        let api = &trace.api_calls;
        let calls = api.spans.len();
        let mut out = Launches::default();
        // Operations by launching call, a counting sort over the call index.
        let mut kept: Vec<(EventTable, &[u32], Vec<usize>)> = Vec::new();
        for &table in tables {
            let api_call: &[u32] = match table {
                EventTable::Kernels => &trace.kernels.api_call,
                EventTable::Memcpys => &trace.memcpys.api_call,
                EventTable::Memsets => &trace.memsets.api_call,
                _ => continue,
            };
            kept.push((table, api_call, filter.indices(trace, table)));
        }
        let call_of = |api_call: &[u32], i: usize| {
            api_call
                .get(i)
                .copied()
                .filter(|&c| (c as usize) < calls)
                .unwrap_or(NO_INDEX)
        };
        let mut launch_of_call = vec![NO_INDEX; calls];
        let mut op_count: Vec<u32> = Vec::new();
        for (table, api_call, indices) in &kept {
            for &i in indices {
                match call_of(api_call, i) {
                    NO_INDEX => out.unlaunched.push(EventRef::new(*table, i)),
                    c => {
                        let l = &mut launch_of_call[c as usize];
                        if *l == NO_INDEX {
                            *l = 0;
                        }
                    }
                }
            }
        }
        // Launches are numbered in call order.
        let mut launch_call: Vec<u32> = Vec::new();
        for (c, l) in launch_of_call.iter_mut().enumerate() {
            if *l != NO_INDEX {
                *l = launch_call.len() as u32;
                launch_call.push(c as u32);
            }
        }
        let launches = launch_call.len();
        op_count.resize(launches + 1, 0);
        for (_, api_call, indices) in &kept {
            for &i in indices {
                let c = call_of(api_call, i);
                if c != NO_INDEX {
                    op_count[launch_of_call[c as usize] as usize + 1] += 1;
                }
            }
        }
        for l in 0..launches {
            op_count[l + 1] += op_count[l];
        }
        out.op_start = op_count.clone();
        out.ops = vec![EventRef::new(EventTable::Kernels, 0); out.op_start[launches] as usize];
        out.first_start = vec![i64::MAX; launches];
        out.last_end = vec![i64::MIN; launches];
        for (table, api_call, indices) in &kept {
            for &i in indices {
                let c = call_of(api_call, i);
                if c == NO_INDEX {
                    continue;
                }
                let l = launch_of_call[c as usize] as usize;
                let op = EventRef::new(*table, i);
                out.ops[op_count[l] as usize] = op;
                op_count[l] += 1;
                let (s, e) = op_span(trace, op);
                out.first_start[l] = out.first_start[l].min(s);
                out.last_end[l] = out.last_end[l].max(e);
            }
        }
        out.correlation_id = launch_call
            .iter()
            .map(|&c| api.correlation_id[c as usize])
            .collect();
        if launches == 0 {
            return out;
        }
        // The loader links an operation to the first call with its (process, correlationId);
        // that call stands for the launch, and every call with the same key is a member.
        let keys: Vec<(u32, u32, u32)> = launch_call
            .iter()
            .zip(&out.correlation_id)
            .enumerate()
            .map(|(l, (&c, &corr))| (GlobalTid(api.global_tid[c as usize]).pid(), corr, l as u32))
            .collect();
        let by_key = LaunchByKey::new(&keys);
        let mut members: Vec<(i64, i64, u32, u32)> = Vec::new();
        let mut sorted = true;
        for j in 0..calls {
            let tid = api.global_tid[j];
            // Correlation id 0 stands for NULL, which SQL's `=` never pairs.
            if api.correlation_id[j] == 0 {
                continue;
            }
            if let Some(l) = by_key.get(GlobalTid(tid).pid(), api.correlation_id[j]) {
                let m = (tid, api.spans.start_ns[j], j as u32, l);
                sorted &= members.last().is_none_or(|last| *last <= m);
                members.push(m);
            }
        }
        // The API table is ordered by (thread, start) already; sort only if it is not.
        if !sorted {
            members.sort_unstable();
        }
        out.calls.reserve(members.len());
        out.launch_of_call.reserve(members.len());
        for (p, &(tid, _, call, l)) in members.iter().enumerate() {
            out.calls.push(call);
            out.launch_of_call.push(l);
            match out.threads.last_mut() {
                Some((last, r)) if *last == tid => r.end = p + 1,
                _ => out.threads.push((tid, p..p + 1)),
            }
        }
        out
    }

    pub fn launch_count(&self) -> usize {
        self.correlation_id.len()
    }

    /// The operations of launch `l`.
    pub fn ops_of(&self, l: usize) -> &[EventRef] {
        &self.ops[self.op_start[l] as usize..self.op_start[l + 1] as usize]
    }

    fn call_span(&self, trace: &Trace, c: usize) -> (i64, i64) {
        let j = self.calls[c] as usize;
        (
            trace.api_calls.spans.start_ns[j],
            trace.api_calls.spans.end_ns[j],
        )
    }

    /// The entries of `calls` on each thread of `forest`, by the forest's thread order.
    pub fn calls_by_forest_thread(&self, forest: &RangeForest) -> Vec<Range<usize>> {
        let by_tid: HashMap<i64, Range<usize>> = self.threads.iter().cloned().collect();
        forest
            .threads
            .iter()
            .map(|(tid, _)| by_tid.get(tid).cloned().unwrap_or(0..0))
            .collect()
    }

    /// For each entry of `calls`: does a range of `forest` enclose it?
    pub fn enclosed(&self, trace: &Trace, forest: &RangeForest) -> Vec<bool> {
        let mut out = vec![false; self.calls.len()];
        for ((_, ranges), calls) in forest
            .threads
            .iter()
            .zip(self.calls_by_forest_thread(forest))
        {
            // Ranges are in start order: the longest reach of those starting by a time.
            let mut reach: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
            let mut furthest = i64::MIN;
            for p in ranges.clone() {
                furthest = furthest.max(forest.end_ns[p]);
                reach.push((forest.start_ns(trace, p), furthest));
            }
            for c in calls {
                let (s, e) = self.call_span(trace, c);
                let k = reach.partition_point(|&(start, _)| start <= s);
                out[c] = k > 0 && reach[k - 1].1 >= e;
            }
        }
        out
    }

    /// Calls `f(range position, call entry)` for every range of `forest` and call it encloses.
    pub fn for_each_enclosed_call(
        &self,
        trace: &Trace,
        forest: &RangeForest,
        mut f: impl FnMut(usize, usize),
    ) {
        for ((_, ranges), calls) in forest
            .threads
            .iter()
            .zip(self.calls_by_forest_thread(forest))
        {
            self.for_each_enclosed_call_of_thread(trace, forest, ranges.clone(), calls, &mut f);
        }
    }

    /// [`Self::for_each_enclosed_call`] for one thread: the positions `ranges` of the forest and
    /// the entries `calls` (see [`Self::calls_by_forest_thread`]).
    pub fn for_each_enclosed_call_of_thread(
        &self,
        trace: &Trace,
        forest: &RangeForest,
        ranges: Range<usize>,
        calls: Range<usize>,
        mut f: impl FnMut(usize, usize),
    ) {
        let starts = &trace.api_calls.spans.start_ns;
        let thread_calls = &self.calls[calls.clone()];
        for p in ranges {
            let (rs, re) = (forest.start_ns(trace, p), forest.end_ns[p]);
            let lo = thread_calls.partition_point(|&j| starts[j as usize] < rs);
            for c in calls.start + lo..calls.end {
                let (s, e) = self.call_span(trace, c);
                if s > re {
                    break;
                }
                if e <= re {
                    f(p, c);
                }
            }
        }
    }

    /// Each range's projection onto the GPU, `None` for a range that launched nothing.
    pub fn project(&self, trace: &Trace, forest: &RangeForest) -> Vec<Option<Projection>> {
        let mut out = vec![None; forest.len()];
        let counted = self.counted_members(trace);
        for ((_, ranges), calls) in forest
            .threads
            .iter()
            .zip(self.calls_by_forest_thread(forest))
        {
            if calls.is_empty() {
                continue;
            }
            let base = calls.start;
            let call_start: Vec<i64> = calls.clone().map(|c| self.call_span(trace, c).0).collect();
            let mut by_end: Vec<usize> = calls.clone().filter(|&c| counted[c]).collect();
            by_end.sort_unstable_by_key(|&c| self.call_span(trace, c).1);
            let mut ranges_by_end: Vec<usize> = ranges.clone().collect();
            ranges_by_end.sort_unstable_by_key(|&p| forest.end_ns[p]);
            let mut tree = SuffixAggregate::new(calls.len());
            let mut next = 0;
            for p in ranges_by_end {
                let (rs, re) = (forest.start_ns(trace, p), forest.end_ns[p]);
                while let Some(&c) = by_end.get(next) {
                    if self.call_span(trace, c).1 > re {
                        break;
                    }
                    let l = self.launch_of_call[c] as usize;
                    tree.insert(
                        c - base,
                        Projection {
                            start_ns: self.first_start[l],
                            end_ns: self.last_end[l],
                            launches: 1,
                        },
                    );
                    next += 1;
                }
                let lo = call_start.partition_point(|&s| s < rs);
                out[p] = tree.from(lo);
            }
        }
        out
    }

    /// Which entries of `calls` count a launch when a range encloses them: a range holding two
    /// calls of one launch holds one launch (nsys counts distinct correlationIds). Calls of a
    /// launch usually nest (the driver call inside the runtime call); only the innermost counts,
    /// as any range around an outer one is around it too.
    fn counted_members(&self, trace: &Trace) -> Vec<bool> {
        let mut members_of: Vec<u32> = vec![0; self.launch_count()];
        for &l in &self.launch_of_call {
            members_of[l as usize] += 1;
        }
        let mut shared: HashMap<u32, Vec<usize>> = HashMap::new();
        for (c, &l) in self.launch_of_call.iter().enumerate() {
            if members_of[l as usize] > 1 {
                shared.entry(l).or_default().push(c);
            }
        }
        let mut counted = vec![true; self.calls.len()];
        for members in shared.values() {
            // A correlationId shared by many calls is not a runtime/driver pair; counting each
            // call keeps this linear.
            if members.len() > MAX_NESTED_MEMBERS {
                continue;
            }
            for &c in members {
                let (s, e) = self.call_span(trace, c);
                // Drop a call that holds another member (the first of equal spans stays).
                counted[c] = !members.iter().any(|&d| {
                    let (ds, de) = self.call_span(trace, d);
                    d != c && s <= ds && de <= e && ((ds, de) != (s, e) || d < c)
                });
            }
        }
        counted
    }
}

/// The launch of each (process, correlationId): per process a table indexed by correlationId
/// when the ids are dense (nsys numbers them from 1 per process), else a map.
struct LaunchByKey {
    tables: HashMap<u32, KeyTable>,
}

enum KeyTable {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl LaunchByKey {
    /// From (pid, correlationId, launch) triples; the first launch of a key wins.
    fn new(keys: &[(u32, u32, u32)]) -> Self {
        let mut extent: HashMap<u32, (u32, usize)> = HashMap::new();
        for &(pid, corr, _) in keys {
            let e = extent.entry(pid).or_default();
            e.0 = e.0.max(corr);
            e.1 += 1;
        }
        let mut tables: HashMap<u32, KeyTable> = extent
            .into_iter()
            .map(|(pid, (max, count))| {
                let table = if (max as usize) < 4 * count + 4096 {
                    KeyTable::Dense(vec![NO_INDEX; max as usize + 1])
                } else {
                    KeyTable::Sparse(HashMap::with_capacity(count))
                };
                (pid, table)
            })
            .collect();
        for &(pid, corr, l) in keys {
            match tables.get_mut(&pid) {
                Some(KeyTable::Dense(v)) => {
                    let slot = &mut v[corr as usize];
                    if *slot == NO_INDEX {
                        *slot = l;
                    }
                }
                Some(KeyTable::Sparse(m)) => {
                    m.entry(corr).or_insert(l);
                }
                None => {}
            }
        }
        Self { tables }
    }

    fn get(&self, pid: u32, correlation_id: u32) -> Option<u32> {
        match self.tables.get(&pid)? {
            KeyTable::Dense(v) => v
                .get(correlation_id as usize)
                .copied()
                .filter(|&l| l != NO_INDEX),
            KeyTable::Sparse(m) => m.get(&correlation_id).copied(),
        }
    }
}

/// The most calls of one launch checked for nesting (see [`Launches::counted_members`]).
const MAX_NESTED_MEMBERS: usize = 8;

/// A range projected onto the GPU: the first start and last end of the operations launched
/// inside it, and how many launches (correlationIds) those were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Projection {
    pub start_ns: i64,
    pub end_ns: i64,
    pub launches: i64,
}

impl Projection {
    fn merge(self, other: Projection) -> Projection {
        Projection {
            start_ns: self.start_ns.min(other.start_ns),
            end_ns: self.end_ns.max(other.end_ns),
            launches: self.launches + other.launches,
        }
    }
}

/// What both GPU projection reports print: the ranges that launched GPU work, projected, and
/// the work launched outside every range.
pub struct GpuProjection {
    pub forest: RangeForest,
    /// Per forest position.
    pub projection: Vec<Option<Projection>>,
    /// Per forest position: children (in the forest) that launched GPU work.
    pub projected_children: Vec<i64>,
    /// The launches with a call inside no range (nsys's row with no range), if any.
    pub outside: Option<OutsideRanges>,
    /// With the events wanted: per forest position, the operations launched inside it.
    pub ops: Vec<Vec<EventRef>>,
}

/// GPU work launched by calls inside no range.
pub struct OutsideRanges {
    pub projection: Projection,
    /// The launching thread nsys prints: the thread of the call that launched the operation
    /// that ended last. `nvtx_gpu_proj_trace.py` selects the bare `r.globalTid` beside
    /// `min(op.start)` and `max(op.end)`; SQLite fills a bare column from the row where the
    /// *last* min/max aggregate of the query (here `max(op.end)`) took a new value (each one's
    /// `OP_CollSeq` resets the shared "hit" register), so the first row reaching the greatest
    /// end. Rows come in `gpuops` order — kernels, memcpys, memsets — so of operations ending
    /// at the same instant the first in that order wins (within a table the model keeps no
    /// rowid: the earliest start stands for the first row). Checked against nsys 2023.4.4 in
    /// `tests/nvtx_end_thread.rs` (`outside_thread.sql`): another thread's copy is the last
    /// memcpy row, the main thread's kernel ends last.
    pub global_tid: i64,
}

impl GpuProjection {
    /// Kernels, memcpys and memsets the filter keeps, projected through the ranges it keeps.
    pub fn build(trace: &Trace, filter: &Filter, with_events: bool) -> GpuProjection {
        let forest = RangeForest::build(
            trace,
            filter,
            super::nvtx_tree::RangeKinds::SameThreadRanges,
        );
        let launches = Launches::build(
            trace,
            filter,
            &[
                EventTable::Kernels,
                EventTable::Memcpys,
                EventTable::Memsets,
            ],
        );
        let projection = launches.project(trace, &forest);
        let mut projected_children = vec![0i64; forest.len()];
        for (p, proj) in projection.iter().enumerate() {
            if let (Some(_), Some(parent)) = (proj, forest.parent_of(p)) {
                projected_children[parent] += 1;
            }
        }
        let mut ops = Vec::new();
        if with_events {
            ops = vec![Vec::new(); forest.len()];
            launches.for_each_enclosed_call(trace, &forest, |p, c| {
                let l = launches.launch_of_call[c] as usize;
                ops[p].extend_from_slice(launches.ops_of(l));
            });
            for list in &mut ops {
                list.sort_unstable_by_key(|e| (e.table as u8, e.index));
                list.dedup();
            }
        }
        let outside = outside_ranges(trace, &forest, &launches);
        GpuProjection {
            forest,
            projection,
            projected_children,
            outside,
            ops,
        }
    }
}

fn outside_ranges(
    trace: &Trace,
    forest: &RangeForest,
    launches: &Launches,
) -> Option<OutsideRanges> {
    let enclosed = launches.enclosed(trace, forest);
    let mut outside: Vec<(u32, usize)> = enclosed
        .iter()
        .enumerate()
        .filter(|&(_, &e)| !e)
        .map(|(c, _)| (launches.launch_of_call[c], c))
        .collect();
    outside.sort_unstable();
    let mut projection: Option<Projection> = None;
    let mut correlation_ids: Vec<u32> = Vec::new();
    // The operation ending last (earliest in gpuops order among equal ends) and its call.
    let mut last: Option<(i64, (u8, i64, u32), usize)> = None;
    let mut k = 0;
    while k < outside.len() {
        let l = outside[k].0 as usize;
        // Of the launch's calls outside every range (usually one thread's runtime and driver
        // call), the first stands for its rows.
        let call = outside[k].1;
        while k < outside.len() && outside[k].0 as usize == l {
            k += 1;
        }
        let p = Projection {
            start_ns: launches.first_start[l],
            end_ns: launches.last_end[l],
            launches: 0,
        };
        projection = Some(projection.map_or(p, |q| q.merge(p)));
        correlation_ids.push(launches.correlation_id[l]);
        for &op in launches.ops_of(l) {
            let (start, end) = op_span(trace, op);
            let row = (op.table as u8, start, op.index);
            if last.is_none_or(|(e, r, _)| end > e || (end == e && row < r)) {
                last = Some((end, row, call));
            }
        }
    }
    correlation_ids.sort_unstable();
    correlation_ids.dedup();
    let (projection, (_, _, call)) = projection.zip(last)?;
    Some(OutsideRanges {
        projection: Projection {
            launches: correlation_ids.len() as i64,
            ..projection
        },
        global_tid: trace.api_calls.global_tid[launches.calls[call] as usize],
    })
}
