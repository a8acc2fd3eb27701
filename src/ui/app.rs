//! The application state and its frame loop. [`SightlineApp`] is a plain struct: eframe calls
//! [`SightlineApp::ui`] every frame, and the `egui_kittest` tests drive the very same method.

use std::path::PathBuf;

use egui::{Align2, Color32, FontId, Id, Ui};

use super::compare::{self, CompareView};
use super::file_dialog::{self, FilePurpose};
use super::ncu::baseline::OpenReport;
use super::panels::analysis::PanelAction;
use super::panels::{search, warnings};
use super::settings::Settings;
use super::theme::{Palette, PaletteKind};
use super::timeline::event_menu::EventAction;
use super::timeline::{self, EventRef, GapMark, Overlays, Ruler};
use super::workspace::{TraceTab, file_name};
use super::{details_dock, shortcuts};
use crate::analysis::align::Alignment;
use crate::analysis::gap_causes::GapCauseInfo;
use crate::analysis::{IdleGap, TimeRange};
use crate::trace::Trace;

pub use super::workspace::Document;
pub use windows::HELP_KEYS;

mod runs;
mod tabs;
mod top_bar;
mod windows;

/// The whole window's state: the open traces (tabs), which one is shown, and the compare view.
pub struct SightlineApp {
    /// Never empty: the first is an empty start tab until a trace is opened into it.
    pub tabs: Vec<TraceTab>,
    /// Index into `tabs` of the tab shown.
    pub active: usize,
    next_id: u64,
    /// Two tabs on one time axis with their diff, once made (until its tab is closed).
    pub compare: Option<CompareView>,
    /// The comparison is what the window shows (else the active tab, the comparison's tab
    /// still in the tab bar).
    pub compare_shown: bool,
    /// The compare dialog (View → Compare…) is open.
    pub show_compare_dialog: bool,
    pub show_help: bool,
    /// Help → About Sightline.
    pub show_about: bool,
    pub show_details: bool,
    pub show_analysis: bool,
    pending_open: Vec<PathBuf>,
    /// `--compare`: compare the first two files once they are open.
    pending_compare: bool,
    /// `--align`: the compare view's alignment instead of the default.
    pub pending_alignment: Option<Alignment>,
    /// The compare dialog's last choice (tab indices).
    compare_choice: Option<(usize, usize)>,
    title_shown: Option<String>,
    /// What is remembered between runs (recent files, per-trace views); eframe saves it.
    pub settings: Settings,
    /// Runs of ranks to open (`--ranks`), one tab each, on the first frame.
    pub pending_runs: Vec<Vec<PathBuf>>,
    /// Runs of ranks read and write the digest cache (`--no-cache`: not).
    pub digest_cache: bool,
    /// Several files dropped at once: the choice between one run and a tab each is open.
    pub dropped: Vec<PathBuf>,
    /// File → Attach Nsight Compute report… is waiting for the file dialog (the tab's id).
    attaching_ncu: Option<u64>,
    /// File → Save report…'s reports being written.
    save_report: super::save_report::SaveReport,
}

impl SightlineApp {
    /// An app that opens `trace` (if any) on its first frame.
    pub fn new(trace: Option<PathBuf>) -> Self {
        Self::with_files(trace.into_iter().collect(), false)
    }

    /// An app that opens each of `files` in a tab of its own on its first frame, and compares
    /// the first two when `compare` is set.
    pub fn with_files(files: Vec<PathBuf>, compare: bool) -> Self {
        Self {
            tabs: vec![TraceTab::empty(0)],
            active: 0,
            next_id: 1,
            compare: None,
            compare_shown: false,
            show_compare_dialog: false,
            show_help: false,
            show_about: false,
            show_details: true,
            show_analysis: true,
            pending_open: files,
            pending_compare: compare,
            pending_alignment: None,
            compare_choice: None,
            title_shown: None,
            settings: Settings::default(),
            pending_runs: Vec::new(),
            digest_cache: true,
            dropped: Vec::new(),
            attaching_ncu: None,
            save_report: Default::default(),
        }
    }

    /// This app with the settings remembered from an earlier run.
    pub fn with_settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// The settings with the view of every open trace recorded, as eframe saves them.
    pub fn record_settings(&mut self) -> &Settings {
        self.settings.record_tabs(&self.tabs, self.active);
        &self.settings
    }

