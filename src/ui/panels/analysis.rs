//! The analysis side panel beside the timeline: range statistics (every `nsys stats` report the
//! trace has data for, as sortable tables, with a duration histogram of the chosen row), the
//! findings of every `nsys analyze` rule, warm-up exclusion, GPU idle gaps, copy/compute overlap,
//! the CPU samples (bottom-up, top-down, flame graph) and CSV export, all over the current range
//! selection.
//!
//! The panel is a self-contained widget. The app owns an [`AnalysisPanel`], calls
//! [`AnalysisPanel::ui`] every frame with the trace and the selection, and acts on the
//! [`PanelAction`]s it returns (zoom, select, highlight, re-read [`AnalysisPanel::exclusion`] to
//! shade or [`AnalysisPanel::gaps`] to hatch). Every analysis runs on a worker thread
//! ([`worker`]) under a key made of what it depends on (the trace, the selection, the exclusion,
//! the gap options) and is recomputed only when that key changes, never per frame. Every analysis uses the same filter,
//! `Filter { range: selection, excluded: exclusion }`, so all sections follow warm-up exclusion.

mod comm_view;
mod critical_path_view;
mod export;
mod findings_view;
mod flame_graph;
mod gpu_view;
mod iterations_view;
mod jobs;
mod keys;
mod ncu_view;
mod op_roofline_view;
mod operators_view;
mod results;
mod samples_view;
mod sql_editor;
mod sql_view;
mod sql_worker;
mod statistics_view;
mod stats_table;
mod warmup_form;
mod warmup_view;
mod worker;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use egui::{Button, Color32, Ui};

use crate::analysis::critical_path::CriticalPath;
use crate::analysis::gap_causes::{self, CauseTotal, GapCauseInfo};
use crate::analysis::{
    self, CopyComputeOverlap, CopyKindOverlap, DeviceActivity, EventTable, Filter, GapOptions,
    IdleGap, MeasureOver, NsysFormat, ReportInput, ReportOptions, RowEvents, Rule, RuleInput,
    StatsReport, Table, TimeRange, WarmupExclusion, reports,
};
use crate::export::events_csv::EventKind;
use crate::trace::Trace;
use crate::ui::file_dialog::{self, FilePurpose};
use crate::ui::timeline::format_duration;

pub use export::{ExportError, export_selection, export_table};
pub use flame_graph::node_facts;
pub use gpu_view::gap_label;
pub use keys::{InputsKey, RowKey};
use keys::{LayoutKey, TraceKey};
use results::ExclusionCache;
pub use results::{ChosenRow, Findings, GapsResult, OverlapResult, RuleFindings};
pub use samples_view::{
    ChosenFunction, GAP_TOP_FUNCTIONS, GapFunctions, SamplesResult, SamplesView, gap_function_line,
    thread_label,
};
pub use sql_view::{EXAMPLES as SQL_EXAMPLES, SqlSource, SqlTab, editor_id as sql_editor_id};
pub use stats_table::{
    Histogram, RowOrder, Sort, TableLayout, event_bounds, event_duration, is_numeric_column,
    row_events, visible_rows,
};
pub use warmup_form::{FormProblems, WarmupSettings};
pub use warmup_view::excluded_text;
pub use worker::{Status, Worker};

/// What the panel asks the app to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PanelAction {
    /// Zoom the timeline to `[start_ns, end_ns)` (a clicked gap, a chosen row's longest event).
    ZoomTo { start_ns: i64, end_ns: i64 },
    /// Make `[start_ns, end_ns)` the range selection (e.g. an NVTX instance of the chosen row).
    SetSelection { start_ns: i64, end_ns: i64 },
    /// Highlight these events, the events of the chosen row or finding; empty: clear it.
    Highlight(Vec<(EventTable, usize)>),
    /// The warm-up exclusion changed: re-read [`AnalysisPanel::exclusion`] to shade it.
    ExclusionChanged,
    /// The idle gaps changed: re-read [`AnalysisPanel::gaps`] to hatch them.
    GapsChanged,
    /// The whole trace's communication is ready for the pattern in force: re-read
    /// [`AnalysisPanel::comm_timeline`] to colour and draw it.
    CommChanged,
    /// A gap was chosen: zoom to it and its launching call, select the operation that ended it
    /// (`next`) and draw the line back to the call.
    ShowGap { gap: IdleGap, cause: GapCauseInfo },
    /// Outline these CPU samples (indices into `trace.cpu_samples`, sorted), those of the
    /// function chosen in the CPU samples tab; empty: clear the outline.
    HighlightSamples(Vec<u32>),
    /// Tracks were pinned or removed in the SQL tab: re-read [`AnalysisPanel::sql`]'s pins.
    SqlTracksChanged,
    /// Outline this critical path on the timeline (`None`: clear it).
    ShowCriticalPath(Option<Arc<CriticalPath>>),
}

