//! Which occurrence on each rank is one collective call: instances matched across ranks by
//! PyTorch's sequence numbers where every occurrence has one (`Seq` on `record_param_comms`),
//! else — on a clock the traces record — by their spans (one collective's kernels overlap and end
//! within [`END_TOLERANCE_NS`] of each other on every rank), else by name and order of occurrence.
//! An occurrence no other rank shares is left out of the instances and counted as unmatched.

use std::collections::HashMap;
use std::sync::Arc;

use super::collectives::{Instance, RankCollectives, Source};

/// How a collective's kernels on different ranks may differ in their ends and still be one call:
/// a collective's ranks leave it together (NCCL's kernels end within a few hundred µs of each
/// other on one host); its arrivals are what differ.
pub const END_TOLERANCE_NS: i64 = 500_000;

/// What instances were matched by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Matching {
    /// PyTorch's sequence numbers (`Seq`) in their process group.
    Sequence,
    /// Their spans on the recorded clock.
    Spans,
    /// The n-th occurrence of a name on each rank.
    #[default]
    NameOrder,
}

impl Matching {
    pub fn label(self) -> &'static str {
        match self {
            Matching::Sequence => "PyTorch's sequence numbers (Seq)",
            Matching::Spans => "their spans on the recorded clock",
            Matching::NameOrder => "name and order of occurrence",
        }
    }

    /// The best matching the ranks' collectives allow: sequence numbers where every occurrence
    /// has one; spans where the clock is recorded and every rank's collectives are GPU kernels
    /// (a CPU operator of an asynchronous backend returns before its collective is done, so its
    /// end says nothing); name and order otherwise.
    pub fn best(per_rank: &[Arc<RankCollectives>], recorded_clock: bool) -> Self {
        let all = |f: &dyn Fn(&RankCollectives) -> bool| {
            !per_rank.is_empty() && per_rank.iter().all(|r| f(r))
        };
        if all(&|r| !r.list.is_empty() && r.list.iter().all(|o| o.seq.is_some())) {
            Matching::Sequence
        } else if recorded_clock && all(&|r| r.source == Some(Source::NcclKernels)) {
            Matching::Spans
        } else {
            Matching::NameOrder
        }
    }
}

/// The instances of the ranks' collectives (each on its rank's own clock, by rank index) with
/// the ranks' offsets onto the run's clock, by first arrival; and, by rank, how many of its
/// occurrences no other rank shares.
pub fn match_instances(
    per_rank: &[Arc<RankCollectives>],
    offsets: &[i64],
    matching: Matching,
) -> (Vec<Instance>, Vec<usize>) {
    let n = per_rank.len();
    let groups: Vec<Vec<Option<usize>>> = match matching {
        Matching::Sequence => by_key(per_rank, |o, _| {
            o.seq.as_ref().map(|(g, s)| (g.clone(), s.to_string()))
        }),
        Matching::NameOrder => by_key(per_rank, |o, ordinal| {
            Some((o.collective.clone(), ordinal.to_string()))
        }),
        Matching::Spans => by_spans(per_rank, offsets),
    };
    let offset = |r: usize| offsets.get(r).copied().unwrap_or(0);
    let mut matched = vec![0usize; n];
    let mut instances: Vec<Instance> = groups
        .into_iter()
        .filter(|m| m.iter().flatten().count() >= 2)
        .map(|members| {
            let occ = |r: usize| members[r].and_then(|j| per_rank[r].list.get(j));
            let arrivals: Vec<Option<i64>> = (0..n)
                .map(|r| occ(r).map(|o| o.start_ns.saturating_add(offset(r))))
                .collect();
            let ends: Vec<Option<i64>> = (0..n)
                .map(|r| occ(r).map(|o| o.end_ns.saturating_add(offset(r))))
                .collect();
            let name = (0..n)
                .find_map(occ)
                .map(|o| o.collective.clone())
                .unwrap_or_default();
            for (r, m) in members.iter().enumerate() {
                matched[r] += usize::from(m.is_some());
            }
            Instance::new(name, 0, arrivals, ends, members)
        })
        .collect();
    // Stable, as sort_by; the key is worked out once per instance (its first member is a pass
    // over every rank).
    instances.sort_by_cached_key(|a| {
        (
            a.first_arrival(),
            a.name.clone(),
            a.members.iter().flatten().min().copied(),
        )
    });
    // Each instance's place among the instances of its name.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for inst in &mut instances {
        let k = seen.entry(inst.name.clone()).or_default();
        inst.ordinal = *k;
        *k += 1;
    }
    let unmatched = (0..n)
        .map(|r| per_rank[r].list.len().saturating_sub(matched[r]))
        .collect();
    (instances, unmatched)
}

/// Groups by a key of each occurrence (given its ordinal among its rank's occurrences of its
/// collective); occurrences without a key, or a second one of a key on a rank, stay alone.
fn by_key(
    per_rank: &[Arc<RankCollectives>],
    key: impl Fn(&super::collectives::Occurrence, usize) -> Option<(String, String)>,
) -> Vec<Vec<Option<usize>>> {
    let n = per_rank.len();
    let mut groups: Vec<Vec<Option<usize>>> = Vec::new();
    let mut index: HashMap<(String, String), usize> = HashMap::new();
    for (r, mine) in per_rank.iter().enumerate() {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (j, o) in mine.list.iter().enumerate() {
            let ordinal = seen.entry(o.collective.as_str()).or_default();
            let k = key(o, *ordinal);
            *ordinal += 1;
            let Some(k) = k else { continue };
            let g = *index.entry(k).or_insert_with(|| {
                groups.push(vec![None; n]);
                groups.len() - 1
            });
            if groups[g][r].is_none() {
                groups[g][r] = Some(j);
            }
        }
    }
    groups
}

