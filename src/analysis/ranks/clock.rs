//! The run's clock: the clock the traces record when every trace has one and their spans overlap
//! on it (nsys's session start `utcEpochNs`; a PyTorch trace's epoch-based `ts`, counted from
//! `baseTimeNanoseconds` where written); else, or when asked, the end of a collective every rank
//! takes part in; else nothing — traces that share neither a time nor a collective are not one
//! run, and [`Alignment::NotARun`] says why rather than invent a clock.

use std::sync::Arc;

use super::RankHints;
use super::collectives::RankCollectives;
use super::matching::{Matching, match_instances};

/// 2000-01-01 in ns since the Unix epoch: a PyTorch trace whose times (from its
/// `baseTimeNanoseconds`, else as written) come after it counts from the epoch; older PyTorch
/// wrote `ts` in µs since the epoch with no base, and a trace on a process-relative clock
/// counts from near zero.
pub const EPOCH_2000_NS: i64 = 946_684_800_000_000_000;

/// What clock the user asks for (`ranks --align`, the run panel's choice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClockChoice {
    /// The clock the traces record where every trace has one; else a collective's end.
    #[default]
    Recorded,
    /// The end of the first collective every rank takes part in, even where a recorded clock
    /// exists.
    Collective,
}

/// How the ranks' times were put on one clock.
#[derive(Debug, Clone, PartialEq)]
pub enum Alignment {
    /// The clock the traces record: each trace's absolute time of its time 0 (nsys's
    /// `TARGET_INFO_SESSION_START_TIME`, PyTorch's `baseTimeNanoseconds` or its epoch-based `ts`).
    Utc,
    /// Shifted so that one collective every rank takes part in ends together (a collective's
    /// ranks leave it together; they arrive at different times): `asked`, or because the
    /// traces record no common clock.
    Collective {
        name: String,
        ordinal: usize,
        asked: bool,
    },
    /// Not one run: why. Times are as each trace has them.
    NotARun(String),
}

impl Alignment {
    /// Why the traces are not one run, if they are not.
    pub fn refused(&self) -> Option<&str> {
        match self {
            Alignment::NotARun(why) => Some(why),
            _ => None,
        }
    }

    /// The clock line: `recorded …`, `collective …` or `none …`.
    pub fn describe(&self) -> String {
        match self {
            Alignment::Utc => "recorded — each trace's own absolute clock (nsys session start \
                               utcEpochNs, PyTorch's epoch-based ts / baseTimeNanoseconds), \
                               on which the traces overlap"
                .into(),
            Alignment::Collective {
                name,
                ordinal,
                asked,
            } => format!(
                "collective — the end of '{name}' #{ordinal}, which every rank takes part in ({})",
                if *asked {
                    "asked for"
                } else {
                    "the traces record no common clock"
                }
            ),
            Alignment::NotARun(why) => format!("none — not one run: {why}"),
        }
    }

    /// The clock in a few words, for a verdict: `the recorded clock`, `the end of '…' #n`.
    pub fn short(&self) -> String {
        match self {
            Alignment::Utc => "the recorded clock".into(),
            Alignment::Collective { name, ordinal, .. } => {
                format!("the end of '{name}' #{ordinal}")
            }
            Alignment::NotARun(_) => "no clock".into(),
        }
    }
}

/// Each trace's offset onto the run's clock (in the order given), how it was found, and how
/// its collectives are to be matched.
pub struct Clock {
    pub offsets: Vec<i64>,
    pub alignment: Alignment,
    pub matching: Matching,
}

/// The run's clock for traces (in the order given, `order`: their indices by rank) with their
/// absolute `origins`, their `spans` (first → last time on their own clock) and collectives.
pub fn find_clock(
    hints: &[RankHints],
    origins: &[Option<i64>],
    spans: &[(i64, i64)],
    per_trace: &[Arc<RankCollectives>],
    order: &[usize],
    choice: ClockChoice,
) -> Clock {
    let n = hints.len();
    let sorted: Vec<Arc<RankCollectives>> = order
        .iter()
        .map(|&i| per_trace.get(i).cloned().unwrap_or_default())
        .collect();
    let recorded: Option<Vec<i64>> = origins.iter().copied().collect();
    let not_a_run = |why: String| Clock {
        offsets: vec![0; n],
        alignment: Alignment::NotARun(why),
        matching: Matching::NameOrder,
    };
    // Matched only where it is needed (a second pass over every collective of every rank):
    // the recorded clock of ranks that overlap needs no anchor.
    let anchor = || common_collective(&sorted);
    let on_anchor = |asked: bool| {
        anchor().map(|(name, ordinal, ends)| {
            let latest = ends.iter().copied().max().unwrap_or(0);
            let mut offsets = vec![0; n];
            for (&i, end) in order.iter().zip(&ends) {
                offsets[i] = latest - end;
            }
            Clock {
                offsets,
                alignment: Alignment::Collective {
                    name,
                    ordinal,
                    asked,
                },
                matching: Matching::best(&sorted, false),
            }
        })
    };
    let shared = || match anchor() {
        Some((name, ordinal, _)) => format!(
            "; they share '{name}' #{ordinal}: `--align collective` (the run panel's \"Align on a \
             collective\") puts them on it"
        ),
        None => "; nor do they share a collective every rank takes part in".into(),
    };
    match (recorded, choice) {
        (_, ClockChoice::Collective) => on_anchor(true).unwrap_or_else(|| {
            not_a_run("no collective that every rank takes part in to align on".into())
        }),
        (Some(origins), ClockChoice::Recorded) => {
            let earliest = origins.iter().copied().min().unwrap_or(0);
            let on_clock: Vec<(i64, i64)> = spans
                .iter()
                .zip(&origins)
                .map(|(&(a, b), &o)| (a.saturating_add(o), b.saturating_add(o)))
                .collect();
            let latest_start = on_clock.iter().map(|s| s.0).max().unwrap_or(0);
            let earliest_end = on_clock.iter().map(|s| s.1).min().unwrap_or(0);
            if latest_start >= earliest_end {
                return not_a_run(format!(
                    "on the clock the traces record, their spans do not overlap ({}){}",
                    spans_text(hints, &on_clock),
                    shared()
                ));
            }
            Clock {
                offsets: origins.iter().map(|o| o - earliest).collect(),
                alignment: Alignment::Utc,
                matching: Matching::best(&sorted, true),
            }
        }
        (None, ClockChoice::Recorded) => on_anchor(false).unwrap_or_else(|| {
            let without: Vec<String> = hints
                .iter()
                .zip(origins)
                .filter(|(_, o)| o.is_none())
                .map(|(h, _)| super::table::file_name(&h.path))
                .collect();
            not_a_run(format!(
                "{} record{} no absolute clock, and the traces share no collective every rank \
                 takes part in: nothing puts them on one clock",
                list(&without),
                if without.len() == 1 { "s" } else { "" }
            ))
        }),
    }
}