/// The sections of the panel, one shown at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnalysisTab {
    #[default]
    Statistics,
    /// Shown only when the trace's operators have shapes (`op_efficiency`).
    Operators,
    Findings,
    Warmup,
    Gaps,
    Overlap,
    Iterations,
    CpuSamples,
    Export,
    Sql,
    /// Shown only with an Nsight Compute report attached.
    NsightCompute,
}

impl AnalysisTab {
    pub const ALL: [AnalysisTab; 11] = [
        AnalysisTab::Statistics,
        AnalysisTab::Operators,
        AnalysisTab::Findings,
        AnalysisTab::Warmup,
        AnalysisTab::Gaps,
        AnalysisTab::Overlap,
        AnalysisTab::Iterations,
        AnalysisTab::CpuSamples,
        AnalysisTab::Export,
        AnalysisTab::Sql,
        AnalysisTab::NsightCompute,
    ];

    pub fn label(self) -> &'static str {
        match self {
            AnalysisTab::Statistics => "Statistics",
            AnalysisTab::Operators => "Operators",
            AnalysisTab::Findings => "Findings",
            AnalysisTab::Warmup => "Warm-up",
            AnalysisTab::Gaps => "Gaps",
            AnalysisTab::Overlap => "Overlap",
            AnalysisTab::Iterations => "Iterations",
            AnalysisTab::CpuSamples => "CPU samples",
            AnalysisTab::Export => "Export",
            AnalysisTab::Sql => "SQL",
            AnalysisTab::NsightCompute => "Nsight Compute",
        }
    }
}

/// The line under a report table, e.g. `12 of 40 rows`.
pub fn table_summary(table: &Table, rows: &RowOrder) -> String {
    format!("{} of {} rows", rows.len(), table.rows.len())
}

/// A line the panel shows after an export.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Message {
    text: String,
    error: bool,
}

