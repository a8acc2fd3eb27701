//! The analysis side panel beside the timeline (issue 4): range statistics (the five `nsys stats`
//! reports as sortable tables, with a duration histogram of the chosen row), warm-up exclusion,
//! GPU idle gaps, copy/compute overlap and CSV export, all over the current range selection.
//!
//! The panel is a self-contained widget. The app owns an [`AnalysisPanel`], calls
//! [`AnalysisPanel::ui`] every frame with the trace and the selection, and acts on the
//! [`PanelAction`]s it returns (zoom, select, highlight, re-read [`AnalysisPanel::exclusion`] to
//! shade or [`AnalysisPanel::gaps`] to hatch). Every analysis is cached under a key made of what
//! it depends on (the trace, the selection, the exclusion, the gap options) and recomputed only
//! when that key changes, never per frame. Every analysis uses the same filter,
//! `Filter { range: selection, excluded: exclusion }`, so all sections follow warm-up exclusion.

mod export;
mod gpu_view;
mod statistics_view;
mod stats_table;
mod warmup_form;
mod warmup_view;

use std::collections::HashMap;
use std::path::PathBuf;

use egui::{Button, Color32, Ui};

use crate::analysis::{
    self, CopyComputeOverlap, CopyKindOverlap, DeviceActivity, EventTable, Filter, GapOptions,
    IdleGap, Report, ReportTable, TimeRange, WarmupExclusion,
};
use crate::export::events_csv::EventKind;
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

pub use export::{ExportError, export_selection, export_table};
pub use gpu_view::gap_label;
pub use stats_table::{
    Histogram, RowKey, Sort, SortColumn, columns, event_bounds, event_value, row_events,
    visible_rows,
};
pub use warmup_form::{FormProblems, WarmupSettings};
pub use warmup_view::excluded_text;

/// What the panel asks the app to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PanelAction {
    /// Zoom the timeline to `[start_ns, end_ns)` (a clicked gap, a chosen row's longest event).
    ZoomTo { start_ns: i64, end_ns: i64 },
    /// Make `[start_ns, end_ns)` the range selection (e.g. an NVTX instance of the chosen row).
    SetSelection { start_ns: i64, end_ns: i64 },
    /// Highlight these events, the events of the chosen statistics row; empty: clear it.
    Highlight(Vec<(EventTable, usize)>),
    /// The warm-up exclusion changed: re-read [`AnalysisPanel::exclusion`] to shade it.
    ExclusionChanged,
    /// The idle gaps changed: re-read [`AnalysisPanel::gaps`] to hatch them.
    GapsChanged,
}

/// The sections of the panel, one shown at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnalysisTab {
    #[default]
    Statistics,
    Warmup,
    Gaps,
    Overlap,
    Export,
}

impl AnalysisTab {
    pub const ALL: [AnalysisTab; 5] = [
        AnalysisTab::Statistics,
        AnalysisTab::Warmup,
        AnalysisTab::Gaps,
        AnalysisTab::Overlap,
        AnalysisTab::Export,
    ];

    pub fn label(self) -> &'static str {
        match self {
            AnalysisTab::Statistics => "Statistics",
            AnalysisTab::Warmup => "Warm-up",
            AnalysisTab::Gaps => "Gaps",
            AnalysisTab::Overlap => "Overlap",
            AnalysisTab::Export => "Export",
        }
    }
}

/// The short name of a report on its selector.
pub fn report_label(report: Report) -> &'static str {
    match report {
        Report::Kernels => "Kernels",
        Report::CudaApi => "CUDA API",
        Report::MemoryTime => "Memory time",
        Report::MemorySize => "Memory size",
        Report::Nvtx => "NVTX",
    }
}

/// The line under the statistics table, e.g. `12 of 40 names · 5120 events`.
pub fn table_summary(table: &ReportTable, rows: &[usize]) -> String {
    let events: u64 = rows
        .iter()
        .filter_map(|&i| table.rows.get(i))
        .map(|r| r.stats.count)
        .sum();
    format!(
        "{} of {} names · {events} events",
        rows.len(),
        table.rows.len()
    )
}

/// Which trace the caches were computed for. The address alone could be reused by the next
/// trace after the app drops the old one, so the key adds what tells two traces apart cheaply.
#[derive(Debug, Clone, PartialEq)]
struct TraceKey {
    addr: usize,
    path: PathBuf,
    events: usize,
    first_ns: i64,
    last_ns: i64,
}

