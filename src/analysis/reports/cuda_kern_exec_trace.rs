//! `cuda_kern_exec_trace` (CUDA Kernel Launch & Exec Time Trace): one row per kernel and
//! launching CUDA API call, with the call's time, the queue time and the kernel's time, as nsys
//! 2023.4.4's `cuda_kern_exec_trace.py` prints them (the join and the phases: [`super::kern_exec`]).

use super::kern_exec::{self, stream_of_rows};
use super::kernel_names::KernelNaming;
use super::shared_texts::SharedTexts;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::GlobalTid;
use crate::trace::Needs;

pub struct CudaKernExecTrace;

const COLUMNS: [&str; 14] = [
    "API Start (ns)",
    "API Dur (ns)",
    "Queue Start (ns)",
    "Queue Dur (ns)",
    "Kernel Start (ns)",
    "Kernel Dur (ns)",
    "Total Dur (ns)",
    "PID",
    "TID",
    "DevId",
    "API Function",
    "GridXYZ",
    "BlockXYZ",
    "Kernel Name",
];

impl StatsReport for CudaKernExecTrace {
    fn name(&self) -> &'static str {
        "cuda_kern_exec_trace"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS
            .union(Needs::KERNEL_CONFIG)
            .union(KernelNaming::needs(options))
    }

    fn title(&self) -> &'static str {
        "CUDA Kernel Launch & Exec Time Trace"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel data"
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
        let stream_of_kernel = stream_of_rows(trace, trace.kernels.spans.len(), |s| &s.kernels);
        let mut launches = kern_exec::launches(trace, input.filter, &stream_of_kernel);
        // `ORDER BY` the call's start; SQLite's sort is stable, so equal starts (the kernels of
        // one graph launch) keep the join's order.
        launches.sort_by_key(|l| trace.api_calls.spans.start_ns[l.call as usize]);
        let naming = KernelNaming::from_options(trace, input.options);
        let k = &trace.kernels;
        let api = &trace.api_calls;
        let mut table = Table::new(&COLUMNS)
            .limited(input.row_limit)
            .streamed_to(input.sink.clone());
        table.rows.reserve(launches.len());
        let mut texts = SharedTexts::new(trace);
        for launch in launches {
            let (i, c) = (launch.kernel as usize, launch.call as usize);
            let p = launch.phases(trace);
            let g = GlobalTid(api.global_tid[c]);
            let device = trace
                .streams
                .get(stream_of_kernel[i] as usize)
                .map_or(Cell::Null, |s| Cell::Int(s.key.device as i64));
            let [gx, gy, gz] = k.grid[i];
            let [bx, by, bz] = k.block[i];
            let cells = vec![
                Cell::Int(p.api_start_ns),
                Cell::Int(p.api_ns),
                Cell::opt_int(p.queue_ns.map(|_| api.spans.end_ns[c])),
                Cell::opt_int(p.queue_ns),
                Cell::Int(p.kernel_start_ns),
                Cell::Int(p.kernel_ns),
                Cell::Int(p.total_ns),
                Cell::Int(g.pid() as i64),
                Cell::Int(g.tid() as i64),
                device,
                Cell::text(texts.api_name(api.spans.name[c])),
                // printf('%4d %4d %4d', ...)
                Cell::text(format!("{gx:4} {gy:4} {gz:4}")),
                Cell::text(format!("{bx:4} {by:4} {bz:4}")),
                Cell::Text(naming.kernel_text(i)),
            ];
            let events = if input.with_events {
                RowEvents::Events(vec![
                    EventRef::new(EventTable::ApiCalls, c),
                    EventRef::new(EventTable::Kernels, i),
                ])
            } else {
                RowEvents::None
            };
            table.push(cells, events);
        }
        table
    }
}
