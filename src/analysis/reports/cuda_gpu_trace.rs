//! `cuda_gpu_trace` (CUDA GPU Trace): every kernel, memory copy and memory set, by start, with
//! its launch configuration or its size and throughput, memory kinds, device, context and
//! stream, as nsys 2023.4.4's `cuda_gpu_trace.py` prints them (2025.3.1's prints a zero context or
//! stream empty).

use std::sync::Arc;

use super::kern_exec::stream_of_rows;
use super::kernel_names::KernelNaming;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::Needs;
use crate::trace::{Spans, StreamTrack, Trace, memory_kind_name};

pub struct CudaGpuTrace;

const COLUMNS: [&str; 21] = [
    "Start (ns)",
    "Duration (ns)",
    "CorrId",
    "GrdX",
    "GrdY",
    "GrdZ",
    "BlkX",
    "BlkY",
    "BlkZ",
    "Reg/Trd",
    "StcSMem (MB)",
    "DymSMem (MB)",
    "Bytes (MB)",
    "Throughput (MB/s)",
    "SrcMemKd",
    "DstMemKd",
    "Device",
    "Ctx",
    "GreenCtx",
    "Strm",
    "Name",
];

/// The three tables the script unions, in its `UNION ALL` order: equal starts come in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Kernel,
    Memcpy,
    Memset,
}

impl Op {
    fn table(self) -> EventTable {
        match self {
            Op::Kernel => EventTable::Kernels,
            Op::Memcpy => EventTable::Memcpys,
            Op::Memset => EventTable::Memsets,
        }
    }
}

/// nsys prints byte counts (`:mem_B`, `:thru_B` columns) in decimal megabytes, 3 decimals.
fn megabytes(bytes: f64) -> Cell {
    Cell::Fixed(bytes / 1e6, 3)
}

/// `bytes * (1000000000 / duration)`: SQL integer division first, NULL for a zero duration.
fn throughput(bytes: u64, duration_ns: i64) -> Cell {
    if duration_ns <= 0 {
        return Cell::Null;
    }
    megabytes((bytes as i128 * (1_000_000_000 / duration_ns as i128)) as f64)
}

impl StatsReport for CudaGpuTrace {
    fn name(&self) -> &'static str {
        "cuda_gpu_trace"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS
            .union(Needs::KERNEL_CONFIG)
            .union(KernelNaming::needs(options))
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Trace"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel/memory operations data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn streams(&self) -> bool {
        true
    }

    fn row_dump(&self) -> bool {
        true
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        // nsys 2023.4 names the device from TARGET_INFO_GPU and prints nothing without it
        // (the 2026 export GindaChen_nsys-ai__h100_2gpu_1s has none).
        if trace.gpus.is_empty() {
            return Table::default();
        }
        let (k, m, ms) = (&trace.kernels, &trace.memcpys, &trace.memsets);
        let file_order = |op: Op, i: usize| {
            let column = match op {
                Op::Kernel => &k.file_order,
                Op::Memcpy => &m.file_order,
                Op::Memset => &ms.file_order,
            };
            column.get(i).copied().unwrap_or(i as u32)
        };
        let start = |op: Op, i: usize| match op {
            Op::Kernel => k.spans.start_ns[i],
            Op::Memcpy => m.spans.start_ns[i],
            Op::Memset => ms.spans.start_ns[i],
        };
        let mut rows: Vec<(Op, u32)> = Vec::new();
        for op in [Op::Kernel, Op::Memcpy, Op::Memset] {
            let kept = input.filter.indices(trace, op.table());
            rows.extend(kept.into_iter().map(|i| (op, i as u32)));
        }
        // `ORDER BY start` over the union: ties by table in union order, then by rowid.
        rows.sort_unstable_by_key(|&(op, i)| {
            (start(op, i as usize), op, file_order(op, i as usize))
        });

        let streams = [
            stream_of_rows(trace, k.spans.len(), |s| &s.kernels),
            stream_of_rows(trace, m.spans.len(), |s| &s.memcpys),
            stream_of_rows(trace, ms.spans.len(), |s| &s.memsets),
        ];
        let devices: Vec<Arc<str>> = trace
            .streams
            .iter()
            .map(|s| device_label(trace, s).into())
            .collect();
        let naming = KernelNaming::from_options(trace, input.options);
        // 2025.3 prints `NULLIF(context, 0)` and `NULLIF(stream, 0)`; 2023.4 the plain values.
        let zero_as_null = |v: i64| match input.nsys_format {
            NsysFormat::V2025_3 if v == 0 => Cell::Null,
            _ => Cell::Int(v),
        };
        let mut table = Table::new(&COLUMNS)
            .limited(input.row_limit)
            .streamed_to(input.sink.clone());
        table.rows.reserve(rows.len());
        for (op, i) in rows {
            let i = i as usize;
            let stream_index = streams[op as usize].get(i).copied().unwrap_or(u32::MAX);
            let Some(stream) = trace.streams.get(stream_index as usize) else {
                continue;
            };
            let mut cells = Vec::with_capacity(COLUMNS.len());
            let (green_context, name) = match op {
                Op::Kernel => {
                    push_kernel_cells(&mut cells, trace, i);
                    (k.green_context.get(i), Cell::Text(naming.kernel_text(i)))
                }
                Op::Memcpy => {
                    let m = &trace.memcpys;
                    push_memory_cells(&mut cells, &m.spans, i, m.correlation_id[i], m.bytes[i]);
                    cells.push(memory_kind(m.src_kind.get(i)));
                    cells.push(memory_kind(m.dst_kind.get(i)));
                    (
                        m.green_context.get(i),
                        Cell::text(trace.shared_str(m.spans.name[i])),
                    )
                }
                Op::Memset => {
                    push_memory_cells(&mut cells, &ms.spans, i, ms.correlation_id[i], ms.bytes[i]);
                    cells.push(memory_kind(ms.mem_kind.get(i)));
                    cells.push(Cell::Null);
                    (
                        ms.green_context.get(i),
                        Cell::text(trace.shared_str(ms.spans.name[i])),
                    )
                }
            };
            cells.extend([
                Cell::text(Arc::clone(&devices[stream_index as usize])),
                zero_as_null(stream.key.context as i64),
                // NULLIF(greenContextId, 0)
                Cell::opt_int(green_context.filter(|&&g| g != 0).map(|&g| g as i64)),
                zero_as_null(stream.key.stream as i64),
                name,
            ]);
            let events = if input.with_events {
                RowEvents::Events(vec![EventRef::new(op.table(), i)])
            } else {
                RowEvents::None
            };
            table.push(cells, events);
        }
        table
    }
}