    /// The tab shown.
    pub fn tab(&self) -> &TraceTab {
        &self.tabs[self.active.min(self.tabs.len() - 1)]
    }

    pub fn tab_mut(&mut self) -> &mut TraceTab {
        let i = self.active.min(self.tabs.len() - 1);
        &mut self.tabs[i]
    }

    /// The tab with `id`, if still open.
    pub fn tab_by_id(&self, id: u64) -> Option<&TraceTab> {
        self.tabs.iter().find(|t| t.id == id)
    }

    /// `sightline TRACE --ncu REPORT`: the report goes to the first file's tab once it is open.
    pub fn attach_ncu_to_first_tab(&mut self, report: PathBuf) {
        match self.tabs.first_mut() {
            Some(tab) => tab.ncu_attached.pending = Some(report),
            None => self.pending_open.push(report),
        }
    }

    /// Attaches the Nsight Compute report at `path` to the shown tab when that tab holds a
    /// timeline; otherwise opens it as a tab of its own. True when attached.
    pub fn attach_or_open_ncu(&mut self, path: PathBuf, ctx: Option<&egui::Context>) -> bool {
        if self.shown_compare().is_none() && self.tab().holds_timeline() {
            self.tab_mut().attach_ncu(path, ctx);
            true
        } else {
            self.open(path, ctx);
            false
        }
    }

    /// Whether any tab is still loading.
    pub fn is_loading(&self) -> bool {
        self.tabs
            .iter()
            .any(|t| t.is_loading() || t.ncu_attached.is_loading())
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.tab().trace()
    }

    pub fn selection(&self) -> Option<EventRef> {
        self.tab().timeline.selection
    }

    /// The events correlated with the selection (kernel ↔ launching API call), highlighted and
    /// joined to it by a line.
    pub fn selection_partners(&self) -> Vec<EventRef> {
        self.tab().selection_partners()
    }

    /// Selects an event, zooms to it and scrolls it into view.
    pub fn reveal(&mut self, event: EventRef) {
        self.tab_mut().reveal(event);
    }

    /// Where `event` was drawn in the last frame.
    pub fn event_screen_rect(&self, event: EventRef) -> Option<egui::Rect> {
        self.tab().event_screen_rect(event)
    }

    /// The selected time range `[start_ns, end_ns)` (Shift+drag, Ctrl+drag on the axis,
    /// Alt+click on an NVTX range, "Select range" in the details), if any.
    pub fn selection_range(&self) -> Option<(i64, i64)> {
        self.tab().timeline.range_selection
    }

    /// Sets (in either order) or clears the selected range.
    pub fn set_selection_range(&mut self, range: Option<(i64, i64)>) {
        self.tab_mut().timeline.set_range_selection(range);
    }

    /// What the timeline draws for the analysis: excluded time, idle gaps, highlighted events.
    pub fn overlays(&self) -> &Overlays {
        &self.tab().timeline.overlays
    }

    pub fn set_overlays(&mut self, overlays: Overlays) {
        self.tab_mut().timeline.overlays = overlays;
    }

    /// Time shaded as excluded, `[start_ns, end_ns)` intervals (see [`Overlays::excluded_from`]).
    pub fn set_excluded(&mut self, intervals: Vec<(i64, i64)>) {
        self.tab_mut().timeline.overlays.excluded = intervals;
    }

    /// Idle gaps hatched on their GPU or stream rows (see [`Overlays::gaps_from`]).
    pub fn set_gaps(&mut self, gaps: Vec<GapMark>) {
        self.tab_mut().timeline.overlays.gaps = gaps;
    }

    /// Shows why a gap happened (see [`TraceTab::show_gap`]).
    pub fn show_gap(&mut self, gap: &IdleGap, cause: &GapCauseInfo) {
        self.tab_mut().show_gap(gap, cause);
    }

    /// Events outlined in the timeline.
    pub fn set_highlighted(&mut self, events: Vec<EventRef>) {
        self.tab_mut().timeline.overlays.highlighted = events;
    }

    /// The rulers placed, in placing order.
    pub fn rulers(&self) -> &[Ruler] {
        &self.tab().timeline.ruler.rulers
    }

