//! `cuda_api_trace` (CUDA API Trace): every CUDA API call of `CUPTI_ACTIVITY_KIND_RUNTIME` with
//! its result, correlation id, thread and the thread's `ThreadNames` entry, by start, as nsys
//! 2023.4.4's `cuda_api_trace.py` prints them.

use super::shared_texts::SharedTexts;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::Needs;
use crate::trace::{ApiCalls, GlobalTid, ThreadTrack};

pub struct CudaApiTrace;

const COLUMNS: [&str; 9] = [
    "Start (ns)",
    "Duration (ns)",
    "Name",
    "Result",
    "CorrID",
    "Pid",
    "Tid",
    "T-Pri",
    "Thread Name",
];

impl StatsReport for CudaApiTrace {
    fn name(&self) -> &'static str {
        "cuda_api_trace"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::API_CALLS.union(Needs::GPU_LINKS)
    }

    fn title(&self) -> &'static str {
        "CUDA API Trace"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA trace data"
    }

    fn streams(&self) -> bool {
        true
    }

    fn row_dump(&self) -> bool {
        true
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let api = &trace.api_calls;
        // The script reads only the RUNTIME table: an old export's DRIVER rows are left out.
        let mut calls: Vec<usize> = input
            .filter
            .indices(trace, EventTable::ApiCalls)
            .into_iter()
            .filter(|&i| api.is_from_runtime_table(i))
            .collect();
        // `ORDER BY 1` over a scan of the table: by start, then rowid (SQLite's sort is stable).
        calls.sort_unstable_by_key(|&i| {
            (
                api.spans.start_ns[i],
                api.file_order.get(i).copied().unwrap_or(i as u32),
            )
        });
        let thread_of_call = thread_of_calls(&trace.threads, api.spans.len());
        let mut table = Table::new(&COLUMNS)
            .limited(input.row_limit)
            .streamed_to(input.sink.clone());
        table.rows.reserve(calls.len());
        let mut texts = SharedTexts::new(trace);
        for i in calls {
            let g = GlobalTid(api.global_tid[i]);
            let thread = trace.threads.get(thread_of_call[i] as usize);
            let result = api
                .return_value
                .get(i)
                .filter(|&&v| v != ApiCalls::NO_RESULT);
            // `ThreadNames` joined on globalTid: a name set only through NVTX is not printed.
            let thread_name = thread
                .filter(|t| t.name_from_thread_names)
                .map_or(Cell::Null, |t| Cell::text(trace.shared_str(t.name)));
            let cells = vec![
                Cell::Int(api.spans.start_ns[i]),
                Cell::Int(api.spans.duration_ns(i)),
                Cell::text(texts.api_name(api.spans.name[i])),
                Cell::opt_int(result.map(|&v| v as i64)),
                Cell::Int(api.correlation_id[i] as i64),
                Cell::Int(g.pid() as i64),
                Cell::Int(g.tid() as i64),
                Cell::opt_int(thread.and_then(|t| t.priority).map(i64::from)),
                thread_name,
            ];
            let events = if input.with_events {
                RowEvents::Events(vec![EventRef::new(EventTable::ApiCalls, i)])
            } else {
                RowEvents::None
            };
            table.push(cells, events);
        }
        table
    }
}

/// For each API call, the index into `threads` of its thread (`u32::MAX` when none lists it).
fn thread_of_calls(threads: &[ThreadTrack], calls: usize) -> Vec<u32> {
    let mut out = vec![u32::MAX; calls];
    for (t, thread) in threads.iter().enumerate() {
        if let Some(part) = out.get_mut(thread.api_calls.range.clone()) {
            part.fill(t as u32);
        }
    }
    out
}
