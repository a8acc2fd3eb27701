//! The application state and its frame loop. [`SightlineApp`] is a plain struct: eframe calls
//! [`SightlineApp::ui`] every frame, and the `egui_kittest` tests drive the very same method.

use std::path::PathBuf;

use egui::{Align2, Color32, FontId, Id, Ui};

use super::loader::LoadJob;
use super::panels::analysis::{AnalysisPanel, PanelAction};
use super::panels::{details, search};
use super::theme::Palette;
use super::timeline::{
    self, EventKind, EventRef, GapLink, GapMark, Overlays, Ruler, TimelineModel, TimelineState,
};
use crate::analysis::gap_causes::GapCauseInfo;
use crate::analysis::{EventTable, GpuOpKind, IdleGap, TimeRange};
use crate::trace::Trace;
use std::sync::Arc;

/// A loaded trace and what the window derived from it.
pub struct Document {
    /// Shared with the analysis panel's worker threads.
    pub trace: Arc<Trace>,
    pub model: TimelineModel,
}

/// The whole window's state.
pub struct SightlineApp {
    pub document: Option<Document>,
    pub job: Option<LoadJob>,
    /// The last load error, shown in the window until dismissed or the next successful open.
    pub error: Option<String>,
    /// A one-line note ("Loading cancelled").
    pub status: Option<String>,
    pub timeline: TimelineState,
    pub search: search::SearchState,
    pub show_help: bool,
    pub show_details: bool,
    /// The analysis side panel (range statistics, warm-up, gaps, overlap, export).
    pub analysis: AnalysisPanel,
    pub show_analysis: bool,
    /// The range the panel's statistics were last computed for.
    panel_range: TimeRange,
    pending_open: Option<PathBuf>,
    title_shown: Option<PathBuf>,
}

impl SightlineApp {
    /// An app that opens `trace` (if any) on its first frame.
    pub fn new(trace: Option<PathBuf>) -> Self {
        Self {
            document: None,
            job: None,
            error: None,
            status: None,
            timeline: TimelineState::default(),
            search: search::SearchState::default(),
            show_help: false,
            show_details: true,
            analysis: AnalysisPanel::new(),
            show_analysis: true,
            panel_range: TimeRange::ALL,
            pending_open: trace,
            title_shown: None,
        }
    }

    /// Starts loading `path` in the background; a load already running is cancelled. The trace
    /// on screen stays until the new one is ready.
    pub fn open(&mut self, path: PathBuf, ctx: Option<&egui::Context>) {
        self.status = None;
        self.job = Some(LoadJob::start(path, ctx.cloned()));
    }

    pub fn is_loading(&self) -> bool {
        self.job.is_some()
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.document.as_ref().map(|d| d.trace.as_ref())
    }

    pub fn selection(&self) -> Option<EventRef> {
        self.timeline.selection
    }

    /// The events correlated with the selection (kernel ↔ launching API call), highlighted and
    /// joined to it by a line.
    pub fn selection_partners(&self) -> Vec<EventRef> {
        match (&self.document, self.timeline.selection) {
            (Some(d), Some(e)) => d.model.partners(&d.trace, e),
            _ => Vec::new(),
        }
    }

    /// Selects an event, zooms to it and scrolls it into view.
    pub fn reveal(&mut self, event: EventRef) {
        if let Some(d) = &self.document {
            self.timeline.reveal(&d.trace, &d.model, event);
        }
    }

    /// Where `event` was drawn in the last frame.
    pub fn event_screen_rect(&self, event: EventRef) -> Option<egui::Rect> {
        let d = self.document.as_ref()?;
        self.timeline.event_screen_rect(&d.trace, &d.model, event)
    }

    /// The selected time range `[start_ns, end_ns)` (Shift+drag, Ctrl+drag on the axis,
    /// Alt+click on an NVTX range, "Select range" in the details), if any.
    pub fn selection_range(&self) -> Option<(i64, i64)> {
        self.timeline.range_selection
    }

    /// Sets (in either order) or clears the selected range.
    pub fn set_selection_range(&mut self, range: Option<(i64, i64)>) {
        self.timeline.set_range_selection(range);
    }

