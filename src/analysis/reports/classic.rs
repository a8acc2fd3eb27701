//! The five classic summaries (`cuda_api_sum`, `cuda_gpu_kern_sum`, `cuda_gpu_mem_time_sum`,
//! `cuda_gpu_mem_size_sum`, `nvtx_sum`) as registered reports. Their computation lives in
//! [`crate::analysis::stats`]; this module turns a [`ReportTable`] into cells and, for the panel,
//! finds the events behind each row.

use std::collections::HashMap;

use super::cuda_gpu_kern_gb_sum::kernel_summary;
use super::kernel_names::KernelNaming;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::filter::EventTable;
use crate::analysis::stats::{self, Report, ReportTable};
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::{Needs, NvtxStyle, Trace};

macro_rules! classic_report {
    ($ty:ident, $report:expr, $needs:expr) => {
        pub struct $ty;
        impl StatsReport for $ty {
            fn name(&self) -> &'static str {
                $report.id()
            }
            fn needs(&self, _options: &ReportOptions) -> Needs {
                $needs
            }
            fn title(&self) -> &'static str {
                $report.title()
            }
            fn missing_data(&self) -> &'static str {
                $report.missing_data()
            }
            fn compute(&self, input: &ReportInput) -> Table {
                let table =
                    stats::compute_as(input.trace, $report, input.filter, input.nsys_format);
                to_table(input, &table)
            }
        }
    };
}

/// `cuda_gpu_kern_sum`; under `base`, `mangled` or `nvtx-name` its kernels are named by
/// [`super::kernel_names`] and summed by the same code as `cuda_gpu_kern_gb_sum` (the two scripts
/// share nsys's `CUPTI_ACTIVITY_KIND_KERNEL_NAMED` view and `ORDER BY`).
pub struct CudaGpuKernSum;

impl StatsReport for CudaGpuKernSum {
    fn name(&self) -> &'static str {
        Report::Kernels.id()
    }
    fn title(&self) -> &'static str {
        Report::Kernels.title()
    }
    fn missing_data(&self) -> &'static str {
        Report::Kernels.missing_data()
    }
    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        if KernelNaming::options_rename(options) {
            KernelNaming::needs(options)
        } else {
            Needs::KERNELS.lean()
        }
    }
    fn compute(&self, input: &ReportInput) -> Table {
        if !KernelNaming::options_rename(input.options) {
            let table = stats::compute_as(
                input.trace,
                Report::Kernels,
                input.filter,
                input.nsys_format,
            );
            to_table(input, &table)
        } else {
            kernel_summary(input, false)
        }
    }
}

classic_report!(CudaApiSum, Report::CudaApi, Needs::API_CALLS.lean());
classic_report!(
    CudaGpuMemTimeSum,
    Report::MemoryTime,
    Needs::MEMCPYS.union(Needs::MEMSETS).lean()
);
classic_report!(
    CudaGpuMemSizeSum,
    Report::MemorySize,
    Needs::MEMCPYS.union(Needs::MEMSETS).lean()
);
classic_report!(NvtxSum, Report::Nvtx, Needs::NVTX.lean());

/// Header of each classic report, as nsys prints it.
pub fn header(report: Report) -> Vec<&'static str> {
    use super::duration_summary::header as durations;
    match report {
        Report::Kernels => durations("Instances", &["Name"]),
        Report::CudaApi => durations("Num Calls", &["Name"]),
        Report::MemoryTime => durations("Count", &["Operation"]),
        Report::MemorySize => vec![
            "Total (MB)",
            "Count",
            "Avg (MB)",
            "Med (MB)",
            "Min (MB)",
            "Max (MB)",
            "StdDev (MB)",
            "Operation",
        ],
        Report::Nvtx => durations("Instances", &["Style", "Range"]),
    }
}

