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
                        crate::ui::timeline::cpu_row::running_share(trace, th, window.0, window.1)
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

    /// The bottom-up table; returns the function clicked.
    fn bottom_up_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        key: &SamplesKey,
        profile: &Profile,
    ) -> Option<ChosenFunction> {
        let sort = self.samples.sort;
        let fresh =
            self.samples.order.as_ref().is_some_and(|(k, s, o)| {
                k == key && *s == sort && o.len() == profile.bottom_up.len()
            });
        if !fresh {
            // Once per result and sort: a sort of the distinct functions, not of the samples.
            let order = bottom_up_order(trace, profile, sort);
            self.samples.order = Some((key.clone(), sort, order));
        }
        let order = self
            .samples
            .order
            .as_ref()
            .map_or(&[][..], |(_, _, o)| o.as_slice());
        let chosen = match &self.samples.chosen {
            Some(ChosenFunction::Function(f)) => Some(*f),
            _ => None,
        };
        let (header, row) = draw_bottom_up(ui, trace, profile, order, sort, chosen);
        if let Some(column) = header {
            let numeric = matches!(column, Column::SelfSamples | Column::TotalSamples);
            self.samples.sort = Some(match sort {
                Some((c, descending)) if c == column => (column, !descending),
                _ => (column, numeric),
            });
        }
        row.map(ChosenFunction::Function)
    }

    /// The flame graph with its zoom line; returns the node clicked, or (on a click outside
    /// every node) the current choice, to clear it.
    fn flame_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        profile: &Profile,
    ) -> Option<ChosenFunction> {
        let zoom = match profile.node_at(&self.samples.zoom) {
            Some(n) => n,
            None => {
                self.samples.zoom.clear();
                0
            }
        };
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(zoom != 0, Button::new("Reset zoom"))
                .clicked()
            {
                self.samples.zoom.clear();
            }
            match self.samples.zoom.last() {
                Some(f) => ui.label(format!("Zoomed into {}", trace.str(f.function))),
                None => ui.weak("Click a box to zoom into it and outline its samples"),
            };
        });
        let chosen_path = match &self.samples.chosen {
            Some(ChosenFunction::Node(p)) => Some(p.as_slice()),
            _ => None,
        };
        let chosen = chosen_path.and_then(|p| profile.node_at(p));
        let drawn = &mut self.samples.flame_boxes;
        match flame_graph::show(ui, trace, profile, zoom, chosen, drawn)? {
            FlameClick::Node(0) => {
                // "all": zoom out; the root stands for every sample, nothing to outline.
                self.samples.zoom.clear();
                self.samples
                    .chosen
                    .clone()
                    .filter(|c| matches!(c, ChosenFunction::Node(_)))
            }
            FlameClick::Node(n) => {
                let path = profile.node_path(n);
                if chosen != Some(n) {
                    self.samples.zoom = path.clone();
                }
                Some(ChosenFunction::Node(path))
            }
            FlameClick::Background => self.samples.chosen.clone(),
        }
    }

    /// Under the gap list: where the launching thread's samples went during the chosen gap.
    pub(super) fn gap_functions_ui(&mut self, ui: &mut Ui, trace: &Arc<Trace>) {
        let Some(g) = self.samples.gap else {
            return;
        };
        ui.add_space(6.0);
        ui.label(
            RichText::new(format!(
                "Gap #{} ({}): the launching thread's CPU samples",
                g.rank + 1,
                format_duration(g.gap.duration_ns() as f64)
            ))
            .strong(),
        );
        let Some(call) = g.cause.launch_call else {
            ui.label("No call launched the work that ended this gap: no thread to look at.");
            return;
        };
        let call_name = trace
            .api_calls
            .spans
            .name
            .get(call)
            .map_or("the launching call", |&n| trace.str(n));
        let Some(thread) = g.thread else {
            ui.label(format!(
                "{call_name}'s thread is not among the trace's threads."
            ));
            return;
        };
        if trace.cpu_samples.is_empty() {
            ui.label("The trace has no CPU samples (nsys profile --sample=process-tree).");
            return;
        }
        let key = (self.trace_generation, thread, g.gap.start_ns, g.gap.end_ns);
        let t = trace.clone();
        let repaint = self.repaint_fn();
        let status = self.samples.gap_functions.request(
            &key,
            move || {
                let (top, samples) =
                    cpu_samples::top_functions(&t, thread, key.2, key.3, GAP_TOP_FUNCTIONS);
                Arc::new(GapFunctions {
                    thread,
                    samples,
                    top,
                })
            },
            repaint,
        );
        let Some(found) = status.ready().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        let who = format!("{call_name}'s thread ({})", thread_label(trace, thread));
        if found.samples == 0 {
            ui.label(format!("{who}: no CPU samples on that thread in the gap"));
            return;
        }
        if found.top.is_empty() {
            ui.label(format!(
                "{who}: {} samples in the gap, none with a call stack",
                found.samples
            ));
            return;
        }
        ui.label(format!(
            "{who} was in ({} samples in the gap, by self samples):",
            found.samples
        ));
        for (frame, n) in &found.top {
            let function = trace.str(frame.function);
            ui.horizontal(|ui| {
                ui.add_space(12.0);
                ui.label(gap_function_line(function, *n, found.samples))
                    .on_hover_text(format!("{function}\nModule: {}", trace.str(frame.module)));
            });
        }
    }
}

