//! A run of ranks in one tab: several traces of one job (one per rank), shown as one timeline on
//! the run's clock. Summaries first, detail when expanded: opening reads every rank on a few
//! worker threads ([`open_job`], at most as many at once as there are cores) and keeps only its
//! [`RankDigest`] (busy time, collectives, steps, the table's numbers); the run's analysis is
//! computed from the digests ([`analysis`]). Expanding a rank loads its whole [`Trace`] again on a
//! thread of its own and builds its [`TimelineModel`] (the usual rows, drawn by the usual
//! timeline); collapsing it drops both ([`detail`]). No second trace model: an expanded rank has
//! its own trace, model and [`TimelineState`], and the run keeps one view on its clock that each
//! rank's view follows with that rank's offset — as the compare view does for two runs.
//!
//! Collapsed, a rank is one header row drawn from its digest (its GPUs' busy time merged, its
//! collectives). [`view`] draws the rows, [`panel`] the per-rank table, the collectives and the
//! rank × step heatmap. Whatever needs a rank's events (search, clicking an event) works on the
//! expanded ranks; [`rank_trace`] gives any rank's trace to a worker, loading it if not held.

pub mod analysis;
pub mod detail;
pub mod heatmap;
pub mod info_bar;
pub mod open_job;
mod paint;
pub mod panel;
pub mod rank_trace;
pub mod sql;
pub mod view;

use std::path::PathBuf;
use std::sync::Arc;

use super::loader::LoadJob;
use super::panels::analysis::SqlTab;
use super::panels::search::SearchState;
use super::timeline::{Ruler, TimelineModel, TimelineState};
use crate::analysis::ranks::ClockChoice;
use crate::analysis::ranks::digest::RankDigest;
use crate::trace::Trace;
use analysis::{AnalysisJob, RunAnalysis};
use open_job::OpenJob;

/// One rank of the run: its file, its digest once read, and while it is expanded its whole trace
/// with its own rows and view.
pub struct RankView {
    pub path: PathBuf,
    /// Loading its whole trace (it was expanded).
    pub job: Option<LoadJob>,
    /// Why the rank could not be read when the run opened (it has no digest).
    pub error: Option<String>,
    /// Why its whole trace could not be loaded when expanded, as the line under its header says
    /// it ([`detail::unreadable_trace`]); its digest still draws its header.
    pub detail_error: Option<String>,
    /// What the run keeps of it, expanded or not.
    pub digest: Option<Arc<RankDigest>>,
    /// The folder its digest was read from, when the run was opened from a folder of digests.
    pub digest_folder: Option<PathBuf>,
    /// Its whole trace and rows: held while it is expanded only.
    pub trace: Option<Arc<Trace>>,
    pub model: Option<TimelineModel>,
    /// The rank's own view (on its own clock), kept on the run's view by [`RunTab::sync`].
    pub state: TimelineState,
    /// Its usual rows are shown under its header.
    pub expanded: bool,
    /// Added by hand to the offset the alignment found (Shift rank in the panel).
    pub shift_ns: i64,
    pub search: SearchState,
}

impl RankView {
    fn new(path: PathBuf) -> Self {
        Self {
            job: None,
            path,
            error: None,
            detail_error: None,
            digest: None,
            digest_folder: None,
            trace: None,
            model: None,
            state: TimelineState::default(),
            expanded: false,
            shift_ns: 0,
            search: SearchState::default(),
        }
    }

    pub fn file_name(&self) -> String {
        super::workspace::file_name(&self.path)
    }
}

/// The run's state in its tab.
pub struct RunTab {
    /// By rank once the analysis has sorted them (in the order given before).
    pub ranks: Vec<RankView>,
    /// Reading the ranks' digests (the run is opening).
    opening: Option<OpenJob>,
    pub analysis: Option<RunAnalysis>,
    job: Option<AnalysisJob>,
    /// Why the analysis could not run (the traces are not one run, say).
    pub analysis_error: Option<String>,
    /// The clock asked for in the panel: the recorded one, or a collective's end.
    pub clock: ClockChoice,
    /// The visible span on the run's clock.
    pub view: (f64, f64),
    /// The whole run on its clock (Home shows it).
    pub bounds: (i64, i64),
    /// The selected range on the run's clock.
    pub range: Option<(i64, i64)>,
    /// Rulers on the run's clock.
    pub rulers: Vec<Ruler>,
    /// The selected collective instance (index into the analysis's instances).
    pub selected_instance: Option<usize>,
    /// Top of the rows in view (scrolled with the wheel over the titles).
    pub scroll_y: f32,
    pub query: String,
    /// Which value the heatmap shows.
    pub heat_metric: heatmap::HeatMetric,
    /// What the last frame drew, for the app and its tests.
    pub last: view::Drawn,
    pub last_heat_cells: Vec<heatmap::HeatCell>,
    range_drag_from_ns: Option<f64>,
    /// The digest cache the run was opened through (where SQL over the run finds the ranks'
    /// summaries).
    pub cache: Option<crate::digests::cache::Cache>,
    /// The run-level SQL tables' inputs for this analysis, once asked for ([`sql`]).
    sql_inputs_kept: Option<Arc<crate::digests::run_sql::RunSqlInputs>>,
    /// What the panel shows: the ranks' tables, or SQL over the run ([`sql`]).
    pub page: sql::RunPage,
    /// SQL over the run: its query, answer and pinned results.
    pub sql: SqlTab,
}

