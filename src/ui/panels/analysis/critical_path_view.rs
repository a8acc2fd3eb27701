//! The Iterations tab's "What bounds each step": the critical path of every iteration shown
//! ([`crate::analysis::critical_path`]) as a table with a column per part some path has and a
//! bar, computed on a
//! worker once the iterations are known. A click on a row (or "Critical path" in an iteration
//! name's context menu) outlines that iteration's path on the timeline.

use std::sync::Arc;

use egui::{RichText, Sense, Ui, vec2};

use super::{AnalysisPanel, PanelAction};
use crate::analysis::critical_path::{self, CriticalPath, Part};
use crate::analysis::iterations::Iterations;
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

use crate::timeline::overlays::path::part_colour;

const BAR_WIDTH: f32 = 160.0;

impl AnalysisPanel {
    /// The critical paths of the iterations shown, once computed.
    pub fn critical_paths(&self) -> Option<&[CriticalPath]> {
        let key = (self.inputs?, self.iteration_family().map(str::to_string));
        self.iterations
            .paths
            .status(&key)
            .ready()
            .map(|v| v.as_slice())
    }

    /// Asks for iteration `n`'s critical path to be shown on the timeline (as a click on its row
    /// does); it is shown once the paths are computed.
    pub fn show_critical_path(&mut self, n: usize) {
        self.iterations.asked = Some(n);
    }

    pub(super) fn critical_path_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        found: &Arc<Iterations>,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let key = (inputs, self.iteration_family().map(str::to_string));
        let (t, its) = (trace.clone(), found.clone());
        let repaint = self.repaint_fn();
        let paths = self
            .iterations
            .paths
            .request(
                &key,
                move || Arc::new(critical_path::step_paths(&t, &its.iterations)),
                repaint,
            )
            .ready()
            .cloned();
        ui.separator();
        ui.label(RichText::new("What bounds each step (critical path)").strong());
        let Some(paths) = paths.filter(|p| p.len() == found.iterations.len()) else {
            ui.label("Following each iteration's critical path…");
            return;
        };
        if let Some(n) = self.iterations.asked.take()
            && let Some(path) = paths.get(n)
        {
            actions.push(PanelAction::ShowCriticalPath(Some(Arc::new(path.clone()))));
        }
        ui.label(
            RichText::new(
                "The chain of dependent CPU work, launches, GPU work, copies and waits from each \
                 iteration's start to its end, through every thread of its process (a waiting \
                 thread hands over to the one that worked meanwhile). Hover a bar for the CPU per \
                 thread; click a row to outline its path on the timeline.",
            )
            .weak(),
        );
        if let Some(note) = paths.first().and_then(|p| p.notes.first()) {
            ui.label(RichText::new(note).weak().italics());
        }
        legend_ui(ui);
        // The parts some path has, before the bar: at the panel's default width the columns
        // that matter (H2D copies, for weight streaming) are on screen, not past ten columns.
        let parts: Vec<Part> = Part::ALL
            .into_iter()
            .filter(|&p| paths.iter().any(|path| path.part_ns(p) > 0))
            .collect();
        egui::ScrollArea::horizontal()
            .id_salt("critical_path_table")
            .show(ui, |ui| {
                egui::Grid::new("critical_path_grid")
                    .striped(true)
                    .min_col_width(0.0)
                    .show(ui, |ui| {
                        ui.label("Iteration");
                        ui.label("Path");
                        ui.label("Bound by");
                        for &p in &parts {
                            ui.label(p.label());
                        }
                        ui.label("");
                        ui.end_row();
                        for (n, (it, path)) in found.iterations.iter().zip(paths.iter()).enumerate()
                        {
                            // Apart from the heatmap's row of the same iteration.
                            let label = format!("path of #{n} {}", it.name);
                            let show = ui
                                .selectable_label(false, &label)
                                .on_hover_text("Outline this iteration's critical path");
                            if show.clicked() {
                                actions.push(PanelAction::ShowCriticalPath(Some(Arc::new(
                                    path.clone(),
                                ))));
                            }
                            ui.label(format_duration(path.path_ns() as f64));
                            ui.label(path.bound_by().map_or("–", Part::label));
                            for &p in &parts {
                                ui.label(format_duration(path.part_ns(p) as f64));
                            }
                            bar_ui(ui, trace, path, it.duration_ns());
                            ui.end_row();
                        }
                    });
            });
    }
}

impl AnalysisPanel {
    /// Asks for the critical path of the range selection to be shown on the timeline (as the
    /// tab's button does), once computed.
    pub fn show_selection_critical_path(&mut self) {
        self.iterations.selection_asked = self.inputs;
    }

    /// "Critical path of the selection": a button while a range is selected; the path is
    /// computed on a worker and shown when ready.
    pub(super) fn selection_path_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let (Some(start), Some(end)) = (inputs.selection.start_ns, inputs.selection.end_ns) else {
            return;
        };
        if ui
            .button("Critical path of the selection")
            .on_hover_text("Outline the critical path of the selected time range")
            .clicked()
        {
            self.iterations.selection_asked = Some(inputs);
        }
        if self.iterations.selection_asked != Some(inputs) {
            return;
        }
        let t = trace.clone();
        let repaint = self.repaint_fn();
        let ready = self
            .iterations
            .selection_path
            .request(
                &inputs,
                move || Arc::new(critical_path::critical_paths(&t, &[(start, end)]).remove(0)),
                repaint,
            )
            .ready()
            .cloned();
        match ready {
            Some(path) => {
                self.iterations.selection_asked = None;
                actions.push(PanelAction::ShowCriticalPath(Some(path)));
            }
            None => {
                ui.label("Following the selection's critical path…");
            }
        }
    }
}

/// The path's parts side by side, each as wide as its share of the iteration.
fn bar_ui(ui: &mut Ui, trace: &Trace, path: &CriticalPath, duration_ns: i64) {
    let (rect, response) = ui.allocate_exact_size(vec2(BAR_WIDTH, 12.0), Sense::hover());
    let painter = ui.painter();
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    let mut x = rect.left();
    for p in Part::ALL {
        let ns = path.part_ns(p);
        if ns <= 0 || duration_ns <= 0 {
            continue;
        }
        let w = BAR_WIDTH * ns as f32 / duration_ns as f32;
        let r = egui::Rect::from_min_size(egui::pos2(x, rect.top()), vec2(w, rect.height()));
        painter.rect_filled(r, 0.0, part_colour(p));
        x += w;
    }
    response.on_hover_ui(|ui| {
        for p in Part::ALL {
            let ns = path.part_ns(p);
            if ns > 0 {
                ui.label(format!(
                    "{}: {} ({:.1} %)",
                    p.label(),
                    format_duration(ns as f64),
                    ns as f64 * 100.0 / path.path_ns().max(1) as f64
                ));
            }
        }
        // CPU per thread: which thread bounds the step.
        if path.cpu_by_thread.len() > 1 {
            for &(tid, ns) in &path.cpu_by_thread {
                ui.label(format!(
                    "  CPU of {}: {}",
                    crate::analysis::reports::critical_path::row_label(
                        trace,
                        critical_path::PathRow::Thread(tid)
                    ),
                    format_duration(ns as f64)
                ));
            }
        }
    });
}

fn legend_ui(ui: &mut Ui) {
    ui.horizontal_wrapped(|ui| {
        for p in Part::ALL {
            let (rect, _) = ui.allocate_exact_size(vec2(10.0, 10.0), Sense::hover());
            ui.painter().rect_filled(rect, 0.0, part_colour(p));
            ui.label(RichText::new(p.label()).small());
        }
    });
}
