//! A kernel's roofline charts in its details, as ncu-ui draws them in the Speed Of Light
//! roofline sections: each level's ceiling (DRAM, L2, L1 — or FP32/FP64 in the single-level
//! chart) as a memory roof rising to the peak work, and the kernel's achieved point at each
//! level in the level's colour, on log–log axes. A chart with a ceiling per tensor operation
//! shows one operation at a time (the one the kernel did the most of, to begin with). The
//! numbers are [`crate::analysis::ncu::hierarchical`]'s.

use egui::{Color32, Ui};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use super::roofline::{decades, si};
use crate::analysis::ncu::hierarchical::{HierarchicalRoofline, LevelCeiling, LevelPoint};

/// The operation a label names: its parenthesised `key:value` list (`DRAM Roofline (Op:hgmma
/// Src:bf16 …)` → `Op:hgmma Src:bf16 …`, `(Src:fp16)` → `Src:fp16`); empty when it names none
/// (`L1 Roofline (Global/Local)` names the accesses, not an operation).
fn operation(label: &str) -> &str {
    label
        .split_once(" (")
        .map(|(_, rest)| rest.trim_end_matches(')'))
        .filter(|rest| rest.contains(':'))
        .unwrap_or("")
}

/// A level's colour, by the level its label starts with.
fn colour(label: &str) -> Color32 {
    if label.starts_with("DRAM") {
        Color32::from_rgb(0xd3, 0x54, 0x00)
    } else if label.starts_with("L2") {
        Color32::from_rgb(0x27, 0xae, 0x60)
    } else if label.starts_with("L1") {
        Color32::from_rgb(0x29, 0x80, 0xb9)
    } else if label.starts_with("Double") {
        Color32::from_rgb(0x9b, 0x59, 0xb6)
    } else {
        Color32::from_rgb(0x3a, 0x7c, 0xc8)
    }
}

/// Draws `chart`; `id` keeps its widgets apart from other charts'.
pub fn show(ui: &mut Ui, id: &str, chart: &HierarchicalRoofline) {
    let mut operations: Vec<&str> = Vec::new();
    for label in chart.ceilings.iter().map(|c| c.label.as_str()) {
        let op = operation(label);
        if !operations.contains(&op) {
            operations.push(op);
        }
    }
    let memory_id = ui.scope_id().with(("ncu_roofline_op", id));
    let mut op: String = ui.data(|d| d.get_temp(memory_id)).unwrap_or_else(|| {
        // The operation with the most achieved work (the kernel's own), else the first.
        chart
            .points
            .iter()
            .filter(|p| p.is_drawable())
            .max_by(|a, b| a.work.total_cmp(&b.work))
            .map(|p| operation(&p.label).to_string())
            .unwrap_or_else(|| operations.first().map_or(String::new(), |s| s.to_string()))
    });
    if operations.len() > 1 {
        egui::ComboBox::new(("ncu_roofline_ops", id), "Operation")
            .selected_text(op.as_str())
            .width(360.0)
            .show_ui(ui, |ui| {
                for o in &operations {
                    ui.selectable_value(&mut op, o.to_string(), *o);
                }
            });
        ui.data_mut(|d| d.insert_temp(memory_id, op.clone()));
    }
    let ceilings: Vec<&LevelCeiling> = chart
        .ceilings
        .iter()
        .filter(|c| operation(&c.label) == op)
        .collect();
    let points: Vec<&LevelPoint> = chart
        .points
        .iter()
        .filter(|p| operation(&p.label) == op && p.is_drawable())
        .collect();
    if points.is_empty() {
        ui.weak("no achieved point: the kernel did none of this work, or moved no bytes here");
    }
    // Intensities from 1e-3 to 1e4 operations per byte, and the points wherever they are.
    let (mut lo, mut hi) = (-3.0_f64, 4.0_f64);
    for p in &points {
        let x = p.intensity().log10();
        lo = lo.min(x.floor());
        hi = hi.max(x.ceil());
    }
    // Room for the top y tick's label, which egui_plot centres on the plot's top edge.
    ui.add_space(ui.text_style_height(&egui::TextStyle::Body));
    Plot::new(("ncu_hierarchical_roofline", id))
        .height(260.0)
        // Top left: above the memory roofs, clear of the points (high intensity, right).
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label("Arithmetic intensity (operations/byte)")
        .y_axis_label("Performance (operations/s)")
        .x_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .y_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .x_grid_spacer(decades)
        .y_grid_spacer(decades)
        .label_formatter(|pos| {
            let (name, p) = match pos {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", position),
            };
            let values = format!(
                "{} op/byte, {}op/s",
                si(10f64.powf(p.x)),
                si(10f64.powf(p.y))
            );
            Some(if name.is_empty() {
                values
            } else {
                format!("{name}\n{values}")
            })
        })
        .show(ui, |plot| {
            for c in &ceilings {
                if !(c.peak_work > 0.0 && c.peak_traffic > 0.0) {
                    continue;
                }
                let (ridge, peak) = (c.ridge().log10(), c.peak_work.log10());
                let line = vec![
                    [lo, (c.peak_traffic * 10f64.powf(lo)).log10()],
                    [ridge, peak],
                    [hi, peak],
                ];
                let name = format!(
                    "{} ({}op/s, {}B/s)",
                    c.label,
                    si(c.peak_work),
                    si(c.peak_traffic)
                );
                plot.line(
                    Line::new(name, PlotPoints::from(line))
                        .color(colour(&c.label))
                        .width(2.0),
                );
            }
            for p in &points {
                let at = [p.intensity().log10(), p.work.log10()];
                let share = chart
                    .ceiling_of(p)
                    .map(|c| p.work / c.attainable(p.intensity()) * 100.0);
                let name = match share {
                    Some(s) => format!("{} ({s:.1} % of its roof)", p.label),
                    None => p.label.clone(),
                };
                plot.points(
                    Points::new(name, vec![at])
                        .shape(MarkerShape::Circle)
                        .radius(5.0)
                        .color(colour(&p.label)),
                );
            }
        });
}
