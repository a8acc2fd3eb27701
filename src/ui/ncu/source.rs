//! The Source view of one kernel, as ncu-ui's Source page: its SASS, one row per instruction with
//! every Source Counters column ([`source_table`]), sorted by any column (the hottest first:
//! warp stall samples), each cell heat-coloured by its share of the column's largest value;
//! beside it the CUDA source when the kernel has a line table ([`source_lines`]), a line's
//! counters summed over its instructions; a selected line highlights its instructions and a
//! selected instruction its line. Under them, the selected instruction's stall reasons.
//!
//! The data ([`source_model::gather`]: the report read again for the kernel's per-instruction
//! values, its SASS from `nvdisasm`) is gathered on a worker thread; the view says
//! "disassembling…" meanwhile and never blocks a frame. A frame draws only the rows on screen.
//!
//! A kernel of a report attached to a timeline opens its view in a window of its own
//! ([`window`]); the tab keeps it ([`crate::ui::ncu_attach::NcuAttachment::source`]), so it shows
//! with its tab and goes with its report.

use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::{Color32, RichText, Ui};

use super::source_lines;
use super::source_model::{self, DEFAULT_SORT_LABEL, KernelSourceModel, SortRequest};
use super::source_table;
use crate::trace::ncu::NcuReport;
use crate::ui::loader::LoadJob;

/// A row's height in both tables, in points.
pub const ROW_HEIGHT: f32 = 18.0;

/// The Source view of one kernel: loading, failed, or its data with the sort and selection.
pub struct SourceView {
    /// The kernel (index in the report's workloads).
    pub workload: usize,
    job: Option<LoadJob<KernelSourceModel>>,
    pub model: Option<KernelSourceModel>,
    pub error: Option<String>,
    /// The column sorted by and whether largest first.
    pub sort: (usize, bool),
    /// Instruction indices in the order shown.
    pub order: Vec<usize>,
    /// The selected instruction (index into the model's instructions).
    pub selected: Option<usize>,
    /// The selected CUDA line (index into the model's lines).
    pub selected_line: Option<usize>,
    /// How to sort once the data is in.
    pub request: Option<SortRequest>,
    /// What the sort is, in words ("the largest stall reason").
    pub sort_note: Option<String>,
    /// Scroll the SASS table to the selected instruction (or the selected line's first), next
    /// frame.
    pub(super) scroll_sass: bool,
    /// Scroll the CUDA source to the selected line, next frame.
    pub(super) scroll_line: bool,
    /// The SASS table's horizontal scroll, shared with its header.
    pub(super) sass_x: f32,
    /// When the data came in, until the first frame that drew it.
    received: Option<Instant>,
    /// From the data coming in to the end of the first frame that drew it.
    pub open_time: Option<Duration>,
}

impl SourceView {
    /// Starts gathering kernel `workload` of `report` on a worker thread (`ctx` is asked for a
    /// frame when done).
    pub fn open(
        report: Arc<NcuReport>,
        workload: usize,
        request: Option<SortRequest>,
        ctx: Option<&egui::Context>,
    ) -> Self {
        let job = LoadJob::run(
            report.path.clone(),
            ctx.cloned(),
            "sightline-ncu-source",
            move |path, _| source_model::gather(path, &report, workload),
        );
        let mut view = Self::empty(workload, request);
        view.job = Some(job);
        view
    }

    /// A view of data already gathered.
    pub fn with_model(model: KernelSourceModel, request: Option<SortRequest>) -> Self {
        let mut view = Self::empty(model.workload, request);
        view.set_model(model);
        view
    }

    fn empty(workload: usize, request: Option<SortRequest>) -> Self {
        SourceView {
            workload,
            job: None,
            model: None,
            error: None,
            sort: (0, true),
            order: Vec::new(),
            selected: None,
            selected_line: None,
            request,
            sort_note: None,
            scroll_sass: false,
            scroll_line: false,
            sass_x: 0.0,
            received: None,
            open_time: None,
        }
    }

    pub fn is_loading(&self) -> bool {
        self.job.is_some()
    }

    /// Takes in the worker's data once it is there.
    pub fn poll(&mut self) {
        let Some(outcome) = self.job.as_ref().and_then(LoadJob::poll) else {
            return;
        };
        self.job = None;
        match outcome {
            Ok(model) => self.set_model(model),
            Err(e) => self.error = Some(e),
        }
    }

