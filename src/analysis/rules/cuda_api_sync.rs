//! `cuda_api_sync` (CUDA Synchronization APIs), after Nsight Systems 2023.4.4's
//! `rules/cuda_api_sync.py`: every `cudaDeviceSynchronize*` and `cudaStreamSynchronize*` runtime
//! call (the host waits for the GPU), longest first. Besides the common options it takes
//! `process=` and `thread=` (an OS id; negative for all).

use super::scope::{RuleScope, sql_like};
use super::{Rule, RuleInput};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::GlobalTid;

pub struct CudaApiSync;

impl Rule for CudaApiSync {
    fn name(&self) -> &'static str {
        "cuda_api_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronization APIs"
    }

    fn advice(&self) -> &'static str {
        "The following are synchronization APIs that block the host until all issued CUDA calls \
         are complete."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected related to synchronization APIs."
    }

    fn options(&self) -> &'static [&'static str] {
        &["process", "thread"]
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let trace = input.trace;
        let scope = RuleScope::parse(trace, input.options)?;
        let calls = &trace.api_calls;
        let sync_names: Vec<bool> = (0..trace.strings.len())
            .map(|id| {
                let name = trace.str(id as u32);
                sql_like(name, "cudaDeviceSynchronize%") || sql_like(name, "cudaStreamSynchronize%")
            })
            .collect();
        let mut found: Vec<usize> = (0..calls.spans.len())
            .filter(|&i| {
                let (start_ns, end_ns) = (calls.spans.start_ns[i], calls.spans.end_ns[i]);
                sync_names
                    .get(calls.spans.name[i] as usize)
                    .copied()
                    .unwrap_or(false)
                    && calls.is_from_runtime_table(i)
                    && input.filter.keeps(EventTable::ApiCalls, i, start_ns)
                    && scope.keeps_thread_event(calls.global_tid[i], start_ns, end_ns)
            })
            .collect();
        // ORDER BY duration DESC; SQLite's sort keeps the scan (file) order of equal durations.
        found.sort_by_key(|&i| {
            (
                std::cmp::Reverse(calls.spans.duration_ns(i)),
                calls.file_order.get(i).copied().unwrap_or(i as u32),
            )
        });
        found.truncate(scope.limit(found.len()));
        let mut table = Table::new(&["Duration (ns)", "Start (ns)", "PID", "TID", "API Name"]);
        for i in found {
            let g = GlobalTid(calls.global_tid[i]);
            table.push(
                vec![
                    Cell::Int(calls.spans.duration_ns(i)),
                    Cell::Int(calls.spans.start_ns[i]),
                    Cell::Int(i64::from(g.pid())),
                    Cell::Int(i64::from(g.tid())),
                    Cell::text(trace.shared_str(calls.spans.name[i])),
                ],
                RowEvents::Events(vec![EventRef::new(EventTable::ApiCalls, i)]),
            );
        }
        Ok(table)
    }
}