    /// What the timeline draws for the analysis: excluded time, idle gaps, highlighted events.
    pub fn overlays(&self) -> &Overlays {
        &self.timeline.overlays
    }

    pub fn set_overlays(&mut self, overlays: Overlays) {
        self.timeline.overlays = overlays;
    }

    /// Time shaded as excluded, `[start_ns, end_ns)` intervals (see [`Overlays::excluded_from`]).
    pub fn set_excluded(&mut self, intervals: Vec<(i64, i64)>) {
        self.timeline.overlays.excluded = intervals;
    }

    /// Idle gaps hatched on their GPU or stream rows (see [`Overlays::gaps_from`]).
    pub fn set_gaps(&mut self, gaps: Vec<GapMark>) {
        self.timeline.overlays.gaps = gaps;
    }

    /// Shows why a gap happened: zooms to the gap and the call that launched the work ending it,
    /// selects that work (its launching call is then outlined as its partner) and draws the line
    /// from the GPU back to the call.
    pub fn show_gap(&mut self, gap: &IdleGap, cause: &GapCauseInfo) {
        let Some(d) = &self.document else {
            return;
        };
        let kind = match cause.next.kind {
            GpuOpKind::Kernel => EventKind::Kernel,
            GpuOpKind::Memcpy => EventKind::Memcpy,
            GpuOpKind::Memset => EventKind::Memset,
        };
        let next = EventRef::new(kind, cause.next.index);
        let call = cause
            .launch_call
            .map(|c| EventRef::new(EventKind::ApiCall, c));
        let from = call.map_or(gap.start_ns, |c| c.start_ns(&d.trace).min(gap.start_ns));
        let to = next.end_ns(&d.trace).max(gap.end_ns);
        if let Some(c) = call
            && let Some(row) = d.model.row_of_event(&d.trace, c)
        {
            for g in &d.model.rows[row].hidden_by {
                self.timeline.view.collapsed.remove(g);
            }
        }
        self.timeline.selection = Some(next);
        self.timeline.view.zoom_to_event(from, to);
        self.timeline.overlays.gap_link = Some(GapLink {
            device: gap.device,
            end_ns: gap.end_ns,
            cause: cause.cause,
            call,
        });
    }

    /// Events outlined in the timeline.
    pub fn set_highlighted(&mut self, events: Vec<EventRef>) {
        self.timeline.overlays.highlighted = events;
    }

    /// The rulers placed, in placing order.
    pub fn rulers(&self) -> &[Ruler] {
        &self.timeline.ruler.rulers
    }

    /// Whether clicks place ruler ends (R or the "Ruler" button).
    pub fn ruler_active(&self) -> bool {
        self.timeline.ruler.active
    }

    pub fn set_ruler_active(&mut self, active: bool) {
        self.timeline.ruler.active = active;
        self.timeline.ruler.pending_ns = None;
    }

    /// What Esc does: clears the rulers and the selected range.
    pub fn clear_marks(&mut self) {
        self.timeline.clear_marks();
    }

