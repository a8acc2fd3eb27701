//! What a run keeps of a rank it does not show in detail: a [`RankDigest`], built from the
//! rank's trace on its loading thread, after which the trace can be dropped. It holds what the
//! run's analysis needs (rank hints, UTC origin, collectives, step ranges, the per-rank table's
//! GPU times) and what a collapsed rank's header draws (its GPUs' busy time merged, at full
//! resolution; [`super::summary::visible_blocks`] reduces it to pixels when drawn). The run's
//! analysis from digests ([`analyse`]) is the same computation as [`super::Run::new`] on whole
//! traces.

use std::sync::Arc;

use regex::Regex;

use super::collectives::{self, Collectives, Occurrence, RankCollectives};
use super::steps::{self, StepGrid};
use super::table::{self, GpuTime};
use super::{Alignment, ClockChoice, Placed, RankHints, place, summary, utc_origin};
use crate::analysis::intervals::Interval;
use crate::analysis::table::Table;
use crate::trace::{Needs, Trace};

/// The parts of a trace a digest is made from: GPU work (busy time, NCCL kernels) and NVTX /
/// annotation / operator ranges (collectives, steps). A rank loaded for its digest only reads
/// these; expanded, it is loaded whole.
pub const DIGEST_NEEDS: Needs = Needs::GPU_WORK.union(Needs::NVTX);

/// How many pixel columns across its GPU span a digest's busy time keeps apart: 2^20 (a view of
/// the rank 1,500 px wide shows its gaps exactly down to a 700th of the rank's span; deeper, a
/// collapsed header merges gaps shorter than the resolution, and an expanded rank shows them).
pub const BUSY_COLUMNS: i64 = 1 << 20;

/// A trace's GPU busy time ([`summary::gpu_busy`]) with gaps shorter than its GPU span /
/// [`BUSY_COLUMNS`] merged.
pub fn busy_at_resolution(trace: &Trace) -> Vec<Interval> {
    let busy = summary::gpu_busy(trace);
    let (Some(&(first, _)), Some(&(_, last))) = (busy.first(), busy.last()) else {
        return busy;
    };
    let resolution = ((last - first) / BUSY_COLUMNS).max(1);
    let mut kept = summary::visible_blocks(&busy, i64::MIN, i64::MAX, resolution);
    kept.shrink_to_fit();
    kept
}

/// One rank reduced to what a run needs while the rank is collapsed.
#[derive(Debug, Clone)]
pub struct RankDigest {
    pub hints: RankHints,
    /// The trace's UTC time of its time 0 ([`utc_origin`]).
    pub utc_origin: Option<i64>,
    /// The trace's first and last times (of the parts read), on its own clock.
    pub first_ns: i64,
    pub last_ns: i64,
    /// First GPU operation's start → last one's end, on its own clock.
    pub gpu_span: Option<(i64, i64)>,
    /// Its GPUs' busy time merged (all devices), sorted and disjoint, on its own clock, at the
    /// resolution of [`BUSY_COLUMNS`] pixel columns across its GPU span: gaps shorter than that
    /// merged (a 36 s rank keeps its gaps of 35 µs and more).
    pub busy: Vec<Interval>,
    pub gpu_time: GpuTime,
    /// Its collectives (with the pattern it was made with), on its own clock; shared with the
    /// run's analysis.
    pub collectives: Arc<RankCollectives>,
    /// Its step ranges ([`steps::step_ranges`]), on its own clock.
    pub steps: Vec<Occurrence>,
    /// How many events the trace had (of the parts read).
    pub events: usize,
    /// The trace's size and modification time (ns) when the digest was made, where known (a
    /// digest kept as files): a rank is not expanded from a trace that changed since.
    pub source_stamp: Option<(u64, i64)>,
}

