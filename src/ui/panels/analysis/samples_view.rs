//! The CPU samples tab, and the CPU side of a chosen GPU gap in the Gaps tab.
//!
//! The tab shows the samples of the selected range (or the whole trace) on the chosen threads
//! (all by default) as a bottom-up table, a top-down tree or a flame graph, all three drawn from
//! one [`Profile`] of [`crate::analysis::cpu_samples`] computed on a worker thread whenever the
//! range or the threads change (the last one stays, dimmed, until the new one lands). Clicking a
//! function (a table row, a tree node, a flame rectangle) chooses it; the samples it stands for
//! are found on a worker too and handed to the app with [`PanelAction::HighlightSamples`] to
//! outline on the timeline. The choice survives a new selection and is recomputed for it; a
//! second click clears it.
//!
//! In the Gaps tab, a clicked gap lists the functions the thread that launched the next work
//! spent its samples in during the gap ([`cpu_samples::top_functions`]): what the host was doing
//! instead of launching.

use std::collections::BTreeSet;
use std::sync::Arc;

use egui::collapsing_header::CollapsingState;
use egui::{Button, Id, RichText, Ui};

use super::flame_graph::{self, FlameClick};
use super::{AnalysisPanel, AnalysisTab, PanelAction, Worker};
use crate::analysis::cpu_samples::{self, Profile};
use crate::analysis::gap_causes::GapCauseInfo;
use crate::analysis::{IdleGap, TimeRange};
use crate::trace::{Frame, Trace};
use crate::ui::timeline::format_duration;

mod gap;
mod tables;

pub use gap::gap_function_line;
use tables::tree_ui;

/// The three views of the tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SamplesView {
    #[default]
    BottomUp,
    TopDown,
    FlameGraph,
}

impl SamplesView {
    pub const ALL: [SamplesView; 3] = [
        SamplesView::BottomUp,
        SamplesView::TopDown,
        SamplesView::FlameGraph,
    ];

    pub fn label(self) -> &'static str {
        match self {
            SamplesView::BottomUp => "Bottom-up",
            SamplesView::TopDown => "Top-down",
            SamplesView::FlameGraph => "Flame graph",
        }
    }
}

/// What a click chose, named so that it survives a recomputation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenFunction {
    /// A bottom-up row: the samples with this frame anywhere in their stack.
    Function(Frame),
    /// A node of the top-down tree (or the flame graph), by its frames from the outermost down:
    /// the samples whose stack passes through it.
    Node(Vec<Frame>),
}

/// What the tab's profile depends on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplesKey {
    trace_generation: u64,
    selection: TimeRange,
    /// Indices into `trace.threads`; `None` for all.
    threads: Option<Vec<usize>>,
}

/// The samples of the selection and their profile.
#[derive(Debug, Default)]
pub struct SamplesResult {
    /// Indices into `trace.cpu_samples`, by thread then time.
    pub samples: Vec<u32>,
    pub profile: Profile,
}

/// A column of the bottom-up table to sort by (the % columns sort as their counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Function,
    Module,
    SelfSamples,
    TotalSamples,
}

type BottomUpSort = Option<(Column, bool)>;

/// The gap clicked in the Gaps tab.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ChosenGap {
    /// 0-based place in the list, longest first.
    rank: usize,
    gap: IdleGap,
    cause: GapCauseInfo,
    /// The thread of the call that launched the work ending the gap (index into
    /// `trace.threads`).
    thread: Option<usize>,
}

/// (trace generation, thread, gap start, gap end).
type GapKey = (u64, usize, i64, i64);

/// Where the launching thread's samples inside a gap went.
#[derive(Debug, Clone, Default)]
pub struct GapFunctions {
    /// Index into `trace.threads`.
    pub thread: usize,
    /// The thread's samples in the gap (with or without a stack).
    pub samples: u64,
    /// The functions with the most self samples, most first.
    pub top: Vec<(Frame, u64)>,
}

/// Functions listed for a gap.
pub const GAP_TOP_FUNCTIONS: usize = 5;
/// Children listed under a node of the top-down tree; the rest are summed up in one line.
const TREE_CHILDREN: usize = 200;
const NUMBER_WIDTH_PX: f32 = 58.0;