impl RunTab {
    /// Starts reading every file of the run for its digest, on [`open_job::open_workers`]
    /// threads, through the user's digest cache.
    pub fn open(paths: Vec<PathBuf>, ctx: Option<&egui::Context>) -> Self {
        Self::open_with_cache(paths, ctx, crate::digests::cache::Cache::user())
    }

    /// [`RunTab::open`] through the digest cache `cache` (`None`: every trace is read) —
    /// unless every file is a rank folder of digests: such a run reads no trace, so the cache
    /// is neither read, written nor trimmed.
    pub fn open_with_cache(
        paths: Vec<PathBuf>,
        ctx: Option<&egui::Context>,
        cache: Option<crate::digests::cache::Cache>,
    ) -> Self {
        let from_digests = paths
            .iter()
            .all(|p| p.join(crate::digests::store::ENTRY_FILE).is_file());
        let cache = cache.filter(|_| !from_digests);
        let opening = OpenJob::start(
            paths.clone(),
            open_job::open_workers(),
            cache.clone(),
            ctx.cloned(),
        );
        Self {
            sql_inputs_kept: None,
            cache,
            ranks: paths.into_iter().map(RankView::new).collect(),
            opening: Some(opening),
            analysis: None,
            job: None,
            analysis_error: None,
            clock: ClockChoice::Recorded,
            view: (0.0, 1.0),
            bounds: (0, 1),
            range: None,
            rulers: Vec::new(),
            selected_instance: None,
            scroll_y: 0.0,
            query: String::new(),
            heat_metric: heatmap::HeatMetric::StepTime,
            last: view::Drawn::default(),
            last_heat_cells: Vec::new(),
            range_drag_from_ns: None,
            page: sql::RunPage::default(),
            sql: SqlTab::default(),
        }
    }

    /// Whether the run is still opening (ranks being read for their digests).
    pub fn is_loading(&self) -> bool {
        self.opening.is_some()
    }

    /// Whether the opening, the run's analysis or an expanded rank's load is still running.
    pub fn busy(&self) -> bool {
        self.is_loading() || self.analysing() || self.ranks.iter().any(|r| r.job.is_some())
    }

    /// Whether the run's analysis is running.
    pub fn analysing(&self) -> bool {
        self.job.is_some()
    }

    /// The opening's progress: every rank's read fraction, averaged.
    pub fn progress(&self) -> f32 {
        let n = self.ranks.len().max(1) as f32;
        (0..self.ranks.len())
            .map(|k| self.open_progress(k).unwrap_or(1.0))
            .sum::<f32>()
            / n
    }

    /// Rank `k`'s read fraction while the run opens and it has no digest yet.
    pub fn open_progress(&self, k: usize) -> Option<f32> {
        let r = self.ranks.get(k)?;
        let job = self.opening.as_ref()?;
        (r.digest.is_none() && r.error.is_none()).then(|| job.progress(k))
    }

    /// Stops opening: the ranks not read yet are left out, the others analysed.
    pub fn cancel(&mut self, ctx: Option<&egui::Context>) {
        if self.opening.take().is_some() {
            for r in &mut self.ranks {
                if r.digest.is_none() && r.error.is_none() {
                    r.error = Some("loading cancelled".to_string());
                }
            }
            self.start_analysis(ctx);
        }
    }

