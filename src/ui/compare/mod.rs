//! The compare view: two traces' timelines stacked (baseline on top), sharing one relative time
//! axis, zoom and pan, aligned on a chosen point of each run (see [`crate::analysis::align`]),
//! with the diff panel ([`diff_view`]) on the right. Each half is the same timeline the single
//! view draws, with a view state of its own (so leaving the compare view returns each tab as it
//! was, and a trace can be compared with itself); after each frame, whichever half moved carries
//! the other along.

pub mod dialog;
pub mod diff_table;
pub mod diff_view;

use egui::{Rect, Ui, UiBuilder};

use super::theme::Palette;
use super::timeline::{self, GroupId, TimelineModel, TimelineState};
use super::workspace::TraceTab;
use crate::analysis::align::{self, Alignment};
use crate::trace::Trace;
use diff_view::DiffPanel;

/// Which half.
pub const BASE: usize = 0;
pub const NEW: usize = 1;

/// The compare view's state.
pub struct CompareView {
    /// Tab ids of the baseline (top) and the new run (bottom); may be equal.
    pub base: u64,
    pub new: u64,
    /// What both runs put at relative zero; chosen by default once both are loaded.
    pub alignment: Option<Alignment>,
    /// Each run's time at relative zero, for the alignment.
    pub offsets: [i64; 2],
    /// Why the alignment asked for could not be used, when it could not.
    pub align_note: Option<String>,
    /// The two halves' views (their own, not the tabs').
    pub views: [TimelineState; 2],
    /// The views' spans as last set, relative to each run's zero: what a half's navigation
    /// is detected against.
    shared: (f64, f64),
    /// The relative range selection both halves show.
    shared_range: Option<(i64, i64)>,
    initialized: bool,
    /// The baseline's repeated NVTX range names with their counts (the alignment picker's
    /// list), found once when both runs are loaded.
    pub repeated_names: Vec<(String, usize)>,
    /// The alignment picker's NVTX name and index.
    pick_name: String,
    pick_index: usize,
    pub diff: DiffPanel,
}

impl CompareView {
    pub fn new(base: u64, new: u64) -> Self {
        Self {
            base,
            new,
            alignment: None,
            offsets: [0, 0],
            align_note: None,
            views: [TimelineState::default(), TimelineState::default()],
            shared: (0.0, 1.0),
            shared_range: None,
            initialized: false,
            repeated_names: Vec::new(),
            pick_name: String::new(),
            pick_index: 0,
            diff: DiffPanel::default(),
        }
    }

    pub fn involves(&self, id: u64) -> bool {
        self.base == id || self.new == id
    }

    /// The shared visible span, ns relative to the alignment point.
    pub fn relative_view(&self) -> (f64, f64) {
        self.shared
    }

    /// Aligns the runs with `alignment` (the choice is kept even when a run lacks it; the
    /// offsets then fall back to the first GPU operation, and the note says so).
    pub fn set_alignment(&mut self, traces: [&Trace; 2], alignment: Alignment) {
        let mut note = None;
        for (k, t) in traces.iter().enumerate() {
            self.offsets[k] = match align::offset_ns(t, &alignment) {
                Some(o) => o,
                None => {
                    let which = if k == BASE { "baseline" } else { "new run" };
                    note = Some(format!(
                        "the {which} has no {}: aligned on its first GPU operation",
                        alignment.describe()
                    ));
                    align::first_gpu_op_ns(t).unwrap_or(0)
                }
            };
        }
        if let Alignment::Nvtx { name, index } = &alignment {
            self.pick_name = name.clone();
            self.pick_index = *index;
        }
        self.align_note = note;
        self.alignment = Some(alignment);
        // The relative bounds change: show both runs from their first GPU work (what precedes
        // it is mostly the process starting) to the end of the longer one.
        let (lo, hi) = self.relative_bounds(traces);
        let from = (0..2)
            .filter_map(|k| align::first_gpu_op_ns(traces[k]).map(|t| t - self.offsets[k]))
            .min()
            .unwrap_or(lo)
            .max(lo);
        let len = (hi - from).max(1) as f64;
        self.shared = (from as f64 - len * 0.01, hi as f64 + len * 0.01);
        self.apply_shared();
        self.shared_range = None;
        for v in &mut self.views {
            v.range_selection = None;
        }
        for (k, v) in self.views.iter_mut().enumerate() {
            v.axis_origin_ns = self.offsets[k];
            v.view.trace_start_ns = self.offsets[k] + lo;
            v.view.trace_end_ns = self.offsets[k] + hi;
        }
    }