/// Reports, rules, gaps and overlap, each computed on its own worker thread.
#[derive(Default)]
struct Jobs {
    /// The shown report over the current inputs.
    /// Keyed by the inputs, the report and the attached ncu report (its address; 0: none).
    report: Worker<(InputsKey, &'static str, usize), Arc<Table>>,
    /// Reports already computed for `tables_key`.
    tables: HashMap<&'static str, Arc<Table>>,
    tables_key: Option<InputsKey>,
    /// The shown rows' order and the columns' kinds and widths, for (inputs, report, name
    /// filter, sort).
    layout: Worker<LayoutKey, Arc<TableLayout>>,
    /// The chosen row's events and histogram.
    chosen: Worker<(InputsKey, RowKey), Option<ChosenRow>>,
    findings: Worker<InputsKey, Arc<Findings>>,
    gaps: Worker<(InputsKey, GapOptions), Arc<GapsResult>>,
    /// The gap result the app was last told about.
    gaps_announced: Option<(InputsKey, GapOptions)>,
    overlap: Worker<InputsKey, Arc<OverlapResult>>,
}

/// The analysis side panel: what the person chose, and the results of the background jobs.
pub struct AnalysisPanel {
    pub tab: AnalysisTab,
    /// The report the statistics table shows (its nsys name).
    pub report: &'static str,
    /// Rows with a text cell containing this text (any case) are shown.
    pub name_filter: String,
    /// `None` keeps the report's own order.
    pub sort: Option<Sort>,
    /// The one toggle: exclude what the warm-up rules choose.
    pub exclude_warmup: bool,
    /// The Nsight Systems release whose output the reports and rules copy; `None`: the one that
    /// wrote the trace ([`NsysFormat::of_trace`]).
    pub nsys_format: Option<NsysFormat>,
    /// Shortest idle gap listed and hatched, in µs.
    pub min_gap_us: f64,
    /// Gaps of each stream rather than of the whole GPU.
    pub per_stream: bool,
    /// The kinds "Export selection" writes, in [`EventKind::ALL`] order.
    pub export_kinds: [bool; EventKind::ALL.len()],
    chosen: Option<RowKey>,
    /// The reports the trace has data for (decided once per trace).
    available: Vec<&'static str>,
    /// The chosen row whose events were last outlined, for the inputs they were computed for.
    highlighted: Option<(InputsKey, RowKey)>,
    /// The finding last clicked: (rule, row index), outlined in its list.
    chosen_finding: Option<(&'static str, usize)>,
    /// The rules in force, and the form being edited.
    applied: WarmupSettings,
    draft: WarmupSettings,
    draft_check: Option<(WarmupSettings, FormProblems)>,
    trace_key: Option<TraceKey>,
    /// Bumped whenever the panel is handed another trace.
    trace_generation: u64,
    /// What the range analyses depend on, as of the last [`Self::sync`].
    inputs: Option<InputsKey>,
    exclusion: ExclusionCache,
    jobs: Jobs,
    /// Called by a worker when it finishes (wakes the window up).
    repaint: Option<egui::Context>,
    message: Option<Message>,
    computations: usize,
    /// Communication/compute overlap: the pattern and its jobs.
    comm: comm_view::CommState,
    /// The CPU samples tab's choices and jobs, and the gap chosen in the Gaps tab.
    samples: samples_view::SamplesState,
    /// The Iterations tab's family and jobs.
    iterations: iterations_view::IterationsState,
    /// The SQL tab: query, answer, pinned tracks.
    sql: SqlTab,
    /// The Nsight Compute report attached to the trace, with its join (set by the tab).
    pub ncu: Option<Arc<crate::ui::ncu_attach::AttachedNcu>>,
    /// The kernel name chosen in the Nsight Compute tab's "Worth optimising" table.
    pub ncu_chosen: Option<crate::trace::StrId>,
    /// The Operators tab's sort and filter.
    operators: operators_view::OperatorsState,
}

impl Default for AnalysisPanel {
    fn default() -> Self {
        Self {
            tab: AnalysisTab::default(),
            report: "cuda_gpu_kern_sum",
            name_filter: String::new(),
            sort: None,
            exclude_warmup: false,
            nsys_format: None,
            min_gap_us: analysis::DEFAULT_MIN_GAP_NS as f64 / 1e3,
            per_stream: false,
            export_kinds: [true; EventKind::ALL.len()],
            chosen: None,
            available: Vec::new(),
            highlighted: None,
            chosen_finding: None,
            applied: WarmupSettings::default(),
            draft: WarmupSettings::default(),
            draft_check: None,
            trace_key: None,
            trace_generation: 0,
            inputs: None,
            exclusion: ExclusionCache::default(),
            jobs: Jobs::default(),
            repaint: None,
            message: None,
            computations: 0,
            comm: comm_view::CommState::default(),
            samples: samples_view::SamplesState::default(),
            iterations: iterations_view::IterationsState::default(),
            sql: SqlTab::default(),
            ncu: None,
            ncu_chosen: None,
            operators: operators_view::OperatorsState::default(),
        }
    }
}

const HISTOGRAM_BINS: usize = 40;
/// The most rows of a report the panel builds: a row dump of a 10M-event trace would take
/// gigabytes as cells; `sightline summary --report NAME` prints all of them.
pub const PANEL_ROW_LIMIT: usize = 200_000;
const ERROR_COLOR: Color32 = Color32::from_rgb(0xe0, 0x5a, 0x4f);

/// The filter of a job: the selection less what the exclusion drops.
fn filter_of(selection: TimeRange, exclusion: Option<&WarmupExclusion>) -> Filter<'_> {
    Filter {
        range: selection,
        excluded: exclusion.map(|e| &e.excluded),
    }
}

impl AnalysisPanel {
    pub fn new() -> Self {
        Self::default()
    }

    /// The SQL tab (its query, answer, history and pinned tracks).
    pub fn sql(&self) -> &SqlTab {
        &self.sql
    }

    pub fn sql_mut(&mut self) -> &mut SqlTab {
        &mut self.sql
    }

    /// The warm-up exclusion in force, if the toggle is on (for shading excluded time).
    pub fn exclusion(&self) -> Option<&WarmupExclusion> {
        self.exclusion.result.as_deref()
    }

    /// [`Self::exclusion`], shared with a worker thread (File → Save report…).
    pub fn exclusion_arc(&self) -> Option<Arc<WarmupExclusion>> {
        self.exclusion.result.clone()
    }

