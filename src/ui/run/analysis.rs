//! The run's analysis off the UI thread: ranks, clock, collectives matched across ranks, the
//! per-rank table and the steps, computed from the ranks' digests
//! ([`crate::analysis::ranks::digest::analyse`], the same computation `sightline ranks` makes on
//! whole traces) on a thread of its own once every rank is read, and again when a rank is
//! shifted by hand.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use crate::analysis::ranks::collectives::{Collectives, Instance, Source};
use crate::analysis::ranks::digest::{self, RankDigest};
use crate::analysis::ranks::steps::StepGrid;
use crate::analysis::ranks::{Alignment, ClockChoice, RankSource, straggler_verdict, summary};
use crate::analysis::table::Table;

/// What the run's analysis found about one rank.
pub struct RankInfo {
    pub rank: u32,
    pub source: RankSource,
    /// The alignment's offset (without the hand shift).
    pub offset_ns: i64,
    /// Its digest (its GPUs' busy time merged, on its own clock, is what its header draws).
    pub digest: Arc<RankDigest>,
    pub collectives_from: Option<Source>,
}

/// The run's analysis, its ranks by rank.
pub struct RunAnalysis {
    /// For each rank (by rank), its place among the digests handed in.
    pub order: Vec<usize>,
    pub ranks: Vec<RankInfo>,
    pub alignment: Alignment,
    /// Collectives per rank (own clock) and instances (arrivals on the run's clock, hand
    /// shifts included).
    pub collectives: Collectives,
    /// Each rank's collectives' instance (see [`summary::instance_of_occurrences`]).
    pub occurrence_instance: Vec<Vec<Option<usize>>>,
    /// `sightline ranks`'s table.
    pub table: Table,
    pub steps: StepGrid,
    /// The rank (index) that arrived last most often, with how often.
    pub straggler: Option<(usize, usize)>,
    /// The straggler verdict with the clock and matching it rests on (as `sightline ranks`
    /// prints it).
    pub verdict: String,
}

impl RunAnalysis {
    pub fn instances(&self) -> &[Instance] {
        &self.collectives.instances
    }

    /// Computes it for the ranks' digests with their hand shifts (in the order given), on the
    /// clock `choice` asks for; the reason, where the traces are not one run.
    pub fn compute(
        digests: &[(Arc<RankDigest>, i64)],
        choice: ClockChoice,
    ) -> Result<Self, String> {
        let refs: Vec<(&RankDigest, i64)> = digests.iter().map(|(d, s)| (d.as_ref(), *s)).collect();
        let run = digest::analyse(&refs, choice);
        if let Alignment::NotARun(why) = &run.alignment {
            return Err(format!("Not one run: {why}"));
        }
        let ranks = run
            .ranks
            .iter()
            .zip(&run.auto_offsets)
            .enumerate()
            .map(|(k, (p, &offset_ns))| RankInfo {
                rank: p.rank,
                source: p.source,
                offset_ns,
                digest: Arc::clone(&digests[p.index].0),
                collectives_from: run.collectives.per_rank.get(k).and_then(|c| c.source),
            })
            .collect();
        let numbers: Vec<u32> = run.ranks.iter().map(|p| p.rank).collect();
        Ok(Self {
            verdict: straggler_verdict(&run.collectives, &numbers, &run.alignment),
            order: run.ranks.iter().map(|p| p.index).collect(),
            ranks,
            occurrence_instance: summary::instance_of_occurrences(&run.collectives),
            straggler: run.collectives.straggler(run.ranks.len()),
            table: run.table,
            steps: run.steps,
            alignment: run.alignment,
            collectives: run.collectives,
        })
    }
}

/// The analysis running on its thread.
pub struct AnalysisJob {
    done: Receiver<Result<RunAnalysis, String>>,
}

impl AnalysisJob {
    pub fn start(
        digests: Vec<(Arc<RankDigest>, i64)>,
        choice: ClockChoice,
        repaint: Option<egui::Context>,
    ) -> Self {
        let (tx, done) = channel();
        let spawned = std::thread::Builder::new()
            .name("sightline-run".to_string())
            .spawn(move || {
                let _ = tx.send(RunAnalysis::compute(&digests, choice));
                if let Some(ctx) = repaint {
                    ctx.request_repaint();
                }
            });
        if let Err(e) = spawned {
            let (tx, rx) = channel();
            let _ = tx.send(Err(format!("cannot start the run's analysis: {e}")));
            return Self { done: rx };
        }
        Self { done }
    }

    pub fn poll(&self) -> Option<Result<RunAnalysis, String>> {
        match self.done.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Err("the run's analysis stopped unexpectedly".to_string()))
            }
        }
    }
}
