//! A run of ranks: several traces of one job (one per process, as `nsys profile -o
//! report_%q{RANK}` or `torch.profiler` write them), each with its rank and its offset onto one
//! clock; per-rank GPU time, collectives matched across ranks, and who arrives last.

pub mod collectives;
pub mod steps;
pub mod summary;
pub mod table;

use std::path::Path;

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

/// Each trace's rank: `distributedInfo.rank`, else the rank in its processes' environment
/// (`RANK` / `OMPI_COMM_WORLD_RANK` / `SLURM_PROCID`), else the last number in its file name, else its
/// place in the order given — the order for all when two traces would share a rank.
pub fn find_ranks(traces: &[&Trace]) -> Vec<(u32, RankSource)> {
    let found: Vec<(u32, RankSource)> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if let Some(r) = t.torch.as_ref().and_then(|t| t.rank) {
                (r, RankSource::Distributed)
            } else if let Some((_, r)) = &t.env_rank {
                (*r, RankSource::Environment)
            } else if let Some(r) = rank_in_file_name(&t.path) {
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
        (0..traces.len() as u32)
            .map(|i| (i, RankSource::Order))
            .collect()
    }
}

/// A trace's UTC time of its time 0, when it records one.
pub fn utc_origin(trace: &Trace) -> Option<i64> {
    match trace.format {
        TraceFormat::NsysSqlite => trace.session_start_utc_ns,
        TraceFormat::Kineto => trace.torch.as_ref().and_then(|t| t.base_time_ns),
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
        let found = find_ranks(traces);
        let origins: Vec<Option<i64>> = traces.iter().map(|t| utc_origin(t)).collect();
        let utc = origins.iter().all(Option::is_some);
        let earliest = origins.iter().flatten().copied().min().unwrap_or(0);
        let mut ranks: Vec<Rank<'t>> = traces
            .iter()
            .zip(&found)
            .zip(&origins)
            .map(|((&trace, &(rank, source)), origin)| Rank {
                rank,
                source,
                trace,
                offset_ns: if utc {
                    origin.unwrap_or(0) - earliest
                } else {
                    0
                },
            })
            .collect();
        ranks.sort_by_key(|r| r.rank);
        let mut alignment = if utc { Alignment::Utc } else { Alignment::None };
        if !utc {
            let per_rank: Vec<_> = ranks
                .iter()
                .map(|r| collectives::of_rank(r.trace, pattern))
                .collect();
            if let Some((name, ends)) = collectives::first_common_end(&per_rank) {
                let latest = ends.iter().copied().max().unwrap_or(0);
                for (r, end) in ranks.iter_mut().zip(ends) {
                    r.offset_ns = latest - end;
                }
                alignment = Alignment::FirstCollective(name);
            }
        }
        let collectives = collectives::Collectives::match_ranks(&ranks, pattern);
        Self {
            ranks,
            alignment,
            collectives,
        }
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
