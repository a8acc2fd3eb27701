//! The Raw page of a report tab: every metric the selected kernel has, by name, with its value
//! and unit (and the baseline's value and the change), filtered by a part of the name; only the
//! rows on screen are drawn.

use egui::Ui;

use super::details::{BaselineRef, baseline_cells};
use crate::analysis::ncu::units;
use crate::trace::ncu::{NcuReport, NcuWorkload};

pub fn raw_metrics(
    ui: &mut Ui,
    report: &NcuReport,
    workload: &NcuWorkload,
    baseline: Option<BaselineRef<'_>>,
    filter: &mut String,
) {
    ui.horizontal(|ui| {
        ui.label("Metric name contains:");
        ui.text_edit_singleline(filter);
    });
    let needle = filter.trim().to_lowercase();
    let shown: Vec<usize> = workload
        .metrics
        .iter()
        .enumerate()
        .filter(|(_, (id, _))| {
            needle.is_empty() || report.metric_name(*id).to_lowercase().contains(&needle)
        })
        .map(|(i, _)| i)
        .collect();
    ui.weak(format!(
        "{} of {} metrics",
        shown.len(),
        workload.metrics.len()
    ));
    let height = ui.spacing().interact_size.y;
    egui::ScrollArea::vertical()
        .id_salt("ncu_raw")
        .auto_shrink([false, false])
        .show_rows(ui, height, shown.len(), |ui, range| {
            egui::Grid::new(("ncu_raw_grid", range.start))
                .striped(true)
                .num_columns(if baseline.is_some() { 5 } else { 3 })
                .spacing([16.0, 2.0])
                .min_row_height(height)
                .show(ui, |ui| {
                    for &k in &shown[range] {
                        let Some((id, value)) = workload.metrics.get(k) else {
                            continue;
                        };
                        let name = report.metric_name(*id);
                        let unit = units::metric_unit(report, *id, name);
                        let (text, unit) = units::display(&unit, value);
                        ui.monospace(name);
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            ui.label(text);
                        });
                        ui.weak(unit);
                        if let Some(b) = baseline {
                            baseline_cells(ui, b, name, value.as_f64());
                        }
                        ui.end_row();
                    }
                });
        });
}
