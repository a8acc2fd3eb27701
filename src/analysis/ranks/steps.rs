//! Steps of a run's ranks for the rank × step heatmap: each rank's iterations (`ProfilerStep#N`,
//! or NVTX / annotation ranges named `step_N`, `step N`, `iteration N`, `iter_N`), matched
//! across ranks by their number, with the step time and the time the rank waited in the
//! collectives it arrived at during the step.

use std::collections::{BTreeSet, HashSet};

use regex::Regex;

use super::Run;
use super::collectives::{Collectives, Occurrence, outermost_ranges};
use crate::trace::{RangeKind, Trace};

/// What names a step: the number in the range's name.
pub const STEP_PATTERN: &str = r"^(?:ProfilerStep#|(?i:step|iteration|iter)[ _#-]?)(\d+)$";

/// One rank's step `number`, on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub number: u64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The time this rank waited for the last rank in the collectives it arrived at in the step.
    pub wait_ns: i64,
}

impl Step {
    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// The steps of every rank (by rank index) and the step numbers any rank has, ascending.
#[derive(Debug, Clone, Default)]
pub struct StepGrid {
    pub numbers: Vec<u64>,
    pub per_rank: Vec<Vec<Step>>,
}

impl StepGrid {
    /// Rank `r`'s step `number`, if it has one (a rank's steps are sorted by number, one each).
    pub fn cell(&self, r: usize, number: u64) -> Option<&Step> {
        let steps = self.per_rank.get(r)?;
        let i = steps.binary_search_by_key(&number, |s| s.number).ok()?;
        steps.get(i)
    }

    /// The steps of a run: the outermost ranges on each rank whose name matches [`STEP_PATTERN`];
    /// a rank's first range of a number counts when it has the number twice.
    pub fn of_run(run: &Run) -> Self {
        let ranges: Vec<Vec<Occurrence>> = run.ranks.iter().map(|r| step_ranges(r.trace)).collect();
        let offsets: Vec<i64> = run.ranks.iter().map(|r| r.offset_ns).collect();
        Self::from_ranges(&ranges, &offsets, &run.collectives)
    }