/// A line of a gap's top functions, e.g. `tokenize_batch(int) — 41 samples (82.0 %)`.
pub fn gap_function_line(function: &str, samples: u64, of: u64) -> String {
    format!(
        "{function} — {samples} samples ({:.1} %)",
        100.0 * samples as f64 / of.max(1) as f64
    )
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

/// The bottom-up rows (indices into `profile.bottom_up`) in the order of `sort`; ties keep the
/// profile's order (self desc, total desc, function, module).
fn bottom_up_order(trace: &Trace, profile: &Profile, sort: BottomUpSort) -> Vec<u32> {
    let mut order: Vec<u32> = (0..profile.bottom_up.len() as u32).collect();
    let Some((column, descending)) = sort else {
        return order;
    };
    let rows = &profile.bottom_up;
    order.sort_by(|&a, &b| {
        let (x, y) = (&rows[a as usize], &rows[b as usize]);
        let o = match column {
            Column::Function => trace.str(x.frame.function).cmp(trace.str(y.frame.function)),
            Column::Module => trace.str(x.frame.module).cmp(trace.str(y.frame.module)),
            Column::SelfSamples => x.self_samples.cmp(&y.self_samples),
            Column::TotalSamples => x.total_samples.cmp(&y.total_samples),
        };
        if descending { o.reverse() } else { o }.then(a.cmp(&b))
    });
    order
}

/// One cell `width` wide and a row high, numbers right-aligned.
fn cell<R>(ui: &mut Ui, width: f32, right: bool, add: impl FnOnce(&mut Ui) -> R) -> R {
    let height = ui.spacing().interact_size.y;
    super::statistics_view::cell(ui, width, height, right, add)
}

/// Draws the bottom-up table (only the rows on screen); returns the header and the function
/// clicked.
fn draw_bottom_up(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    order: &[u32],
    sort: BottomUpSort,
    chosen: Option<Frame>,
) -> (Option<Column>, Option<Frame>) {
    let gap = ui.spacing().item_spacing.x;
    let fixed = 4.0 * NUMBER_WIDTH_PX + 5.0 * gap;
    let avail = ui.available_width();
    let module_w = ((avail - fixed) * 0.3).clamp(70.0, 160.0);
    let function_w = (avail - fixed - module_w).max(140.0);
    let columns = [
        ("Function", Some(Column::Function), function_w, false),
        ("Module", Some(Column::Module), module_w, false),
        ("Self", Some(Column::SelfSamples), NUMBER_WIDTH_PX, true),
        ("Self %", None, NUMBER_WIDTH_PX, true),
        ("Total", Some(Column::TotalSamples), NUMBER_WIDTH_PX, true),
        ("Total %", None, NUMBER_WIDTH_PX, true),
    ];
    let mut header = None;
    ui.horizontal(|ui| {
        for (title, column, width, right) in columns {
            let arrow = match (sort, column) {
                (Some((c, true)), Some(col)) if c == col => "▼",
                (Some((c, false)), Some(col)) if c == col => "▲",
                _ => "",
            };
            let r = cell(ui, width, right, |ui| {
                let button = ui.add(
                    Button::new(RichText::new(title).strong())
                        .frame(false)
                        .truncate(),
                );
                if !arrow.is_empty() {
                    ui.label(RichText::new(arrow).monospace());
                }
                button
            });
            if let Some(c) = column
                && r.on_hover_text(format!("{title}: click to sort")).clicked()
            {
                header = Some(c);
            }
        }
    });
    let mut clicked = None;
    let height = ui.spacing().interact_size.y;
    egui::ScrollArea::vertical()
        .id_salt("samples_bottom_up")
        .max_height(440.0)
        .auto_shrink([false, true])
        .show_rows(ui, height, order.len(), |ui, range| {
            for &i in order.get(range).unwrap_or(&[]) {
                let Some(f) = profile.bottom_up.get(i as usize) else {
                    continue;
                };
                let function = trace.str(f.frame.function);
                let module = trace.str(f.frame.module);
                ui.horizontal(|ui| {
                    // The file name says which library; the path is in the tooltip.
                    let module_name = module.rsplit('/').next().unwrap_or(module);
                    let on = chosen == Some(f.frame);
                    let name = cell(ui, function_w, false, |ui| {
                        ui.add(Button::selectable(on, function).truncate())
                    });
                    if name
                        .on_hover_text(format!(
                            "{function}\nModule: {module}\nclick to outline its samples"
                        ))
                        .clicked()
                    {
                        clicked = Some(f.frame);
                    }
                    cell(ui, module_w, false, |ui| {
                        ui.add(egui::Label::new(module_name).truncate())
                    })
                    .on_hover_text(module);
                    for (n, percent) in [(f.self_samples, false), (f.self_samples, true)]
                        .into_iter()
                        .chain([(f.total_samples, false), (f.total_samples, true)])
                    {
                        let text = if percent {
                            format!("{:.1}", profile.percent(n))
                        } else {
                            n.to_string()
                        };
                        cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.label(text));
                    }
                });
            }
        });
    (header, clicked)
}