/// The first collective (in the first rank's order) that every rank takes part in, matched on
/// the traces' own clocks (by sequence numbers, else name and order), with its end on each rank
/// (by rank).
fn common_collective(sorted: &[Arc<RankCollectives>]) -> Option<(String, usize, Vec<i64>)> {
    if sorted.is_empty() {
        return None;
    }
    let zeros = vec![0; sorted.len()];
    let (instances, _) = match_instances(sorted, &zeros, Matching::best(sorted, false));
    let everyone = instances
        .iter()
        .filter(|i| i.members.iter().all(Option::is_some))
        .min_by_key(|i| i.members[0])?;
    let ends: Option<Vec<i64>> = everyone.ends.iter().copied().collect();
    Some((everyone.name.clone(), everyone.ordinal, ends?))
}

/// Each trace's span on the recorded clock, in seconds from the earliest start: at most eight.
fn spans_text(hints: &[RankHints], on_clock: &[(i64, i64)]) -> String {
    let first = on_clock.iter().map(|s| s.0).min().unwrap_or(0);
    let mut parts: Vec<String> = hints
        .iter()
        .zip(on_clock)
        .take(8)
        .map(|(h, (a, b))| {
            format!(
                "{} {:.3}–{:.3} s",
                super::table::file_name(&h.path),
                (a - first) as f64 / 1e9,
                (b - first) as f64 / 1e9
            )
        })
        .collect();
    if hints.len() > 8 {
        parts.push(format!("{} more", hints.len() - 8));
    }
    parts.join("; ")
}

/// `a`, `a and b`, `a, b and c`.
fn list(names: &[String]) -> String {
    match names {
        [] => "no trace".into(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::collectives::{Occurrence, Source};
    use super::*;

    fn hints(name: &str) -> RankHints {
        RankHints {
            distributed: None,
            environment: None,
            path: name.into(),
        }
    }

    fn rank(ends: &[i64]) -> Arc<RankCollectives> {
        Arc::new(RankCollectives {
            source: Some(Source::NcclKernels),
            list: ends
                .iter()
                .map(|&e| Occurrence {
                    name: "k".into(),
                    collective: "allreduce".into(),
                    seq: None,
                    start_ns: e - 10,
                    end_ns: e,
                    index: 0,
                })
                .collect(),
        })
    }

    #[test]
    fn a_recorded_clock_is_used_where_spans_overlap_and_refused_where_they_do_not() {
        let h = [hints("a_rank0.json"), hints("b_rank1.json")];
        let c = [rank(&[100]), rank(&[200])];
        let o = [0, 1];
        let clock = |origins: &[Option<i64>], spans: &[(i64, i64)], choice| {
            find_clock(&h, origins, spans, &c, &o, choice)
        };
        let on = clock(
            &[Some(1000), Some(1500)],
            &[(0, 900), (0, 900)],
            ClockChoice::Recorded,
        );
        assert_eq!(on.alignment, Alignment::Utc);
        assert_eq!(on.offsets, vec![0, 500]);
        assert_eq!(on.matching, Matching::Spans);
        let apart = clock(
            &[Some(0), Some(5_000_000_000)],
            &[(0, 900), (0, 900)],
            ClockChoice::Recorded,
        );
        let Alignment::NotARun(why) = &apart.alignment else {
            panic!("{:?}", apart.alignment)
        };
        assert!(
            why.contains("do not overlap") && why.contains("b_rank1.json 5.000"),
            "{why}"
        );
        assert!(why.contains("--align collective"), "{why}");
        // Asked: the collective's ends meet.
        let asked = clock(
            &[Some(0), Some(5)],
            &[(0, 900), (0, 900)],
            ClockChoice::Collective,
        );
        assert_eq!(asked.offsets, vec![100, 0]);
        // No clock on one trace and no collective in common: nothing to put them on one clock.
        let none = [rank(&[]), rank(&[200])];
        let refused = find_clock(
            &h,
            &[None, Some(0)],
            &[(0, 1), (0, 1)],
            &none,
            &o,
            ClockChoice::Recorded,
        );
        let Alignment::NotARun(why) = &refused.alignment else {
            panic!()
        };
        assert!(
            why.starts_with("a_rank0.json records no absolute clock"),
            "{why}"
        );
    }
}
