//! The roofline page of a report tab: every kernel's achieved FP32 (and, where it did any, FP64)
//! work against its arithmetic intensity on log–log axes, under the device's FP32 and FP64 roofs
//! (one set: measured with the report's first kernel that has them; ncu draws the chart per
//! kernel with the clocks of its replay, which moves the roofs a little from kernel to kernel). The computation is [`crate::analysis::ncu::roofline`]'s; where the report lacks its
//! metrics the page names them instead of drawing.

use egui::{Color32, Ui};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use crate::analysis::ncu::roofline::{Precision, Roofline, ceiling};
use crate::trace::ncu::NcuReport;

/// Name of the FP32 points series (the plot's hover finds a kernel by its index in it).
pub const FP32_POINTS: &str = "FP32 achieved";
pub const FP64_POINTS: &str = "FP64 achieved";

/// Draws the roofline; returns the workload clicked, if any.
pub fn roofline_ui(
    ui: &mut Ui,
    report: &NcuReport,
    roofline: &Roofline,
    selected: Option<usize>,
) -> Option<usize> {
    if roofline.is_empty() {
        ui.label("No roofline: this report lacks the metrics ncu's roofline chart uses (profile with --set full or --section SpeedOfLight_RooflineChart). Missing:");
        for m in &roofline.missing {
            ui.monospace(*m);
        }
        return None;
    }
    // The device's roofs, one set whichever kernel is selected: as measured with the first
    // kernel that has them (picking another kernel moved the lines, 50.4 → 50.0 TFLOP/s).
    let with = (0..report.workloads.len()).find(|&i| {
        report
            .workloads
            .get(i)
            .is_some_and(|w| ceiling(report, w, Precision::Fp32).is_ok())
    });
    let ceilings: Vec<_> = with
        .and_then(|i| report.workloads.get(i))
        .map(|w| {
            Precision::ALL
                .iter()
                .filter_map(|&p| ceiling(report, w, p).ok())
                .collect()
        })
        .unwrap_or_default();
    let drawn = |p: Precision| {
        roofline
            .points(p)
            .iter()
            .filter(|a| a.is_drawable())
            .count()
    };
    let (n32, n64) = (drawn(Precision::Fp32), drawn(Precision::Fp64));
    ui.label(format!(
        "{n32} kernels with FP32 work, {n64} with FP64 work (kernels without floating-point work or DRAM traffic have no point on log axes); roofs measured with kernel ID {}",
        with.and_then(|i| report.workloads.get(i)).map_or(0, |w| w.id)
    ));
    // Room for the top y tick's label ("100 T"), which egui_plot centres on the plot's top edge
    // and so drew over the caption.
    ui.add_space(ui.text_style_height(&egui::TextStyle::Body));
    // Intensities from 1e-3 to 1e4 FLOP/byte cover kernels from copies to large GEMMs.
    let (lo, hi) = (-3.0_f64, 4.0_f64);
    let roof_colour = |p: Precision| match p {
        Precision::Fp32 => Color32::from_rgb(0x3a, 0x7c, 0xc8),
        Precision::Fp64 => Color32::from_rgb(0x9b, 0x59, 0xb6),
    };
    let points = |p: Precision| -> Vec<[f64; 2]> {
        roofline
            .points(p)
            .iter()
            .filter(|a| a.is_drawable())
            .map(|a| [a.intensity().log10(), a.work.log10()])
            .collect()
    };
    let fp32_index: Vec<usize> = indices(roofline, Precision::Fp32);
    let fp64_index: Vec<usize> = indices(roofline, Precision::Fp64);
    let selected_point = selected.and_then(|s| {
        roofline
            .points(Precision::Fp32)
            .iter()
            .find(|a| a.workload == s && a.is_drawable())
            .map(|a| [a.intensity().log10(), a.work.log10()])
    });
    let label = |name: &str, x: f64, y: f64, index: Option<usize>| -> String {
        let kernel = index.and_then(|i| {
            let list = if name == FP32_POINTS {
                &fp32_index
            } else if name == FP64_POINTS {
                &fp64_index
            } else {
                return None;
            };
            list.get(i).and_then(|&w| report.workloads.get(w))
        });
        let values = format!(
            "{} FLOP/byte, {}FLOP/s",
            si(10f64.powf(x)),
            si(10f64.powf(y))
        );
        match kernel {
            Some(w) => format!(
                "ID {} · {}\n{name}: {values}",
                w.id,
                short(w.display_name())
            ),
            None => values,
        }
    };
    let response = Plot::new("ncu_roofline")
        .height(ui.available_height().max(120.0))
        .legend(Legend::default())
        .x_axis_label("Arithmetic intensity (FLOP/byte)")
        .y_axis_label("Performance (FLOP/s)")
        .x_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .y_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .x_grid_spacer(decades)
        .y_grid_spacer(decades)
        .label_formatter(move |pos| match pos {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name,
                position,
                index,
            } => Some(label(plot_name, position.x, position.y, Some(*index))),
            egui_plot::HoverPosition::Elsewhere { position } => {
                Some(label("", position.x, position.y, None))
            }
        })
        .show(ui, |plot| {
            for c in &ceilings {
                let ridge = c.ridge_intensity().log10();
                let peak = c.peak_work.log10();
                let line = vec![
                    [lo, (c.peak_traffic * 10f64.powf(lo)).log10()],
                    [ridge, peak],
                    [hi, peak],
                ];
                plot.line(
                    Line::new(
                        format!(
                            "{} roof ({}FLOP/s, {}B/s)",
                            c.precision.label(),
                            si(c.peak_work),
                            si(c.peak_traffic)
                        ),
                        PlotPoints::from(line),
                    )
                    .color(roof_colour(c.precision))
                    .width(2.0),
                );
            }
            plot.points(
                Points::new(FP32_POINTS, points(Precision::Fp32))
                    .shape(MarkerShape::Circle)
                    .radius(4.0)
                    .color(roof_colour(Precision::Fp32)),
            );
            let fp64 = points(Precision::Fp64);
            if !fp64.is_empty() {
                plot.points(
                    Points::new(FP64_POINTS, fp64)
                        .shape(MarkerShape::Diamond)
                        .radius(4.0)
                        .color(roof_colour(Precision::Fp64)),
                );
            }
            if let Some(p) = selected_point {
                plot.points(
                    Points::new("Selected kernel", vec![p])
                        .shape(MarkerShape::Circle)
                        .radius(8.0)
                        .filled(false)
                        .color(Color32::from_rgb(0xe0, 0x8a, 0x1e)),
                );
            }
        });
    // A click selects the kernel whose point is nearest the pointer, within a few points.
    if !response.response.clicked() {
        return None;
    }
    let pointer = response.response.interact_pointer_pos()?;
    roofline
        .points(Precision::Fp32)
        .iter()
        .filter(|a| a.is_drawable())
        .map(|a| {
            let at = response
                .transform
                .position_from_point(&egui_plot::PlotPoint::new(
                    a.intensity().log10(),
                    a.work.log10(),
                ));
            (a.workload, at.distance(pointer))
        })
        .filter(|(_, d)| *d <= CLICK_RADIUS_PX)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(w, _)| w)
}

