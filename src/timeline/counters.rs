//! GPU metric counters in the timeline: a collapsible "Metrics" group under each GPU with one row
//! per metric, drawn as a filled line chart with the min and max of each pixel column (so a
//! 10 kHz series zoomed out shows its full swing instead of aliasing), and the hover lookup and
//! tooltip (metric, value with unit, time). Per frame the cost is one binary search and one
//! min/max pyramid query per pixel column ([`crate::trace::GpuMetricSeries::min_max_of`]), never
//! a walk over the samples.

use egui::epaint::{Mesh, Vertex, WHITE_UV};
use egui::{Color32, Pos2, Rect, Shape};

use super::navigation::{TimeToX, ViewState};
use super::painter::RowPlacement;
use super::rows::{GroupId, Row, RowKind, TimelineModel};
use crate::timeline::palette::Palette;
use crate::trace::{GpuMetricSeries, Trace};

pub const METRIC_ROW_HEIGHT: f32 = 34.0;

/// Devices that get a GPU header: those that ran anything, and those with metrics only (a GPU
/// that was sampled while idle still has counters to show).
pub fn gpu_row_devices(trace: &Trace) -> Vec<u32> {
    let mut devices = trace.devices();
    devices.extend(trace.gpu_metrics.devices());
    // A device with range lanes and no streams (a TPU of an XPlane).
    devices.extend(trace.threads.iter().filter_map(|t| t.gpu_lane));
    devices.sort_unstable();
    devices.dedup();
    devices
}

/// The "Metrics" header and one row per metric of `device`; the group starts collapsed.
pub fn push_metric_rows(
    trace: &Trace,
    device: u32,
    rows: &mut Vec<Row>,
    initially_collapsed: &mut Vec<GroupId>,
) {
    let mut series = trace.gpu_metrics.of_device(device).peekable();
    if series.peek().is_none() {
        return;
    }
    let group = GroupId::GpuMetrics(device);
    initially_collapsed.push(group);
    rows.push(Row {
        kind: RowKind::MetricsHeader { device },
        title: "Metrics".to_string(),
        indent: 1,
        toggles: Some(group),
        hidden_by: vec![GroupId::Gpu(device)],
        height_px: super::rows::EVENT_ROW_HEIGHT,
    });
    for (i, s) in series {
        rows.push(Row {
            kind: RowKind::GpuMetric { series: i },
            title: row_title(s),
            indent: 2,
            toggles: None,
            hidden_by: vec![GroupId::Gpu(device), group],
            height_px: METRIC_ROW_HEIGHT,
        });
    }
}

/// The export's own name when it carries its unit ("SM Active [Throughput %]"), else the name
/// and the unit we know ("SM Active [%]").
fn row_title(s: &GpuMetricSeries) -> String {
    match (&s.unit, s.name.contains('[')) {
        (Some(u), false) => format!("{} [{u}]", s.name),
        _ => s.name.clone(),
    }
}

/// The value range a chart spans: from 0 (or the lowest value, if negative) to the highest, and
/// a percentage at least to 100 so that 40 % looks like 40 %.
fn scale(s: &GpuMetricSeries) -> (f64, f64) {
    let (lo, hi) = s.min_max_of(0..s.len()).unwrap_or((0.0, 1.0));
    let hi = if s.unit.as_deref() == Some("%") {
        hi.max(100.0)
    } else {
        hi
    };
    let lo = lo.min(0.0);
    (lo, if hi > lo { hi } else { lo + 1.0 })
}

/// Chart colours: a teal fill and a stronger line, readable on both palettes.
fn colors(palette: &Palette) -> (Color32, Color32) {
    if palette.dark {
        (
            Color32::from_rgba_unmultiplied(64, 190, 170, 70),
            Color32::from_rgb(90, 220, 195),
        )
    } else {
        (
            Color32::from_rgba_unmultiplied(20, 140, 125, 60),
            Color32::from_rgb(10, 120, 105),
        )
    }
}

fn quad(mesh: &mut Mesh, rect: Rect, color: Color32) {
    let i = mesh.vertices.len() as u32;
    for pos in [
        rect.left_top(),
        rect.right_top(),
        rect.right_bottom(),
        rect.left_bottom(),
    ] {
        mesh.vertices.push(Vertex {
            pos,
            uv: WHITE_UV,
            color,
        });
    }
    mesh.indices.extend([i, i + 1, i + 2, i, i + 2, i + 3]);
}

