//! A matched kernel's Nsight Compute numbers in the details panel: its duration as ncu measured
//! it, the Speed Of Light throughputs, occupancy, registers, and what ncu's rules advise. Kept
//! apart so that the report tab's full section view can take its place.

use egui::Ui;

use crate::analysis::ncu::facts::{self, WorkloadFacts};
use crate::trace::ncu::{NcuReport, NcuWorkload};
use crate::ui::ncu_attach::AttachedNcu;
use crate::ui::timeline::format_duration;

/// The rows of the facts table: (label, value), values missing from the report left out.
pub fn fact_rows(f: &WorkloadFacts) -> Vec<(&'static str, String)> {
    let pct = |v: Option<f64>| v.map(|v| format!("{v:.1} %"));
    [
        ("Duration in ncu", f.duration_ns.map(format_duration)),
        ("Compute (SM)", pct(f.compute_pct)),
        ("Memory", pct(f.memory_pct)),
        ("DRAM", pct(f.dram_pct)),
        ("Achieved occupancy", pct(f.occupancy_pct)),
        (
            "Registers/thread",
            f.registers_per_thread.map(|r| format!("{r:.0}")),
        ),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.map(|v| (k, v)))
    .collect()
}

/// The section for timeline kernel `kernel`: its workload's numbers and rules, or a line saying
/// ncu did not profile it. Returns the workload whose Source window was asked for.
pub fn show_for_kernel(ui: &mut Ui, ncu: &AttachedNcu, kernel: usize) -> Option<usize> {
    match ncu.workload_of_kernel(kernel) {
        Some(w) => {
            show(ui, &ncu.report, w);
            let asked = ui
                .button("Source")
                .on_hover_text("The kernel's SASS with per-instruction counters, in a window")
                .clicked();
            asked.then(|| ncu.join.workload_of_kernel(kernel)).flatten()
        }
        None => {
            ui.strong("Nsight Compute");
            ui.weak("Not profiled in the attached report (or not matched to it).");
            None
        }
    }
}

/// One workload's numbers and rules.
pub fn show(ui: &mut Ui, report: &NcuReport, w: &NcuWorkload) {
    let f = facts::workload_facts(report, w);
    ui.strong(format!("Nsight Compute · ID {}", w.id)).on_hover_text(
        "Measured by ncu in its own run, the kernel serialised and replayed: its duration is not \
         the timeline's",
    );
    egui::Grid::new(("sightline_ncu_facts", w.id))
        .num_columns(2)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            for (key, value) in fact_rows(&f) {
                ui.weak(key);
                ui.add(egui::Label::new(value).selectable(true));
                ui.end_row();
            }
        });
    if f.rules.is_empty() {
        return;
    }
    ui.add_space(4.0);
    ui.weak("Rules");
    for rule in &f.rules {
        // ncu's estimate is global (a share of the kernel's time) or local (of the part the
        // rule looks at): the rules come ranked global first, and each says which it has.
        let speedup = rule.speedup_pct.map_or_else(String::new, |s| {
            format!(" · est. {} speedup {s:.1} %", rule.speedup_kind())
        });
        ui.label(egui::RichText::new(format!("{} {}{speedup}", rule.kind, rule.title)).strong());
        ui.add(egui::Label::new(egui::RichText::new(&rule.message).small()).wrap());
    }
}