    /// Shows `model`, sorted as asked (or hottest first), the hottest instruction selected.
    pub fn set_model(&mut self, model: KernelSourceModel) {
        self.received = Some(Instant::now());
        let default = model.column(DEFAULT_SORT_LABEL).unwrap_or(0);
        self.model = Some(model);
        self.sort = (default, true);
        let request = self.request.take();
        self.apply(request);
    }

    /// Sorts as `request` asks (the hottest first without one) and selects the top row.
    pub fn apply(&mut self, request: Option<SortRequest>) {
        let Some(model) = &self.model else {
            self.request = request;
            return;
        };
        let default = model.column(DEFAULT_SORT_LABEL).unwrap_or(0);
        let (column, note) = match &request {
            Some(r) => match model.resolve(r) {
                Some(c) => (c, note_of(model, r, c)),
                None => (default, Some(missing_note(r))),
            },
            None => (default, None),
        };
        self.sort_note = note;
        self.sort_by(column, true);
        let top = self.order.first().copied();
        if let Some(i) = top {
            self.select_instruction(i);
        }
    }

    /// Orders the rows by `column`.
    pub fn sort_by(&mut self, column: usize, descending: bool) {
        let Some(model) = &self.model else {
            return;
        };
        self.sort = (column, descending);
        self.order = model.sorted(column, descending);
        self.scroll_sass = true;
    }

    /// Selects instruction `i` and its CUDA line.
    pub fn select_instruction(&mut self, i: usize) {
        self.selected = Some(i);
        self.selected_line = self
            .model
            .as_ref()
            .and_then(|m| m.line_of.get(i).copied().flatten());
        self.scroll_line = true;
    }

    /// Selects instruction `i` and scrolls the table to it.
    pub fn reveal(&mut self, i: usize) {
        self.select_instruction(i);
        self.scroll_sass = true;
    }

    /// Selects CUDA line `line`: its instructions are highlighted, the first of them in the
    /// table's order selected and scrolled to.
    pub fn select_line(&mut self, line: usize) {
        self.selected_line = Some(line);
        let Some(model) = &self.model else {
            return;
        };
        self.selected = self
            .order
            .iter()
            .copied()
            .find(|&i| model.line_of.get(i).copied().flatten() == Some(line));
        self.scroll_sass = true;
    }

    /// The instructions of the selected line.
    pub fn highlighted(&self) -> &[usize] {
        match (&self.model, self.selected_line) {
            (Some(m), Some(l)) => m.lines.get(l).map_or(&[], |l| l.instructions.as_slice()),
            _ => &[],
        }
    }

    /// Draws the view of a kernel of `report`.
    pub fn ui(&mut self, ui: &mut Ui, report: &NcuReport) {
        self.poll();
        let name = report
            .workloads
            .get(self.workload)
            .map_or("", |w| w.display_name());
        ui.horizontal(|ui| {
            ui.strong("Source");
            ui.label(super::baseline::short(name, 120))
                .on_hover_text(name);
        });
        if let Some(job) = &self.job {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!(
                    "Disassembling the kernel with nvdisasm and reading its per-instruction \
                     counters from {}…",
                    job.path.display()
                ));
            });
            return;
        }
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
            return;
        }
        if self.model.is_none() {
            return;
        }
        self.summary_line(ui);
        egui::Panel::bottom("ncu_source_stalls")
            .resizable(true)
            .default_size(96.0)
            .min_size(48.0)
            .show(ui, |ui| self.stall_mix(ui));
        let has_lines = self.model.as_ref().is_some_and(|m| !m.lines.is_empty());
        if has_lines {
            let width = ui.available_width();
            egui::Panel::left("ncu_source_cuda")
                .resizable(true)
                .default_size(width * 0.45)
                .min_size(160.0)
                .show(ui, |ui| source_lines::show(ui, self));
        }
        source_table::show(ui, self);
        if let Some(at) = self.received.take() {
            self.open_time = Some(at.elapsed());
        }
    }

    fn summary_line(&mut self, ui: &mut Ui) {
        let Some(model) = &self.model else {
            return;
        };
        let (column, descending) = self.sort;
        let label = model.columns.get(column).map_or("", |c| c.label.as_str());
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("{} instructions", model.instructions.len()));
            ui.separator();
            ui.label(format!(
                "sorted by {label} ({})",
                if descending {
                    "largest first"
                } else {
                    "smallest first"
                }
            ));
            if let Some(note) = &self.sort_note {
                ui.weak(note);
            }
            ui.separator();
            if let Some(note) = &model.cuda_note {
                ui.weak(note);
            }
        });
    }

    /// The selected instruction's stall reasons: a bar each, most samples first.
    fn stall_mix(&mut self, ui: &mut Ui) {
        let (Some(model), Some(i)) = (&self.model, self.selected) else {
            ui.weak("Select an instruction to see its stall reasons.");
            return;
        };
        let Some(instruction) = model.instructions.get(i) else {
            return;
        };
        ui.horizontal(|ui| {
            ui.label(
                RichText::new(format!(
                    "0x{:x}  {}",
                    instruction.address,
                    instruction.text.trim()
                ))
                .monospace()
                .strong(),
            );
            if let Some(line) = model.line_of[i].and_then(|l| model.lines.get(l)) {
                ui.weak(format!("· line {}", line.number));
            }
        });
        let mix = model.stall_mix(i);
        let total: f64 = mix.iter().map(|(_, v)| v).sum();
        if mix.is_empty() {
            ui.weak("No warp stall samples at this instruction.");
            return;
        }
        egui::ScrollArea::vertical()
            .id_salt("ncu_source_stall_mix")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for (column, samples) in mix {
                        let share = samples / total;
                        let label = &model.columns[column].label;
                        stall_bar(ui, label, samples, share);
                    }
                });
            });
    }
}