    /// The idle gaps listed for the last selection, longest first (for hatching); empty until
    /// the worker has computed them.
    pub fn gaps(&self) -> &[IdleGap] {
        self.gaps_result().map_or(&[], |g| &g.gaps)
    }

    /// The cause of each of [`AnalysisPanel::gaps`], in the same order.
    pub fn gap_causes(&self) -> &[GapCauseInfo] {
        self.gaps_result().map_or(&[], |g| &g.causes)
    }

    /// Busy and idle time of each GPU over the last selection.
    pub fn activity(&self) -> &[DeviceActivity] {
        self.gaps_result().map_or(&[], |g| &g.activity)
    }

    fn gaps_result(&self) -> Option<&GapsResult> {
        let key = (self.inputs?, self.gap_options());
        self.jobs.gaps.status(&key).latest().map(Arc::as_ref)
    }

    /// Copy/compute overlap per GPU and per copy kind, once the Overlap section has been shown.
    pub fn overlap(&self) -> (&[CopyComputeOverlap], &[CopyKindOverlap]) {
        match self
            .inputs
            .and_then(|k| self.jobs.overlap.status(&k).ready())
        {
            Some(o) => (&o.per_gpu, &o.per_kind),
            None => (&[], &[]),
        }
    }

    /// Every rule's findings over the last selection, once computed.
    pub fn findings(&self) -> Option<&Findings> {
        let key = self.inputs?;
        self.jobs.findings.status(&key).ready().map(Arc::as_ref)
    }

    /// The reports the trace has data for, as the selector lists them.
    pub fn available_reports(&self) -> &[&'static str] {
        &self.available
    }

    /// The report computed over the last selection, once it has been shown.
    pub fn report_table(&self, report: &str) -> Option<&Table> {
        let key = self.inputs?;
        (self.jobs.tables_key == Some(key))
            .then(|| self.jobs.tables.get(report).map(Arc::as_ref))
            .flatten()
    }

    /// The current statistics table as shown: its filtered rows in their shown order.
    pub fn visible_table(&self) -> Option<Table> {
        let table = self.report_table(self.report)?;
        let rows = visible_rows(table, &self.name_filter, self.sort);
        Some(Table::from_parts(
            table.columns.clone(),
            rows.into_iter()
                .filter_map(|i| table.rows.get(i).cloned())
                .collect(),
        ))
    }

    /// The chosen statistics row, its events (what was highlighted) and their histogram.
    pub fn chosen_row(&self) -> Option<&ChosenRow> {
        let key = (self.inputs?, self.chosen.clone()?);
        self.jobs.chosen.status(&key).ready()?.as_ref()
    }

    /// The filter every section uses: the selection less the excluded events.
    pub fn filter(&self, selection: TimeRange) -> Filter<'_> {
        filter_of(selection, self.exclusion())
    }

    /// What the Gaps tab lists: idle time over the whole selection (its edges cut the gaps
    /// there), or over the active span of the whole trace when nothing is selected.
    pub fn gap_options(&self) -> GapOptions {
        GapOptions {
            min_ns: (self.min_gap_us * 1e3).round().max(0.0) as i64,
            per_stream: self.per_stream,
            over: MeasureOver::Range,
        }
    }

    /// The warm-up rules in force (used when [`Self::exclude_warmup`] is on).
    pub fn warmup_settings(&self) -> &WarmupSettings {
        &self.applied
    }

    /// Puts `settings` in force and in the form, and turns the exclusion on; it is computed on
    /// the next frame. The error says what to fix in the settings.
    pub fn apply_warmup(&mut self, settings: WarmupSettings) -> Result<(), FormProblems> {
        settings.rules()?;
        self.draft = settings.clone();
        self.applied = settings;
        self.exclude_warmup = true;
        Ok(())
    }

