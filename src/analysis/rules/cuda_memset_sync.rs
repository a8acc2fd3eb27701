//! `cuda_memset_sync` (CUDA Synchronous Memset), after Nsight Systems 2023.4.4's
//! `rules/cuda_memset_sync.py`: memsets of pinned host or managed memory made by a synchronous
//! `cudaMemset*` call (no "async" in its name).

use super::api_matches::{
    OpTable, finding_events, megabytes, ops_with_calls, stream_and_call_cells,
};
use super::scope::{RuleScope, sql_like};
use super::{Rule, RuleInput};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, Table};
use crate::trace::memory_kind_name;

pub struct CudaMemsetSync;

/// `ENUM_CUDA_MEM_KIND` values of pinned host memory and managed memory.
const PINNED: u8 = 1;
const MANAGED: u8 = 4;

impl Rule for CudaMemsetSync {
    fn name(&self) -> &'static str {
        "cuda_memset_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronous Memset"
    }

    // nsys 2023.4.4 gives this rule the same messages as `cuda_api_sync`.
    fn advice(&self) -> &'static str {
        "The following are synchronization APIs that block the host until all issued CUDA calls \
         are complete."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected related to synchronization APIs."
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let scope = RuleScope::parse(input.trace, input.options)?;
        let m = &input.trace.memsets;
        let ops = OpTable {
            table: EventTable::Memsets,
            spans: &m.spans,
            file_order: &m.file_order,
            correlation_id: &m.correlation_id,
            slice: |s| &s.memsets,
        };
        let found = ops_with_calls(
            input,
            &scope,
            &ops,
            |name| sql_like(name, "cudaMemset%") && !sql_like(name, "%async%"),
            |i| matches!(m.mem_kind[i], PINNED | MANAGED),
        );
        let mut table = Table::new(&[
            "Duration (ns)",
            "Start (ns)",
            "Memory Kind",
            "Bytes (MB)",
            "PID",
            "Device ID",
            "Context ID",
            "Green Context ID",
            "Stream ID",
            "API Name",
        ]);
        for f in &found {
            let i = f.op;
            let mut cells = vec![
                Cell::Int(m.spans.duration_ns(i)),
                Cell::Int(m.spans.start_ns[i]),
                memory_kind_name(m.mem_kind[i]).map_or(Cell::Null, Cell::text),
                megabytes(m.bytes[i]),
            ];
            cells.extend(stream_and_call_cells(input, f, m.green_context[i]));
            table.push(cells, finding_events(EventTable::Memsets, f));
        }
        Ok(table)
    }
}