impl TraceKey {
    fn of(trace: &Trace) -> Self {
        Self {
            addr: std::ptr::from_ref(trace) as usize,
            path: trace.path.clone(),
            events: trace.event_count(),
            first_ns: trace.first_ns,
            last_ns: trace.last_ns,
        }
    }

    /// Checked every frame, so it compares without building a key.
    fn matches(&self, trace: &Trace) -> bool {
        self.addr == std::ptr::from_ref(trace) as usize
            && self.events == trace.event_count()
            && self.first_ns == trace.first_ns
            && self.last_ns == trace.last_ns
            && self.path == trace.path
    }
}

/// What every range analysis depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
struct InputsKey {
    trace_generation: u64,
    selection: TimeRange,
    exclusion_generation: u64,
}

#[derive(Default)]
struct ExclusionCache {
    /// (trace generation, the rules in force or `None` when the toggle is off).
    key: Option<(u64, Option<WarmupSettings>)>,
    result: Option<WarmupExclusion>,
    /// Bumped whenever `result` is replaced.
    generation: u64,
    /// The lines the Warm-up section shows for `result`.
    summary: Vec<String>,
}

#[derive(Default)]
struct StatsCache {
    key: Option<InputsKey>,
    tables: HashMap<Report, ReportTable>,
    /// Bumped whenever the tables are dropped.
    generation: u64,
}

/// The shown rows of the current table: (stats generation, report, name filter, sort).
#[derive(Default)]
struct OrderCache {
    key: Option<(u64, Report, String, Option<Sort>)>,
    rows: Vec<usize>,
}

/// The chosen statistics row and what was computed for it.
#[derive(Debug, Clone)]
pub struct ChosenRow {
    pub key: RowKey,
    /// Its events under the panel's filter: what the panel asked to highlight.
    pub events: Vec<(EventTable, usize)>,
    /// Their durations (sizes for the memory size report).
    pub histogram: Histogram,
    /// The longest of them: its table and `[start, end)`, for "zoom to the longest".
    pub longest: Option<(EventTable, i64, i64)>,
    stats_generation: u64,
}

#[derive(Default)]
struct GapsCache {
    key: Option<(InputsKey, GapOptions)>,
    gaps: Vec<IdleGap>,
    activity: Vec<DeviceActivity>,
}

#[derive(Default)]
struct OverlapCache {
    key: Option<InputsKey>,
    per_gpu: Vec<CopyComputeOverlap>,
    per_kind: Vec<CopyKindOverlap>,
}

/// A line the panel shows after an export.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Message {
    text: String,
    error: bool,
}

/// The analysis side panel: what the person chose, and the cached results.
pub struct AnalysisPanel {
    pub tab: AnalysisTab,
    /// The report the statistics table shows.
    pub report: Report,
    /// Rows whose name contains this text (any case) are shown.
    pub name_filter: String,
    /// `None` keeps the report's own order (total time, largest first).
    pub sort: Option<Sort>,
    /// The one toggle: exclude what the warm-up rules choose.
    pub exclude_warmup: bool,
    /// Shortest idle gap listed and hatched, in µs.
    pub min_gap_us: f64,
    /// Gaps of each stream rather than of the whole GPU.
    pub per_stream: bool,
    /// The kinds "Export selection" writes, in [`EventKind::ALL`] order.
    pub export_kinds: [bool; 6],
    chosen: Option<RowKey>,
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
    stats: StatsCache,
    order: OrderCache,
    chosen_cache: Option<ChosenRow>,
    gaps: GapsCache,
    overlap: OverlapCache,
    message: Option<Message>,
    computations: usize,
}

impl Default for AnalysisPanel {
    fn default() -> Self {
        Self {
            tab: AnalysisTab::default(),
            report: Report::Kernels,
            name_filter: String::new(),
            sort: None,
            exclude_warmup: false,
            min_gap_us: analysis::DEFAULT_MIN_GAP_NS as f64 / 1e3,
            per_stream: false,
            export_kinds: [true; 6],
            chosen: None,
            applied: WarmupSettings::default(),
            draft: WarmupSettings::default(),
            draft_check: None,
            trace_key: None,
            trace_generation: 0,
            inputs: None,
            exclusion: ExclusionCache::default(),
            stats: StatsCache::default(),
            order: OrderCache::default(),
            chosen_cache: None,
            gaps: GapsCache::default(),
            overlap: OverlapCache::default(),
            message: None,
            computations: 0,
        }
    }
}