    /// Draws the panel for `selection` (`TimeRange::ALL` for the whole trace) and returns what
    /// the app should do.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
    ) -> Vec<PanelAction> {
        self.repaint = Some(ui.ctx().clone());
        let mut actions = Vec::new();
        self.poll_jobs();
        self.sync(trace, selection, &mut actions);
        self.sql.follow_trace(self.trace_generation, &mut actions);

        ui.horizontal_wrapped(|ui| {
            let toggle = ui
                .checkbox(&mut self.exclude_warmup, "Exclude warm-up")
                .on_hover_text(
                    "Drop everything attributed to NVTX ranges named warmup / warm-up / \
                     warm_up (or the rules of the Warm-up section): GPU work by the CPU time \
                     of the call that launched it.",
                );
            if toggle.changed() {
                self.sync(trace, selection, &mut actions);
            }
            ui.label(selection_text(selection));
            if self.busy() {
                ui.spinner().on_hover_text("Computing in the background…");
            }
        });
        let badge = self.findings().map(Findings::count);
        ui.horizontal_wrapped(|ui| {
            for tab in AnalysisTab::ALL {
                if tab == AnalysisTab::NsightCompute && self.ncu.is_none() {
                    continue;
                }
                if tab == AnalysisTab::Operators && !self.has_operators_tab() {
                    continue;
                }
                let label = match (tab, badge) {
                    (AnalysisTab::Findings, Some(n)) => format!("Findings ({n})"),
                    _ => tab.label().to_string(),
                };
                ui.selectable_value(&mut self.tab, tab, label);
            }
        });
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("analysis_panel_scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| match self.tab {
                AnalysisTab::Statistics => self.statistics_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Operators => self.operators_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Findings => self.findings_ui(ui, trace, &mut actions),
                AnalysisTab::Warmup => self.warmup_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Gaps => self.gaps_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Overlap => {
                    self.overlap_ui(ui, trace, selection);
                    self.comm_overlap_ui(ui, trace, selection);
                }
                AnalysisTab::Iterations => {
                    self.iterations_ui(ui, trace, selection, &mut actions);
                }
                AnalysisTab::CpuSamples => self.samples_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Export => self.export_ui(ui, trace, selection),
                AnalysisTab::Sql => {
                    let repaint = self.repaint_fn();
                    self.sql.ui(ui, trace, selection, repaint, &mut actions);
                }
                AnalysisTab::NsightCompute => self.ncu_ui(ui, trace, &mut actions),
            });
        actions
    }

    fn export_ui(&mut self, ui: &mut Ui, trace: &Trace, selection: TimeRange) {
        ui.label("Events of the selection (start in the range, not excluded), of these kinds:");
        ui.horizontal_wrapped(|ui| {
            for (on, kind) in self.export_kinds.iter_mut().zip(EventKind::ALL) {
                ui.checkbox(on, kind.name());
            }
        });
        let kinds: Vec<EventKind> = EventKind::ALL
            .into_iter()
            .zip(self.export_kinds)
            .filter_map(|(k, on)| on.then_some(k))
            .collect();
        let clicked = ui
            .add_enabled(!kinds.is_empty(), Button::new("Export selection to CSV…"))
            .clicked();
        let purpose = FilePurpose::SaveSelectionCsv;
        if let Some(path) = save_dialog(ui, clicked, purpose, "selection.csv") {
            let filter = self.filter(selection);
            let result = export_selection(&path, trace, &filter, &kinds);
            self.message = Some(match result {
                Ok(n) => Message {
                    text: format!("Wrote {n} events to {}", path.display()),
                    error: false,
                },
                Err(e) => Message {
                    text: e.to_string(),
                    error: true,
                },
            });
        }
        self.message_ui(ui);
    }

    fn message_ui(&self, ui: &mut Ui) {
        if let Some(m) = &self.message {
            if m.error {
                ui.colored_label(ERROR_COLOR, &m.text);
            } else {
                ui.label(&m.text);
            }
        }
    }
}

/// When `asked`, asks where to save a CSV (the system dialog, else the in-window browser);
/// returns the path chosen for `purpose` once there is one, on this frame or a later one.
fn save_dialog(ui: &Ui, asked: bool, purpose: FilePurpose, file_name: &str) -> Option<PathBuf> {
    file_dialog::csv_path(ui.ctx(), asked, purpose, file_name)
}

fn selection_text(selection: TimeRange) -> String {
    match (selection.start_ns, selection.end_ns) {
        (None, None) => "Selection: whole trace".into(),
        (Some(s), Some(e)) => format!(
            "Selection: {} – {} ({})",
            format_duration(s as f64),
            format_duration(e as f64),
            format_duration((e - s) as f64)
        ),
        (Some(s), None) => format!("Selection: from {}", format_duration(s as f64)),
        (None, Some(e)) => format!("Selection: until {}", format_duration(e as f64)),
    }
}
