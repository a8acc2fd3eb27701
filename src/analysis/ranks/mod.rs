//! A run of ranks: several traces of one job (one per process, as `nsys profile -o
//! report_%q{RANK}` or `torch.profiler` write them), each with its rank and its offset onto one
//! clock; per-rank GPU time, collectives matched across ranks, and who arrives last.

pub mod clock;
pub mod collectives;
pub mod digest;
pub mod launchers;
pub mod matching;
pub mod steps;
pub mod summary;
pub mod table;

use std::path::Path;
use std::sync::Arc;

use crate::trace::{Trace, TraceFormat};

/// Where a trace's rank came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RankSource {
    /// `distributedInfo.rank` of a PyTorch trace.
    Distributed,
    /// `RANK`, `OMPI_COMM_WORLD_RANK` or `SLURM_PROCID` in the profiled process's environment.
    Environment,
    /// The last number in the file name (`report_rank3.sqlite`).
    FileName,
    /// The order the traces were given in (no rank found, or two traces claimed one rank).
    Order,
}

impl RankSource {
    pub fn label(self) -> &'static str {
        match self {
            RankSource::Distributed => "distributedInfo.rank",
            RankSource::Environment => "process environment",
            RankSource::FileName => "file name",
            RankSource::Order => "order given",
        }
    }
}

pub use clock::{Alignment, ClockChoice};

/// One rank of a run.
pub struct Rank<'t> {
    pub rank: u32,
    pub source: RankSource,
    pub trace: &'t Trace,
    /// Added to the trace's times to put them on the run's clock.
    pub offset_ns: i64,
}

impl Rank<'_> {
    /// A time of this trace on the run's clock.
    pub fn on_run_clock(&self, t: i64) -> i64 {
        t.saturating_add(self.offset_ns)
    }
}

/// The last number in a file name (`n25_rank1.sqlite` → 1), before any extension.
pub fn rank_in_file_name(path: &Path) -> Option<u32> {
    let name = path.file_name()?.to_string_lossy();
    let stem = name.split('.').next().unwrap_or_default();
    let head = stem.trim_end_matches(|c: char| !c.is_ascii_digit());
    let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    head[head.len() - digits..].parse().ok()
}

/// What a trace says about its rank: `distributedInfo.rank`, the rank in its processes'
/// environment, and its file (for the last number of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankHints {
    pub distributed: Option<u32>,
    pub environment: Option<u32>,
    pub path: std::path::PathBuf,
}

impl RankHints {
    pub fn of(trace: &Trace) -> Self {
        Self {
            distributed: trace.torch.as_ref().and_then(|t| t.rank),
            environment: trace.env_rank.as_ref().map(|(_, r)| *r),
            path: trace.path.clone(),
        }
    }
}

/// Each trace's rank: `distributedInfo.rank`, else the rank in its processes' environment
/// (`RANK` / `OMPI_COMM_WORLD_RANK` / `SLURM_PROCID`), else the last number in its file name, else its
/// place in the order given — the order for all when two traces would share a rank.
pub fn find_ranks(traces: &[&Trace]) -> Vec<(u32, RankSource)> {
    let hints: Vec<RankHints> = traces.iter().map(|t| RankHints::of(t)).collect();
    ranks_from_hints(&hints)
}

/// [`find_ranks`] from what each trace says about its rank.
pub fn ranks_from_hints(hints: &[RankHints]) -> Vec<(u32, RankSource)> {
    let found: Vec<(u32, RankSource)> = hints
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if let Some(r) = h.distributed {
                (r, RankSource::Distributed)
            } else if let Some(r) = h.environment {
                (r, RankSource::Environment)
            } else if let Some(r) = rank_in_file_name(&h.path) {
                (r, RankSource::FileName)
            } else {
                (i as u32, RankSource::Order)
            }
        })
        .collect();
    let mut ranks: Vec<u32> = found.iter().map(|r| r.0).collect();
    ranks.sort_unstable();
    ranks.dedup();
    if ranks.len() == found.len() {
        found
    } else {
        (0..hints.len() as u32)
            .map(|i| (i, RankSource::Order))
            .collect()
    }
}

/// A trace's absolute (UTC) time of its time 0, when it records one: an nsys export's session
/// start; a PyTorch trace's `baseTimeNanoseconds`, else 0 where its `ts` count from the epoch
/// themselves (older PyTorch) — not where they count from a process-relative zero.
pub fn utc_origin(trace: &Trace) -> Option<i64> {
    match trace.format {
        TraceFormat::NsysSqlite | TraceFormat::XPlane => trace.session_start_utc_ns,
        TraceFormat::Kineto => {
            let base = trace
                .torch
                .as_ref()
                .and_then(|t| t.base_time_ns)
                .unwrap_or(0);
            (base.saturating_add(trace.first_ns) >= clock::EPOCH_2000_NS).then_some(base)
        }
        TraceFormat::NsightCompute => None,
    }
}

/// The ranks of a run, sorted by rank, on one clock.
pub struct Run<'t> {
    pub ranks: Vec<Rank<'t>>,
    pub alignment: Alignment,
    pub collectives: collectives::Collectives,
}

