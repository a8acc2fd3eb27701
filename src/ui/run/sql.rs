//! The SQL page of a run's panel: the SQL tab of a single trace ([`SqlTab`]) over the run's views
//! ([`crate::sql::run_db`]: every rank's rows with a `rank` column, times on the run's clock),
//! filled on the SQL thread at the first query. A pinned result is drawn on each rank's rows
//! (shown when the rank is expanded): the rows of that rank when the result has a `rank` column,
//! else every row, moved back onto the rank's own clock so that they sit at their run time.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use egui::Ui;

use super::RunTab;
use crate::sql::run_db::rows_of_rank;
use crate::sql::track::SqlTrack;
use crate::trace::Trace;
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
    /// Each loaded rank's (rank, offset onto the run's clock, trace), in the run's order; empty
    /// until the run's analysis has found the ranks.
    pub fn sql_ranks(&self) -> Vec<(u32, i64, Arc<Trace>)> {
        let Some(a) = &self.analysis else {
            return Vec::new();
        };
        self.ranks
            .iter()
            .enumerate()
            .filter_map(|(k, r)| {
                let info = a.ranks.get(k)?;
                Some((info.rank, self.offset_ns(k), r.trace.clone()?))
            })
            .collect()
    }

    /// Draws the pinned results on every loaded rank's rows (see the module's note).
    pub fn pin_rank_tracks(&mut self) {
        let ranks: Vec<(u32, i64)> = self.sql_ranks().iter().map(|(r, o, _)| (*r, *o)).collect();
        let pinned: Vec<(Arc<SqlTrack>, Arc<crate::sql::QueryResult>)> = self
            .sql
            .pinned()
            .iter()
            .cloned()
            .zip(self.sql.pinned_results().iter().cloned())
            .collect();
        for (k, r) in self.ranks.iter_mut().enumerate() {
            let Some(model) = r.model.as_mut() else {
                continue;
            };
            let Some(&(rank, offset)) = ranks.get(k) else {
                model.set_sql_tracks(Vec::new());
                continue;
            };
            let tracks = pinned
                .iter()
                .filter_map(|(track, result)| {
                    let own = rows_of_rank(result, rank, offset);
                    SqlTrack::from_result(&track.title, &track.query, &own).ok()
                })
                .map(Arc::new)
                .collect();
            model.set_sql_tracks(tracks);
        }
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
    for (rank, offset, trace) in &ranks {
        (rank, offset, Arc::as_ptr(trace) as usize).hash(&mut hasher);
    }
    let mut actions = Vec::new();
    run.sql.follow_trace(hasher.finish(), &mut actions);
    ui.label(format!(
        "The views of one trace with a first column `rank` ({} ranks); start, end and ts on the \
         run's clock (each rank's offset added).",
        ranks.len()
    ));
    let bounds = run.range.unwrap_or(run.bounds);
    let ctx = ui.ctx().clone();
    run.sql.ui_on(
        ui,
        &SqlSource::Run(&ranks),
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