    /// The union of both runs' spans, relative to their zeros.
    fn relative_bounds(&self, traces: [&Trace; 2]) -> (i64, i64) {
        let lo = (traces[0].first_ns - self.offsets[0]).min(traces[1].first_ns - self.offsets[1]);
        let hi = (traces[0].last_ns - self.offsets[0]).max(traces[1].last_ns - self.offsets[1]);
        (lo, hi.max(lo + 1))
    }

    /// Puts both views at the shared relative span.
    fn apply_shared(&mut self) {
        for (k, v) in self.views.iter_mut().enumerate() {
            let o = self.offsets[k] as f64;
            v.view.start_ns = o + self.shared.0;
            v.view.end_ns = o + self.shared.1;
        }
    }

    /// Sets up both halves for freshly loaded traces: their views with rows collapsed to GPU
    /// and stream level, and the default alignment.
    pub fn initialize(&mut self, docs: [(&Trace, &TimelineModel); 2]) {
        for (k, (trace, model)) in docs.iter().enumerate() {
            let mut state = TimelineState::new(trace, model);
            for row in &model.rows {
                if let Some(g) = row.toggles
                    && !matches!(g, GroupId::Gpu(_))
                {
                    state.view.collapsed.insert(g);
                }
            }
            self.views[k] = state;
        }
        let traces = [docs[0].0, docs[1].0];
        self.repeated_names = align::repeated_nvtx_names(traces[0]);
        let alignment = self
            .alignment
            .clone()
            .unwrap_or_else(|| align::default_alignment(traces[0], traces[1]));
        self.set_alignment(traces, alignment);
        self.initialized = true;
    }

    /// After both halves handled their input: the one that moved (zoom, pan, range) carries the
    /// other along.
    fn sync(&mut self) -> bool {
        let rel = |k: usize, v: &TimelineState| {
            let o = self.offsets[k] as f64;
            (v.view.start_ns - o, v.view.end_ns - o)
        };
        let moved = |a: (f64, f64), b: (f64, f64)| {
            let tol = (b.1 - b.0).abs() * 1e-9 + 1e-6;
            (a.0 - b.0).abs() > tol || (a.1 - b.1).abs() > tol
        };
        let mut changed = false;
        for k in [BASE, NEW] {
            let r = rel(k, &self.views[k]);
            if moved(r, self.shared) {
                self.shared = r;
                changed = true;
                break;
            }
        }
        if changed {
            self.apply_shared();
        }
        for k in [BASE, NEW] {
            let o = self.offsets[k];
            let r = self.views[k].range_selection.map(|(a, b)| (a - o, b - o));
            if r != self.shared_range {
                self.shared_range = r;
                let other = 1 - k;
                let oo = self.offsets[other];
                self.views[other].set_range_selection(r.map(|(a, b)| (a + oo, b + oo)));
                changed = true;
                break;
            }
        }
        changed
    }

    /// The range selection of run `k` (its own times), if any.
    pub fn range_of(&self, k: usize) -> Option<(i64, i64)> {
        self.shared_range
            .map(|(a, b)| (a + self.offsets[k], b + self.offsets[k]))
    }
}

/// Draws the compare view; false when one of its tabs is gone (the view then closes).
pub fn show(ui: &mut Ui, tabs: &mut [TraceTab], cv: &mut CompareView, palette: &Palette) -> bool {
    let (Some(bi), Some(ni)) = (
        tabs.iter().position(|t| t.id == cv.base),
        tabs.iter().position(|t| t.id == cv.new),
    ) else {
        return false;
    };
    let (base, new) = (&tabs[bi], &tabs[ni]);
    let loaded = match (&base.document, &new.document) {
        (Some(b), Some(n)) => Some([(b.trace.as_ref(), &b.model), (n.trace.as_ref(), &n.model)]),
        _ => None,
    };
    if let Some(docs) = loaded {
        if !cv.initialized {
            cv.initialize(docs);
        }
        let arcs = [
            base.document.as_ref().map(|d| d.trace.clone()),
            new.document.as_ref().map(|d| d.trace.clone()),
        ];
        if let [Some(b), Some(n)] = arcs {
            egui::Panel::right("sightline_compare_diff")
                .resizable(true)
                .default_size(660.0)
                .show(ui, |ui| {
                    // Fill the panel: egui fits a panel to its contents, and the first frames
                    // (the diff still computing) are narrow.
                    ui.set_min_width(ui.available_width());
                    let highlight = diff_view::show(ui, cv, [&b, &n]);
                    if let Some(h) = highlight {
                        for (k, events) in h.into_iter().enumerate() {
                            cv.views[k].overlays.highlighted = events;
                        }
                    }
                });
        }
        egui::Panel::top("sightline_compare_bar").show(ui, |ui| alignment_bar(ui, cv, docs));
    }
    egui::CentralPanel::default()
        .frame(egui::Frame::central_panel(ui.style()).inner_margin(0.0))
        .show(ui, |ui| {
            let full = ui.available_rect_before_wrap();
            let mid = full.center().y;
            let halves = [
                Rect::from_min_max(full.min, egui::pos2(full.right(), mid - 1.0)),
                Rect::from_min_max(egui::pos2(full.left(), mid + 1.0), full.max),
            ];
            ui.painter().hline(
                full.x_range(),
                mid,
                egui::Stroke::new(2.0, palette.grid_line),
            );
            for (k, tab) in [(BASE, &tabs[bi]), (NEW, &tabs[ni])] {
                let mut child = ui.new_child(
                    UiBuilder::new()
                        .max_rect(halves[k])
                        .id_salt(("compare_half", k)),
                );
                half(&mut child, k, tab, cv, palette);
            }
        });
    if loaded.is_some() && cv.sync() {
        ui.ctx().request_repaint();
    }
    true
}

