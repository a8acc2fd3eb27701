//! The SQL tab: ask the trace anything over the views of `sightline sql` (kernels, memcpy, api,
//! ranges, …). An editor with SQL colours and the trace's history, queries run on the trace's
//! SQL thread ([`super::sql_worker`]) with a row limit, a time limit and a Cancel button, the
//! answer as a sortable table with CSV export, SQLite's own message for a wrong query, and
//! **Pin as track**: a result with `start`/`end` (or `ts`/`dur`) becomes a timeline track kept
//! while the trace's tab is open. `:sel_start` / `:sel_end` are the range selection. On a run's
//! tab the same tab queries the run's views ([`SqlSource::Run`]: a `rank` column, times on the
//! run's clock).

use std::sync::Arc;
use std::time::Duration;

use egui::{Button, Ui};

mod table;

use super::sql_worker::{SqlAnswer, SqlRequest, SqlSession};
use super::{ERROR_COLOR, PanelAction, save_dialog};
use crate::analysis::TimeRange;
use crate::sql::QueryResult;
use crate::sql::track::{SqlTrack, compare_values, title_of};
use crate::trace::Trace;
use crate::ui::file_dialog::FilePurpose;

/// Queries remembered per trace.
pub const HISTORY_MAX: usize = 30;
/// Rows shown in the table (the CSV export and a pinned track take every row fetched).
pub const SHOWN_ROWS_MAX: usize = 1000;
/// The editor's widget id (tests type into it; the parameter buttons insert at its cursor).
pub fn editor_id() -> egui::Id {
    egui::Id::unique("sightline_sql_editor")
}

/// What the SQL tab queries.
pub enum SqlSource<'a> {
    /// One trace's views.
    Trace(&'a Arc<Trace>),
    /// A run's views: each rank with its offset onto the run's clock and its trace (or file);
    /// with the run-level tables' inputs, the run's digests answer those tables and the event
    /// views are filled at their first query.
    Run(
        &'a [crate::sql::run_db::RankTrace],
        Option<Arc<crate::digests::run_sql::RunSqlInputs>>,
    ),
}

impl SqlSource<'_> {
    /// A trace to describe the views by (a run's first rank).
    fn example(&self) -> Option<&Trace> {
        match self {
            SqlSource::Trace(t) => Some(t),
            SqlSource::Run(ranks, _) => ranks.iter().find_map(|r| r.trace.as_deref()),
        }
    }
}

/// The SQL tab's state: the query, its history, the answer and the pinned tracks.
pub struct SqlTab {
    pub query: String,
    /// The most rows a query returns (more are counted as "more matched").
    pub row_limit: usize,
    /// Seconds after which a query is stopped.
    pub timeout_s: f64,
    history: Vec<String>,
    session: Option<SqlSession>,
    /// The trace generation the session and the pins belong to.
    generation: u64,
    answer: Option<SqlAnswer>,
    /// (column, descending) of the table, and the rows in that order.
    sort: Option<(usize, bool)>,
    order: Vec<usize>,
    pinned: Vec<Arc<SqlTrack>>,
    /// The answer each pinned track was made from (a run splits it by rank).
    pinned_results: Vec<Arc<QueryResult>>,
    message: Option<(String, bool)>,
    /// `:sel_start` / `:sel_end` as of the last frame.
    bounds: (i64, i64),
}

impl Default for SqlTab {
    fn default() -> Self {
        Self {
            query: String::new(),
            row_limit: 10_000,
            timeout_s: 60.0,
            history: Vec::new(),
            session: None,
            generation: 0,
            answer: None,
            sort: None,
            order: Vec::new(),
            pinned: Vec::new(),
            pinned_results: Vec::new(),
            message: None,
            bounds: (0, 0),
        }
    }
}

/// `:sel_start` and `:sel_end`: the range selection, or the whole trace without one.
pub fn selection_bounds(trace: &Trace, selection: TimeRange) -> (i64, i64) {
    selection.resolve(trace.first_ns, trace.last_ns)
}

