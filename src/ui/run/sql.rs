//! The SQL page of a run's panel: the SQL tab of a single trace ([`SqlTab`]) over the run's views
//! ([`crate::sql::run_db`]: every rank's rows with a `rank` column, times on the run's clock),
//! filled on the SQL thread at the first query (a rank whose trace the run does not hold is loaded
//! there from its file). A pinned result is drawn on each rank's rows
//! (shown when the rank is expanded): the rows of that rank when the result has a `rank` column,
//! else every row, moved back onto the rank's own clock so that they sit at their run time.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use egui::Ui;

use super::RunTab;
use crate::analysis::ranks::collectives::DEFAULT_PATTERN;
use crate::digests::cache::Cache;
use crate::digests::run_sql::{RankRow, RunSqlInputs};
use crate::sql::run_db::{RankTrace, RunRank, rows_of_rank};
use crate::sql::track::SqlTrack;
use crate::ui::panels::analysis::PanelAction;
use crate::ui::panels::analysis::SqlSource;

/// Which page the run's panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunPage {
    /// Clock, per-rank table, heatmap, collectives.
    #[default]
    Ranks,
    /// SQL over the run.
    Sql,
}

impl RunTab {
    /// Rank `k`'s number and offset onto the run's clock, once the run's analysis has them.
    fn rank_and_offset(&self, k: usize) -> Option<RunRank> {
        let info = self.analysis.as_ref()?.ranks.get(k)?;
        Some(RunRank {
            rank: info.rank,
            offset_ns: self.offset_ns(k),
        })
    }

    /// What SQL over the run needs of each rank the analysis found: rank, offset, and its trace
    /// where the run holds it, else its file (loaded on the SQL thread). Empty until the run's
    /// analysis is in.
    pub fn sql_ranks(&self) -> Vec<RankTrace> {
        self.ranks
            .iter()
            .enumerate()
            .filter_map(|(k, r)| {
                Some(RankTrace {
                    rank: self.rank_and_offset(k)?,
                    path: r.path.clone(),
                    trace: r.trace.clone(),
                    made_from: r.digest.as_ref().and_then(|d| d.source_stamp),
                })
            })
            .collect()
    }

    /// [`RunTab::sql_inputs`], made once per analysis and kept (the SQL page asks each frame
    /// until its database is made).
    fn kept_sql_inputs(&mut self) -> Option<Arc<RunSqlInputs>> {
        if self.sql_inputs_kept.is_none() {
            self.sql_inputs_kept = self.sql_inputs().map(Arc::new);
        }
        self.sql_inputs_kept.clone()
    }

    /// What the run-level tables of SQL over the run are made from (its analysis, and where each
    /// rank's digest tables are: its digest folder, or the cache's); `None` before the analysis.
    pub fn sql_inputs(&self) -> Option<RunSqlInputs> {
        let a = self.analysis.as_ref()?;
        let ranks = (0..self.ranks.len())
            .filter_map(|k| {
                let place = self.rank_and_offset(k)?;
                let r = &self.ranks[k];
                let folder = r.digest_folder.clone().or_else(|| {
                    let source = crate::digests::absolute(&r.path);
                    let name = Cache::folder_for(&source, DEFAULT_PATTERN)?;
                    Some(self.cache.as_ref()?.dir.join(name))
                });
                Some(RankRow {
                    rank: place.rank,
                    offset_ns: place.offset_ns,
                    path: r.path.clone(),
                    folder,
                })
            })
            .collect();
        Some(RunSqlInputs {
            ranks,
            table: a.table.clone(),
            collectives: a.collectives.clone(),
            steps: a.steps.clone(),
            held: Vec::new(),
        })
    }

    /// Draws the pinned results on every loaded rank's rows (see the module's note).
    pub fn pin_rank_tracks(&mut self) {
        let places: Vec<Option<RunRank>> = (0..self.ranks.len())
            .map(|k| self.rank_and_offset(k))
            .collect();
        let pinned: Vec<(Arc<SqlTrack>, Arc<crate::sql::QueryResult>)> = self
            .sql
            .pinned()
            .iter()
            .cloned()
            .zip(self.sql.pinned_results().iter().cloned())
            .collect();
        for (r, place) in self.ranks.iter_mut().zip(places) {
            let Some(model) = r.model.as_mut() else {
                continue;
            };
            let tracks = match place {
                Some(RunRank { rank, offset_ns }) => pinned
                    .iter()
                    .filter_map(|(track, result)| {
                        let own = rows_of_rank(result, rank, offset_ns);
                        SqlTrack::from_result(&track.title, &track.query, &own).ok()
                    })
                    .map(Arc::new)
                    .collect(),
                None => Vec::new(),
            };
            model.set_sql_tracks(tracks);
        }
        // The run's search finds the new intervals too.
        self.refresh_search();
    }
}

/// The SQL page.
pub fn show(ui: &mut Ui, run: &mut RunTab) {
    let ranks = run.sql_ranks();
    if ranks.is_empty() {
        ui.weak("SQL over the run opens once its ranks are loaded and aligned.");
        return;
    }
    // A new set of ranks or offsets (a hand shift) is a new database.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for r in &ranks {
        (r.rank.rank, r.rank.offset_ns, &r.path).hash(&mut hasher);
    }
    let mut actions = Vec::new();
    run.sql.follow_trace(hasher.finish(), &mut actions);
    ui.label(format!(
        "The views of one trace with a first column `rank` ({} ranks); start, end and ts on the \
         run's clock (each rank's offset added). ranks, collectives, steps, kernel_sums and \
         api_sums come from the ranks' digests; the other views load the traces at their first \
         query.",
        ranks.len()
    ));
    let bounds = run.range.unwrap_or(run.bounds);
    let ctx = ui.ctx().clone();
    // Used once, when the run's database is first asked for.
    let inputs = if run.sql.has_session() {
        None
    } else {
        run.kept_sql_inputs()
    };
    run.sql.ui_on(
        ui,
        &SqlSource::Run(&ranks, inputs),
        bounds,
        move || ctx.request_repaint(),
        &mut actions,
    );
    if actions
        .iter()
        .any(|a| matches!(a, PanelAction::SqlTracksChanged))
    {
        run.pin_rank_tracks();
    }
}
