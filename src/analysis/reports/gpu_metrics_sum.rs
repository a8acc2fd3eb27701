//! `gpu_metrics_sum` (GPU Metrics Summary): per GPU and metric, how many samples lie in the
//! range and their average, minimum and maximum. Nsight Systems 2023.4 has no such `nsys stats`
//! report; the columns follow the other summaries (Avg rounded to 0.1 as nsys rounds in SQL, Min
//! and Max exact), the values are as the export stores them (no unit conversion), and the metric
//! is named as the export names it ("SM Active [Throughput %]" from 2023.4, "SM Active" in the
//! 2022.x JSON form). Rows by device, then metric name.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::rounding::sqlite_round;
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::Needs;

pub struct GpuMetricsSum;

/// A stored value as a cell: integers (what nsys stores) as integers.
fn value_cell(v: f64) -> Cell {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Cell::Int(v as i64)
    } else {
        Cell::Float(v)
    }
}

impl StatsReport for GpuMetricsSum {
    fn name(&self) -> &'static str {
        "gpu_metrics_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::GPU_METRICS
    }

    fn title(&self) -> &'static str {
        "GPU Metrics Summary"
    }

    fn missing_data(&self) -> &'static str {
        "GPU metrics data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let range = &input.filter.range;
        let (start_ns, end_ns) = (
            range.start_ns.unwrap_or(i64::MIN),
            range.end_ns.unwrap_or(i64::MAX),
        );
        let mut table = Table::new(&["Device", "Metric", "Samples", "Avg", "Min", "Max"]);
        // The series are already ordered by (device, name).
        for s in &input.trace.gpu_metrics.series {
            let Some(stats) = s.stats(start_ns, end_ns) else {
                continue;
            };
            table.push(
                vec![
                    Cell::Int(i64::from(s.device)),
                    Cell::text(&s.name),
                    Cell::Int(stats.samples as i64),
                    Cell::Float(sqlite_round(stats.average(), 1)),
                    value_cell(stats.min),
                    value_cell(stats.max),
                ],
                RowEvents::None,
            );
        }
        table
    }
}