/// One half: its header line and its timeline (or the tab's error / progress).
fn half(ui: &mut Ui, k: usize, tab: &TraceTab, cv: &mut CompareView, palette: &Palette) {
    let role = if k == BASE { "Baseline" } else { "New" };
    ui.horizontal(|ui| {
        ui.add_space(6.0);
        ui.strong(role);
        ui.label(tab.title());
        if tab.document.is_some()
            && let Some(a) = &cv.alignment
        {
            ui.weak(format!(
                "· 0 = {} at {}",
                a.describe(),
                timeline::format_duration(cv.offsets[k] as f64)
            ));
        }
    });
    match &tab.document {
        Some(d) if cv.initialized => {
            timeline::show(ui, &d.trace, &d.model, &mut cv.views[k], palette, &[]);
        }
        _ => {
            if let Some(e) = &tab.error {
                ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
            } else if let Some(job) = &tab.job {
                let (phase, fraction) = job.progress();
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Loading: {phase} · {:.0}%", fraction * 100.0));
                });
            } else {
                ui.weak("Waiting for the other run…");
            }
        }
    }
}

/// Alignment choice: session start, first GPU operation, or an NVTX range instance.
fn alignment_bar(ui: &mut Ui, cv: &mut CompareView, docs: [(&Trace, &TimelineModel); 2]) {
    let traces = [docs[0].0, docs[1].0];
    let mut chosen = None;
    ui.horizontal_wrapped(|ui| {
        ui.label("Align on:");
        let current = cv.alignment.clone();
        if ui
            .selectable_label(current == Some(Alignment::SessionStart), "Session start")
            .clicked()
        {
            chosen = Some(Alignment::SessionStart);
        }
        if ui
            .selectable_label(current == Some(Alignment::FirstGpuOp), "First GPU op")
            .clicked()
        {
            chosen = Some(Alignment::FirstGpuOp);
        }
        let is_nvtx = matches!(current, Some(Alignment::Nvtx { .. }));
        ui.separator();
        let label = if is_nvtx {
            ui.strong("NVTX range")
        } else {
            ui.label("NVTX range")
        };
        let combo = egui::ComboBox::from_id_salt("compare_align_name")
            .selected_text(if cv.pick_name.is_empty() {
                "(choose)".to_string()
            } else {
                cv.pick_name.clone()
            })
            .show_ui(ui, |ui| {
                for (name, count) in &cv.repeated_names {
                    if ui
                        .selectable_label(cv.pick_name == *name, format!("{name} (×{count})"))
                        .clicked()
                    {
                        cv.pick_name = name.clone();
                        chosen = Some(Alignment::Nvtx {
                            name: name.clone(),
                            index: cv.pick_index,
                        });
                    }
                }
            });
        combo.response.labelled_by(label.id);
        let hash = ui.label("instance #");
        let index = ui
            .add(egui::DragValue::new(&mut cv.pick_index).range(0..=100_000))
            .labelled_by(hash.id)
            .on_hover_text("Which instance of the range, counting from 0, in both runs");
        if index.changed() && !cv.pick_name.is_empty() {
            chosen = Some(Alignment::Nvtx {
                name: cv.pick_name.clone(),
                index: cv.pick_index,
            });
        }
        if let Some(note) = &cv.align_note {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
    });
    if let Some(a) = chosen {
        cv.set_alignment(traces, a);
    }
}