/// A stall reason's bar: name, samples and share, the bar as long as the share.
fn stall_bar(ui: &mut Ui, label: &str, samples: f64, share: f64) {
    let width = 190.0;
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(width, ROW_HEIGHT + 2.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let mut bar = rect;
    bar.set_width(width * share as f32);
    painter.rect_filled(bar, 2.0, heat_colour(share));
    painter.text(
        rect.left_center() + egui::vec2(4.0, 0.0),
        egui::Align2::LEFT_CENTER,
        format!("{label} {samples} ({:.1}%)", share * 100.0),
        egui::TextStyle::Small.resolve(ui.style()),
        ui.visuals().strong_text_color(),
    );
    response.on_hover_text(RichText::new(format!(
        "{label}: {samples} samples, {:.1}% of this instruction's",
        share * 100.0
    )));
}

/// A cell's background for a value at `share` (0..=1) of its column's largest: transparent at
/// 0, a saturated orange-red at 1, readable under text in light and dark themes.
pub fn heat_colour(share: f64) -> Color32 {
    let share = share.clamp(0.0, 1.0) as f32;
    if share <= 0.0 {
        return Color32::TRANSPARENT;
    }
    let alpha = (30.0 + 130.0 * share) as u8;
    Color32::from_rgba_unmultiplied(235, (150.0 - 110.0 * share) as u8, 40, alpha)
}

fn note_of(model: &KernelSourceModel, request: &SortRequest, column: usize) -> Option<String> {
    match request {
        SortRequest::LargestStall => {
            let all = model
                .column(DEFAULT_SORT_LABEL)
                .map_or(0.0, |c| model.total(c));
            let samples = model.total(column);
            let share = if all > 0.0 {
                samples / all * 100.0
            } else {
                0.0
            };
            Some(format!(
                "· the largest stall reason: {samples} of {all} samples ({share:.1}%)"
            ))
        }
        SortRequest::Column(_) => Some("· from the rule in the details".to_string()),
    }
}

fn missing_note(request: &SortRequest) -> String {
    match request {
        SortRequest::LargestStall => "· the kernel has no stall samples".to_string(),
        SortRequest::Column(label) => format!("· the kernel has no column {label}"),
    }
}

/// Draws the Source window of a kernel of an attached report (`view`, the tab's: closing the
/// window drops it).
pub fn window(ctx: &egui::Context, view: &mut Option<SourceView>, report: &NcuReport) {
    let Some(shown) = view else {
        return;
    };
    let mut open = true;
    egui::Window::new("Source")
        .id(egui::Id::unique("sightline_ncu_source_window"))
        .open(&mut open)
        .default_size([1200.0, 700.0])
        .show(ctx, |ui| shown.ui(ui, report));
    if !open {
        *view = None;
    }
}
