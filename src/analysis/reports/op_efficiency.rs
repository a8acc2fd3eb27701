//! `op_efficiency` (Sightline's own report): is each PyTorch operator fast? One row per operator
//! and distinct arguments with its FLOPs and bytes from the recorded shapes, its GPU time, the
//! TFLOP/s and TB/s it reached and how close that is to the GPU's roofline, as
//! [`crate::analysis::op_efficiency`] computes them — TraceLens' `unified_perf_summary`.
//!
//! Columns `Name,Category,Input Dims,Input Type,Count,Kernel Time Sum (µs),Kernel Time Mean
//! (µs),GFLOPS,Data Moved (MB),FLOPS/Byte,TFLOPS/s Mean,TB/s Mean,Peak TFLOPS/s,Peak TB/s,% of
//! Roofline`; rows by kernel time descending. Numbers at full precision (Python's `repr`); a
//! column a row has no number for (no model, an unknown GPU) is empty.

use super::{ReportInput, StatsReport};
use crate::analysis::op_efficiency::{NEEDS, OpEfficiency, op_efficiency};
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::analysis::{EventTable, GpuOpKind};
use crate::trace::Needs;

pub struct OpEfficiencyReport;

pub const COLUMNS: [&str; 15] = [
    "Name",
    "Category",
    "Input Dims",
    "Input Type",
    "Count",
    "Kernel Time Sum (µs)",
    "Kernel Time Mean (µs)",
    "GFLOPS",
    "Data Moved (MB)",
    "FLOPS/Byte",
    "TFLOPS/s Mean",
    "TB/s Mean",
    "Peak TFLOPS/s",
    "Peak TB/s",
    "% of Roofline",
];

impl StatsReport for OpEfficiencyReport {
    fn name(&self) -> &'static str {
        "op_efficiency"
    }

    fn title(&self) -> &'static str {
        "PyTorch Operator Efficiency (FLOPs and bytes against the roofline)"
    }

    fn missing_data(&self) -> &'static str {
        "PyTorch operator data with GPU work"
    }

    fn needs(&self, _options: &super::ReportOptions) -> Needs {
        NEEDS
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let rows = op_efficiency(input.trace, input.filter);
        let mut table = Table::new(&COLUMNS).limited(input.row_limit);
        for row in rows {
            // The operator calls and the GPU work under them: a chosen row outlines both.
            let events = if input.with_events && !row.calls.is_empty() {
                let mut events = row.calls.clone();
                events.extend(row.gpu_work.iter().filter_map(|w| {
                    let table = match w.kind {
                        GpuOpKind::Kernel => EventTable::Kernels,
                        GpuOpKind::Memcpy => EventTable::Memcpys,
                        GpuOpKind::Memset => EventTable::Memsets,
                        GpuOpKind::Graph => return None,
                    };
                    Some(EventRef::new(table, w.index))
                }));
                RowEvents::Events(events)
            } else {
                RowEvents::None
            };
            table.push(cells(&row), events);
        }
        table
    }
}

fn float(v: Option<f64>) -> Cell {
    match v {
        Some(v) if v.is_finite() => Cell::Float(v),
        _ => Cell::Null,
    }
}

/// One row's cells, in [`COLUMNS`] order.
pub fn cells(row: &OpEfficiency) -> Vec<Cell> {
    vec![
        Cell::text(row.name.clone()),
        Cell::text(row.category.clone()),
        Cell::text(row.input_dims.clone()),
        Cell::text(row.input_types.clone()),
        Cell::Int(i64::try_from(row.count).unwrap_or(i64::MAX)),
        Cell::Float(row.kernel_time_sum_us),
        Cell::Float(row.kernel_time_mean_us),
        float(row.gflops),
        float(row.data_moved_mb),
        float(row.flops_per_byte),
        float(row.tflops_per_s),
        float(row.tb_per_s),
        float(row.peak.and_then(|p| p.tflops)),
        float(row.peak.and_then(|p| p.tb_per_s)),
        float(row.pct_of_roofline),
    ]
}