    /// One frame.
    pub fn ui(&mut self, ui: &mut Ui) {
        let ctx = ui.ctx().clone();
        if let Some(path) = self.pending_open.take() {
            self.open(path, Some(&ctx));
        }
        self.poll_load();
        self.take_dropped_files(&ctx);
        self.update_title(&ctx);

        let palette = Palette::for_dark_mode(ui.visuals().dark_mode);
        egui::Panel::top("sightline_top").show(ui, |ui| self.top_bar(ui, &palette));
        if self.document.is_some() && self.show_details {
            egui::Panel::bottom("sightline_details")
                .resizable(true)
                .default_size(200.0)
                .show(ui, |ui| {
                    if let Some(d) = &self.document {
                        if let Some(e) = self
                            .timeline
                            .selection
                            .filter(|e| e.kind == EventKind::Nvtx)
                            && ui
                                .button("Select range")
                                .on_hover_text("Select this NVTX range's time (Alt+click does too)")
                                .clicked()
                        {
                            self.timeline.set_range_selection(Some((
                                e.start_ns(&d.trace),
                                e.end_ns(&d.trace),
                            )));
                        }
                        // A call stack makes the details taller than the panel: scroll. With
                        // nothing selected the one-line hint keeps the panel short.
                        let selection = self.timeline.selection;
                        let shown = if selection.is_some() {
                            egui::ScrollArea::vertical()
                                .auto_shrink([false, false])
                                .show(ui, |ui| details::show(ui, &d.trace, &d.model, selection))
                                .inner
                        } else {
                            details::show(ui, &d.trace, &d.model, selection)
                        };
                        if let Some(e) = shown {
                            self.timeline.reveal(&d.trace, &d.model, e);
                        }
                    }
                });
        }
        if self.document.is_some() && self.show_analysis {
            let mut actions = Vec::new();
            // Statistics follow a range being dragged live; on very large traces (where one
            // recomputation takes tens of ms) they follow when the drag ends.
            let large = self
                .document
                .as_ref()
                .is_some_and(|d| d.trace.event_count() > LIVE_STATISTICS_MAX_EVENTS);
            if !(large && self.timeline.is_selecting_range()) {
                self.panel_range = self.selected_range();
            }
            let range = self.panel_range;
            egui::Panel::right("sightline_analysis")
                .resizable(true)
                .default_size(540.0)
                .show(ui, |ui| {
                    if let Some(d) = &self.document {
                        let panel = &mut self.analysis;
                        egui::ScrollArea::both().show(ui, |ui| {
                            actions = panel.ui(ui, &d.trace, range);
                        });
                    }
                });
            self.apply_panel_actions(actions);
        }
        egui::CentralPanel::default()
            .frame(egui::Frame::central_panel(ui.style()).inner_margin(0.0))
            .show(ui, |ui| match &self.document {
                Some(d) => {
                    let out = timeline::show(
                        ui,
                        &d.trace,
                        &d.model,
                        &mut self.timeline,
                        &palette,
                        &self.search.matches,
                    );
                    if out.toggle_help {
                        self.show_help = !self.show_help;
                    }
                }
                None => self.welcome(ui),
            });
        if self.document.is_none()
            && !ctx.egui_wants_keyboard_input()
            && ui.input(|i| i.key_pressed(egui::Key::Questionmark))
        {
            self.show_help = !self.show_help;
        }
        self.help_window(&ctx);
        self.drop_hint(&ctx, &palette);
        if self.job.is_some() {
            // Keep polling even if the worker's repaint request raced with this frame.
            ctx.request_repaint_after(std::time::Duration::from_millis(50));
        }
    }

    /// The selected time range, or the whole trace.
    pub fn selected_range(&self) -> TimeRange {
        self.timeline
            .range_selection
            .map_or(TimeRange::ALL, |(a, b)| TimeRange::new(a, b))
    }

    /// Carries out what the analysis panel asked for.
    pub fn apply_panel_actions(&mut self, actions: Vec<PanelAction>) {
        for action in actions {
            match action {
                PanelAction::ZoomTo { start_ns, end_ns } => {
                    self.timeline.view.zoom_to_event(start_ns, end_ns);
                }
                PanelAction::SetSelection { start_ns, end_ns } => {
                    self.set_selection_range(Some((start_ns, end_ns)));
                }
                PanelAction::Highlight(events) => self.set_highlighted(
                    events
                        .into_iter()
                        .map(|(table, i)| EventRef::new(event_kind(table), i))
                        .collect(),
                ),
                PanelAction::ExclusionChanged => self.set_excluded(
                    self.analysis
                        .exclusion()
                        .map_or_else(Vec::new, Overlays::excluded_from),
                ),
                PanelAction::GapsChanged => {
                    self.set_gaps(Overlays::gaps_from(
                        self.analysis.gaps(),
                        self.analysis.gap_causes(),
                    ));
                }
                PanelAction::ShowGap { gap, cause } => self.show_gap(&gap, &cause),
                PanelAction::HighlightSamples(samples) => {
                    self.timeline.overlays.highlighted_samples = samples;
                }
                PanelAction::CommChanged => {
                    if let (Some(d), Some(comm)) =
                        (self.document.as_mut(), self.analysis.comm_timeline())
                    {
                        d.model.set_comm(&d.trace, comm);
                    }
                }
            }
        }
    }

