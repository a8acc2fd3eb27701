//! The roofline chart of the `op_efficiency` report in the Statistics tab: each operator row (by
//! name and arguments) as a point of arithmetic intensity (FLOPS/Byte) against the TFLOP/s it
//! reached, sized by its GPU time, under the GPU's roofs for each data type (its datasheet
//! figures, [`crate::analysis::op_efficiency::peaks`]). A click on a point chooses its row, as a
//! click in the table does.

use egui::{Color32, Ui};
use egui_plot::{Legend, Line, MarkerShape, Plot, PlotPoints, Points};

use crate::analysis::Table;
use crate::analysis::op_efficiency::peaks::gpu_peaks;
use crate::trace::Trace;
use crate::ui::ncu::roofline::{decades, si};

/// One drawable row: its index in the table, log10 intensity and log10 TFLOP/s, its time, and
/// whether its work is matrix work.
struct Dot {
    row: usize,
    x: f64,
    y: f64,
    time_us: f64,
    matrix: bool,
}

fn dots(table: &Table) -> Vec<Dot> {
    let col = |name: &str| table.column(name);
    let (Some(fpb), Some(tflops), Some(time), Some(category)) = (
        col("FLOPS/Byte"),
        col("TFLOPS/s Mean"),
        col("Kernel Time Sum (µs)"),
        col("Category"),
    ) else {
        return Vec::new();
    };
    table
        .rows
        .iter()
        .enumerate()
        .filter_map(|(row, r)| {
            let x = r.cells.get(fpb)?.number()?;
            let y = r.cells.get(tflops)?.number()?;
            if x <= 0.0 || y <= 0.0 {
                return None;
            }
            let category = r.cells.get(category)?.csv_text();
            Some(Dot {
                row,
                x: x.log10(),
                y: y.log10(),
                time_us: r.cells.get(time)?.number().unwrap_or(0.0),
                matrix: ["GEMM", "SDPA", "CONV"]
                    .iter()
                    .any(|c| category.starts_with(c)),
            })
        })
        .collect()
}

/// Name of the matrix-work points (the plot's legend groups the points by name).
pub const MATRIX_POINTS: &str = "Operators: matrix (GEMM, attention, conv)";
pub const VECTOR_POINTS: &str = "Operators: vector (elementwise, reductions, norms)";