/// How far from a point a click still selects its kernel.
const CLICK_RADIUS_PX: f32 = 8.0;

/// Grid lines at each power of ten (the axes hold log10 of the values).
pub fn decades(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (a, b) = input.bounds;
    let (from, to) = (a.floor() as i64, b.ceil() as i64);
    if to - from > 60 {
        return Vec::new();
    }
    (from..=to)
        .map(|k| egui_plot::GridMark {
            value: k as f64,
            step_size: 1.0,
        })
        .collect()
}

/// The workloads of the drawable points at `p`, in the plotted order.
fn indices(roofline: &Roofline, p: Precision) -> Vec<usize> {
    roofline
        .points(p)
        .iter()
        .filter(|a| a.is_drawable())
        .map(|a| a.workload)
        .collect()
}

/// A name cut to 80 characters for a tooltip.
fn short(name: &str) -> String {
    if name.chars().count() <= 80 {
        return name.to_string();
    }
    let cut: String = name.chars().take(79).collect();
    format!("{cut}…")
}

/// `51.6 T`, `210 G`, `0.5`: a value with an SI prefix and three significant digits.
pub fn si(v: f64) -> String {
    let (scale, prefix) = crate::analysis::ncu::units::si_prefix(v);
    let x = v / scale;
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else if x.abs() >= 1.0 || x == 0.0 {
        2
    } else {
        3
    };
    format!("{x:.digits$} {prefix}")
}