/// The tab's choices and jobs.
#[derive(Default)]
pub struct SamplesState {
    pub view: SamplesView,
    /// Threads left out by the thread filter.
    off_threads: BTreeSet<usize>,
    chosen: Option<ChosenFunction>,
    sort: BottomUpSort,
    /// The bottom-up rows in the shown order, for the result and sort they were computed for.
    order: Option<(SamplesKey, BottomUpSort, Vec<u32>)>,
    /// The flame graph's zoomed node, by its frames from the outermost down.
    zoom: Vec<Frame>,
    /// Where the flame graph last drew each node (screen rectangle, node of the profile's tree).
    flame_boxes: Vec<(egui::Rect, u32)>,
    profile: Worker<SamplesKey, Arc<SamplesResult>>,
    outlined: Worker<(SamplesKey, ChosenFunction), Arc<Vec<u32>>>,
    /// The outline the app was last given, when it is not empty.
    announced: Option<(SamplesKey, ChosenFunction)>,
    gap: Option<ChosenGap>,
    gap_functions: Worker<GapKey, Arc<GapFunctions>>,
}

impl SamplesState {
    pub(super) fn started(&self) -> usize {
        self.profile.started() + self.outlined.started() + self.gap_functions.started()
    }

    pub(super) fn busy(&self) -> bool {
        self.profile.busy() || self.outlined.busy() || self.gap_functions.busy()
    }

    pub(super) fn wait(&mut self) {
        self.profile.wait();
        self.outlined.wait();
        self.gap_functions.wait();
    }

    pub(super) fn poll(&mut self) {
        self.profile.poll();
        self.outlined.poll();
        self.gap_functions.poll();
    }

    /// A new trace: threads, frames and gaps of the old one mean nothing. (The app clears the
    /// timeline's outline itself when it loads a trace.)
    pub(super) fn forget_trace(&mut self) {
        self.off_threads.clear();
        self.chosen = None;
        self.zoom.clear();
        self.announced = None;
        self.gap = None;
    }

    /// The threads the profile is for: `None` for all.
    fn threads(&self, trace: &Trace) -> Option<Vec<usize>> {
        (!self.off_threads.is_empty()).then(|| {
            (0..trace.threads.len())
                .filter(|t| !self.off_threads.contains(t))
                .collect()
        })
    }

    /// Records the gap clicked in the Gaps tab and finds its launching thread.
    pub(super) fn choose_gap(
        &mut self,
        trace: &Trace,
        rank: usize,
        gap: IdleGap,
        cause: GapCauseInfo,
    ) {
        let thread = cause
            .launch_call
            .and_then(|c| trace.api_calls.global_tid.get(c))
            .and_then(|&tid| trace.threads.iter().position(|t| t.global_tid == tid));
        self.gap = Some(ChosenGap {
            rank,
            gap,
            cause,
            thread,
        });
    }

    /// Is this gap (by its place in the list and its bounds) the chosen one?
    pub(super) fn is_chosen_gap(&self, rank: usize, gap: &IdleGap) -> bool {
        self.gap.is_some_and(|g| g.rank == rank && g.gap == *gap)
    }
}

impl AnalysisPanel {
    fn samples_key(&self, trace: &Trace) -> Option<SamplesKey> {
        Some(SamplesKey {
            trace_generation: self.trace_generation,
            selection: self.inputs?.selection,
            threads: self.samples.threads(trace),
        })
    }

    /// The samples of the selection on the chosen threads and their profile, once computed
    /// (after the CPU samples tab has been shown or a function chosen).
    pub fn cpu_samples(&self, trace: &Trace) -> Option<&SamplesResult> {
        let key = self.samples_key(trace)?;
        self.samples.profile.status(&key).ready().map(Arc::as_ref)
    }

    /// The function or call-tree node chosen in the CPU samples tab.
    pub fn chosen_function(&self) -> Option<&ChosenFunction> {
        self.samples.chosen.as_ref()
    }

    /// Chooses (or, with `None`, clears) what the CPU samples tab outlines, as a click would.
    pub fn choose_function(&mut self, chosen: Option<ChosenFunction>) {
        self.samples.chosen = chosen;
    }

    /// Shows `view` in the CPU samples tab, as clicking its name would.
    pub fn set_samples_view(&mut self, view: SamplesView) {
        self.samples.view = view;
    }