    /// Whether clicks place ruler ends (R or the "Ruler" button).
    pub fn ruler_active(&self) -> bool {
        self.tab().timeline.ruler.active
    }

    pub fn set_ruler_active(&mut self, active: bool) {
        let ruler = &mut self.tab_mut().timeline.ruler;
        ruler.active = active;
        ruler.pending_ns = None;
    }

    /// The selected time range, or the whole trace.
    pub fn selected_range(&self) -> TimeRange {
        self.tab().selected_range()
    }

    /// Carries out what the analysis panel asked for.
    pub fn apply_panel_actions(&mut self, actions: Vec<PanelAction>) {
        self.tab_mut().apply_panel_actions(actions);
    }

    /// One frame.
    pub fn ui(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        // A splitter a person can grab: egui's 3 px each side of a panel's edge, half of it under
        // the timeline, left a grab zone of about 2 px (issue 47, item 6).
        ui.style_mut().interaction.resize_grab_radius_side = SPLITTER_GRAB_PX;
        for path in std::mem::take(&mut self.pending_open) {
            self.open(path, Some(&ctx));
        }
        for paths in std::mem::take(&mut self.pending_runs) {
            self.open_run(paths, Some(&ctx));
        }
        for tab in &mut self.tabs {
            if let Some(run) = &mut tab.run {
                run.poll(Some(&ctx));
            }
        }
        self.sync_export_folder(&ctx);
        let keys = shortcuts::take(&ctx);
        if keys.open {
            file_dialog::open_trace(&ctx, self.settings.last_folder.as_deref());
        }
        if keys.focus_search {
            self.tab_mut().search.focus_requested = true;
        }
        if self.pending_compare && self.tabs.len() >= 2 {
            self.pending_compare = false;
            self.start_compare(0, 1);
            if let Some(cv) = &mut self.compare {
                cv.alignment = self.pending_alignment.take();
            }
        }
        for tab in &mut self.tabs {
            let was_loading = tab.is_loading();
            if tab.poll_load() {
                self.settings.restore_tab(tab);
            } else if was_loading && tab.error.is_some() {
                self.settings.load_failed(tab);
            }
            tab.poll_ncu(Some(&ctx));
        }
        if ctx.input_mut(|i| i.consume_shortcut(&QUIT_SHORTCUT)) {
            // eframe saves the settings as the window closes.
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        self.settings.note_theme(&ctx);
        self.take_dropped_files(&ctx);
        self.update_title(&ctx);

        let palette = Palette::for_ui(ui);
        egui::Panel::top("sightline_top").show(ui, |ui| self.top_bar(ui, &palette));
        if self.tabs.len() > 1 || self.compare.is_some() {
            egui::Panel::top("sightline_tabs").show(ui, |ui| self.tab_bar(ui));
        }
        self.compare_dialog(&ctx);
        if let (Some(cv), true) = (&mut self.compare, self.compare_shown) {
            if !compare::show(ui, &mut self.tabs, cv, &palette) {
                self.compare = None;
                self.compare_shown = false;
            }
        } else {
            self.single_view(ui, &palette);
        }
        if self.tab().document.is_none()
            && self.shown_compare().is_none()
            && !ctx.egui_wants_keyboard_input()
            && ui.input(|i| i.key_pressed(egui::Key::Questionmark))
        {
            self.show_help = !self.show_help;
        }
        self.help_window(&ctx);
        self.tab_mut().ncu_attached.source_window(&ctx);
        let mut about = self.show_about;
        super::about::about_window(&ctx, &mut about, self.tab().trace());
        self.show_about = about;
        // File → Open…'s in-window browser (when no system dialog opens) and what it chose.
        file_dialog::show(&ctx);
        if let Some(path) = file_dialog::take(&ctx, &FilePurpose::OpenTrace) {
            if let Some(id) = self.attaching_ncu.take() {
                match self.tabs.iter_mut().find(|t| t.id == id) {
                    Some(tab) if tab.holds_timeline() => tab.attach_ncu(path, Some(&ctx)),
                    _ => self.open(path, Some(&ctx)),
                }
            } else {
                self.open(path, Some(&ctx));
            }
        } else if self.attaching_ncu.is_some()
            && !file_dialog::with(&ctx, |d| d.browsing().is_some())
        {
            self.attaching_ncu = None;
        }
        // File → Open run…: the traces chosen are the run's (a folder: every trace in it).
        let run = file_dialog::take_all(&ctx, &FilePurpose::OpenRun);
        if !run.is_empty() {
            self.open_run(run, Some(&ctx));
        }
        self.dropped_choice(&ctx);
        self.save_report.poll(&ctx, &mut self.tabs, self.active);
        self.drop_hint(&ctx, &palette);
        if self.is_loading() {
            // Keep polling even if the worker's repaint request raced with this frame.
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
    }

    /// The last export folder: the settings' one given to the file dialogs until they have their
    /// own, theirs remembered in the settings after each export.
    fn sync_export_folder(&mut self, ctx: &egui::Context) {
        let remembered = &mut self.settings.last_export_folder;
        file_dialog::with(ctx, |d| match (d.last_export_dir(), remembered.as_ref()) {
            (None, Some(folder)) => d.set_export_dir(folder),
            (Some(dir), _) if remembered.as_deref() != Some(dir) => {
                *remembered = Some(dir.to_path_buf());
            }
            _ => {}
        });
    }

    /// The active tab: details below, analysis on the right, timeline in the middle.
    fn single_view(&mut self, ui: &mut Ui, palette: &Palette) {
        let show_details = self.show_details;
        let show_analysis = self.show_analysis;
        let mut toggle_help = false;
        // Other open reports, offered as baselines by a report tab.
        let active_id = self.tab().id;
        let other_reports: Vec<OpenReport> = self
            .tabs
            .iter()
            .filter(|t| t.id != active_id)
            .filter_map(|t| {
                t.ncu_report().map(|r| OpenReport {
                    title: t.title(),
                    report: r.clone(),
                })
            })
            .collect();
        let tab = self.tab_mut();
        if let Some(run) = &mut tab.run {
            super::run::show_tab(ui, run, palette, show_analysis);
            return;
        }
        if let Some(view) = &mut tab.ncu {
            egui::CentralPanel::default().show(ui, |ui| {
                view.ui(ui, &other_reports);
            });
            return;
        }
        if tab.document.is_some() && show_analysis {
            let mut actions = Vec::new();
            // Statistics follow a range being dragged live; on very large traces (where one
            // recomputation takes tens of ms) they follow when the drag ends.
            let large = tab
                .document
                .as_ref()
                .is_some_and(|d| d.trace.event_count() > LIVE_STATISTICS_MAX_EVENTS);
            if !(large && tab.timeline.is_selecting_range()) {
                tab.panel_range = tab.selected_range();
            }
            let range = tab.panel_range;
            egui::Panel::right("sightline_analysis")
                .resizable(true)
                .default_size(ANALYSIS_PANEL_WIDTH_PX)
                .show(ui, |ui| {
                    if let Some(d) = &tab.document {
                        let panel = &mut tab.analysis;
                        egui::ScrollArea::both().show(ui, |ui| {
                            actions = panel.ui(ui, &d.trace, range);
                        });
                    }
                });
            tab.apply_panel_actions(actions);
        }
        // Under the timeline only: the analysis panel keeps the window's whole height.
        if tab.document.is_some() && show_details {
            details_dock::show(ui, tab);
        }
        let mut open_clicked = false;
        let mut event_action = None;
        egui::CentralPanel::default()
            .frame(egui::Frame::central_panel(ui.style()).inner_margin(0.0))
            .show(ui, |ui| match &tab.document {
                Some(d) => {
                    let out = timeline::show(
                        ui,
                        &d.trace,
                        &d.model,
                        &mut tab.timeline,
                        palette,
                        &tab.search.matches,
                    );
                    toggle_help = out.toggle_help;
                    event_action = out.event_action;
                }
                None => open_clicked = welcome(ui),
            });
        if let Some(EventAction::SearchName(name)) = event_action {
            let search = &mut tab.search;
            search.query = name;
            search.use_regex = false;
            search.focus_requested = true;
        }
        if toggle_help {
            self.show_help = !self.show_help;
        }
        if open_clicked {
            file_dialog::open_trace(ui.ctx(), self.settings.last_folder.as_deref());
        }
    }

    fn take_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if dropped.len() > 1 {
            // Several at once may be the ranks of one run: ask.
            self.dropped = dropped;
            return;
        }
        for path in dropped {
            // A report dropped on a timeline's tab is attached to it (see `attach_or_open_ncu`).
            if super::ncu_attach::is_ncu_report(&path) {
                self.attach_or_open_ncu(path, Some(ctx));
            } else {
                self.open(path, Some(ctx));
            }
        }
    }

    /// The window's title: what the shown tab holds (a trace, a comparison, a run, an Nsight
    /// Compute report), or just the program's name on the start tab.
    pub fn window_title(&self) -> String {
        let tab = self.tab();
        match (self.shown_compare(), tab.document.as_ref()) {
            (Some(cv), _) => {
                let name = |id| self.tab_by_id(id).map_or_else(String::new, TraceTab::title);
                format!("Sightline — {} vs {}", name(cv.base), name(cv.new))
            }
            (None, Some(d)) => format!("Sightline — {}", file_name(&d.trace.path)),
            (None, None) if tab.run.is_some() || tab.ncu.is_some() => {
                format!("Sightline — {}", tab.title())
            }
            (None, None) => "Sightline".to_string(),
        }
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let title = self.window_title();
        if self.title_shown.as_ref() != Some(&title) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title_shown = Some(title);
        }
    }
}