    /// Takes in the ranks' digests, starts the analysis when every rank is in, takes in its
    /// result; loads the expanded ranks' traces and drops the collapsed ones'
    /// ([`RunTab::poll_details`]); true when something changed.
    pub fn poll(&mut self, ctx: Option<&egui::Context>) -> bool {
        self.sql.poll();
        let mut changed = false;
        if let Some(job) = &mut self.opening {
            let outcomes = job.poll();
            let over = job.pending == 0;
            for (k, outcome) in outcomes {
                changed = true;
                let Some(r) = self.ranks.get_mut(k) else {
                    continue;
                };
                match outcome {
                    Ok(d) => {
                        // A rank read from its digest folder is expanded from its trace.
                        if r.path.join(crate::digests::store::ENTRY_FILE).is_file() {
                            r.digest_folder =
                                Some(std::mem::replace(&mut r.path, d.hints.path.clone()));
                        }
                        r.digest = Some(Arc::new(d));
                    }
                    Err(e) => r.error = Some(e),
                }
            }
            if over {
                if let Some(cache) = self.opening.take().and_then(|mut j| j.cache.take()) {
                    // Keeps the cache within its bound, off the window's thread.
                    let _ = std::thread::Builder::new()
                        .name("sightline-cache-trim".to_string())
                        .spawn(move || cache.trim());
                }
                self.opening = None;
                changed = true;
                detail::give_back_freed_memory();
                self.start_analysis(ctx);
            }
        }
        if let Some(outcome) = self.job.as_ref().and_then(AnalysisJob::poll) {
            self.job = None;
            changed = true;
            match outcome {
                Ok(a) => self.take_analysis(a),
                Err(e) => self.analysis_error = Some(e),
            }
        }
        if self.analysis.is_some() {
            changed |= self.poll_details(ctx);
        }
        changed
    }

    /// The traces held now (the expanded ranks'), in rank order; [`RunTab::rank_traces`] gives
    /// every rank's, loading those not held.
    pub fn traces(&self) -> Vec<Arc<Trace>> {
        self.ranks.iter().filter_map(|r| r.trace.clone()).collect()
    }

    /// (Re)computes the run's analysis from the digests with the ranks' hand shifts, on a
    /// worker thread.
    pub fn start_analysis(&mut self, ctx: Option<&egui::Context>) {
        let loaded: Vec<(Arc<RankDigest>, i64)> = self
            .ranks
            .iter()
            .filter_map(|r| r.digest.clone().map(|d| (d, r.shift_ns)))
            .collect();
        if loaded.len() < 2 {
            self.analysis_error = Some(format!(
                "a run needs two traces or more; {} loaded",
                loaded.len()
            ));
            self.arrange();
            return;
        }
        self.analysis_error = None;
        self.job = Some(AnalysisJob::start(loaded, self.clock, ctx.cloned()));
    }

    /// Puts the run on the clock `choice` asks for (the panel's choice) and analyses it again.
    pub fn set_clock(&mut self, choice: ClockChoice, ctx: Option<&egui::Context>) {
        if self.clock != choice && !self.is_loading() {
            self.clock = choice;
            self.start_analysis(ctx);
        }
    }

    /// Puts the ranks in the analysis's order (by rank; failed loads last) and the views on the
    /// run's clock.
    fn take_analysis(&mut self, a: RunAnalysis) {
        let mut loaded: Vec<RankView> = Vec::new();
        let mut failed: Vec<RankView> = Vec::new();
        for r in self.ranks.drain(..) {
            if r.digest.is_some() {
                loaded.push(r);
            } else {
                failed.push(r);
            }
        }
        let first_time = self.analysis.is_none();
        let mut slots: Vec<Option<RankView>> = loaded.into_iter().map(Some).collect();
        self.ranks = a
            .order
            .iter()
            .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
            .collect();
        self.ranks.extend(slots.into_iter().flatten());
        self.ranks.extend(failed);
        if self
            .selected_instance
            .is_some_and(|i| i >= a.instances().len())
        {
            self.selected_instance = None;
        }
        self.analysis = Some(a);
        self.sql_inputs_kept = None;
        // Offsets may have moved: the pinned results follow them onto each rank's rows.
        self.pin_rank_tracks();
        if first_time {
            self.arrange();
        } else {
            self.apply_view();
        }
    }

    /// The offset of rank `k` (added to its times to put them on the run's clock).
    pub fn offset_ns(&self, k: usize) -> i64 {
        let auto = self
            .analysis
            .as_ref()
            .and_then(|a| a.ranks.get(k))
            .map_or(0, |r| r.offset_ns);
        auto + self.ranks.get(k).map_or(0, |r| r.shift_ns)
    }

    /// Sets the run's bounds and first view (where the GPUs work) from the ranks' digests.
    fn arrange(&mut self) {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let (mut glo, mut ghi) = (i64::MAX, i64::MIN);
        for (k, r) in self.ranks.iter().enumerate() {
            let Some(t) = &r.digest else { continue };
            let o = self.offset_ns(k);
            lo = lo.min(t.first_ns + o);
            hi = hi.max(t.last_ns + o);
            if let Some((a, b)) = t.gpu_span {
                glo = glo.min(a + o);
                ghi = ghi.max(b + o);
            }
        }
        if lo > hi {
            return;
        }
        self.bounds = (lo, hi.max(lo + 1));
        if glo > ghi {
            (glo, ghi) = self.bounds;
        }
        let margin = (ghi - glo).max(1) as f64 * 0.02;
        self.view = (glo as f64 - margin, ghi as f64 + margin);
        self.apply_view();
    }

