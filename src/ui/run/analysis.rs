//! The run's analysis off the UI thread: ranks, clock, collectives matched across ranks, the
//! per-rank table, the steps and each rank's summary (busy time, collectives), computed by
//! [`crate::analysis::ranks`] on a thread of its own once every rank is loaded, and again when a
//! rank is shifted by hand.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use crate::analysis::intervals::Interval;
use crate::analysis::ranks::collectives::{self, Collectives, Instance, Source};
use crate::analysis::ranks::steps::StepGrid;
use crate::analysis::ranks::{Alignment, RankSource, Run, summary, table};
use crate::analysis::table::Table;
use crate::trace::Trace;

/// What the run's analysis found about one rank.
pub struct RankInfo {
    pub rank: u32,
    pub source: RankSource,
    /// The alignment's offset (without the hand shift).
    pub offset_ns: i64,
    /// Its GPUs' busy time merged, on its own clock.
    pub busy: Vec<Interval>,
    pub collectives_from: Option<Source>,
}

/// The run's analysis, its ranks by rank.
pub struct RunAnalysis {
    /// For each rank (by rank), its place among the traces handed in.
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
}

impl RunAnalysis {
    pub fn instances(&self) -> &[Instance] {
        &self.collectives.instances
    }

    /// Computes it for `traces` with their hand shifts (in the order given).
    pub fn compute(traces: &[(Arc<Trace>, i64)]) -> Result<Self, String> {
        let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).map_err(|e| e.to_string())?;
        let refs: Vec<&Trace> = traces.iter().map(|(t, _)| t.as_ref()).collect();
        let mut run = Run::new(&refs, &pattern);
        let order: Vec<usize> = run
            .ranks
            .iter()
            .map(|r| {
                refs.iter()
                    .position(|t| std::ptr::eq(*t, r.trace))
                    .unwrap_or(0)
            })
            .collect();
        let auto: Vec<i64> = run.ranks.iter().map(|r| r.offset_ns).collect();
        let shifted = order.iter().any(|&i| traces[i].1 != 0);
        if shifted {
            for (r, &i) in run.ranks.iter_mut().zip(&order) {
                r.offset_ns += traces[i].1;
            }
            run.collectives = Collectives::match_ranks(&run.ranks, &pattern);
        }
        let ranks = run
            .ranks
            .iter()
            .zip(&auto)
            .enumerate()
            .map(|(k, (r, &offset_ns))| RankInfo {
                rank: r.rank,
                source: r.source,
                offset_ns,
                busy: summary::gpu_busy(r.trace),
                collectives_from: run.collectives.per_rank.get(k).and_then(|c| c.source),
            })
            .collect();
        Ok(Self {
            order,
            ranks,
            table: table::rank_table(&run),
            steps: StepGrid::of_run(&run),
            occurrence_instance: summary::instance_of_occurrences(&run.collectives),
            straggler: run.collectives.straggler(run.ranks.len()),
            alignment: run.alignment.clone(),
            collectives: run.collectives,
        })
    }
}

/// The analysis running on its thread.
pub struct AnalysisJob {
    done: Receiver<Result<RunAnalysis, String>>,
}

impl AnalysisJob {
    pub fn start(traces: Vec<(Arc<Trace>, i64)>, repaint: Option<egui::Context>) -> Self {
        let (tx, done) = channel();
        let spawned = std::thread::Builder::new()
            .name("sightline-run".to_string())
            .spawn(move || {
                let _ = tx.send(RunAnalysis::compute(&traces));
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
