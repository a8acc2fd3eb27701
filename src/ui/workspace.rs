//! The open traces. Everything that belongs to one trace — the file, its load, the loaded trace
//! and timeline model, the view, selection, search and analysis panel with its background jobs —
//! lives in one [`TraceTab`]; the window keeps a list of them (tabs), and the compare view is two
//! of them sharing a time axis. Dropping a tab frees its trace once its background jobs end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::loader::LoadJob;
use super::ncu::NcuView;
use super::panels::analysis::{AnalysisPanel, PanelAction};
use super::panels::search;
use super::timeline::{EventKind, EventRef, GapLink, Overlays, TimelineModel, TimelineState};
use crate::analysis::gap_causes::GapCauseInfo;
use crate::analysis::{EventTable, GpuOpKind, IdleGap, TimeRange};
use crate::trace::Trace;

/// A loaded trace and what the window derived from it.
pub struct Document {
    /// Shared with the analysis panel's worker threads.
    pub trace: Arc<Trace>,
    pub model: TimelineModel,
}

/// One open trace and everything the window keeps for it.
pub struct TraceTab {
    /// Unique in the window, stable while the tab is open (indices shift when a tab closes).
    pub id: u64,
    /// The file asked for; `None` for the empty start tab.
    pub path: Option<PathBuf>,
    pub document: Option<Document>,
    pub job: Option<LoadJob>,
    /// This tab's load error, shown in the tab until dismissed or the next successful open.
    pub error: Option<String>,
    /// A one-line note ("Loading cancelled").
    pub status: Option<String>,
    pub timeline: TimelineState,
    pub search: search::SearchState,
    /// The analysis side panel (range statistics, warm-up, gaps, overlap, export).
    pub analysis: AnalysisPanel,
    /// The range the panel's statistics were last computed for.
    pub panel_range: TimeRange,
    /// The list of what the loader skipped or repaired is open.
    pub show_warnings: bool,
    /// A run of ranks (several traces on one clock) instead of one trace.
    pub run: Option<Box<super::run::RunTab>>,
    /// The report view, when the document is an Nsight Compute report (no timeline).
    pub ncu: Option<Box<NcuView>>,
    /// An Nsight Compute report attached to this tab's timeline, with its join.
    pub ncu_attached: super::ncu_attach::NcuAttachment,
    /// The critical path outlined on the timeline, if one was asked for.
    pub critical_path: Option<Arc<crate::analysis::critical_path::CriticalPath>>,
}

impl TraceTab {
    /// An empty tab (the welcome screen).
    pub fn empty(id: u64) -> Self {
        Self {
            id,
            path: None,
            document: None,
            job: None,
            error: None,
            status: None,
            timeline: TimelineState::default(),
            search: search::SearchState::default(),
            analysis: AnalysisPanel::new(),
            panel_range: TimeRange::ALL,
            show_warnings: false,
            run: None,
            ncu: None,
            ncu_attached: Default::default(),
            critical_path: None,
        }
    }

    /// Whether nothing was opened in this tab (or the open failed and left nothing): a new open
    /// may reuse it.
    pub fn is_blank(&self) -> bool {
        self.document.is_none() && self.job.is_none() && self.run.is_none()
    }

    /// Starts loading `path` in the background; a load already running is cancelled. A trace
    /// on screen stays until the new one is ready.
    pub fn open(&mut self, path: PathBuf, ctx: Option<&egui::Context>) {
        self.status = None;
        self.job = Some(LoadJob::start(path.clone(), ctx.cloned()));
        self.path = Some(path);
    }

    pub fn is_loading(&self) -> bool {
        self.job.is_some() || self.run.as_ref().is_some_and(|r| r.is_loading())
    }

    pub fn trace(&self) -> Option<&Trace> {
        self.document.as_ref().map(|d| d.trace.as_ref())
    }

    /// The Nsight Compute report this tab shows, if it is one.
    pub fn ncu_report(&self) -> Option<&Arc<crate::trace::ncu::NcuReport>> {
        self.ncu.as_ref().map(|v| &v.report)
    }

    /// The file name, for the tab's title.
    pub fn title(&self) -> String {
        if let Some(run) = &self.run {
            return run.title();
        }
        match &self.path {
            Some(p) => file_name(p),
            None => "Start".to_string(),
        }
    }

    /// Takes in a finished load; true when a trace was just taken in.
    pub fn poll_load(&mut self) -> bool {
        let Some(job) = &self.job else {
            return false;
        };
        let Some(outcome) = job.poll() else {
            return false;
        };
        let cancelled = job.is_cancelled();
        self.job = None;
        match outcome {
            Ok(trace) => {
                let model = TimelineModel::new(&trace);
                self.timeline = TimelineState::new(&trace, &model);
                self.search.forget_results();
                self.ncu = trace
                    .ncu
                    .clone()
                    .map(|report| Box::new(NcuView::new(report, file_name(&trace.path))));
                self.document = Some(Document {
                    trace: Arc::new(trace),
                    model,
                });
                self.error = None;
                true
            }
            Err(_) if cancelled => {
                self.status = Some("Loading cancelled.".to_string());
                false
            }
            Err(message) => {
                self.error = Some(message);
                false
            }
        }
    }