impl SqlTab {
    /// Queries run on this trace, most recent first.
    pub fn history(&self) -> &[String] {
        &self.history
    }

    /// The history remembered for this trace (from the settings).
    pub fn set_history(&mut self, history: Vec<String>) {
        self.history = history;
        self.history.truncate(HISTORY_MAX);
    }

    /// The last query's answer.
    pub fn answer(&self) -> Option<&SqlAnswer> {
        self.answer.as_ref()
    }

    /// The answer's rows in the order the table shows them.
    pub fn shown_order(&self) -> &[usize] {
        &self.order
    }

    /// Whether a query is running.
    pub fn is_running(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.running().is_some())
    }

    /// The tracks pinned, in order.
    pub fn pinned(&self) -> &[Arc<SqlTrack>] {
        &self.pinned
    }

    /// The answers the pinned tracks were made from, in the same order.
    pub fn pinned_results(&self) -> &[Arc<QueryResult>] {
        &self.pinned_results
    }

    /// `:sel_start` / `:sel_end` as the last frame bound them.
    pub fn bounds(&self) -> (i64, i64) {
        self.bounds
    }

    /// Takes in a finished query's answer (every frame, whatever tab is shown).
    pub fn poll(&mut self) {
        if let Some(answer) = self.session.as_mut().and_then(SqlSession::poll) {
            self.sort = None;
            self.order = match &answer.result {
                Ok(r) => (0..r.rows.len()).collect(),
                Err(_) => Vec::new(),
            };
            self.answer = Some(answer);
        }
    }

    /// Forgets the session and the pins when the panel is handed another trace.
    pub fn follow_trace(&mut self, generation: u64, actions: &mut Vec<PanelAction>) {
        if self.generation == generation {
            return;
        }
        self.generation = generation;
        self.session = None;
        self.answer = None;
        self.order.clear();
        if !self.pinned.is_empty() {
            self.pinned.clear();
            self.pinned_results.clear();
            actions.push(PanelAction::SqlTracksChanged);
        }
    }

    /// Runs the query over `trace` with `:sel_start`/`:sel_end` bound to `selection`, on the
    /// trace's SQL thread; false while another query runs.
    pub fn run(
        &mut self,
        trace: &Arc<Trace>,
        selection: TimeRange,
        repaint: impl Fn() + Send + 'static,
    ) -> bool {
        let bounds = selection_bounds(trace, selection);
        self.run_on(&SqlSource::Trace(trace), bounds, repaint)
    }

    /// Runs the query over `source` with `:sel_start`/`:sel_end` bound to `bounds`, on its SQL
    /// thread (a run's database is filled there on the first query); false while another runs.
    pub fn run_on(
        &mut self,
        source: &SqlSource,
        (start, end): (i64, i64),
        repaint: impl Fn() + Send + 'static,
    ) -> bool {
        // Run in an empty editor runs the example shown there in grey (issue 36).
        if self.query.trim().is_empty() {
            self.query = super::sql_editor::EXAMPLE_QUERY.to_string();
        }
        let sql = self.query.trim().to_string();
        let session = self.session.get_or_insert_with(|| match source {
            SqlSource::Trace(trace) => SqlSession::start((*trace).clone(), repaint),
            SqlSource::Run(ranks, inputs) => {
                let ranks = ranks.to_vec();
                let inputs = inputs.clone();
                SqlSession::start_with(
                    move |cancel| {
                        match &inputs {
                            Some(inputs) => crate::sql::SqlTrace::for_run_digests(
                                &inputs.tables(),
                                ranks.clone(),
                            ),
                            None => crate::sql::SqlTrace::for_run_traces(&ranks, cancel),
                        }
                        .map_err(|e| e.to_string())
                    },
                    repaint,
                )
            }
        });
        let sent = session.run(SqlRequest {
            sql: sql.clone(),
            params: vec![("sel_start", start), ("sel_end", end)],
            limit: self.row_limit.max(1),
            timeout: Duration::from_secs_f64(self.timeout_s.clamp(0.1, 3600.0)),
        });
        if sent {
            // The last query's error is not this one's: it goes (rows stay until new ones come).
            if self.answer.as_ref().is_some_and(|a| a.result.is_err()) {
                self.answer = None;
                self.order.clear();
            }
            self.history.retain(|q| q != &sql);
            self.history.insert(0, sql);
            self.history.truncate(HISTORY_MAX);
            self.message = None;
        }
        sent
    }

    /// Whether the SQL thread (and its database) is started.
    pub fn has_session(&self) -> bool {
        self.session.is_some()
    }

    /// Stops the running query.
    pub fn cancel(&self) {
        if let Some(s) = &self.session {
            s.cancel();
        }
    }

    /// Pins the last answer as a track; the error says why it cannot be.
    pub fn pin(&mut self, actions: &mut Vec<PanelAction>) -> Result<(), String> {
        let Some(answer) = &self.answer else {
            return Err("run a query first".into());
        };
        let result = answer.result.as_ref().map_err(Clone::clone)?;
        let track = SqlTrack::from_result(&title_of(&answer.sql), &answer.sql, result)
            .map_err(|e| e.to_string())?;
        self.pinned.push(Arc::new(track));
        self.pinned_results.push(result.clone());
        actions.push(PanelAction::SqlTracksChanged);
        Ok(())
    }

    /// Removes the pinned track `index`.
    pub fn unpin(&mut self, index: usize, actions: &mut Vec<PanelAction>) {
        if index < self.pinned.len() {
            self.pinned.remove(index);
            if index < self.pinned_results.len() {
                self.pinned_results.remove(index);
            }
            actions.push(PanelAction::SqlTracksChanged);
        }
    }

    /// Sorts the table by `column` (ascending, then descending on a second click).
    pub fn sort_by(&mut self, column: usize) {
        let Some(Ok(result)) = self.answer.as_ref().map(|a| &a.result) else {
            return;
        };
        let descending = matches!(self.sort, Some((c, false)) if c == column);
        self.sort = Some((column, descending));
        let rows = &result.rows;
        self.order.sort_by(|&a, &b| {
            let o = compare_values(
                rows[a].get(column).unwrap_or(&rusqlite::types::Value::Null),
                rows[b].get(column).unwrap_or(&rusqlite::types::Value::Null),
            );
            if descending { o.reverse() } else { o }
        });
    }

    pub(super) fn ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
        repaint: impl Fn() + Send + 'static,
        actions: &mut Vec<PanelAction>,
    ) {
        let bounds = selection_bounds(trace, selection);
        self.ui_on(ui, &SqlSource::Trace(trace), bounds, repaint, actions);
    }

    /// The tab over `source`, `:sel_start`/`:sel_end` bound to `bounds`.
    pub fn ui_on(
        &mut self,
        ui: &mut Ui,
        source: &SqlSource,
        bounds: (i64, i64),
        repaint: impl Fn() + Send + 'static,
        actions: &mut Vec<PanelAction>,
    ) {
        self.bounds = bounds;
        let running = self.is_running();
        if running {
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        self.toolbar_ui(ui, source);
        let editor = super::sql_editor::editor(ui, &mut self.query, editor_id(), 6);
        let ctrl_enter = editor.has_focus()
            && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter));
        let mut run = ctrl_enter;
        ui.horizontal_wrapped(|ui| {
            run |= ui
                .add_enabled(!running, Button::new("Run"))
                .on_hover_text("Run the query (Ctrl+Enter)")
                .clicked();
            if ui.add_enabled(running, Button::new("Cancel")).clicked() {
                self.cancel();
            }
            let label = ui.label("Row limit");
            ui.add(egui::DragValue::new(&mut self.row_limit).range(1..=1_000_000))
                .labelled_by(label.id);
            let label = ui.label("Time limit (s)");
            ui.add(egui::DragValue::new(&mut self.timeout_s).range(0.1..=3600.0))
                .labelled_by(label.id);
            if let Some((_, since)) = self.session.as_ref().and_then(|s| s.running()) {
                ui.spinner();
                ui.label(format!("running {:.1} s", since.elapsed().as_secs_f64()));
            }
        });
        if run && !running {
            self.run_on(source, bounds, repaint);
        }
        self.params_ui(ui);
        ui.separator();
        self.answer_ui(ui, actions);
        self.pinned_ui(ui, actions);
    }

    fn toolbar_ui(&mut self, ui: &mut Ui, source: &SqlSource) {
        ui.horizontal_wrapped(|ui| {
            let mut chosen = None;
            ui.add_enabled_ui(!self.history.is_empty(), |ui| {
                ui.menu_button("History", |ui| {
                    for q in &self.history {
                        if ui.button(title_of(q)).on_hover_text(q).clicked() {
                            chosen = Some(q.clone());
                        }
                    }
                });
            });
            ui.menu_button("Examples", |ui| {
                for (label, q) in EXAMPLES {
                    if ui.button(*label).on_hover_text(*q).clicked() {
                        chosen = Some(q.to_string());
                    }
                }
            });
            if let Some(q) = chosen {
                self.query = q;
            }
            let mut help = source.example().map(views_help).unwrap_or_default();
            if matches!(source, SqlSource::Run(..)) {
                help.insert_str(
                    0,
                    "Every view has a first column `rank`; start, end and ts are on the run's \
                     clock (each rank's offset added).\n",
                );
            }
            ui.weak("Views:").on_hover_text(&help);
            ui.weak("kernels memcpy memset api ranges threads gpus …")
                .on_hover_text(&help);
        });
    }

    /// The bound values of `:sel_start` / `:sel_end`, and buttons that insert them.
    fn params_ui(&mut self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            let (start, end) = self.bounds;
            ui.weak(format!(":sel_start = {start}, :sel_end = {end} (ns)"))
                .on_hover_text("The range selection (Shift+drag), else the whole trace");
            for (label, text) in [
                (":sel_start", ":sel_start"),
                (":sel_end", ":sel_end"),
                (
                    "overlaps selection",
                    "start < :sel_end AND \"end\" > :sel_start",
                ),
            ] {
                if ui
                    .small_button(format!("+ {label}"))
                    .on_hover_text(format!("Insert `{text}` at the cursor"))
                    .clicked()
                {
                    self.insert_at_cursor(ui.ctx(), text);
                }
            }
        });
    }

    fn insert_at_cursor(&mut self, ctx: &egui::Context, text: &str) {
        use egui::text::{CCursor, CCursorRange};
        let state = egui::TextEdit::load_state(ctx, editor_id());
        let chars = self.query.chars().count();
        let at = state
            .as_ref()
            .and_then(|s| s.cursor.char_range())
            .map_or(chars, |r| r.primary.index.0.min(chars));
        let byte = self
            .query
            .char_indices()
            .nth(at)
            .map_or(self.query.len(), |(b, _)| b);
        self.query.insert_str(byte, text);
        if let Some(mut state) = state {
            let cursor = CCursor::new(at + text.chars().count());
            state.cursor.set_char_range(Some(CCursorRange::one(cursor)));
            state.store(ctx, editor_id());
        }
    }

    fn answer_ui(&mut self, ui: &mut Ui, actions: &mut Vec<PanelAction>) {
        let Some(answer) = &self.answer else {
            ui.weak("Run a query: its rows show here.");
            return;
        };
        let result = match &answer.result {
            Ok(r) => r.clone(),
            Err(e) => {
                ui.colored_label(ERROR_COLOR, e);
                return;
            }
        };
        let mut pin = false;
        let mut export = false;
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "{} rows{} in {:.0} ms",
                result.rows.len(),
                if result.truncated {
                    " (row limit reached: more matched)"
                } else {
                    ""
                },
                answer.elapsed.as_secs_f64() * 1e3
            ));
            pin = ui
                .button("Pin as track")
                .on_hover_text(
                    "Draw the rows as a timeline track: columns start and end (or ts and dur) \
                     in ns, optionally name and row",
                )
                .clicked();
            export = ui.button("Export CSV…").clicked();
        });
        if pin {
            self.message = Some(match self.pin(actions) {
                Ok(()) => (
                    "Pinned: the track is the first row of the timeline.".into(),
                    false,
                ),
                Err(e) => (format!("Cannot pin: {e}"), true),
            });
        }
        if let Some(path) = save_dialog(ui, export, FilePurpose::SaveSqlCsv, "query.csv") {
            self.message = Some(match table::write_csv(&path, &result, &self.order) {
                Ok(n) => (format!("Wrote {n} rows to {}", path.display()), false),
                Err(e) => (format!("Cannot write {}: {e}", path.display()), true),
            });
        }
        if let Some((text, error)) = &self.message {
            if *error {
                ui.colored_label(ERROR_COLOR, text);
            } else {
                ui.label(text);
            }
        }
        if let Some(column) = table::table_ui(ui, &result, &self.order, self.sort) {
            self.sort_by(column);
        }
    }

    fn pinned_ui(&mut self, ui: &mut Ui, actions: &mut Vec<PanelAction>) {
        if self.pinned.is_empty() {
            return;
        }
        ui.separator();
        ui.strong("Pinned tracks");
        let mut remove = None;
        for (i, t) in self.pinned.iter().enumerate() {
            ui.horizontal(|ui| {
                if ui.small_button("Remove").clicked() {
                    remove = Some(i);
                }
                ui.label(format!(
                    "{} · {} intervals, {} lanes",
                    t.title,
                    t.intervals.len(),
                    t.lanes.len()
                ))
                .on_hover_text(&t.query);
            });
        }
        if let Some(i) = remove {
            self.unpin(i, actions);
        }
    }
}

