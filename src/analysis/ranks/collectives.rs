//! A rank's collectives, from the first source it has — its collective GPU kernels, else
//! PyTorch's `c10d::` operators (CPU side, the outermost: not the `record_param_comms` or
//! `gloo:` ops inside them), else NVTX / annotation ranges whose name matches a pattern — and
//! their instances matched across ranks ([`super::matching`]; stream ids differ between ranks,
//! so streams are not compared).
//!
//! A kernel is a collective's by the operator that launched it, joined through PyTorch's
//! `External id`: `record_param_comms` (its `Collective name` and `Seq` name the call),
//! `c10d::*` or `nccl:*`; where the kernel's id names no operator, by the operators its CUDA call
//! was made inside on its thread ([`super::launchers`]). Only a trace without operators (an nsys
//! export) has its collective kernels found by name (`nccl` in it).

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;

use super::Rank;
use super::matching::{Matching, match_instances};
use crate::trace::{RangeKind, Trace};

/// The default pattern of ranges that count as collectives.
pub const DEFAULT_PATTERN: &str =
    "(?i)all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|barrier";

/// Where a rank's collectives came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    NcclKernels,
    C10dOperators,
    Ranges,
}

impl Source {
    pub fn label(self) -> &'static str {
        match self {
            Source::NcclKernels => "NCCL kernels",
            Source::C10dOperators => "c10d:: operators",
            Source::Ranges => "NVTX / annotation ranges",
        }
    }
}

/// One collective call of one rank, on its trace's own clock.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    /// As the trace names the event (a kernel's short name, an operator's or range's name).
    pub name: String,
    /// What it is matched across ranks by: the `Collective name` (`allreduce`) or the name of
    /// the operator that launched it, else its own name.
    pub collective: String,
    /// (process group, sequence number) where PyTorch writes `Seq`.
    pub seq: Option<(String, u64)>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The event's index in its table: `trace.kernels` for NCCL kernels, `trace.nvtx` for
    /// operators and ranges.
    pub index: usize,
}

/// A rank's collectives by start; `source` is `None` when it has none.
#[derive(Debug, Clone, Default)]
pub struct RankCollectives {
    pub source: Option<Source>,
    pub list: Vec<Occurrence>,
}

/// The collectives of one trace.
pub fn of_rank(trace: &Trace, pattern: &Regex) -> RankCollectives {
    let mut list = collective_kernels(trace);
    let mut source = Source::NcclKernels;
    if list.is_empty() {
        list = outermost_ranges(trace, |kind, name| {
            kind == RangeKind::Operator && name.starts_with("c10d::")
        });
        source = Source::C10dOperators;
    }
    if list.is_empty() {
        list = outermost_ranges(trace, |kind, name| {
            matches!(kind, RangeKind::Nvtx | RangeKind::Annotation) && pattern.is_match(name)
        });
        source = Source::Ranges;
    }
    list.sort_by_key(|o| (o.start_ns, o.end_ns));
    RankCollectives {
        source: (!list.is_empty()).then_some(source),
        list,
    }
}

/// Whether an operator's name makes it a collective's: PyTorch's `record_param_comms`, the
/// `c10d::` ops and the `nccl:` annotations of the process group.
fn is_collective_operator(name: &str) -> bool {
    name == "record_param_comms" || name.starts_with("c10d::") || name.starts_with("nccl:")
}

/// The `External id` of the operator that launched kernel `i`: the kernel's own, else its CUDA
/// call's (joined by correlation id at assembly); 0 where neither has one.
fn launching_id(trace: &Trace, i: usize) -> u64 {
    let k = &trace.kernels;
    match k.external_id.get(i) {
        Some(&id) if id > 0 => id,
        _ => k
            .api_call
            .get(i)
            .filter(|&&a| a != crate::trace::NO_INDEX)
            .and_then(|&a| trace.api_calls.external_id.get(a as usize))
            .copied()
            .unwrap_or(0),
    }
}

