//! `torch_ops` (Sightline's own report): PyTorch's `prof.key_averages()` for a PyTorch profiler
//! (Kineto) trace, as [`crate::analysis::key_averages`] computes it.
//!
//! Columns `Name,Device,Calls,Self CPU (ns),CPU Total (ns),Self CUDA (ns),CUDA Total (ns),Self CPU
//! Mem (B),CPU Mem (B),Self CUDA Mem (B),CUDA Mem (B)`, PyTorch's `key`, `count`,
//! `self_cpu_time_total`, `cpu_time_total`, `self_device_time_total`, `device_time_total`,
//! `self_cpu_memory_usage`, `cpu_memory_usage`, `self_device_memory_usage`,
//! `device_memory_usage` (times in ns where PyTorch prints µs). One row per (name, device, user
//! annotation or not): a `record_function` range is a CPU row and, as the GPU ran it, a CUDA row
//! of the same name. With the option `group_by_input_shape` (PyTorch's
//! `key_averages(group_by_input_shape=True)`) rows split by input shapes, in a last column
//! `Input Shapes`.
//!
//! Rows by CUDA Total descending, then CPU Total descending, then name (PyTorch keeps first-seen
//! order; the panel sorts on any column). Under a time range, the events that start in it count,
//! each with the children, kernels and memory it has in the whole trace.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::key_averages::{KeyAverage, KeyAverageOptions, key_averages};
use crate::analysis::table::{Cell, RowEvents, Table};

pub struct TorchOps;

pub const COLUMNS: [&str; 11] = [
    "Name",
    "Device",
    "Calls",
    "Self CPU (ns)",
    "CPU Total (ns)",
    "Self CUDA (ns)",
    "CUDA Total (ns)",
    "Self CPU Mem (B)",
    "CPU Mem (B)",
    "Self CUDA Mem (B)",
    "CUDA Mem (B)",
];

/// The last column with `group_by_input_shape`.
pub const INPUT_SHAPES: &str = "Input Shapes";

/// The option that splits rows by input shape.
pub const GROUP_BY_INPUT_SHAPE: &str = "group_by_input_shape";

impl StatsReport for TorchOps {
    fn name(&self) -> &'static str {
        "torch_ops"
    }

    fn title(&self) -> &'static str {
        "PyTorch Operator Summary (key_averages)"
    }

    fn missing_data(&self) -> &'static str {
        "PyTorch operator data"
    }

    fn options(&self) -> &'static [&'static str] {
        &[GROUP_BY_INPUT_SHAPE]
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let by_shape = input.options.has(GROUP_BY_INPUT_SHAPE);
        let mut rows = key_averages(
            input.trace,
            input.filter,
            KeyAverageOptions {
                group_by_input_shape: by_shape,
                with_events: input.with_events,
            },
        );
        rows.sort_by(|a, b| {
            b.cuda_total_ns
                .cmp(&a.cuda_total_ns)
                .then(b.cpu_total_ns.cmp(&a.cpu_total_ns))
                .then_with(|| a.name.cmp(&b.name))
                .then(a.device.cmp(&b.device))
                .then(a.user_annotation.cmp(&b.user_annotation))
                .then_with(|| a.input_shapes.cmp(&b.input_shapes))
        });
        let mut columns = COLUMNS.to_vec();
        if by_shape {
            columns.push(INPUT_SHAPES);
        }
        let mut table = Table::new(&columns).limited(input.row_limit);
        for row in rows {
            let events = if row.events.is_empty() {
                RowEvents::None
            } else {
                RowEvents::Events(row.events.clone())
            };
            table.push(cells(row), events);
        }
        table
    }
}

fn cells(row: KeyAverage) -> Vec<Cell> {
    let mut cells = vec![
        Cell::text(row.name),
        Cell::text(row.device.label()),
        Cell::Int(i64::try_from(row.count).unwrap_or(i64::MAX)),
        Cell::Int(row.self_cpu_ns),
        Cell::Int(row.cpu_total_ns),
        Cell::Int(row.self_cuda_ns),
        Cell::Int(row.cuda_total_ns),
        Cell::Int(row.self_cpu_mem_bytes),
        Cell::Int(row.cpu_mem_bytes),
        Cell::Int(row.self_cuda_mem_bytes),
        Cell::Int(row.cuda_mem_bytes),
    ];
    if let Some(shapes) = row.input_shapes {
        cells.push(Cell::text(shapes));
    }
    cells
}

/// `--group-by-input-shape`: the option on every `torch_ops` request.
pub fn group_by_input_shape(options: &mut ReportOptions) {
    if !options.has(GROUP_BY_INPUT_SHAPE) {
        options
            .values
            .push((GROUP_BY_INPUT_SHAPE.to_string(), String::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Filter;
    use crate::trace::{RangeKind, StringTable, TorchInfo, Trace, TraceFormat};

    fn trace() -> Trace {
        let mut t = Trace {
            strings: StringTable::new(),
            format: TraceFormat::Kineto,
            torch: Some(TorchInfo::default()),
            ..Default::default()
        };
        for (name, start, end, shapes) in [
            ("aten::add", 0, 10, "[[2], [2]]"),
            ("aten::mm", 20, 50, "[[2, 2], [2, 2]]"),
            ("aten::add", 60, 65, "[[3], [3]]"),
        ] {
            let name = t.strings.intern(name);
            let shapes = t.strings.intern(shapes);
            t.nvtx.spans.push(start, end, name);
            t.nvtx.global_tid.push(1);
            t.nvtx.kind.push(RangeKind::Operator);
            t.nvtx.external_id.push(start as u64 + 1);
            t.nvtx.input_shapes.push(shapes);
        }
        t
    }

    fn compute(trace: &Trace, options: &ReportOptions) -> Table {
        TorchOps.compute(&ReportInput {
            trace,
            filter: &Filter::all(),
            options,
            with_events: false,
            row_limit: None,
            nsys_format: crate::analysis::NsysFormat::of_trace(trace),
            sink: None,
        })
    }

    #[test]
    fn rows_by_total_time_with_shapes_on_request() {
        let t = trace();
        let table = compute(&t, &ReportOptions::default());
        assert_eq!(table.columns, COLUMNS.map(String::from).to_vec());
        let names: Vec<String> = table.rows.iter().map(|r| r.cells[0].csv_text()).collect();
        assert_eq!(names, vec!["aten::mm", "aten::add"]);
        assert_eq!(table.rows[1].cells[2], Cell::Int(2));
        assert_eq!(table.rows[1].cells[4], Cell::Int(15));
        assert_eq!(table.rows[1].cells[1], Cell::text("CPU"));

        let mut options = ReportOptions::default();
        group_by_input_shape(&mut options);
        group_by_input_shape(&mut options);
        assert_eq!(options.values.len(), 1);
        let table = compute(&t, &options);
        assert_eq!(table.columns.last().map(String::as_str), Some(INPUT_SHAPES));
        let shapes: Vec<String> = table.rows.iter().map(|r| r.cells[11].csv_text()).collect();
        assert_eq!(shapes, vec!["[[2, 2], [2, 2]]", "[[2], [2]]", "[[3], [3]]"]);
    }

    #[test]
    fn an_nsys_export_gives_no_rows() {
        assert!(compute(&Trace::default(), &ReportOptions::default()).is_empty());
    }
}
