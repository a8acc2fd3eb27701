//! A run of ranks: several traces of one job (one per process, as `nsys profile -o
//! report_%q{RANK}` or `torch.profiler` write them), each with its rank and its offset onto one
//! clock; per-rank GPU time, collectives matched across ranks, and who arrives last.

pub mod collectives;
pub mod digest;
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

/// How the ranks' times were put on one clock.
#[derive(Debug, Clone, PartialEq)]
pub enum Alignment {
    /// Each trace's own UTC start: nsys's `TARGET_INFO_SESSION_START_TIME`, PyTorch's
    /// `baseTimeNanoseconds`.
    Utc,
    /// No common clock: shifted so that the first collective all ranks have ends together (a
    /// collective's ranks leave it together; they arrive at different times).
    FirstCollective(String),
    /// Neither: times as each trace has them.
    None,
}

impl Alignment {
    pub fn describe(&self) -> String {
        match self {
            Alignment::Utc => "each trace's UTC start (session start / baseTimeNanoseconds)".into(),
            Alignment::FirstCollective(name) => {
                format!("the end of the first '{name}' every rank has (no common clock)")
            }
            Alignment::None => "none: no common clock and no collective every rank has".into(),
        }
    }
}

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

/// A trace's UTC time of its time 0, when it records one.
pub fn utc_origin(trace: &Trace) -> Option<i64> {
    match trace.format {
        TraceFormat::NsysSqlite => trace.session_start_utc_ns,
        TraceFormat::Kineto => trace.torch.as_ref().and_then(|t| t.base_time_ns),
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
    /// collectives where a rank has neither NCCL kernels nor `c10d::` operators).
    pub fn new(traces: &[&'t Trace], pattern: &regex::Regex) -> Self {
        let hints: Vec<RankHints> = traces.iter().map(|t| RankHints::of(t)).collect();
        let origins: Vec<Option<i64>> = traces.iter().map(|t| utc_origin(t)).collect();
        let per_trace: Vec<Arc<collectives::RankCollectives>> = traces
            .iter()
            .map(|t| Arc::new(collectives::of_rank(t, pattern)))
            .collect();
        let (placed, alignment) = place(&hints, &origins, &per_trace);
        let ranks: Vec<Rank<'t>> = placed
            .iter()
            .map(|p| Rank {
                rank: p.rank,
                source: p.source,
                trace: traces[p.index],
                offset_ns: p.offset_ns,
            })
            .collect();
        let per_rank = placed
            .iter()
            .map(|p| Arc::clone(&per_trace[p.index]))
            .collect();
        let offsets: Vec<i64> = placed.iter().map(|p| p.offset_ns).collect();
        let collectives = collectives::Collectives::match_lists(per_rank, &offsets);
        Self {
            ranks,
            alignment,
            collectives,
        }
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

/// The traces of a run by rank, on one clock: each trace's UTC origin when all have one, else
/// the end of the first collective every rank has (`per_trace`: each trace's collectives, on its
/// own clock, in the order given). What [`Run::new`] does with whole traces, from what the
/// window keeps of a collapsed rank ([`digest::RankDigest`]).
pub fn place(
    hints: &[RankHints],
    origins: &[Option<i64>],
    per_trace: &[Arc<collectives::RankCollectives>],
) -> (Vec<Placed>, Alignment) {
    let found = ranks_from_hints(hints);
    let utc = origins.iter().all(Option::is_some);
    let earliest = origins.iter().flatten().copied().min().unwrap_or(0);
    let mut placed: Vec<Placed> = found
        .iter()
        .zip(origins)
        .enumerate()
        .map(|(index, (&(rank, source), origin))| Placed {
            index,
            rank,
            source,
            offset_ns: if utc {
                origin.unwrap_or(0) - earliest
            } else {
                0
            },
        })
        .collect();
    placed.sort_by_key(|p| p.rank);
    let mut alignment = if utc { Alignment::Utc } else { Alignment::None };
    if !utc {
        let none = collectives::RankCollectives::default();
        let sorted: Vec<&collectives::RankCollectives> = placed
            .iter()
            .map(|p| per_trace.get(p.index).map_or(&none, |c| c.as_ref()))
            .collect();
        if let Some((name, ends)) = collectives::first_common_end(&sorted) {
            let latest = ends.iter().copied().max().unwrap_or(0);
            for (p, end) in placed.iter_mut().zip(ends) {
                p.offset_ns = latest - end;
            }
            alignment = Alignment::FirstCollective(name);
        }
    }
    (placed, alignment)
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