impl<'t> Run<'t> {
    /// Finds ranks, clock and collectives (`pattern`: the NVTX/annotation ranges that count as
    /// collectives where a rank has neither collective kernels nor `c10d::` operators), on the
    /// recorded clock where there is one. Traces that are not one run keep their own times,
    /// with [`Alignment::NotARun`] saying why.
    pub fn new(traces: &[&'t Trace], pattern: &regex::Regex) -> Self {
        Self::on_clock(traces, pattern, ClockChoice::Recorded)
    }

    /// [`Run::new`] on the clock `choice` asks for.
    pub fn on_clock(traces: &[&'t Trace], pattern: &regex::Regex, choice: ClockChoice) -> Self {
        let hints: Vec<RankHints> = traces.iter().map(|t| RankHints::of(t)).collect();
        let origins: Vec<Option<i64>> = traces.iter().map(|t| utc_origin(t)).collect();
        let spans: Vec<(i64, i64)> = traces.iter().map(|t| (t.first_ns, t.last_ns)).collect();
        let per_trace: Vec<Arc<collectives::RankCollectives>> = traces
            .iter()
            .map(|t| Arc::new(collectives::of_rank(t, pattern)))
            .collect();
        let placement = place(&hints, &origins, &spans, &per_trace, choice);
        let ranks: Vec<Rank<'t>> = placement
            .placed
            .iter()
            .map(|p| Rank {
                rank: p.rank,
                source: p.source,
                trace: traces[p.index],
                offset_ns: p.offset_ns,
            })
            .collect();
        let per_rank = placement
            .placed
            .iter()
            .map(|p| Arc::clone(&per_trace[p.index]))
            .collect();
        let offsets: Vec<i64> = placement.placed.iter().map(|p| p.offset_ns).collect();
        let collectives =
            collectives::Collectives::match_by(per_rank, &offsets, placement.matching);
        Self {
            ranks,
            alignment: placement.alignment,
            collectives,
        }
    }

    /// Why the traces are not one run, if they are not.
    pub fn refused(&self) -> Option<&str> {
        self.alignment.refused()
    }
}

/// Who kept the others waiting, and what the verdict rests on: the clock and the matching of
/// instances, with the occurrences left unmatched (`ranks`: the rank numbers, by rank index).
pub fn straggler_verdict(
    c: &collectives::Collectives,
    ranks: &[u32],
    alignment: &Alignment,
) -> String {
    let basis = format!(
        "on {}, instances matched by {}",
        alignment.short(),
        c.matching.label()
    );
    let unmatched: usize = c.unmatched.iter().sum();
    let left_out = if unmatched > 0 {
        let per_rank: Vec<String> = c
            .unmatched
            .iter()
            .zip(ranks)
            .map(|(n, r)| format!("rank {r} {n}"))
            .collect();
        format!(
            "; {unmatched} on one rank only, left out ({})",
            per_rank.join(", ")
        )
    } else {
        String::new()
    };
    match c.straggler(ranks.len()) {
        Some((r, n)) => format!(
            "straggler: rank {} arrived last at {n} of {} collectives and kept the others waiting \
             {:.1} ms in all{} ({basis}{left_out})",
            ranks.get(r).copied().unwrap_or_default(),
            c.instances.len(),
            c.wait_caused_ns(r) as f64 / 1e6,
            more_often(c, ranks, n)
        ),
        None if c.instances.is_empty() => {
            format!("no collective is shared by two ranks ({basis}{left_out})")
        }
        None => format!(
            "no straggler: no rank keeps the others waiting longer than the rest ({basis}{left_out})"
        ),
    }
}

/// Where another rank arrived last more often than the straggler (`late`: the straggler's count)
/// — the table's Late Arrivals show it — `; rank R arrived last more often (at M), costing X ms`:
/// the straggler is who cost the others most, not who was last most often.
fn more_often(c: &collectives::Collectives, ranks: &[u32], late: usize) -> String {
    let most = (0..ranks.len())
        .map(|r| (c.late_arrivals(r), r))
        .max_by_key(|&(n, r)| (n, std::cmp::Reverse(r)));
    match most {
        Some((n, r)) if n > late => format!(
            "; rank {} arrived last more often (at {n}), costing {:.1} ms",
            ranks.get(r).copied().unwrap_or_default(),
            c.wait_caused_ns(r) as f64 / 1e6
        ),
        _ => String::new(),
    }
}

/// One trace's place in a run: its index among the traces given, its rank and its offset onto
/// the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub index: usize,
    pub rank: u32,
    pub source: RankSource,
    pub offset_ns: i64,
}

/// The traces of a run by rank on one clock ([`clock::find_clock`]), and how their collectives
/// are matched.
pub struct Placement {
    pub placed: Vec<Placed>,
    pub alignment: Alignment,
    pub matching: matching::Matching,
}

/// The traces of a run by rank, on the clock `choice` asks for (`origins`: each trace's absolute
/// time of its time 0; `spans`: its first and last times on its own clock; `per_trace`: its
/// collectives, on its own clock; all in the order given). What [`Run::on_clock`] does with
/// whole traces, from what the window keeps of a collapsed rank ([`digest::RankDigest`]).
pub fn place(
    hints: &[RankHints],
    origins: &[Option<i64>],
    spans: &[(i64, i64)],
    per_trace: &[Arc<collectives::RankCollectives>],
    choice: ClockChoice,
) -> Placement {
    let found = ranks_from_hints(hints);
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by_key(|&i| found[i].0);
    let clock = clock::find_clock(hints, origins, spans, per_trace, &order, choice);
    let placed = order
        .iter()
        .map(|&index| Placed {
            index,
            rank: found[index].0,
            source: found[index].1,
            offset_ns: clock.offsets.get(index).copied().unwrap_or(0),
        })
        .collect();
    Placement {
        placed,
        alignment: clock.alignment,
        matching: clock.matching,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_is_the_last_number_of_the_file_name() {
        let r = |s: &str| rank_in_file_name(Path::new(s));
        assert_eq!(r("/x/n25_rank1.sqlite"), Some(1));
        assert_eq!(r("report_rank12.nsys-rep"), Some(12));
        assert_eq!(r("kt_ranks_rank0.pt.trace.json.gz"), Some(0));
        assert_eq!(r("worker7_step3_trace.json"), Some(3));
        assert_eq!(r("baseline.sqlite"), None);
    }
}