impl RankDigest {
    /// The digest of `trace` (`pattern`: the ranges that count as collectives where the trace
    /// has neither NCCL kernels nor `c10d::` operators).
    pub fn of(trace: &Trace, pattern: &Regex) -> Self {
        Self {
            hints: RankHints::of(trace),
            utc_origin: utc_origin(trace),
            first_ns: trace.first_ns,
            last_ns: trace.last_ns,
            gpu_span: trace.gpu_span(),
            busy: busy_at_resolution(trace),
            gpu_time: GpuTime::of(trace),
            collectives: Arc::new(collectives::of_rank(trace, pattern)),
            steps: steps::step_ranges(trace),
            events: trace.kernels.spans.len()
                + trace.memcpys.spans.len()
                + trace.memsets.spans.len()
                + trace.nvtx.spans.len(),
            source_stamp: None,
        }
    }

    /// Its size in memory, about: the digest's heap parts.
    pub fn heap_bytes(&self) -> usize {
        let occurrences = |l: &[Occurrence]| {
            l.iter()
                .map(|o| std::mem::size_of::<Occurrence>() + o.name.capacity())
                .sum::<usize>()
        };
        std::mem::size_of::<Self>()
            + self.busy.capacity() * std::mem::size_of::<Interval>()
            + occurrences(&self.collectives.list)
            + occurrences(&self.steps)
            + self.hints.path.as_os_str().len()
    }
}

/// A run's analysis from its ranks' digests: who is which rank, the clock, collectives matched
/// across ranks, the per-rank table and the steps.
pub struct DigestRun {
    /// By rank: each digest's index among those given, rank, source and offset (the alignment's
    /// plus the hand shift given with it).
    pub ranks: Vec<Placed>,
    /// The alignment's offsets alone, by rank.
    pub auto_offsets: Vec<i64>,
    pub alignment: Alignment,
    pub collectives: Collectives,
    pub table: Table,
    pub steps: StepGrid,
}

/// [`super::Run::on_clock`], [`table::rank_table`] and [`StepGrid::of_run`] from digests, each
/// with a hand shift (ns) added to the offset the alignment finds.
pub fn analyse(digests: &[(&RankDigest, i64)], choice: ClockChoice) -> DigestRun {
    let hints: Vec<RankHints> = digests.iter().map(|(d, _)| d.hints.clone()).collect();
    let origins: Vec<Option<i64>> = digests.iter().map(|(d, _)| d.utc_origin).collect();
    let spans: Vec<(i64, i64)> = digests
        .iter()
        .map(|(d, _)| (d.first_ns, d.last_ns))
        .collect();
    let per_trace: Vec<Arc<RankCollectives>> = digests
        .iter()
        .map(|(d, _)| Arc::clone(&d.collectives))
        .collect();
    let placement = place(&hints, &origins, &spans, &per_trace, choice);
    let (mut placed, alignment) = (placement.placed, placement.alignment);
    let auto_offsets: Vec<i64> = placed.iter().map(|p| p.offset_ns).collect();
    for p in &mut placed {
        p.offset_ns += digests.get(p.index).map_or(0, |(_, shift)| *shift);
    }
    let offsets: Vec<i64> = placed.iter().map(|p| p.offset_ns).collect();
    let per_rank: Vec<Arc<RankCollectives>> = placed
        .iter()
        .map(|p| Arc::clone(&per_trace[p.index]))
        .collect();
    let collectives = Collectives::match_by(per_rank, &offsets, placement.matching);
    let rows: Vec<(u32, String, GpuTime)> = placed
        .iter()
        .map(|p| {
            let d = digests[p.index].0;
            (p.rank, table::file_name(&d.hints.path), d.gpu_time)
        })
        .collect();
    let step_ranges: Vec<Vec<Occurrence>> = placed
        .iter()
        .map(|p| digests[p.index].0.steps.clone())
        .collect();
    DigestRun {
        table: table::rank_table_of(&rows, &collectives),
        steps: StepGrid::from_ranges(&step_ranges, &offsets, &collectives),
        ranks: placed,
        auto_offsets,
        alignment,
        collectives,
    }
}