    fn poll_load(&mut self) {
        let Some(job) = &self.job else {
            return;
        };
        let Some(outcome) = job.poll() else {
            return;
        };
        let cancelled = job.is_cancelled();
        self.job = None;
        match outcome {
            Ok(trace) => {
                let model = TimelineModel::new(&trace);
                self.timeline = TimelineState::new(&trace, &model);
                self.search.forget_results();
                self.document = Some(Document {
                    trace: Arc::new(trace),
                    model,
                });
                self.error = None;
            }
            Err(_) if cancelled => self.status = Some("Loading cancelled.".to_string()),
            Err(message) => self.error = Some(message),
        }
    }

    fn take_dropped_files(&mut self, ctx: &egui::Context) {
        let dropped = ctx.input(|i| i.raw.dropped_files.first().map(|f| f.path().to_path_buf()));
        if let Some(path) = dropped {
            self.open(path, Some(ctx));
        }
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let path = self.document.as_ref().map(|d| d.trace.path.clone());
        if path != self.title_shown {
            let title = match &path {
                Some(p) => format!(
                    "Sightline — {}",
                    p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned()
                    )
                ),
                None => "Sightline".to_string(),
            };
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title));
            self.title_shown = path;
        }
    }

    fn top_bar(&mut self, ui: &mut Ui, palette: &Palette) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…").clicked() {
                    ui.close();
                    if let Some(path) = pick_trace_file() {
                        self.open(path, Some(ui.ctx()));
                    }
                }
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Show all (Home)").clicked() {
                    self.timeline.view.show_all();
                    ui.close();
                }
                ui.checkbox(&mut self.show_details, "Details panel");
                ui.checkbox(&mut self.show_analysis, "Analysis panel");
                if ui
                    .checkbox(&mut self.timeline.ruler.active, "Ruler (R)")
                    .changed()
                {
                    self.timeline.ruler.pending_ns = None;
                }
                let dark = ui.visuals().dark_mode;
                if ui
                    .button(if dark { "Light theme" } else { "Dark theme" })
                    .clicked()
                {
                    ui.ctx().set_theme(if dark {
                        egui::Theme::Light
                    } else {
                        egui::Theme::Dark
                    });
                    ui.close();
                }
                if ui.button("Keys… (?)").clicked() {
                    self.show_help = true;
                    ui.close();
                }
            });
            if let Some(d) = &self.document {
                ui.separator();
                if let Some(e) = search::show(ui, &d.trace, &mut self.search) {
                    self.timeline.reveal(&d.trace, &d.model, e);
                }
            }
            if self.document.is_some() {
                ui.toggle_value(&mut self.timeline.launch_arrows, "Launch arrows")
                    .on_hover_text(
                        "An arrow from each CUDA call to the kernel it launched, for the kernels \
                         in view (thinned when zoomed out)",
                    );
            }
            if self.document.is_some()
                && ui
                    .toggle_value(&mut self.timeline.ruler.active, "Ruler")
                    .on_hover_text("R: click two points or events to measure; Esc clears")
                    .changed()
            {
                self.timeline.ruler.pending_ns = None;
            }
            if ui.button("?").on_hover_text("Keyboard and mouse").clicked() {
                self.show_help = !self.show_help;
            }
            // Last: on a narrow window the legend is what runs off the edge, not the controls.
            if self.document.is_some() {
                ui.separator();
                legend(ui, palette);
            }
        });
        let mut cancel = false;
        if let Some(job) = &self.job {
            let (phase, fraction) = job.progress();
            ui.horizontal(|ui| {
                ui.label(format!("Loading {}", job.path.display()));
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .desired_width(260.0)
                        .show_percentage()
                        .text(format!("{phase} · {:.0}%", fraction * 100.0)),
                );
                cancel = ui.button("Cancel").clicked();
            });
        }
        if cancel {
            self.job = None;
            self.status = Some("Loading cancelled.".to_string());
        }
        let mut dismiss = false;
        if let Some(error) = &self.error {
            ui.horizontal(|ui| {
                ui.colored_label(ui.visuals().error_fg_color, format!("Error: {error}"));
                dismiss = ui.small_button("Dismiss").clicked();
            });
        }
        if dismiss {
            self.error = None;
        }
        if let Some(status) = &self.status {
            ui.weak(status);
        }
    }

    fn welcome(&mut self, ui: &mut Ui) {
        ui.vertical_centered(|ui| {
            ui.add_space(ui.available_height() / 3.0);
            ui.heading("Sightline");
            ui.label("Open an Nsight Systems trace: File > Open…, or drop a .sqlite / .nsys-rep file here.");
            ui.weak("Make one with: nsys export --type=sqlite -o trace.sqlite report.nsys-rep");
            if ui.button("Open…").clicked()
                && let Some(path) = pick_trace_file()
            {
                self.open(path, Some(ui.ctx()));
            }
        });
    }

    fn help_window(&mut self, ctx: &egui::Context) {
        let mut open = self.show_help;
        egui::Window::new("Keys")
            .id(Id::unique("sightline_help"))
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .anchor(Align2::RIGHT_TOP, [-12.0, 60.0])
            .show(ctx, |ui| {
                egui::Grid::new("sightline_keys")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for (key, what) in HELP_KEYS {
                            ui.strong(*key);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
            });
        self.show_help = open;
    }

    /// While a file is dragged over the window, darken it and say what dropping will do.
    fn drop_hint(&self, ctx: &egui::Context, palette: &Palette) {
        let hovering = ctx.input(|i| {
            i.raw
                .hovered_files
                .iter()
                .map(|f| {
                    f.path
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                })
                .next()
        });
        let Some(name) = hovering else {
            return;
        };
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            Id::unique("sightline_drop"),
        ));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, Color32::from_black_alpha(170));
        painter.rect_stroke(
            rect.shrink(12.0),
            8.0,
            egui::Stroke::new(3.0, palette.memcpy_htod),
            egui::StrokeKind::Inside,
        );
        painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            format!("Drop to open\n{name}"),
            FontId::proportional(22.0),
            Color32::WHITE,
        );
    }
}