/// One open group of [`by_spans`]: its collective, its first end, the latest start and earliest
/// end of its members (they all overlap while `max_start < min_end`), and its members.
struct Open<'a> {
    collective: &'a str,
    first_end: i64,
    max_start: i64,
    min_end: i64,
    members: Vec<Option<usize>>,
}

/// Groups occurrences of one collective on different ranks that overlap and end within
/// [`END_TOLERANCE_NS`] of the group's first end, taken in order of their ends on the run's clock.
fn by_spans(per_rank: &[Arc<RankCollectives>], offsets: &[i64]) -> Vec<Vec<Option<usize>>> {
    let n = per_rank.len();
    let mut all: Vec<(i64, i64, usize, usize)> = Vec::new(); // (end, start, rank, index)
    for (r, mine) in per_rank.iter().enumerate() {
        let off = offsets.get(r).copied().unwrap_or(0);
        all.extend(mine.list.iter().enumerate().map(|(j, o)| {
            (
                o.end_ns.saturating_add(off),
                o.start_ns.saturating_add(off),
                r,
                j,
            )
        }));
    }
    all.sort_unstable();
    let mut done: Vec<Vec<Option<usize>>> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    for (end, start, r, j) in all {
        let collective = per_rank[r].list[j].collective.as_str();
        // Groups whose first end is too far behind can take no more members. Groups open in
        // the order of their first ends (the ends come sorted), so those are the first ones.
        let stale = open.partition_point(|g| end - g.first_end > END_TOLERANCE_NS);
        done.extend(open.drain(..stale).map(|g| g.members));
        let joins = open.iter_mut().find(|g| {
            g.members[r].is_none()
                && start < g.min_end
                && g.max_start < end
                && g.collective == collective
        });
        match joins {
            Some(g) => {
                g.members[r] = Some(j);
                g.max_start = g.max_start.max(start);
                g.min_end = g.min_end.min(end);
            }
            None => {
                let mut members = vec![None; n];
                members[r] = Some(j);
                open.push(Open {
                    collective,
                    first_end: end,
                    max_start: start,
                    min_end: end,
                    members,
                });
            }
        }
    }
    done.extend(open.into_iter().map(|g| g.members));
    done
}

#[cfg(test)]
mod tests {
    use super::super::collectives::Occurrence;
    use super::*;

    fn occ(collective: &str, start_ns: i64, end_ns: i64) -> Occurrence {
        Occurrence {
            name: format!("nccl_{collective}"),
            collective: collective.into(),
            seq: None,
            start_ns,
            end_ns,
            index: 0,
        }
    }

    fn rank(list: Vec<Occurrence>) -> Arc<RankCollectives> {
        Arc::new(RankCollectives {
            source: Some(Source::NcclKernels),
            list,
        })
    }

    #[test]
    fn spans_match_the_same_call_where_order_would_not() {
        // Rank 0 lacks the first all-reduce rank 1 has; the second ends together on both.
        let r0 = rank(vec![occ("allreduce", 5_000_000, 9_000_000)]);
        let r1 = rank(vec![
            occ("allreduce", 1_000_000, 2_000_000),
            occ("allreduce", 8_000_000, 9_100_000),
        ]);
        let per_rank = [r0, r1];
        let (by_spans, unmatched) = match_instances(&per_rank, &[0, 0], Matching::Spans);
        assert_eq!(by_spans.len(), 1);
        assert_eq!(by_spans[0].members, vec![Some(0), Some(1)]);
        assert_eq!(by_spans[0].last, Some(1));
        assert_eq!(unmatched, vec![0, 1]);
        let (by_order, _) = match_instances(&per_rank, &[0, 0], Matching::NameOrder);
        assert_eq!(by_order[0].members, vec![Some(0), Some(0)]);
        // Ends 1 ms apart are two calls.
        let far = [
            rank(vec![occ("allreduce", 0, 3_000_000)]),
            rank(vec![occ("allreduce", 1_000_000, 4_000_000)]),
        ];
        assert!(match_instances(&far, &[0, 0], Matching::Spans).0.is_empty());
    }

    #[test]
    fn sequence_numbers_match_across_gaps() {
        let seq = |s: u64, start: i64| Occurrence {
            seq: Some(("0".into(), s)),
            ..occ("allreduce", start, start + 10)
        };
        let per_rank = [
            rank(vec![seq(1, 0), seq(2, 100), seq(3, 200)]),
            rank(vec![seq(2, 150), seq(3, 260)]),
        ];
        assert_eq!(Matching::best(&per_rank, true), Matching::Sequence);
        let (instances, unmatched) = match_instances(&per_rank, &[0, 0], Matching::Sequence);
        assert_eq!(
            instances
                .iter()
                .map(|i| i.members.clone())
                .collect::<Vec<_>>(),
            vec![vec![Some(1), Some(0)], vec![Some(2), Some(1)]]
        );
        assert_eq!(instances[1].ordinal, 1);
        assert_eq!(unmatched, vec![1, 0]);
    }
}