    /// Profiles only the samples of these threads (indices into `trace.threads`; `None`: all).
    pub fn set_sample_threads(&mut self, trace: &Trace, threads: Option<&[usize]>) {
        self.samples.off_threads = match threads {
            None => BTreeSet::new(),
            Some(on) => (0..trace.threads.len())
                .filter(|t| !on.contains(t))
                .collect(),
        };
    }

    /// Where the flame graph was last drawn: each node's screen rectangle and its node in the
    /// tree of [`Self::cpu_samples`]'s profile (for tests, which click and hover them).
    pub fn flame_boxes(&self) -> &[(egui::Rect, u32)] {
        &self.samples.flame_boxes
    }

    /// The launching thread's top functions in the gap chosen in the Gaps tab, once computed.
    pub fn gap_functions(&self) -> Option<&GapFunctions> {
        let key = self.gap_functions_key()?;
        self.samples
            .gap_functions
            .status(&key)
            .ready()
            .map(Arc::as_ref)
    }

    fn gap_functions_key(&self) -> Option<GapKey> {
        let g = self.samples.gap?;
        Some((
            self.trace_generation,
            g.thread?,
            g.gap.start_ns,
            g.gap.end_ns,
        ))
    }

    /// Keeps the profile computed while the tab is shown or a function is chosen, the chosen
    /// function's samples computed for it, and tells the app when the outline changes. Costs
    /// the UI thread key comparisons.
    pub(super) fn sync_samples(&mut self, trace: &Arc<Trace>, actions: &mut Vec<PanelAction>) {
        let Some(key) = self.samples_key(trace) else {
            return;
        };
        let Some(chosen) = self.samples.chosen.clone() else {
            if self.samples.announced.take().is_some() {
                actions.push(PanelAction::HighlightSamples(Vec::new()));
            }
            if self.tab == AnalysisTab::CpuSamples {
                self.request_profile(trace, &key);
            }
            return;
        };
        let Some(result) = self.request_profile(trace, &key) else {
            return;
        };
        let job_key = (key, chosen);
        let (t, c) = (trace.clone(), job_key.1.clone());
        let repaint = self.repaint_fn();
        let status = self.samples.outlined.request(
            &job_key,
            move || {
                let mut samples = match &c {
                    ChosenFunction::Function(f) => {
                        cpu_samples::samples_with_frame(&t, &result.samples, *f)
                    }
                    ChosenFunction::Node(path) => {
                        cpu_samples::samples_through(&t, &result.samples, path)
                    }
                };
                // The timeline's outline wants them sorted; by thread then time they are when
                // the threads are, but a thread filter may list them in any order.
                samples.sort_unstable();
                Arc::new(samples)
            },
            repaint,
        );
        if let Some(samples) = status.ready()
            && self.samples.announced.as_ref() != Some(&job_key)
        {
            actions.push(PanelAction::HighlightSamples(samples.as_ref().clone()));
            self.samples.announced = Some(job_key);
        }
    }

    /// Asks for the profile of `key`; returns it when it is ready.
    fn request_profile(
        &mut self,
        trace: &Arc<Trace>,
        key: &SamplesKey,
    ) -> Option<Arc<SamplesResult>> {
        let t = trace.clone();
        let (selection, threads) = (key.selection, key.threads.clone());
        let repaint = self.repaint_fn();
        self.samples
            .profile
            .request(
                key,
                move || {
                    let (t0, t1) = bounds(selection);
                    let samples = cpu_samples::samples_in(&t, t0, t1, threads.as_deref());
                    let profile = cpu_samples::profile(&t, &samples);
                    Arc::new(SamplesResult { samples, profile })
                },
                repaint,
            )
            .ready()
            .cloned()
    }

    /// Chooses `c`, or clears the choice when `c` is already chosen, and passes it on.
    fn toggle_function(
        &mut self,
        c: ChosenFunction,
        trace: &Arc<Trace>,
        actions: &mut Vec<PanelAction>,
    ) {
        self.samples.chosen = (self.samples.chosen.as_ref() != Some(&c)).then_some(c);
        self.sync_samples(trace, actions);
    }