/// The kernels of collectives: those an operator of a collective launched (by `External id`)
/// where the trace has operators, else those with `nccl` in their name.
fn collective_kernels(trace: &Trace) -> Vec<Occurrence> {
    let k = &trace.kernels;
    let n = &trace.nvtx;
    let has_operators = (0..n.spans.len()).any(|i| n.kind_of(i) == RangeKind::Operator);
    let kernel = |i: usize, collective: String, seq: Option<(String, u64)>| Occurrence {
        name: trace.str(k.short_name[i]).to_string(),
        collective,
        seq,
        start_ns: k.spans.start_ns[i],
        end_ns: k.spans.end_ns[i],
        index: i,
    };
    if !has_operators {
        let Ok(nccl) = Regex::new("(?i)nccl") else {
            return Vec::new();
        };
        return (0..k.spans.len())
            .filter(|&i| nccl.is_match(trace.str(k.short_name[i])))
            .map(|i| {
                let name = trace.str(k.short_name[i]).to_string();
                kernel(i, name, None)
            })
            .collect();
    }
    // External id → the launching collective operator (the innermost wins: a kernel carries
    // the id of the operator that launched it); every operator's id, to tell a kernel launched
    // by another operator from one whose id names no operator.
    let mut launcher: HashMap<u64, usize> = HashMap::new();
    let mut operator_ids: Vec<u64> = Vec::new();
    for i in 0..n.spans.len() {
        let id = n.external_id.get(i).copied().unwrap_or(0);
        if id == 0 || n.kind_of(i) != RangeKind::Operator {
            continue;
        }
        operator_ids.push(id);
        if is_collective_operator(trace.str(n.spans.name[i])) {
            launcher.insert(id, i);
        }
    }
    operator_ids.sort_unstable();
    let calls = trace
        .torch
        .as_ref()
        .map_or(&[][..], |t| t.collective_calls.as_slice());
    let call = |id: u64| {
        let at = calls.partition_point(|c| c.external_id < id);
        calls[at..].iter().take_while(move |c| c.external_id == id)
    };
    let by_id: Vec<Option<usize>> = (0..k.spans.len())
        .map(|i| {
            let id = launching_id(trace, i);
            (id > 0).then(|| launcher.get(&id).copied()).flatten()
        })
        .collect();
    let by_time = launched_inside(trace, &by_id, &operator_ids);
    (0..k.spans.len())
        .filter_map(|i| {
            // The operators of the call, innermost first.
            let chain: Vec<usize> = match by_id[i] {
                Some(op) => vec![op],
                None => by_time.get(&i)?.clone(),
            };
            let ids: Vec<u64> = chain
                .iter()
                .map(|&r| n.external_id.get(r).copied().unwrap_or(0))
                .collect();
            let collective = ids
                .iter()
                .flat_map(|&id| call(id))
                .map(|c| c.collective.as_str())
                .find(|c| !c.is_empty())
                .map(str::to_string)
                .or_else(|| operator_name(trace, &chain))?;
            let seq = ids
                .iter()
                .flat_map(|&id| call(id))
                .find_map(|c| c.seq.map(|s| (c.group.clone(), s)));
            Some(kernel(i, collective, seq))
        })
        .collect()
}

/// The name of a collective call from its operators (innermost first) where PyTorch wrote no
/// `Collective name`: the innermost but `record_param_comms`, which says nothing of the call.
fn operator_name(trace: &Trace, chain: &[usize]) -> Option<String> {
    let name = |&r: &usize| trace.str(trace.nvtx.spans.name[r]);
    let first = chain.first().map(name)?;
    let named = chain
        .iter()
        .map(name)
        .find(|&s| s != "record_param_comms")
        .unwrap_or(first);
    Some(named.to_string())
}

