//! A rank's collectives, from the first source it has — its NCCL kernels (GPU side), else
//! PyTorch's `c10d::` operators (CPU side, the outermost: not the `record_param_comms` or
//! `gloo:` ops inside them), else NVTX / annotation ranges whose name matches a pattern — and
//! their instances matched across ranks by name and order of occurrence (stream ids differ
//! between ranks, so streams are not compared).

use std::collections::HashMap;
use std::sync::Arc;

use regex::Regex;

use super::Rank;
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
    pub name: String,
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
    let nccl = Regex::new("(?i)nccl").ok();
    let k = &trace.kernels;
    let mut list: Vec<Occurrence> = (0..k.spans.len())
        .filter(|&i| {
            nccl.as_ref()
                .is_some_and(|re| re.is_match(trace.str(k.short_name[i])))
        })
        .map(|i| Occurrence {
            name: trace.str(k.short_name[i]).to_string(),
            start_ns: k.spans.start_ns[i],
            end_ns: k.spans.end_ns[i],
            index: i,
        })
        .collect();
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
            start_ns: start,
            end_ns: -minus_end,
            index: i,
        });
    }
    out
}

/// The first collective (in the first rank's order) that every rank has, with the end of its
/// first occurrence on each rank.
pub fn first_common_end(per_rank: &[&RankCollectives]) -> Option<(String, Vec<i64>)> {
    let first = per_rank.first()?;
    first.list.iter().find_map(|o| {
        let ends: Option<Vec<i64>> = per_rank
            .iter()
            .map(|r| r.list.iter().find(|p| p.name == o.name).map(|p| p.end_ns))
            .collect();
        Some((o.name.clone(), ends?))
    })
}

/// One collective call matched across ranks: the `ordinal`-th `name` of each rank.
#[derive(Debug, Clone)]
pub struct Instance {
    pub name: String,
    pub ordinal: usize,
    /// Each rank's arrival (its start) on the run's clock, by rank index; `None` where the rank
    /// has no such instance.
    pub arrivals: Vec<Option<i64>>,
    /// The rank index that arrived last; `None` when the latest arrivals tie.
    pub last: Option<usize>,
    /// Last arrival − first arrival.
    pub skew_ns: i64,
}

impl Instance {
    /// How long rank `r` waited for the last rank to arrive.
    pub fn wait_ns(&self, r: usize) -> Option<i64> {
        let latest = self.arrivals.iter().flatten().max()?;
        Some(latest - self.arrivals.get(r).copied().flatten()?)
    }

    /// The earliest arrival.
    pub fn first_arrival(&self) -> i64 {
        self.arrivals.iter().flatten().copied().min().unwrap_or(0)
    }
}

/// Every rank's collectives and the instances two or more ranks share, by first arrival.
#[derive(Debug, Clone, Default)]
pub struct Collectives {
    /// Shared with what the run keeps of each rank ([`super::digest::RankDigest`]), not copied.
    pub per_rank: Vec<Arc<RankCollectives>>,
    pub instances: Vec<Instance>,
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
    /// the ranks' offsets onto the run's clock.
    pub fn match_lists(per_rank: Vec<Arc<RankCollectives>>, offsets: &[i64]) -> Self {
        let n = per_rank.len();
        let mut by_key: HashMap<(&str, usize), Vec<Option<i64>>> = HashMap::new();
        for (r, mine) in per_rank.iter().enumerate() {
            let offset = offsets.get(r).copied().unwrap_or(0);
            let mut seen: HashMap<&str, usize> = HashMap::new();
            for o in &mine.list {
                let ordinal = seen.entry(o.name.as_str()).or_default();
                let arrivals = by_key
                    .entry((o.name.as_str(), *ordinal))
                    .or_insert_with(|| vec![None; n]);
                arrivals[r] = Some(o.start_ns.saturating_add(offset));
                *ordinal += 1;
            }
        }
        let mut instances: Vec<Instance> = by_key
            .into_iter()
            .filter(|(_, a)| a.iter().flatten().count() >= 2)
            .map(|((name, ordinal), arrivals)| {
                let latest = arrivals.iter().flatten().copied().max().unwrap_or(0);
                let earliest = arrivals.iter().flatten().copied().min().unwrap_or(0);
                let at_latest: Vec<usize> = (0..arrivals.len())
                    .filter(|&r| arrivals[r] == Some(latest))
                    .collect();
                Instance {
                    name: name.to_string(),
                    ordinal,
                    last: (at_latest.len() == 1).then(|| at_latest[0]),
                    skew_ns: latest - earliest,
                    arrivals,
                }
            })
            .collect();
        instances.sort_by(|a, b| {
            (a.first_arrival(), &a.name, a.ordinal).cmp(&(b.first_arrival(), &b.name, b.ordinal))
        });
        Self {
            per_rank,
            instances,
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