/// Draws the chart; returns the table row whose point was clicked.
pub fn op_roofline_ui(
    ui: &mut Ui,
    trace: &Trace,
    table: &Table,
    chosen: Option<usize>,
) -> Option<usize> {
    let dots = dots(table);
    let peaks = gpu_peaks(trace);
    match peaks.note() {
        Some(note) => ui.label(format!("Roofline: {note}.")),
        None if dots.is_empty() => ui.label(format!(
            "Roofline of {} ({}): no operator has both FLOPs and bytes moved (bytes need the \
             inputs' data types, which emit_nvtx does not record)",
            peaks.gpu_name,
            peaks.spec.map_or("", |s| s.name),
        )),
        None => ui.label(format!(
            "Roofline of {} ({}): {} operators with FLOPs; point area by GPU time",
            peaks.gpu_name,
            peaks.spec.map_or("", |s| s.name),
            dots.len()
        )),
    };
    if dots.is_empty() {
        return None;
    }
    // Room above the plot for its top tick label (drawn half above the frame), clear of the
    // caption.
    ui.add_space(22.0);
    let max_time = dots.iter().map(|d| d.time_us).fold(0.0_f64, f64::max);
    let radius = |t: f64| 2.5 + 9.0 * (t / max_time.max(1e-9)).sqrt();
    let (lo, hi) = (-3.0_f64, 4.0_f64);
    let roofs = peaks.roofs();
    let bandwidth = peaks.spec.map(|s| s.tb_per_s);
    let vector = peaks.spec.map(|s| s.fp32);
    let rows: Vec<usize> = dots.iter().map(|d| d.row).collect();
    let name_col = table.column("Name");
    let row_name = move |row: usize| -> String {
        name_col
            .and_then(|c| table.rows.get(row)?.cells.get(c).map(|c| c.csv_text()))
            .unwrap_or_default()
    };
    let label_of = |x: f64, y: f64| {
        format!(
            "{} FLOP/byte, {}FLOP/s",
            si(10f64.powf(x)),
            si(10f64.powf(y) * 1e12)
        )
    };
    let response = Plot::new("op_roofline")
        .height(300.0)
        // Top left is above every roof's memory slope, where no point can be: the legend
        // hides none of them there (top right covered the GEMMs).
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label("Arithmetic intensity (FLOP/byte)")
        .y_axis_label("TFLOP/s")
        .x_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .y_axis_formatter(|m, _| si(10f64.powf(m.value)))
        .x_grid_spacer(decades)
        .y_grid_spacer(decades)
        .label_formatter(move |pos| {
            let p = match pos {
                egui_plot::HoverPosition::NearDataPoint { position, .. } => position,
                egui_plot::HoverPosition::Elsewhere { position } => position,
            };
            Some(label_of(p.x, p.y))
        })
        .show(ui, |plot| {
            if let Some(bw) = bandwidth {
                let mut roof = |label: String, tflops: f64, colour: Color32| {
                    let ridge = (tflops / bw).log10();
                    let line = vec![
                        [lo, (bw * 10f64.powf(lo)).log10()],
                        [ridge, tflops.log10()],
                        [hi, tflops.log10()],
                    ];
                    plot.line(
                        Line::new(label, PlotPoints::from(line))
                            .color(colour)
                            .width(1.5),
                    );
                };
                let colours = [
                    Color32::from_rgb(0x3a, 0x7c, 0xc8),
                    Color32::from_rgb(0x2e, 0x9e, 0x6a),
                    Color32::from_rgb(0xc8, 0x6a, 0x3a),
                    Color32::from_rgb(0x9b, 0x59, 0xb6),
                ];
                for (k, (label, tflops)) in roofs.iter().enumerate() {
                    roof(
                        format!(
                            "{label} matrix roof ({}FLOP/s, {}B/s)",
                            si(tflops * 1e12),
                            si(bw * 1e12)
                        ),
                        *tflops,
                        colours[k % colours.len()],
                    );
                }
                if let Some(v) = vector {
                    roof(
                        format!("Vector roof ({}FLOP/s)", si(v * 1e12)),
                        v,
                        Color32::GRAY,
                    );
                }
            }
            for d in &dots {
                let (name, colour) = if d.matrix {
                    (MATRIX_POINTS, Color32::from_rgb(0xd0, 0x40, 0x40))
                } else {
                    (VECTOR_POINTS, Color32::from_rgb(0x40, 0x80, 0xd0))
                };
                plot.points(
                    Points::new(name, vec![[d.x, d.y]])
                        .shape(MarkerShape::Circle)
                        .radius(radius(d.time_us) as f32)
                        .color(colour),
                );
            }
            if let Some(d) = chosen.and_then(|c| dots.iter().find(|d| d.row == c)) {
                plot.points(
                    Points::new("Chosen row", vec![[d.x, d.y]])
                        .shape(MarkerShape::Circle)
                        .radius(radius(d.time_us) as f32 + 4.0)
                        .filled(false)
                        .color(Color32::from_rgb(0xe0, 0x8a, 0x1e)),
                );
            }
        });
    let chosen_name = chosen.map(&row_name);
    if let Some(name) = chosen_name.filter(|n| !n.is_empty()) {
        ui.label(format!("Chosen: {name}"));
    }
    if !response.response.clicked() {
        return None;
    }
    let pointer = response.response.interact_pointer_pos()?;
    dots.iter()
        .zip(&rows)
        .map(|(d, &row)| {
            let at = response
                .transform
                .position_from_point(&egui_plot::PlotPoint::new(d.x, d.y));
            (row, at.distance(pointer) - radius(d.time_us) as f32)
        })
        .filter(|(_, d)| *d <= 6.0)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(row, _)| row)
}