const HISTOGRAM_BINS: usize = 40;
const ERROR_COLOR: Color32 = Color32::from_rgb(0xe0, 0x5a, 0x4f);

impl AnalysisPanel {
    pub fn new() -> Self {
        Self::default()
    }

    /// The warm-up exclusion in force, if the toggle is on (for shading excluded time).
    pub fn exclusion(&self) -> Option<&WarmupExclusion> {
        self.exclusion.result.as_ref()
    }

    /// The idle gaps listed for the last selection, longest first (for hatching).
    pub fn gaps(&self) -> &[IdleGap] {
        &self.gaps.gaps
    }

    /// Busy and idle time of each GPU over the last selection.
    pub fn activity(&self) -> &[DeviceActivity] {
        &self.gaps.activity
    }

    /// Copy/compute overlap per GPU and per copy kind, once the Overlap section has been shown.
    pub fn overlap(&self) -> (&[CopyComputeOverlap], &[CopyKindOverlap]) {
        (&self.overlap.per_gpu, &self.overlap.per_kind)
    }

    /// The report computed over the last selection, once it has been shown.
    pub fn report_table(&self, report: Report) -> Option<&ReportTable> {
        self.stats.tables.get(&report)
    }

    /// The current statistics table as shown: its filtered rows in their shown order.
    pub fn visible_table(&self) -> Option<ReportTable> {
        let table = self.stats.tables.get(&self.report)?;
        let rows = visible_rows(table, &self.name_filter, self.sort);
        Some(ReportTable {
            report: table.report,
            rows: rows
                .into_iter()
                .filter_map(|i| table.rows.get(i).cloned())
                .collect(),
        })
    }

    /// The chosen statistics row, its events (what was highlighted) and their histogram.
    pub fn chosen_row(&self) -> Option<&ChosenRow> {
        let key = self.chosen.as_ref()?;
        self.chosen_cache.as_ref().filter(|c| &c.key == key)
    }