/// The top-down tree, the hot path (nodes with half the samples or more) and single-callee
/// chains open at first; returns the node clicked, by its path.
fn tree_ui(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    chosen: Option<&[Frame]>,
) -> Option<Vec<Frame>> {
    let mut clicked = None;
    let mut path = Vec::new();
    ui.horizontal(|ui| {
        let name_w = (ui.available_width() - tree_numbers_width(ui)).max(100.0);
        cell(ui, name_w, false, |ui| ui.strong("Function"));
        for title in ["Total", "Total %", "Self"] {
            cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.strong(title));
        }
    });
    ui.scope(|ui| {
        ui.spacing_mut().indent = 12.0;
        let id = ui.make_persistent_id("samples_top_down");
        children_ui(ui, trace, profile, 0, id, &mut path, chosen, &mut clicked);
    });
    clicked
}

/// The children of `node` and, for those that are open, theirs.
#[allow(clippy::too_many_arguments)]
fn children_ui(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    node: u32,
    id: Id,
    path: &mut Vec<Frame>,
    chosen: Option<&[Frame]>,
    clicked: &mut Option<Vec<Frame>>,
) {
    let Some(n) = profile.tree.get(node as usize) else {
        return;
    };
    for &child in n.children.iter().take(TREE_CHILDREN) {
        let Some(c) = profile.tree.get(child as usize) else {
            continue;
        };
        let Some(frame) = c.frame else {
            continue;
        };
        path.push(frame);
        let child_id = id.with((frame.function, frame.module));
        let on = chosen == Some(path.as_slice());
        let row = |ui: &mut Ui| node_row(ui, trace, profile, c, on);
        let hit = if c.children.is_empty() {
            ui.horizontal(|ui| {
                ui.add_space(ui.spacing().indent);
                row(ui)
            })
            .inner
        } else {
            // The hot path and chains of single callees start open: opening them costs a row.
            let open = c.total_samples * 2 >= profile.samples || c.children.len() == 1;
            let (_, header, _) = CollapsingState::load_with_default_open(ui.ctx(), child_id, open)
                .show_header(ui, row)
                .body(|ui| {
                    children_ui(ui, trace, profile, child, child_id, path, chosen, clicked);
                });
            header.inner
        };
        if hit {
            *clicked = Some(path.clone());
        }
        path.pop();
    }
    if n.children.len() > TREE_CHILDREN {
        let rest: u64 = n
            .children
            .iter()
            .skip(TREE_CHILDREN)
            .filter_map(|&c| profile.tree.get(c as usize))
            .map(|c| c.total_samples)
            .sum();
        ui.weak(format!(
            "… {} more callees with {rest} samples",
            n.children.len() - TREE_CHILDREN
        ));
    }
}

/// A node's row: its function (clickable) and its total and self samples. Returns whether the
/// function was clicked.
fn node_row(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    c: &cpu_samples::CallNode,
    on: bool,
) -> bool {
    let Some(frame) = c.frame else {
        return false;
    };
    let function = trace.str(frame.function);
    let name_w = (ui.available_width() - tree_numbers_width(ui)).max(100.0);
    let name = cell(ui, name_w, false, |ui| {
        ui.add(Button::selectable(on, function).truncate())
    });
    let hit = name
        .on_hover_text(format!(
            "{function}\nModule: {}\ntotal {} samples ({:.1} %), self {} ({:.1} %)\nclick to \
             outline its samples",
            trace.str(frame.module),
            c.total_samples,
            profile.percent(c.total_samples),
            c.self_samples,
            profile.percent(c.self_samples)
        ))
        .clicked();
    let numbers = [
        c.total_samples.to_string(),
        format!("{:.1}", profile.percent(c.total_samples)),
        c.self_samples.to_string(),
    ];
    for text in numbers {
        cell(ui, NUMBER_WIDTH_PX, true, |ui| ui.label(text));
    }
    hit
}

/// Width of the tree's number columns (total, total %, self) with their spacing.
fn tree_numbers_width(ui: &Ui) -> f32 {
    3.0 * (NUMBER_WIDTH_PX + ui.spacing().item_spacing.x)
}