    /// Whether the tab shows a timeline (a trace with events, not an Nsight Compute report
    /// opened on its own, nor a run of ranks) that a report can be attached to; also while
    /// such a trace loads.
    pub fn holds_timeline(&self) -> bool {
        if self.run.is_some() {
            return false;
        }
        match &self.document {
            Some(d) => d.trace.format != crate::trace::TraceFormat::NsightCompute,
            None => self
                .job
                .as_ref()
                .is_some_and(|j| !super::ncu_attach::is_ncu_report(&j.path)),
        }
    }

    /// Attaches the Nsight Compute report at `path` to this tab's timeline: read and joined in
    /// the background now, or once the tab's trace is loaded.
    pub fn attach_ncu(&mut self, path: PathBuf, ctx: Option<&egui::Context>) {
        match &self.document {
            Some(d) => self.ncu_attached.start(path, Arc::clone(&d.trace), ctx),
            None => self.ncu_attached.pending = Some(path),
        }
    }

    /// Starts an attachment that waited for the trace, and takes in a finished one.
    pub fn poll_ncu(&mut self, ctx: Option<&egui::Context>) {
        if let (Some(path), Some(d)) = (&self.ncu_attached.pending, &self.document) {
            let (path, trace) = (path.clone(), Arc::clone(&d.trace));
            self.ncu_attached.start(path, trace, ctx);
        }
        if self.ncu_attached.poll() {
            self.analysis.set_ncu(self.ncu_attached.attached.clone());
        }
    }

    /// Stops the running load.
    pub fn cancel_load(&mut self) {
        if self.job.take().is_some() {
            self.status = Some("Loading cancelled.".to_string());
        }
    }

    /// The selected time range, or the whole trace.
    pub fn selected_range(&self) -> TimeRange {
        self.timeline
            .range_selection
            .map_or(TimeRange::ALL, |(a, b)| TimeRange::new(a, b))
    }

    /// The events correlated with the selection (kernel ↔ launching API call).
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

    /// Shows why a gap happened: zooms to the gap and the call that launched the work ending it,
    /// selects that work (its launching call is then outlined as its partner) and draws the line
    /// from the GPU back to the call.
    pub fn show_gap(&mut self, gap: &IdleGap, cause: &GapCauseInfo) {
        let Some(d) = &self.document else {
            return;
        };
        // A gap cut by the selection's end with no work after it: the gap alone.
        let Some(next_op) = cause.next else {
            self.timeline.view.zoom_to_event(gap.start_ns, gap.end_ns);
            return;
        };
        let kind = match next_op.kind {
            GpuOpKind::Kernel => EventKind::Kernel,
            GpuOpKind::Memcpy => EventKind::Memcpy,
            GpuOpKind::Memset => EventKind::Memset,
            GpuOpKind::Graph => EventKind::Graph,
        };
        let next = EventRef::new(kind, next_op.index);
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

    /// Carries out what the analysis panel asked for.
    pub fn apply_panel_actions(&mut self, actions: Vec<PanelAction>) {
        for action in actions {
            match action {
                PanelAction::ZoomTo { start_ns, end_ns } => {
                    self.timeline.view.zoom_to_event(start_ns, end_ns);
                }
                PanelAction::SetSelection { start_ns, end_ns } => {
                    self.timeline.set_range_selection(Some((start_ns, end_ns)));
                }
                PanelAction::Highlight(events) => {
                    self.timeline.overlays.highlighted = events
                        .into_iter()
                        .map(|(table, i)| EventRef::new(event_kind(table), i))
                        .collect();
                }
                PanelAction::ExclusionChanged => {
                    self.timeline.overlays.excluded = self
                        .analysis
                        .exclusion()
                        .map_or_else(Vec::new, Overlays::excluded_from);
                }
                PanelAction::GapsChanged => {
                    self.timeline.overlays.gaps =
                        Overlays::gaps_from(self.analysis.gaps(), self.analysis.gap_causes());
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
                PanelAction::ShowCriticalPath(path) => {
                    if let Some(p) = &path {
                        self.timeline.view.zoom_to_event(p.start_ns, p.end_ns);
                    }
                    self.timeline.critical_path = path
                        .as_deref()
                        .map(crate::timeline::overlays::path::PathOverlay::of);
                    self.critical_path = path;
                }
                PanelAction::SqlTracksChanged => {
                    if let Some(d) = self.document.as_mut() {
                        d.model
                            .set_sql_tracks(self.analysis.sql().pinned().to_vec());
                        self.timeline.sql_selection = None;
                    }
                }
            }
        }
    }
}

/// The timeline's kind of event for an analysis table.
pub fn event_kind(table: EventTable) -> EventKind {
    match table {
        EventTable::Kernels => EventKind::Kernel,
        EventTable::Memcpys => EventKind::Memcpy,
        EventTable::Memsets => EventKind::Memset,
        EventTable::ApiCalls => EventKind::ApiCall,
        EventTable::Nvtx => EventKind::Nvtx,
        EventTable::Osrt => EventKind::Osrt,
    }
}

/// A path's file name (the whole path when it has none).
pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}
