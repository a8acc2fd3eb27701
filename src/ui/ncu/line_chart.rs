//! An ncu line chart in the kernel's details (the Occupancy section's "Impact of Varying …"):
//! each line over its configurations, the kernel's own configuration marked by a vertical line
//! and a ring on each line, as ncu-ui draws them ([`crate::analysis::ncu::line_chart`] gives
//! the points).

use egui::{Color32, Ui};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points, VLine};

use crate::analysis::ncu::line_chart::LineChart;

/// The chart's height in points.
const HEIGHT: f32 = 170.0;
/// The colour of the kernel's mark (the roofline's selected-kernel orange).
const MARK: Color32 = Color32::from_rgb(0xe0, 0x8a, 0x1e);

/// Draws `chart` (its label is the item's caption, drawn by the caller).
pub fn show(ui: &mut Ui, id: impl std::hash::Hash + std::fmt::Debug, chart: &LineChart) {
    let marks: Vec<String> = chart
        .marks
        .iter()
        .map(|(label, x)| format!("{label}: {}", number(*x)))
        .collect();
    if !marks.is_empty() {
        ui.label(format!("This kernel — {}", marks.join(", ")));
    }
    Plot::new(("ncu_line_chart", id))
        .height(HEIGHT)
        .legend(Legend::default().position(egui_plot::Corner::RightBottom))
        .allow_scroll(false)
        .show(ui, |plot| {
            for line in &chart.lines {
                plot.line(
                    Line::new(line.label.clone(), PlotPoints::from(line.points.clone())).width(1.5),
                );
                let at: Vec<[f64; 2]> = chart
                    .marks
                    .iter()
                    .filter_map(|(_, x)| Some([*x, line.at(*x)?]))
                    .collect();
                if !at.is_empty() {
                    plot.points(
                        Points::new(format!("{} (this kernel)", line.label), at)
                            .shape(MarkerShape::Circle)
                            .radius(5.0)
                            .filled(false)
                            .color(MARK),
                    );
                }
            }
            for (label, x) in &chart.marks {
                plot.vline(VLine::new(label.clone(), *x).color(MARK.gamma_multiply(0.6)));
            }
        });
}

/// `256`, `0.5`: whole numbers without decimals.
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x:.3}")
    }
}