/// Draws series `series` into `bar`: per pixel column, the area under the column's max (filled)
/// and the band from its min to its max (the line). A column with no sample of its own, zoomed
/// in between two samples, takes the next sample's value: a sample reports the period that ends
/// at its time.
pub fn paint_metric(
    trace: &Trace,
    series: usize,
    map: &TimeToX,
    bar: Rect,
    palette: &Palette,
    out: &mut Vec<Shape>,
) {
    let Some(s) = trace.gpu_metrics.series.get(series) else {
        return;
    };
    let (Some(&first), Some(&last)) = (s.time_ns.first(), s.time_ns.last()) else {
        return;
    };
    let (lo, hi) = scale(s);
    let y_of = |v: f64| bar.bottom() - bar.height() * ((v - lo) / (hi - lo)).clamp(0.0, 1.0) as f32;
    let (fill, line) = colors(palette);
    let x_from = map.x(first).max(bar.left()).floor();
    let x_to = map.x(last).min(bar.right()).ceil();
    let mut mesh = Mesh::default();
    let mut x = x_from;
    while x < x_to {
        let (t0, t1) = (map.t(x), map.t(x + 1.0));
        let samples = s.samples_in(t0.ceil() as i64, t1.ceil() as i64);
        let range = if samples.is_empty() {
            // The sample whose period covers this column.
            (samples.end < s.len()).then(|| (s.value[samples.end], s.value[samples.end]))
        } else {
            s.min_max_of(samples)
        };
        if let Some((min, max)) = range {
            let (y_max, y_min) = (y_of(max), y_of(min));
            if y_max < bar.bottom() {
                quad(
                    &mut mesh,
                    Rect::from_x_y_ranges(x..=x + 1.0, y_max..=bar.bottom()),
                    fill,
                );
            }
            // At least 1.5 px of line, centred on a flat value.
            let (top, bottom) = if y_min - y_max < 1.5 {
                let mid = (y_min + y_max) / 2.0;
                (mid - 0.75, mid + 0.75)
            } else {
                (y_max, y_min)
            };
            quad(
                &mut mesh,
                Rect::from_x_y_ranges(x..=x + 1.0, top..=bottom),
                line,
            );
        }
        x += 1.0;
    }
    if !mesh.is_empty() {
        out.push(Shape::mesh(mesh));
    }
}

/// What the pointer is over in a counter row: the series and its sample nearest the pointer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricHover {
    pub series: usize,
    pub sample: usize,
    /// Samples in the pointer's pixel column (more than one when zoomed out).
    pub in_column: (usize, usize),
}

/// The counter sample under `pos`, when `pos` is over a metric row within its samples' span.
pub fn metric_at(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    pos: Pos2,
) -> Option<MetricHover> {
    let placement = super::painter::placement_at(rows, rect, pos)?;
    let RowKind::GpuMetric { series } = model.rows.get(placement.row)?.kind else {
        return None;
    };
    let s = trace.gpu_metrics.series.get(series)?;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let t = map.t(pos.x);
    let (first, last) = (*s.time_ns.first()?, *s.time_ns.last()?);
    let slack = map.ns_per_px() * 3.0;
    if t < first as f64 - slack || t > last as f64 + slack {
        return None;
    }
    let column = s.samples_in(
        map.t(pos.x.floor()).ceil() as i64,
        map.t(pos.x.floor() + 1.0).ceil() as i64,
    );
    // The sample the pixel column is drawn from, as [`paint_metric`] draws it: the one nearest
    // the pointer among the column's samples, or, in a column with none, the next sample (whose
    // period covers it). The nearest sample overall could lie in a neighbouring column and show a
    // value outside the column's band.
    let nearest = s.nearest(t.round() as i64)?;
    let sample = if column.is_empty() {
        if column.end < s.len() {
            column.end
        } else {
            nearest
        }
    } else {
        nearest.clamp(column.start, column.end - 1)
    };
    Some(MetricHover {
        series,
        sample,
        in_column: (column.start, column.end),
    })
}