/// The kernels an External id does not tie to an operator (`by_id`: the collective operator
/// each one's id names; `operator_ids`: every operator's, sorted) that were launched inside
/// collective operators on their CUDA call's thread ([`super::launchers`]): kernel → those
/// operators, innermost first. A kernel whose id names another operator is that one's.
fn launched_inside(
    trace: &Trace,
    by_id: &[Option<usize>],
    operator_ids: &[u64],
) -> HashMap<usize, Vec<usize>> {
    let k = &trace.kernels;
    let api = &trace.api_calls;
    let n = &trace.nvtx;
    let mut kernels = Vec::new();
    let mut calls = Vec::new();
    for (i, found) in by_id.iter().enumerate() {
        let id = launching_id(trace, i);
        if found.is_some() || (id > 0 && operator_ids.binary_search(&id).is_ok()) {
            continue;
        }
        let Some(a) = k
            .api_call
            .get(i)
            .filter(|&&a| a != crate::trace::NO_INDEX)
            .map(|&a| a as usize)
        else {
            continue;
        };
        if let (Some(&tid), Some(&start)) = (api.global_tid.get(a), api.spans.start_ns.get(a)) {
            kernels.push(i);
            calls.push((tid, start));
        }
    }
    if calls.is_empty() {
        return HashMap::new();
    }
    let operators: Vec<usize> = (0..n.spans.len())
        .filter(|&i| n.kind_of(i) == RangeKind::Operator)
        .collect();
    let ranges: Vec<(i64, i64, i64)> = operators
        .iter()
        .map(|&i| (n.global_tid[i], n.spans.start_ns[i], n.spans.end_ns[i]))
        .collect();
    let around = super::launchers::enclosing(&ranges, &calls, |r| {
        is_collective_operator(trace.str(n.spans.name[operators[r]]))
    });
    kernels
        .into_iter()
        .zip(around)
        .filter(|(_, chain)| !chain.is_empty())
        .map(|(i, chain)| (i, chain.into_iter().map(|r| operators[r]).collect()))
        .collect()
}

/// The CPU ranges `pick` chooses that no other chosen range of their thread contains.
pub(crate) fn outermost_ranges(
    trace: &Trace,
    pick: impl Fn(RangeKind, &str) -> bool,
) -> Vec<Occurrence> {
    let n = &trace.nvtx;
    let mut chosen: Vec<(i64, i64, i64, usize)> = (0..n.spans.len())
        .filter(|&i| pick(n.kind_of(i), trace.str(n.spans.name[i])))
        .map(|i| (n.global_tid[i], n.spans.start_ns[i], -n.spans.end_ns[i], i))
        .collect();
    chosen.sort_unstable();
    let mut out = Vec::new();
    let mut open: Option<(i64, i64)> = None; // (thread, end) of the last kept range
    for (tid, start, minus_end, i) in chosen {
        if open.is_some_and(|(t, end)| t == tid && start < end) {
            continue;
        }
        open = Some((tid, -minus_end));
        out.push(Occurrence {
            name: trace.str(n.spans.name[i]).to_string(),
            collective: trace.str(n.spans.name[i]).to_string(),
            seq: None,
            start_ns: start,
            end_ns: -minus_end,
            index: i,
        });
    }
    out
}

/// One collective call matched across ranks ([`super::matching`]): the `ordinal`-th instance of
/// `name` in the run.
#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    pub ordinal: usize,
    /// Each rank's arrival (its start) on the run's clock, by rank index; `None` where the rank
    /// has no such instance.
    pub arrivals: Vec<Option<i64>>,
    /// Each rank's end of it on the run's clock.
    pub ends: Vec<Option<i64>>,
    /// Each rank's occurrence (index into its [`RankCollectives::list`]).
    pub members: Vec<Option<usize>>,
    /// The rank index that arrived last; `None` when the latest arrivals tie.
    pub last: Option<usize>,
    /// Last arrival − first arrival.
    pub skew_ns: i64,
    /// The last arrival (0 when none): kept, so that a rank's wait costs no pass over every
    /// rank's arrival (a run of 1,024 ranks asks for 1,024 ranks' waits at each instance).
    latest_ns: i64,
}

impl Instance {
    /// An instance of the ranks' occurrences `members`, with their arrivals and ends on the
    /// run's clock; its last rank and skew worked out.
    pub fn new(
        name: String,
        ordinal: usize,
        arrivals: Vec<Option<i64>>,
        ends: Vec<Option<i64>>,
        members: Vec<Option<usize>>,
    ) -> Self {
        let latest = arrivals.iter().flatten().copied().max().unwrap_or(0);
        let earliest = arrivals.iter().flatten().copied().min().unwrap_or(0);
        let at_latest: Vec<usize> = (0..arrivals.len())
            .filter(|&r| arrivals[r] == Some(latest))
            .collect();
        Self {
            name,
            ordinal,
            last: (at_latest.len() == 1).then(|| at_latest[0]),
            skew_ns: latest - earliest,
            latest_ns: latest,
            arrivals,
            ends,
            members,
        }
    }