/// `printf('%s (%d)', gpu.name, deviceId)`: an unknown GPU prints an empty name.
fn device_label(trace: &Trace, stream: &StreamTrack) -> String {
    let device = stream.key.device;
    let name = trace.gpu(device).map_or("", |g| g.name.as_str());
    format!("{name} ({device})")
}

/// A kernel's cells from `Start` to `DstMemKd`.
fn push_kernel_cells(cells: &mut Vec<Cell>, trace: &Trace, i: usize) {
    let k = &trace.kernels;
    let [gx, gy, gz] = k.grid[i];
    let [bx, by, bz] = k.block[i];
    cells.extend([
        Cell::Int(k.spans.start_ns[i]),
        Cell::Int(k.spans.duration_ns(i)),
        Cell::Int(k.correlation_id[i] as i64),
        Cell::Int(gx as i64),
        Cell::Int(gy as i64),
        Cell::Int(gz as i64),
        Cell::Int(bx as i64),
        Cell::Int(by as i64),
        Cell::Int(bz as i64),
        Cell::Int(k.registers_per_thread[i] as i64),
        megabytes(k.static_shared_bytes[i] as f64),
        megabytes(k.dynamic_shared_bytes[i] as f64),
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
    ]);
}

/// A memory copy's or set's cells from `Start` to `Throughput`.
fn push_memory_cells(
    cells: &mut Vec<Cell>,
    spans: &Spans,
    i: usize,
    correlation_id: u32,
    bytes: u64,
) {
    let duration = spans.duration_ns(i);
    cells.extend([
        Cell::Int(spans.start_ns[i]),
        Cell::Int(duration),
        Cell::Int(correlation_id as i64),
    ]);
    cells.extend(std::iter::repeat_n(Cell::Null, 9));
    cells.push(megabytes(bytes as f64));
    cells.push(throughput(bytes, duration));
}

fn memory_kind(kind: Option<&u8>) -> Cell {
    kind.and_then(|&k| memory_kind_name(k))
        .map_or(Cell::Null, Cell::text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_divides_as_sqlite_integers() {
        // p2p_2gpu.sqlite: 33554432 bytes in 254494 ns print 131835.363 MB/s.
        assert_eq!(throughput(33_554_432, 254_494).csv_text(), "131835.363");
        assert_eq!(throughput(1, 0), Cell::Null);
        assert_eq!(megabytes(8192.0).csv_text(), "0.008");
    }
}