/// Above this many events, the panel's statistics wait for the end of a range drag.
const LIVE_STATISTICS_MAX_EVENTS: usize = 2_000_000;

/// Keys and mouse gestures, shown by "?".
pub const HELP_KEYS: &[(&str, &str)] = &[
    ("Wheel", "zoom at the pointer"),
    ("Shift+Wheel", "scroll rows"),
    ("Drag", "pan (time and rows)"),
    ("W / S", "zoom in / out"),
    ("A / D", "pan left / right"),
    ("Home or 0", "show the whole trace"),
    ("Drag on time axis", "zoom to that span"),
    ("Click", "select an event (details below)"),
    ("Double-click", "zoom to the event"),
    ("Click a row title", "collapse / expand the group"),
    ("Shift+Drag", "select a time range (statistics follow it)"),
    ("Shift/Ctrl+Drag on time axis", "select a time range"),
    ("Alt+Click an NVTX range", "select its time range"),
    (
        "R, then two clicks",
        "ruler between two points (snaps to event edges)",
    ),
    ("Esc", "clear rulers and the range selection"),
    ("Enter / Shift+Enter", "next / previous search match"),
    ("?", "this help"),
];

fn event_kind(table: EventTable) -> EventKind {
    match table {
        EventTable::Kernels => EventKind::Kernel,
        EventTable::Memcpys => EventKind::Memcpy,
        EventTable::Memsets => EventKind::Memset,
        EventTable::ApiCalls => EventKind::ApiCall,
        EventTable::Nvtx => EventKind::Nvtx,
        EventTable::Osrt => EventKind::Osrt,
    }
}

fn pick_trace_file() -> Option<PathBuf> {
    rfd::FileDialog::new()
        .set_title("Open an Nsight Systems trace")
        .add_filter("Nsight Systems traces", &["sqlite", "nsys-rep", "qdrep"])
        .add_filter("SQLite export", &["sqlite"])
        .add_filter("Nsight Systems report", &["nsys-rep", "qdrep"])
        .add_filter("All files", &["*"])
        .pick_file()
}

fn legend(ui: &mut Ui, palette: &Palette) {
    for (name, color) in palette.legend() {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        ui.painter().rect_filled(rect, 2.0, color);
        ui.label(name);
    }
}

impl eframe::App for SightlineApp {
    fn ui(&mut self, ui: &mut Ui, _frame: &mut eframe::Frame) {
        SightlineApp::ui(self, ui);
    }
}
