//! The baseline a report tab compares with, as ncu-ui's "Set as baseline": a kernel of this
//! report or of another open report. With one set, the details page shows every metric's
//! baseline value and change; the bar above the details says which kernel it is and picks
//! another.

use std::sync::Arc;

use egui::Ui;

use super::details::BaselineRef;
use crate::trace::ncu::NcuReport;

/// A kernel to compare with.
#[derive(Clone)]
pub struct Baseline {
    pub report: Arc<NcuReport>,
    /// Index in the report's workloads.
    pub workload: usize,
    /// `ID 3 · name · file`, as the bar and the column's tooltip name it.
    pub label: String,
}

impl Baseline {
    pub fn new(report: Arc<NcuReport>, workload: usize, source: &str) -> Option<Self> {
        let w = report.workloads.get(workload)?;
        let label = format!("ID {} · {} · {source}", w.id, short(w.display_name(), 60));
        Some(Baseline {
            report,
            workload,
            label,
        })
    }

    pub fn as_ref(&self) -> Option<BaselineRef<'_>> {
        Some(BaselineRef {
            report: &self.report,
            workload: self.report.workloads.get(self.workload)?,
            label: &self.label,
        })
    }
}

/// An open report another tab shows, offered as a baseline source.
pub struct OpenReport {
    /// The tab's title (its file name).
    pub title: String,
    pub report: Arc<NcuReport>,
}

/// The baseline bar: what the baseline is, Clear, and a picker of a kernel from any open report
/// (`own` is this tab's report and title). Returns the new baseline when one was chosen or
/// cleared (`Some(None)`: cleared).
pub fn baseline_bar(
    ui: &mut Ui,
    current: Option<&Baseline>,
    own: (&str, &Arc<NcuReport>),
    others: &[OpenReport],
    picker_source: &mut usize,
) -> Option<Option<Baseline>> {
    let mut out = None;
    ui.horizontal_wrapped(|ui| {
        match current {
            Some(b) => {
                ui.label("Baseline:");
                ui.strong(&b.label);
                if ui.button("Clear baseline").clicked() {
                    out = Some(None);
                }
            }
            None => {
                ui.weak(
                    "No baseline: right-click a kernel and choose Set as baseline, or pick one:",
                );
            }
        }
        let sources: Vec<(&str, &Arc<NcuReport>)> = std::iter::once(own)
            .chain(others.iter().map(|o| (o.title.as_str(), &o.report)))
            .collect();
        *picker_source = (*picker_source).min(sources.len().saturating_sub(1));
        if sources.len() > 1 {
            egui::ComboBox::new("ncu_baseline_report", "report")
                .selected_text(sources[*picker_source].0)
                .show_ui(ui, |ui| {
                    for (i, (title, _)) in sources.iter().enumerate() {
                        ui.selectable_value(picker_source, i, *title);
                    }
                });
        }
        let (title, report) = sources[*picker_source];
        egui::ComboBox::new("ncu_baseline_kernel", "as baseline")
            .selected_text("Baseline kernel…")
            .width(260.0)
            .show_ui(ui, |ui| {
                for (i, w) in report.workloads.iter().enumerate() {
                    let text = format!("ID {} · {}", w.id, short(w.display_name(), 70));
                    if ui.selectable_label(false, text).clicked() {
                        out = Some(Baseline::new(report.clone(), i, title));
                    }
                }
            });
    });
    out
}

/// `name` cut to `max` characters.
pub fn short(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let cut: String = name.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}