/// The cells of every row of a classic report.
pub fn cells(table: &ReportTable) -> Vec<Vec<Cell>> {
    let round = |x: f64| Cell::Float(table.format.round(x, 1));
    table
        .rows
        .iter()
        .map(|row| {
            let s = &row.stats;
            if table.report == Report::MemorySize {
                let mb = |bytes: f64| Cell::Fixed(bytes / 1e6, 3);
                return vec![
                    mb(s.total as f64),
                    Cell::Int(s.count as i64),
                    mb(s.avg),
                    mb(s.median),
                    mb(s.min as f64),
                    mb(s.max as f64),
                    mb(s.stddev),
                    Cell::text(&row.name),
                ];
            }
            let mut cells = vec![
                round(row.percent),
                Cell::Int(s.total),
                Cell::Int(s.count as i64),
            ];
            cells.extend(super::duration_summary::spread_cells(s, table.format));
            if let Some(style) = row.style {
                cells.push(Cell::text(style.label()));
            }
            cells.push(Cell::text(&row.name));
            cells
        })
        .collect()
}

fn to_table(input: &ReportInput, table: &ReportTable) -> Table {
    let mut out = Table::new(&header(table.report));
    let mut events = if input.with_events {
        events_of_rows(input, table)
    } else {
        Vec::new()
    };
    for (i, cells) in cells(table).into_iter().enumerate() {
        let ev = events.get_mut(i).map(std::mem::take).unwrap_or_default();
        out.push(
            cells,
            if ev.is_empty() {
                RowEvents::None
            } else {
                RowEvents::Events(ev)
            },
        );
    }
    out
}

/// The events behind each row, in row order.
fn events_of_rows(input: &ReportInput, table: &ReportTable) -> Vec<Vec<EventRef>> {
    let trace = input.trace;
    let filter = input.filter;
    let mut out: Vec<Vec<EventRef>> = vec![Vec::new(); table.rows.len()];
    let by_name: HashMap<(&str, Option<NvtxStyle>), usize> = table
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.name.as_str(), r.style), i))
        .collect();
    let mut add = |name: &str, style: Option<NvtxStyle>, ev: EventRef| {
        if let Some(&row) = by_name.get(&(name, style)) {
            out[row].push(ev);
        }
    };
    match table.report {
        Report::Kernels => {
            for i in filter.indices(trace, EventTable::Kernels) {
                add(
                    trace.str(trace.kernels.spans.name[i]),
                    None,
                    EventRef::new(EventTable::Kernels, i),
                );
            }
        }
        Report::CudaApi => {
            for i in filter.indices(trace, EventTable::ApiCalls) {
                let name = stats::strip_version_suffix(trace.str(trace.api_calls.spans.name[i]));
                add(name, None, EventRef::new(EventTable::ApiCalls, i));
            }
        }
        Report::MemoryTime | Report::MemorySize => {
            for i in filter.indices(trace, EventTable::Memcpys) {
                add(
                    trace.str(trace.memcpys.spans.name[i]),
                    None,
                    EventRef::new(EventTable::Memcpys, i),
                );
            }
            for i in filter.indices(trace, EventTable::Memsets) {
                add(
                    trace.str(trace.memsets.spans.name[i]),
                    None,
                    EventRef::new(EventTable::Memsets, i),
                );
            }
        }
        Report::Nvtx => {
            let n = &trace.nvtx;
            for i in filter.indices(trace, EventTable::Nvtx) {
                let name = nvtx_printed_name(trace, i, table.format);
                add(&name, Some(n.style[i]), EventRef::new(EventTable::Nvtx, i));
            }
        }
    }
    out
}

/// The name NVTX reports print for range `i` as Nsight Systems `format` prints it; empty where
/// nsys 2023.4 prints NULL (see [`super::nvtx_tree::printed_name`]).
pub fn nvtx_printed_name(trace: &Trace, i: usize, format: NsysFormat) -> String {
    let n = &trace.nvtx;
    super::nvtx_tree::printed_name(trace, n.domain[i], n.spans.name[i], format).unwrap_or_default()
}