fn views_help(trace: &Trace) -> String {
    let mut s = String::from(
        "Times in ns, as the trace stores them; origin(start) is the time the timeline counts \
         from (t - (SELECT start FROM origin) reads as the window shows).\n",
    );
    for (name, columns) in crate::sql::views::VIEWS {
        s.push_str(&format!("{name}({columns})\n"));
    }
    if !trace.graphs.spans.is_empty() {
        s.push_str(&format!(
            "graph_executions({})\n",
            crate::sql::views::GRAPH_EXECUTIONS
        ));
    }
    if trace.gpu_span().is_some() {
        s.push_str(&format!("gaps({})\n", crate::sql::computed::GAPS));
    }
    if !trace.cpu_samples.is_empty() {
        s.push_str(&format!("samples({})\n", crate::sql::computed::SAMPLES));
    }
    s
}

/// The Examples menu: the user guide's worked examples (docs/sql.md).
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "Kernel and memcpy totals",
        "SELECT 'kernels' AS what, count(*) AS n, sum(dur) AS total_ns FROM kernels\n\
         UNION ALL SELECT 'memcpy ' || kind, count(*), sum(dur) FROM memcpy GROUP BY kind",
    ),
    (
        "Kernels longer than the mean of their name (pin me)",
        "SELECT k.start, k.\"end\", k.name, k.dur, round(m.mean) AS mean_ns FROM kernels k\n\
         JOIN (SELECT name, avg(dur) AS mean FROM kernels GROUP BY name) m USING (name)\n\
         WHERE k.dur > m.mean ORDER BY k.dur - m.mean DESC",
    ),
    (
        "H2D copies under 64 KB per step",
        "SELECT s.name AS step, count(c.start) AS h2d_under_64k, sum(c.bytes) AS bytes,\n\
         sum(c.dur) AS copy_ns FROM ranges s\n\
         JOIN memcpy c ON c.kind = 'Host-to-Device' AND c.bytes < 65536\n\
         AND c.start >= s.start AND c.start < s.\"end\"\n\
         WHERE s.name GLOB 'iter_*' OR s.name GLOB 'step_*' OR s.name GLOB 'ProfilerStep#*'\n\
         GROUP BY s.name ORDER BY min(s.start)",
    ),
    (
        "Kernels in the selection, a lane per stream (pin me)",
        "SELECT start, \"end\", name, stream AS row FROM kernels\n\
         WHERE start < :sel_end AND \"end\" > :sel_start",
    ),
];