    /// The CPU samples tab.
    pub(super) fn samples_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        if trace.cpu_samples.is_empty() {
            ui.label(
                "This trace has no CPU samples. nsys records them on Linux unless told not to \
                 (--sample=process-tree); export the report again with them.",
            );
            return;
        }
        if self.threads_ui(ui, trace, bounds(selection)) {
            self.sync_samples(trace, actions);
        }
        let Some(key) = self.samples_key(trace) else {
            return;
        };
        let status = self.samples.profile.status(&key);
        let stale = status.is_pending();
        let Some(result) = status.latest().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        let place = match (selection.start_ns, selection.end_ns) {
            (None, None) => "in the whole trace",
            _ => "in the selection",
        };
        let threads = key.threads.as_ref().map_or(String::new(), |t| {
            format!(
                " on {} thread{}",
                t.len(),
                if t.len() == 1 { "" } else { "s" }
            )
        });
        ui.label(format!(
            "{} samples {place}{threads}, {} without a call stack",
            result.samples.len(),
            result.profile.without_stack
        ));
        ui.horizontal(|ui| {
            for view in SamplesView::ALL {
                ui.selectable_value(&mut self.samples.view, view, view.label());
            }
        });
        ui.add_space(4.0);
        let profile = &result.profile;
        if profile.samples == 0 {
            ui.label("No samples with a call stack here.");
            return;
        }
        let clicked = ui
            .add_enabled_ui(!stale, |ui| match self.samples.view {
                SamplesView::BottomUp => self.bottom_up_ui(ui, trace, &key, profile),
                SamplesView::TopDown => {
                    let chosen = match &self.samples.chosen {
                        Some(ChosenFunction::Node(p)) => Some(p.as_slice()),
                        _ => None,
                    };
                    tree_ui(ui, trace, profile, chosen).map(ChosenFunction::Node)
                }
                SamplesView::FlameGraph => self.flame_ui(ui, trace, profile),
            })
            .inner;
        if let Some(c) = clicked {
            self.toggle_function(c, trace, actions);
        }
    }

    /// The thread filter (open when there are a few threads): every thread with samples,
    /// checked when profiled, with its sample count and its running share of the selection
    /// `window` where the trace records scheduling. Returns whether the choice changed.
    fn threads_ui(&mut self, ui: &mut Ui, trace: &Trace, window: (i64, i64)) -> bool {
        let with_samples: Vec<usize> = (0..trace.threads.len())
            .filter(|&t| !trace.threads[t].samples.is_empty())
            .collect();
        let on = with_samples
            .iter()
            .filter(|t| !self.samples.off_threads.contains(t))
            .count();
        let mut changed = false;
        egui::CollapsingHeader::new(format!("Threads: {on} of {}", with_samples.len()))
            .id_salt("samples_threads")
            .default_open(with_samples.len() <= 6)
            .show(ui, |ui| {
                ui.horizontal(|ui| {
                    if ui.button("All").clicked() {
                        self.samples.off_threads.clear();
                        changed = true;
                    }
                    if ui.button("None").clicked() {
                        self.samples.off_threads = (0..trace.threads.len()).collect();
                        changed = true;
                    }
                });
                for &t in &with_samples {
                    let mut checked = !self.samples.off_threads.contains(&t);
                    let th = &trace.threads[t];
                    let mut text =
                        format!("{} · {} samples", thread_label(trace, t), th.samples.len());
                    if let Some((running, share)) =
                        crate::timeline::cpu_row::running_share(trace, th, window.0, window.1)
                    {
                        text.push_str(&format!(
                            " · running {share:.1} % ({})",
                            crate::ui::timeline::format_duration(running as f64)
                        ));
                    }
                    if ui.checkbox(&mut checked, text).changed() {
                        if checked {
                            self.samples.off_threads.remove(&t);
                        } else {
                            self.samples.off_threads.insert(t);
                        }
                        changed = true;
                    }
                }
            });
        changed
    }
}

/// `[t0, t1)` of a selection, open sides made infinite.
fn bounds(selection: TimeRange) -> (i64, i64) {
    (
        selection.start_ns.unwrap_or(i64::MIN),
        selection.end_ns.unwrap_or(i64::MAX),
    )
}

/// A thread as its timeline row names it: `name [tid]`, or `Thread tid`.
pub fn thread_label(trace: &Trace, thread: usize) -> String {
    let Some(t) = trace.threads.get(thread) else {
        return format!("thread #{thread}");
    };
    match trace.str(t.name) {
        "" => format!("Thread {}", t.tid),
        name => format!("{name} [{}]", t.tid),
    }
}
