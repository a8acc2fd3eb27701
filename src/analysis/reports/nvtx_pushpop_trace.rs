//! `nvtx_pushpop_trace` (NVTX Push/Pop Range Trace), after Nsight Systems 2023.4.4
//! `nvtx_pushpop_trace.py`: every push/pop range with its place in its thread's range tree
//! ([`RangeForest`]): level, parent, range stack, the number and total duration of its direct
//! children. Rows by start, then duration, then rowid.
//!
//! An unclosed range ends at the largest timestamp of any push/pop range (the script's
//! `NVTX_EVENTS_MINMAXTS`), not at the largest NVTX timestamp as in `nvtx_sum`.

use super::nvtx_tree::{RangeForest, RangeKinds, printed_text};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, CellText, EventRef, RowEvents, Table};
use crate::trace::GlobalTid;
use crate::trace::Needs;

pub struct NvtxPushpopTrace;

impl StatsReport for NvtxPushpopTrace {
    fn name(&self) -> &'static str {
        "nvtx_pushpop_trace"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX
    }

    fn title(&self) -> &'static str {
        "NVTX Push/Pop Range Trace"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn streams(&self) -> bool {
        true
    }

    fn row_dump(&self) -> bool {
        true
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let forest = RangeForest::build(trace, input.filter, RangeKinds::PushPop);
        if forest.is_empty() {
            return Table::default();
        }
        let mut child_count = vec![0i64; forest.len()];
        let mut child_ns = vec![0i64; forest.len()];
        for p in 0..forest.len() {
            if let Some(parent) = forest.parent_of(p) {
                child_count[parent] += 1;
                child_ns[parent] += forest.duration_ns(trace, p);
            }
        }
        let mut order: Vec<usize> = (0..forest.len()).collect();
        order.sort_unstable_by_key(|&p| {
            (
                forest.start_ns(trace, p),
                forest.duration_ns(trace, p),
                forest.range_id(trace, p),
            )
        });
        let mut table = Table::new(&[
            "Start (ns)",
            "End (ns)",
            "Duration (ns)",
            "DurChild (ns)",
            "DurNonChild (ns)",
            "Name",
            "PID",
            "TID",
            "Lvl",
            "NumChild",
            "RangeId",
            "ParentId",
            "RangeStack",
            "NameTree",
        ])
        .limited(input.row_limit)
        .streamed_to(input.sink.clone());
        let n = &trace.nvtx;
        for p in order {
            let i = forest.nvtx_index(p);
            let start = forest.start_ns(trace, p);
            let duration = forest.duration_ns(trace, p);
            let name = printed_text(trace, n.domain[i], n.spans.name[i], input.nsys_format);
            let level = forest.level[p];
            let tid = GlobalTid(n.global_tid[i]);
            let cells = vec![
                Cell::Int(start),
                Cell::Int(start + duration),
                Cell::Int(duration),
                Cell::Int(child_ns[p]),
                Cell::Int(duration - child_ns[p]),
                name.clone().map_or(Cell::Null, Cell::Text),
                Cell::Int(i64::from(tid.pid())),
                Cell::Int(i64::from(tid.tid())),
                Cell::Int(i64::from(level)),
                Cell::Int(child_count[p]),
                Cell::Int(forest.range_id(trace, p)),
                Cell::opt_int(forest.parent_of(p).map(|q| forest.range_id(trace, q))),
                Cell::text(forest.range_stack(trace, p)),
                // SQL: `tab || NULL` is NULL. The name is referred to behind its indent, not copied.
                name.map_or(Cell::Null, |name| {
                    let indent = "--".repeat(level as usize).into();
                    Cell::Text(CellText::joined(
                        std::iter::once(indent).chain(name.pieces().iter().cloned()),
                    ))
                }),
            ];
            let events = if input.with_events {
                RowEvents::Events(vec![EventRef::new(EventTable::Nvtx, i)])
            } else {
                RowEvents::None
            };
            table.push(cells, events);
        }
        table
    }
}