    /// [`StepGrid::of_run`] from each rank's [`step_ranges`] (own clock, by rank index), the
    /// ranks' offsets and the run's collectives.
    pub fn from_ranges(
        ranges: &[Vec<Occurrence>],
        offsets: &[i64],
        collectives: &Collectives,
    ) -> Self {
        let Ok(pattern) = Regex::new(STEP_PATTERN) else {
            return Self::default();
        };
        let mut numbers = BTreeSet::new();
        let per_rank: Vec<Vec<Step>> = ranges
            .iter()
            .enumerate()
            .map(|(r, ranges)| {
                let offset = offsets.get(r).copied().unwrap_or(0);
                // This rank's arrivals by time, with the running sum of its waits: a step's
                // wait is a difference of two sums (thousands of steps × collectives).
                let mut arrivals: Vec<(i64, i64)> = collectives
                    .instances
                    .iter()
                    .filter_map(|i| Some((i.arrivals.get(r).copied().flatten()?, i.wait_ns(r)?)))
                    .collect();
                arrivals.sort_unstable();
                let mut waited = Vec::with_capacity(arrivals.len() + 1);
                waited.push(0i64);
                for &(_, w) in &arrivals {
                    waited.push(waited.last().copied().unwrap_or(0) + w);
                }
                let before = |t: i64| arrivals.partition_point(|&(a, _)| a < t);
                let mut steps: Vec<Step> = Vec::new();
                let mut taken: HashSet<u64> = HashSet::new();
                for o in ranges {
                    let Some(number) = pattern
                        .captures(&o.name)
                        .and_then(|c| c.get(1))
                        .and_then(|m| m.as_str().parse::<u64>().ok())
                    else {
                        continue;
                    };
                    if !taken.insert(number) {
                        continue;
                    }
                    let (start_ns, end_ns) = (
                        o.start_ns.saturating_add(offset),
                        o.end_ns.saturating_add(offset),
                    );
                    let (from, to) = (before(start_ns), before(end_ns).max(before(start_ns)));
                    let wait_ns = waited[to] - waited[from];
                    numbers.insert(number);
                    steps.push(Step {
                        number,
                        start_ns,
                        end_ns,
                        wait_ns,
                    });
                }
                steps.sort_by_key(|s| s.number);
                steps
            })
            .collect();
        Self {
            numbers: numbers.into_iter().collect(),
            per_rank,
        }
    }
}

/// A trace's step ranges: its outermost NVTX / annotation ranges named as [`STEP_PATTERN`] says,
/// on its own clock.
pub fn step_ranges(trace: &Trace) -> Vec<Occurrence> {
    let Ok(pattern) = Regex::new(STEP_PATTERN) else {
        return Vec::new();
    };
    outermost_ranges(trace, |kind, name| {
        matches!(kind, RangeKind::Nvtx | RangeKind::Annotation) && pattern.is_match(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_wait_is_the_rank_s_waits_at_collectives_it_arrived_at_in_the_step() {
        use crate::analysis::ranks::collectives::Instance;
        let inst = |ordinal: usize, r0: i64, r1: i64| {
            Instance::new(
                "allreduce".into(),
                ordinal,
                vec![Some(r0), Some(r1)],
                vec![Some(r1 + 1), Some(r1 + 1)],
                vec![Some(ordinal), Some(ordinal)],
            )
        };
        let collectives = Collectives {
            // Rank 0 waits 5, 5, 10; rank 1 waits 0, 0, 0 (it is last at each).
            instances: vec![inst(0, 10, 15), inst(1, 30, 35), inst(2, 50, 60)],
            ..Default::default()
        };
        let occ = |name: &str, start_ns: i64, end_ns: i64| Occurrence {
            name: name.into(),
            collective: name.into(),
            seq: None,
            start_ns,
            end_ns,
            index: 0,
        };
        // On rank 0's own clock, rank 0 placed at +0; rank 1's steps at +0 too.
        let ranges = vec![
            vec![
                occ("step_1", 0, 30),
                occ("step_3", 50, 100),
                occ("step_2", 30, 50),
            ],
            vec![occ("step_1", 0, 30)],
        ];
        let grid = StepGrid::from_ranges(&ranges, &[0, 0], &collectives);
        assert_eq!(grid.numbers, vec![1, 2, 3]);
        let wait = |r: usize, n: u64| grid.cell(r, n).map(|s| s.wait_ns);
        // An arrival at a step's start counts in it, one at its end in the next.
        assert_eq!(wait(0, 1), Some(5));
        assert_eq!(wait(0, 2), Some(5));
        assert_eq!(wait(0, 3), Some(10));
        assert_eq!(wait(1, 1), Some(0));
        assert_eq!(wait(1, 2), None);
        // Arrivals are on the run's clock: moved by -20, step_3 spans [30, 80) there and holds
        // the arrivals at 30 and 50.
        let grid = StepGrid::from_ranges(&ranges[..1], &[-20], &collectives);
        assert_eq!(
            grid.cell(0, 3).map(|s| (s.start_ns, s.wait_ns)),
            Some((30, 15))
        );
    }

    #[test]
    fn step_names_give_their_number() {
        let re = Regex::new(STEP_PATTERN).unwrap();
        let n = |s: &str| {
            re.captures(s)
                .and_then(|c| c.get(1))
                .map(|m| m.as_str().to_string())
        };
        assert_eq!(n("ProfilerStep#12").as_deref(), Some("12"));
        assert_eq!(n("step_3").as_deref(), Some("3"));
        assert_eq!(n("Iteration 7").as_deref(), Some("7"));
        assert_eq!(n("stepper_3"), None);
        assert_eq!(n("warmup"), None);
    }
}
