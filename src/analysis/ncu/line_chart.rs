//! ncu's line charts (the Occupancy section's "Impact of Varying Register Count Per Thread",
//! "… Block Size", "… Shared Memory Usage Per Block") as points to draw: each instanced metric
//! of the chart is a line over its instances (x: the instance's key — registers per thread,
//! threads per block, bytes of shared memory per block; y: its value), and the chart's
//! highlighted metric (the kernel's own registers, block size or shared memory) marks where the
//! kernel sits on it, as ncu-ui draws them. ncu's details page prints only each line's sum.

use super::shown;
use crate::trace::ncu::{BodyItem, BodyItemKind, NcuReport, NcuWorkload};

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartLine {
    pub label: String,
    pub metric: String,
    /// (x, y) by x.
    pub points: Vec<[f64; 2]>,
}

impl ChartLine {
    /// The line's value at `x`: the point there, else the nearest point before it (the charts
    /// are step functions of a configuration); `None` left of the first point.
    pub fn at(&self, x: f64) -> Option<f64> {
        self.points
            .iter()
            .take_while(|p| p[0] <= x)
            .last()
            .map(|p| p[1])
    }
}

/// A line chart of a kernel: its lines and the kernel's marks (label, x).
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub label: String,
    pub lines: Vec<ChartLine>,
    pub marks: Vec<(String, f64)>,
}

/// The line chart `item` draws for `w`; `None` when the item is no line chart or the kernel
/// has none of its lines.
pub fn line_chart(report: &NcuReport, w: &NcuWorkload, item: &BodyItem) -> Option<LineChart> {
    if item.kind != BodyItemKind::LineChart {
        return None;
    }
    let mut lines = Vec::new();
    let mut marks = Vec::new();
    for m in &item.metrics {
        let Some((name, label, value)) = shown(report, w, m) else {
            continue;
        };
        // A line's points are the instances ncu wrote beside its value (the value is their
        // sum, which the details page prints); the highlight is a single value.
        let instances: std::borrow::Cow<'_, [crate::trace::ncu::MetricInstance]> =
            match report.metric_id(name) {
                Some(id) => match (w.instances(id), w.instances_of(id)) {
                    (Some(list), _) => list.into(),
                    (None, Some(list)) => {
                        crate::load::ncu_rep::read_instances(report, list).unwrap_or_default()
                    }
                    (None, None) => Default::default(),
                },
                None => Default::default(),
            };
        let mut points: Vec<[f64; 2]> = instances
            .iter()
            .filter_map(|i| Some([i.correlation.as_ref()?.as_f64()?, i.value.as_f64()?]))
            .filter(|p| p[0].is_finite() && p[1].is_finite())
            .collect();
        if points.len() < 2 {
            if let Some(x) = value.as_f64() {
                marks.push((label, x));
            }
            continue;
        }
        points.sort_by(|a, b| a[0].total_cmp(&b[0]));
        lines.push(ChartLine {
            label,
            metric: name.to_string(),
            points,
        });
    }
    (!lines.is_empty()).then(|| LineChart {
        label: item.label.clone(),
        lines,
        marks,
    })
}