    /// The filter every section uses: the selection less the excluded events.
    pub fn filter(&self, selection: TimeRange) -> Filter<'_> {
        filter_of(selection, self.exclusion())
    }

    pub fn gap_options(&self) -> GapOptions {
        GapOptions {
            min_ns: (self.min_gap_us * 1e3).round().max(0.0) as i64,
            per_stream: self.per_stream,
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

    /// How many analyses the panel has run since it was made: stays put while nothing the
    /// analyses depend on changes.
    pub fn computations(&self) -> usize {
        self.computations
    }

    /// Draws the panel for `selection` (`TimeRange::ALL` for the whole trace) and returns what
    /// the app should do.
    pub fn ui(&mut self, ui: &mut Ui, trace: &Trace, selection: TimeRange) -> Vec<PanelAction> {
        let mut actions = Vec::new();
        self.sync(trace, selection, &mut actions);

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
        });
        ui.horizontal_wrapped(|ui| {
            for tab in AnalysisTab::ALL {
                ui.selectable_value(&mut self.tab, tab, tab.label());
            }
        });
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("analysis_panel_scroll")
            .auto_shrink([false, false])
            .show(ui, |ui| match self.tab {
                AnalysisTab::Statistics => self.statistics_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Warmup => self.warmup_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Gaps => self.gaps_ui(ui, trace, selection, &mut actions),
                AnalysisTab::Overlap => self.overlap_ui(ui, trace, selection),
                AnalysisTab::Export => self.export_ui(ui, trace, selection),
            });
        actions
    }

    /// Brings every cache the app reads (exclusion, gaps, the chosen row) up to date with the
    /// inputs, recomputing only what a changed input invalidates.
    fn sync(&mut self, trace: &Trace, selection: TimeRange, actions: &mut Vec<PanelAction>) {
        if !self.trace_key.as_ref().is_some_and(|k| k.matches(trace)) {
            // A new trace: indices into the old one mean nothing.
            self.trace_key = Some(TraceKey::of(trace));
            self.trace_generation += 1;
            self.chosen = None;
            self.chosen_cache = None;
        }

        let wanted = self.exclude_warmup.then_some(&self.applied);
        let fresh = self
            .exclusion
            .key
            .as_ref()
            .is_some_and(|(generation, settings)| {
                *generation == self.trace_generation && settings.as_ref() == wanted
            });
        if !fresh {
            let settings = wanted.cloned();
            let result = settings.as_ref().and_then(|s| {
                let rules = s.rules().ok()?;
                self.computations += 1;
                Some(analysis::exclude_warmup(trace, &rules, s.scope))
            });
            let was_shown = self.exclusion.result.is_some();
            let now_shown = result.is_some();
            self.exclusion.summary = match (&settings, &result) {
                (Some(settings), Some(ex)) => warmup_view::exclusion_summary(settings, ex),
                _ => Vec::new(),
            };
            self.exclusion.key = Some((self.trace_generation, settings));
            self.exclusion.result = result;
            self.exclusion.generation += 1;
            if was_shown || now_shown {
                actions.push(PanelAction::ExclusionChanged);
            }
        }

        let inputs = InputsKey {
            trace_generation: self.trace_generation,
            selection,
            exclusion_generation: self.exclusion.generation,
        };
        let gap_key = (inputs, self.gap_options());
        if self.gaps.key.as_ref() != Some(&gap_key) {
            let filter = filter_of(selection, self.exclusion.result.as_ref());
            let gaps = analysis::gpu_idle_gaps(trace, &filter, &gap_key.1);
            let activity = analysis::gpu_activity(trace, &filter);
            self.computations += 1;
            self.gaps = GapsCache {
                key: Some(gap_key),
                gaps,
                activity,
            };
            actions.push(PanelAction::GapsChanged);
        }

        self.inputs = Some(inputs);
        if self.stats.key.as_ref() != Some(&inputs) {
            self.stats.key = Some(inputs);
            self.stats.tables.clear();
            self.stats.generation += 1;
        }
        self.refresh_chosen(trace, selection, actions);
    }

    /// Computes `report` over the selection unless it is cached.
    fn ensure_table(&mut self, trace: &Trace, selection: TimeRange, report: Report) {
        if self.stats.tables.contains_key(&report) {
            return;
        }
        let filter = filter_of(selection, self.exclusion.result.as_ref());
        let table = analysis::compute(trace, report, &filter);
        self.computations += 1;
        self.stats.tables.insert(report, table);
    }

    /// Recomputes the events of the chosen row after the statistics changed, and highlights them.
    fn refresh_chosen(
        &mut self,
        trace: &Trace,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(key) = self.chosen.clone() else {
            return;
        };
        if self
            .chosen_cache
            .as_ref()
            .is_some_and(|c| c.key == key && c.stats_generation == self.stats.generation)
        {
            return;
        }
        self.ensure_table(trace, selection, key.report);
        let filter = filter_of(selection, self.exclusion.result.as_ref());
        let row = self.stats.tables.get(&key.report).and_then(|t| key.find(t));
        let events = row.map_or_else(Vec::new, |row| row_events(trace, key.report, row, &filter));
        let values: Vec<i64> = events
            .iter()
            .map(|&e| event_value(trace, key.report, e))
            .collect();
        let longest = events
            .iter()
            .filter_map(|&e| event_bounds(trace, e).map(|(s, end)| (e.0, s, end)))
            .max_by_key(|&(_, s, e)| (e - s, std::cmp::Reverse(s)));
        self.computations += 1;
        actions.push(PanelAction::Highlight(events.clone()));
        self.chosen_cache = Some(ChosenRow {
            key,
            stats_generation: self.stats.generation,
            events,
            histogram: Histogram::of(&values, HISTOGRAM_BINS),
            longest,
        });
    }

    fn choose_row(
        &mut self,
        key: Option<RowKey>,
        trace: &Trace,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        self.chosen = key;
        if self.chosen.is_none() {
            self.chosen_cache = None;
            actions.push(PanelAction::Highlight(Vec::new()));
        } else {
            self.refresh_chosen(trace, selection, actions);
        }
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
        if clicked && let Some(path) = save_dialog("selection.csv") {
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

fn filter_of(selection: TimeRange, exclusion: Option<&WarmupExclusion>) -> Filter<'_> {
    Filter {
        range: selection,
        excluded: exclusion.map(|e| &e.excluded),
    }
}

fn save_dialog(file_name: &str) -> Option<PathBuf> {
    rfd::FileDialog::new()
        .set_title("Export as CSV")
        .add_filter("CSV", &["csv"])
        .set_file_name(file_name)
        .save_file()
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