    /// How long rank `r` waited for the last rank to arrive.
    pub fn wait_ns(&self, r: usize) -> Option<i64> {
        Some(self.latest_ns - self.arrivals.get(r).copied().flatten()?)
    }

    /// The earliest arrival.
    pub fn first_arrival(&self) -> i64 {
        self.latest_ns - self.skew_ns
    }
}

/// Every rank's collectives and the instances two or more ranks share, by first arrival.
#[derive(Debug, Clone, Default)]
pub struct Collectives {
    /// Shared with what the run keeps of each rank ([`super::digest::RankDigest`]), not copied.
    pub per_rank: Vec<Arc<RankCollectives>>,
    pub instances: Vec<Instance>,
    /// What the instances were matched by.
    pub matching: Matching,
    /// By rank: its occurrences no other rank shares (left out of arrivals and waits).
    pub unmatched: Vec<usize>,
}

impl Collectives {
    pub fn match_ranks(ranks: &[Rank], pattern: &Regex) -> Self {
        let per_rank: Vec<Arc<RankCollectives>> = ranks
            .iter()
            .map(|r| Arc::new(of_rank(r.trace, pattern)))
            .collect();
        let offsets: Vec<i64> = ranks.iter().map(|r| r.offset_ns).collect();
        Self::match_lists(per_rank, &offsets)
    }

    /// The instances of ranks' collectives (each on its rank's own clock, by rank index), with
    /// the ranks' offsets onto the run's clock, matched by name and order.
    pub fn match_lists(per_rank: Vec<Arc<RankCollectives>>, offsets: &[i64]) -> Self {
        Self::match_by(per_rank, offsets, Matching::NameOrder)
    }

    /// [`Collectives::match_lists`], matched by `matching`.
    pub fn match_by(
        per_rank: Vec<Arc<RankCollectives>>,
        offsets: &[i64],
        matching: Matching,
    ) -> Self {
        let (instances, unmatched) = match_instances(&per_rank, offsets, matching);
        Self {
            per_rank,
            instances,
            matching,
            unmatched,
        }
    }

    /// Instances at which rank index `r` arrived last.
    pub fn late_arrivals(&self, r: usize) -> usize {
        self.instances.iter().filter(|i| i.last == Some(r)).count()
    }

    /// How long the other ranks waited, in all, at the instances where rank index `r` arrived
    /// last: the time its lateness cost them.
    pub fn wait_caused_ns(&self, r: usize) -> i64 {
        self.instances
            .iter()
            .filter(|i| i.last == Some(r))
            .map(|i| {
                (0..i.arrivals.len())
                    .filter_map(|k| i.wait_ns(k))
                    .sum::<i64>()
            })
            .sum()
    }

    /// The straggler: the rank index whose late arrivals kept the others waiting longest, with
    /// the number of instances it arrived last at; `None` when no instance has a last rank or two
    /// ranks cost the same. Time, not count: in an MoE layer the rank with the hot experts is
    /// last by milliseconds at each combine all-to-all, while the small dispatch all-to-alls
    /// start within microseconds in either order (tests/fixtures/nccl: kt_moe_a2a's rank 1 is last
    /// at 11 of 32 collectives and keeps rank 0 waiting 38 ms; rank 0, last at 21, costs 5 ms).
    pub fn straggler(&self, ranks: usize) -> Option<(usize, usize)> {
        let cost: Vec<i64> = (0..ranks).map(|r| self.wait_caused_ns(r)).collect();
        let most = cost.iter().copied().max().filter(|&m| m > 0)?;
        let at_most: Vec<usize> = (0..ranks).filter(|&r| cost[r] == most).collect();
        (at_most.len() == 1).then(|| (at_most[0], self.late_arrivals(at_most[0])))
    }
}