    /// Shows the whole run.
    pub fn show_all(&mut self) {
        let len = (self.bounds.1 - self.bounds.0).max(1) as f64;
        self.view = (
            self.bounds.0 as f64 - len * 0.01,
            self.bounds.1 as f64 + len * 0.01,
        );
        self.apply_view();
    }

    /// Zooms the run's view to `[start, end)` on its clock (with a margin).
    pub fn zoom_to(&mut self, start_ns: i64, end_ns: i64) {
        let len = (end_ns - start_ns).max(1) as f64;
        self.view = (start_ns as f64 - len * 0.05, end_ns as f64 + len * 0.05);
        self.apply_view();
    }

    /// Puts every rank's view, range and rulers on the run's.
    pub fn apply_view(&mut self) {
        let offsets: Vec<i64> = (0..self.ranks.len()).map(|k| self.offset_ns(k)).collect();
        let (bounds, view, range) = (self.bounds, self.view, self.range);
        for (r, &o) in self.ranks.iter_mut().zip(&offsets) {
            let v = &mut r.state.view;
            v.start_ns = view.0 - o as f64;
            v.end_ns = view.1 - o as f64;
            v.trace_start_ns = bounds.0 - o;
            v.trace_end_ns = bounds.1 - o;
            r.state.axis_origin_ns = bounds.0 - o;
            r.state.range_selection = range.map(|(a, b)| (a - o, b - o));
            r.state.ruler.rulers = self
                .rulers
                .iter()
                .map(|u| Ruler {
                    from_ns: u.from_ns - o as f64,
                    to_ns: u.to_ns - o as f64,
                })
                .collect();
        }
    }

    /// After the expanded ranks handled their input: the one that moved (zoom, pan, range,
    /// rulers) carries the run's view, and with it every other rank.
    pub fn sync(&mut self) -> bool {
        let moved = |a: (f64, f64), b: (f64, f64)| {
            let tol = (b.1 - b.0).abs() * 1e-9 + 1e-6;
            (a.0 - b.0).abs() > tol || (a.1 - b.1).abs() > tol
        };
        let mut changed = false;
        for k in 0..self.ranks.len() {
            let o = self.offset_ns(k);
            let s = &self.ranks[k].state;
            let rel = (s.view.start_ns + o as f64, s.view.end_ns + o as f64);
            if !changed && moved(rel, self.view) {
                self.view = rel;
                changed = true;
            }
            let range = s.range_selection.map(|(a, b)| (a + o, b + o));
            if range != self.range {
                self.range = range;
                changed = true;
            }
            let rulers: Vec<Ruler> = s
                .ruler
                .rulers
                .iter()
                .map(|u| Ruler {
                    from_ns: u.from_ns + o as f64,
                    to_ns: u.to_ns + o as f64,
                })
                .collect();
            if rulers.len() != self.rulers.len() {
                self.rulers = rulers;
                changed = true;
            }
            if changed {
                break;
            }
        }
        if changed {
            self.apply_view();
        }
        changed
    }

    /// The tab's title.
    pub fn title(&self) -> String {
        format!("Run · {} ranks", self.ranks.len())
    }

    /// Sets rank `k`'s hand shift and recomputes the collectives with it.
    pub fn set_shift(&mut self, k: usize, shift_ns: i64, ctx: Option<&egui::Context>) {
        if let Some(r) = self.ranks.get_mut(k) {
            r.shift_ns = shift_ns;
        }
        self.apply_view();
        self.start_analysis(ctx);
    }
}

pub use crate::load::folder::traces_in_folder;

/// The run's tab: its panel on the right (when shown) and its rows.
pub fn show_tab(
    ui: &mut egui::Ui,
    run: &mut RunTab,
    palette: &super::theme::Palette,
    show_panel: bool,
) {
    if show_panel {
        egui::Panel::right("sightline_run_panel")
            .resizable(true)
            .default_size(540.0)
            .show(ui, |ui| {
                egui::ScrollArea::both().show(ui, |ui| panel::show(ui, run));
            });
    }
    egui::CentralPanel::default()
        .frame(egui::Frame::central_panel(ui.style()).inner_margin(0.0))
        .show(ui, |ui| view::show(ui, run, palette));
}