/// A tab's load error (dismissable) and status note.
pub fn status_lines(ui: &mut Ui, tab: &mut TraceTab) {
    let mut dismiss = false;
    if let Some(error) = &tab.error {
        ui.horizontal(|ui| {
            ui.colored_label(ui.visuals().error_fg_color, format!("Error: {error}"));
            dismiss = ui.small_button("Dismiss").clicked();
        });
    }
    if dismiss {
        tab.error = None;
    }
    if let Some(status) = &tab.status {
        ui.weak(status);
    }
    super::ncu_attach::status_line(ui, &mut tab.ncu_attached);
    if let Some(d) = &tab.document
        && !d.trace.warnings.is_empty()
    {
        ui.horizontal(|ui| {
            warnings::badge(ui, &d.trace.warnings, &mut tab.show_warnings);
            ui.weak("rows skipped or repaired while loading: click for the list");
        });
        warnings::window(ui.ctx(), &d.trace.warnings, &mut tab.show_warnings);
    }
    // Why the built-in browser is used is said in the browser itself, not here: a line here
    // moved the timeline down while the browser was open.
}

/// What the empty window says it opens: every format File → Open… lists.
pub const WELCOME_FORMATS: &str = "Open a trace or report: File > Open…, or drop a file here: an \
     Nsight Systems .nsys-rep / .sqlite, a PyTorch profiler .json / .json.gz (.pt.trace.json.gz), \
     or an Nsight Compute .ncu-rep / .ncu-rep.gz / .ncu-repz or ncu --csv page (.csv).";

