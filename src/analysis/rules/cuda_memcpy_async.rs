//! `cuda_memcpy_async` (CUDA Async Memcpy with Pageable Memory), after Nsight Systems 2023.4.4's
//! `rules/cuda_memcpy_async.py`: copies made by a `cudaMemcpy*Async*` call with pageable memory
//! at either end, which makes the "asynchronous" copy block the host.

use super::api_matches::{
    OpTable, finding_events, megabytes, ops_with_calls, stream_and_call_cells,
};
use super::scope::{RuleScope, sql_like};
use super::{Rule, RuleInput};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, Table};
use crate::trace::memory_kind_name;

pub struct CudaMemcpyAsync;

/// `ENUM_CUDA_MEM_KIND` value of pageable host memory.
const PAGEABLE: u8 = 0;

/// The columns of the memcpy rules.
pub(super) const MEMCPY_COLUMNS: [&str; 11] = [
    "Duration (ns)",
    "Start (ns)",
    "Src Kind",
    "Dst Kind",
    "Bytes (MB)",
    "PID",
    "Device ID",
    "Context ID",
    "Green Context ID",
    "Stream ID",
    "API Name",
];

impl Rule for CudaMemcpyAsync {
    fn name(&self) -> &'static str {
        "cuda_memcpy_async"
    }

    fn title(&self) -> &'static str {
        "CUDA Async Memcpy with Pageable Memory"
    }

    fn advice(&self) -> &'static str {
        "The following APIs use PAGEABLE memory which causes asynchronous CUDA memcpy operations \
         to block and be executed synchronously. This leads to low GPU utilization."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected related to memcpy operations using pageable memory."
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let scope = RuleScope::parse(input.trace, input.options)?;
        let m = &input.trace.memcpys;
        let found = ops_with_calls(
            input,
            &scope,
            &memcpy_table(input),
            |name| sql_like(name, "cudaMemcpy%Async%"),
            |i| m.src_kind[i] == PAGEABLE || m.dst_kind[i] == PAGEABLE,
        );
        Ok(memcpy_findings(input, &found))
    }
}

/// The memcpy table as the memcpy rules read it.
pub(super) fn memcpy_table<'a>(input: &RuleInput<'a>) -> OpTable<'a> {
    let m = &input.trace.memcpys;
    OpTable {
        table: EventTable::Memcpys,
        spans: &m.spans,
        file_order: &m.file_order,
        correlation_id: &m.correlation_id,
        slice: |s| &s.memcpys,
    }
}

/// The rows of the memcpy rules.
pub(super) fn memcpy_findings(input: &RuleInput, found: &[super::api_matches::OpCall]) -> Table {
    let m = &input.trace.memcpys;
    let kind = |k: u8| memory_kind_name(k).map_or(Cell::Null, Cell::text);
    let mut table = Table::new(&MEMCPY_COLUMNS);
    for f in found {
        let i = f.op;
        let mut cells = vec![
            Cell::Int(m.spans.duration_ns(i)),
            Cell::Int(m.spans.start_ns[i]),
            kind(m.src_kind[i]),
            kind(m.dst_kind[i]),
            megabytes(m.bytes[i]),
        ];
        cells.extend(stream_and_call_cells(input, f, m.green_context[i]));
        table.push(cells, finding_events(EventTable::Memcpys, f));
    }
    table
}
