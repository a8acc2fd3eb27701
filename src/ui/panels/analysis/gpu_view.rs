//! The Gaps and Overlap sections drawn: GPU busy % and idle time of the selection, the idle gaps
//! longest first (a click zooms to one), and copy/compute overlap per GPU and per copy kind.

use std::sync::Arc;

use egui::{Button, RichText, Ui};

use super::{AnalysisPanel, OverlapResult, PanelAction, filter_of};
use crate::analysis::{self, IdleGap, TimeRange};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

impl AnalysisPanel {
    pub(super) fn gaps_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let slider = ui.add(
            egui::Slider::new(&mut self.min_gap_us, 1.0..=100_000.0)
                .logarithmic(true)
                .suffix(" µs")
                .text("Shortest gap"),
        );
        let per_stream = ui.checkbox(&mut self.per_stream, "Per stream");
        if slider.changed() || per_stream.changed() {
            self.sync(trace, selection, actions);
        }

        let Some(result) = self.gaps_result_arc() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        if result.activity.is_empty() {
            ui.label("No GPU work in the selection.");
            return;
        }
        egui::Grid::new("analysis_gpu_activity")
            .striped(true)
            .show(ui, |ui| {
                for title in ["GPU", "Busy", "Idle", "Measured"] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for a in &result.activity {
                    ui.label(a.device.to_string())
                        .on_hover_text(trace.gpu_title(a.device));
                    ui.label(percent_text(a.busy_percent()));
                    ui.label(format_duration(a.idle_ns as f64));
                    ui.label(format_duration(a.measured_ns as f64));
                    ui.end_row();
                }
            });
        let idle: i64 = result.activity.iter().map(|a| a.idle_ns).sum();
        ui.label(format!("Total idle: {}", format_duration(idle as f64)));

        let gaps = &result.gaps;
        let listed: i64 = gaps.iter().map(IdleGap::duration_ns).sum();
        ui.label(format!(
            "{} gaps of at least {} ({} in all), longest first:",
            gaps.len(),
            format_duration(self.gap_options().min_ns as f64),
            format_duration(listed as f64)
        ));
        let row_height = ui.spacing().interact_size.y;
        egui::ScrollArea::vertical()
            .id_salt("analysis_gap_list")
            .max_height(360.0)
            .auto_shrink([false, true])
            .show_rows(ui, row_height, gaps.len(), |ui, range| {
                for rank in range {
                    let Some(gap) = gaps.get(rank) else {
                        continue;
                    };
                    let before = gap.before.name(trace);
                    let after = gap.after.name(trace);
                    ui.horizontal(|ui| {
                        let row = ui
                            .add(Button::selectable(false, gap_label(rank + 1, gap)))
                            .on_hover_text(format!(
                                "{} – {}\nafter: {before}\nbefore: {after}\nclick to zoom",
                                format_duration(gap.start_ns as f64),
                                format_duration(gap.end_ns as f64),
                            ));
                        if row.clicked() {
                            actions.push(PanelAction::ZoomTo {
                                start_ns: gap.start_ns,
                                end_ns: gap.end_ns,
                            });
                        }
                        ui.add(
                            egui::Label::new(format!(
                                "at {} · after {before} · before {after}",
                                format_duration(gap.start_ns as f64)
                            ))
                            .truncate(),
                        );
                    });
                }
            });
    }

    /// The gaps result to show (fresh, or the last one while the fresh one is computed).
    fn gaps_result_arc(&self) -> Option<Arc<super::GapsResult>> {
        let key = (self.inputs?, self.gap_options());
        self.jobs.gaps.status(&key).latest().cloned()
    }

    pub(super) fn overlap_ui(&mut self, ui: &mut Ui, trace: &Arc<Trace>, selection: TimeRange) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let (t, ex) = (trace.clone(), self.exclusion.result.clone());
        let repaint = self.repaint_fn();
        let status = self.jobs.overlap.request(
            &inputs,
            move || {
                let filter = filter_of(selection, ex.as_deref());
                Arc::new(OverlapResult {
                    per_gpu: analysis::copy_compute_overlap(&t, &filter),
                    per_kind: analysis::overlap_by_copy_kind(&t, &filter),
                })
            },
            repaint,
        );
        let Some(overlap) = status.latest().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Computing…");
            });
            return;
        };
        ui.label(
            "Share of memcpy + memset busy time hidden under kernel busy time (unions over all \
             streams); weight streaming aims above 60 %.",
        );
        if overlap.per_gpu.is_empty() {
            ui.label("No GPU work in the selection.");
            return;
        }
        egui::Grid::new("analysis_overlap")
            .striped(true)
            .show(ui, |ui| {
                for title in [
                    "GPU",
                    "Busy",
                    "Kernels",
                    "Memory ops",
                    "Overlap",
                    "Overlap %",
                ] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for o in &overlap.per_gpu {
                    ui.label(o.device.to_string())
                        .on_hover_text(trace.gpu_title(o.device));
                    ui.label(percent_text(o.busy_percent()));
                    ui.label(format_duration(o.kernel_ns as f64));
                    ui.label(format_duration(o.memory_ns as f64));
                    ui.label(format_duration(o.overlap_ns as f64));
                    ui.label(percent_text(o.overlap_percent()));
                    ui.end_row();
                }
            });
        if overlap.per_kind.is_empty() {
            return;
        }
        ui.add_space(6.0);
        ui.label(RichText::new("By copy kind").strong());
        egui::Grid::new("analysis_overlap_by_kind")
            .striped(true)
            .show(ui, |ui| {
                for title in ["GPU", "Kind", "Memory ops", "Overlap", "Overlap %"] {
                    ui.label(RichText::new(title).strong());
                }
                ui.end_row();
                for k in &overlap.per_kind {
                    ui.label(k.device.to_string());
                    ui.label(k.label());
                    ui.label(format_duration(k.memory_ns as f64));
                    ui.label(format_duration(k.overlap_ns as f64));
                    ui.label(percent_text(k.overlap_percent()));
                    ui.end_row();
                }
            });
    }
}

/// The label of the gap list's row `rank` (1-based), e.g. `#1 GPU 0 · 2.345 ms`.
pub fn gap_label(rank: usize, gap: &IdleGap) -> String {
    let stream = gap
        .stream
        .map_or(String::new(), |s| format!(" stream {}", s.stream));
    format!(
        "#{rank} GPU {}{stream} · {}",
        gap.device,
        format_duration(gap.duration_ns() as f64)
    )
}

fn percent_text(p: Option<f64>) -> String {
    p.map_or("–".into(), |p| format!("{p:.1} %"))
}
