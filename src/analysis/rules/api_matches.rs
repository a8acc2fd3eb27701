//! What the memcpy and memset rules share (Nsight Systems 2023.4.4's `cuda_memcpy_async.py`,
//! `cuda_memcpy_sync.py`, `cuda_memset_sync.py`): the GPU operations of one kind that pass a
//! rule's test, each paired with the CUDA runtime calls of the same `correlationId` whose name
//! matches the rule's pattern, longest operation first.
//!
//! nsys joins on `correlationId` alone, with the whole runtime table (`main.`, not narrowed by
//! `start=`/`end=`/`nvtx=`), so a call of another process with the same id pairs too; Sightline
//! does the same to print what nsys prints. SQLite reads the runtime table first, so equal
//! durations come in the calls' file order, then the operations'.

use std::collections::HashMap;

use super::RuleInput;
use super::scope::RuleScope;
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents};
use crate::trace::{Slice, Spans, StreamKey, StreamTrack};

/// One GPU operation and one call it is paired with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpCall {
    /// Index into the operation's table.
    pub op: usize,
    /// Index into `trace.api_calls`.
    pub call: usize,
    /// The stream the operation ran on.
    pub stream: StreamKey,
}

/// Which GPU operations a rule looks at.
pub struct OpTable<'a> {
    pub table: EventTable,
    pub spans: &'a Spans,
    pub file_order: &'a [u32],
    pub correlation_id: &'a [u32],
    pub slice: fn(&StreamTrack) -> &Slice,
}

/// The operations of `ops` for which `keep` holds, paired with the runtime calls whose name
/// `name_matches`, ordered by operation duration descending, then file order.
pub fn ops_with_calls(
    input: &RuleInput,
    scope: &RuleScope,
    ops: &OpTable,
    name_matches: impl Fn(&str) -> bool,
    keep: impl Fn(usize) -> bool,
) -> Vec<OpCall> {
    let trace = input.trace;
    let calls = &trace.api_calls;
    let mut name_ok: HashMap<u32, bool> = HashMap::new();
    let mut calls_by_correlation: HashMap<u32, Vec<usize>> = HashMap::new();
    for j in 0..calls.spans.len() {
        if !calls.is_from_runtime_table(j) {
            continue;
        }
        let name = calls.spans.name[j];
        let ok = *name_ok
            .entry(name)
            .or_insert_with(|| name_matches(trace.str(name)));
        // Correlation id 0 stands for NULL, which SQL's `=` never pairs.
        if ok && calls.correlation_id[j] != 0 {
            calls_by_correlation
                .entry(calls.correlation_id[j])
                .or_default()
                .push(j);
        }
    }
    if calls_by_correlation.is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for stream in &trace.streams {
        for i in (ops.slice)(stream).range.clone() {
            let (start_ns, end_ns) = (ops.spans.start_ns[i], ops.spans.end_ns[i]);
            if !keep(i)
                || !input.filter.keeps(ops.table, i, start_ns)
                || !scope.keeps_process_event(stream.key.pid, start_ns, end_ns)
            {
                continue;
            }
            let Some(matching) = calls_by_correlation.get(&ops.correlation_id[i]) else {
                continue;
            };
            found.extend(matching.iter().map(|&call| OpCall {
                op: i,
                call,
                stream: stream.key,
            }));
        }
    }
    let order = |i: usize, table: &[u32]| table.get(i).copied().unwrap_or(i as u32);
    found.sort_by_key(|m| {
        (
            std::cmp::Reverse(ops.spans.duration_ns(m.op)),
            order(m.call, &calls.file_order),
            order(m.op, ops.file_order),
        )
    });
    found.truncate(scope.limit(found.len()));
    found
}

/// The cells that end every memcpy and memset finding: PID, device, context, green context,
/// stream and the call's name.
pub fn stream_and_call_cells(input: &RuleInput, m: &OpCall, green_context: u32) -> Vec<Cell> {
    let trace = input.trace;
    vec![
        Cell::Int(i64::from(m.stream.pid)),
        Cell::Int(i64::from(m.stream.device)),
        Cell::Int(i64::from(m.stream.context)),
        // NULLIF(greenContextId, 0)
        if green_context == 0 {
            Cell::Null
        } else {
            Cell::Int(i64::from(green_context))
        },
        Cell::Int(i64::from(m.stream.stream)),
        Cell::text(trace.shared_str(trace.api_calls.spans.name[m.call])),
    ]
}

/// The call and the operation a finding is about.
pub fn finding_events(table: EventTable, m: &OpCall) -> RowEvents {
    RowEvents::Events(vec![
        EventRef::new(EventTable::ApiCalls, m.call),
        EventRef::new(table, m.op),
    ])
}

/// A size in decimal MB with 3 decimals, as nsys prints `:mem_B` columns.
pub fn megabytes(bytes: u64) -> Cell {
    Cell::Fixed(bytes as f64 / 1e6, 3)
}