/// The start screen; true when its Open… button was clicked.
fn welcome(ui: &mut Ui) -> bool {
    let mut clicked = false;
    ui.vertical_centered(|ui| {
        ui.add_space(ui.available_height() / 3.0);
        ui.heading("Sightline");
        ui.label(WELCOME_FORMATS);
        ui.weak("Make one with: nsys export --type=sqlite -o trace.sqlite report.nsys-rep");
        ui.weak("Open two runs (or drop both) and choose View > Compare… to compare them.");
        clicked = ui.button("Open…").clicked();
    });
    clicked
}

/// The analysis panel's width until a person drags it: wide enough that the kernel table's
/// Name column, beside its eight number columns, shows a kernel's whole function name
/// (`void gemm_tiled_kernel<…`) in the 1500 px window Sightline opens with.
const ANALYSIS_PANEL_WIDTH_PX: f32 = 600.0;

/// Above this many events, the panel's statistics wait for the end of a range drag.
const LIVE_STATISTICS_MAX_EVENTS: usize = 2_000_000;

/// Ctrl+Q (Cmd+Q on macOS): quit, saving the settings.
pub const QUIT_SHORTCUT: egui::KeyboardShortcut =
    egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::Q);

/// How far each side of a panel's edge a drag resizes the panel.
pub const SPLITTER_GRAB_PX: f32 = 6.0;

impl eframe::App for SightlineApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        SightlineApp::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.record_settings().save(storage);
    }
}
