//! `nvtx_gpu_proj_trace` (NVTX GPU Projection Trace), after Nsight Systems 2023.4.4
//! `nvtx_gpu_proj_trace.py`: each NVTX range that launched GPU work, projected onto the GPU —
//! from the first start to the last end of the kernels, memcpys and memsets launched by calls
//! inside it ([`GpuProjection`]) — with its original span, level, parent and range stack in the
//! tree of push/pop and same-thread start/end ranges, and the number of its children that were
//! projected too. Work launched outside every range is one row with no range (Nsight Systems
//! 2025.3 leaves it out). Rows by rowid, the row with no range first (see the note on the order
//! in `compute`).

use super::nvtx_projection::GpuProjection;
use super::nvtx_tree::printed_text;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::GlobalTid;
use crate::trace::Needs;

pub struct NvtxGpuProjTrace;

impl StatsReport for NvtxGpuProjTrace {
    fn name(&self) -> &'static str {
        "nvtx_gpu_proj_trace"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX.union(Needs::GPU_LINKS)
    }

    fn title(&self) -> &'static str {
        "NVTX GPU Projection Trace"
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
        // nsys needs NVTX and API data to run at all.
        if trace.nvtx.spans.is_empty() || trace.api_calls.spans.is_empty() {
            return Table::default();
        }
        let mut gp = GpuProjection::build(trace, input.filter, input.with_events);
        let forest = &gp.forest;
        let mut table = Table::new(&[
            "Name",
            "Projected Start (ns)",
            "Projected Duration (ns)",
            "Orig Start (ns)",
            "Orig Duration (ns)",
            "Style",
            "PID",
            "TID",
            "NumGPUOps",
            "Lvl",
            "NumChild",
            "RangeId",
            "ParentId",
            "RangeStack",
        ])
        .limited(input.row_limit)
        .streamed_to(input.sink.clone());
        // The script's `ORDER BY "Projected Start", …` names no column (the columns are
        // "Projected Start:ts_ns", …), so SQLite orders by two constant strings: rows come in
        // the projection's `GROUP BY rt.rangeId` order, the row with no range first.
        let mut order: Vec<(Option<i64>, i64, i64, Option<usize>)> = (0..forest.len())
            .filter_map(|p| {
                let proj = gp.projection[p]?;
                Some((
                    Some(forest.range_id(trace, p)),
                    proj.start_ns,
                    proj.start_ns - proj.end_ns,
                    Some(p),
                ))
            })
            .collect();
        // GPU operations launched outside every range make a row with no name, which 2025.3
        // drops (`WHERE name IS NOT NULL`, nvtx_gpu_proj_trace.py).
        let outside = gp
            .outside
            .as_ref()
            .filter(|_| input.nsys_format == NsysFormat::V2023_4);
        if let Some(o) = outside {
            let proj = o.projection;
            order.push((None, proj.start_ns, proj.start_ns - proj.end_ns, None));
        }
        order.sort_unstable();
        let n = &trace.nvtx;
        for (_, start, minus_duration, position) in order {
            let Some(p) = position else {
                let Some(o) = outside else { continue };
                let g = GlobalTid(o.global_tid);
                let events = if input.with_events {
                    RowEvents::Span {
                        start_ns: start,
                        end_ns: start - minus_duration,
                        device: None,
                    }
                } else {
                    RowEvents::None
                };
                table.push(
                    vec![
                        Cell::Null,
                        Cell::Int(start),
                        Cell::Int(-minus_duration),
                        Cell::Null,
                        Cell::Null,
                        Cell::Null,
                        Cell::Int(i64::from(g.pid())),
                        Cell::Int(i64::from(g.tid())),
                        Cell::Int(o.projection.launches),
                        Cell::Null,
                        Cell::Int(0),
                        Cell::Null,
                        Cell::Null,
                        Cell::Null,
                    ],
                    events,
                );
                continue;
            };
            let i = forest.nvtx_index(p);
            let g = GlobalTid(n.global_tid[i]);
            let launches = gp.projection[p].map_or(0, |q| q.launches);
            let cells = vec![
                printed_text(trace, n.domain[i], n.spans.name[i], input.nsys_format)
                    .map_or(Cell::Null, Cell::Text),
                Cell::Int(start),
                Cell::Int(-minus_duration),
                Cell::Int(forest.start_ns(trace, p)),
                Cell::Int(forest.duration_ns(trace, p)),
                Cell::text(n.style[i].label()),
                Cell::Int(i64::from(g.pid())),
                Cell::Int(i64::from(g.tid())),
                Cell::Int(launches),
                Cell::Int(i64::from(forest.level[p])),
                Cell::Int(gp.projected_children[p]),
                Cell::Int(forest.range_id(trace, p)),
                Cell::opt_int(forest.parent_of(p).map(|q| forest.range_id(trace, q))),
                Cell::text(forest.range_stack(trace, p)),
            ];
            let events = if input.with_events {
                let mut ev = vec![EventRef::new(EventTable::Nvtx, i)];
                ev.append(&mut gp.ops[p]);
                RowEvents::Events(ev)
            } else {
                RowEvents::None
            };
            table.push(cells, events);
        }
        table
    }
}
