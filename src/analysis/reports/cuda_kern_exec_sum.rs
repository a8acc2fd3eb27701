//! `cuda_kern_exec_sum` (CUDA Kernel Launch & Exec Time Summary): the launches of
//! [`super::kern_exec`] grouped by (process, thread, device, API function, kernel name), with
//! statistics of the total, API, queue and kernel times, as nsys 2023.4.4's
//! `cuda_kern_exec_sum.py` prints them.

use crate::trace::Needs;
use std::borrow::Cow;
use std::collections::BTreeMap;

use super::kern_exec::{self, Launch, stream_of_rows};
use super::kernel_names::KernelNaming;
use super::shared_texts::SharedTexts;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::filter::EventTable;
use crate::analysis::stats::{Summary, strip_version_suffix};
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::GlobalTid;

pub struct CudaKernExecSum;

const COLUMNS: [&str; 27] = [
    "PID",
    "TID",
    "DevId",
    "Count",
    "QCount",
    "TAvg (ns)",
    "TMed (ns)",
    "TMin (ns)",
    "TMax (ns)",
    "TStdDev (ns)",
    "AAvg (ns)",
    "AMed (ns)",
    "AMin (ns)",
    "AMax (ns)",
    "AStdDev (ns)",
    "QAvg (ns)",
    "QMed (ns)",
    "QMin (ns)",
    "QMax (ns)",
    "QStdDev (ns)",
    "KAvg (ns)",
    "KMed (ns)",
    "KMin (ns)",
    "KMax (ns)",
    "KStdDev (ns)",
    "API Name",
    "Kernel Name",
];

/// A group's key in nsys's `GROUP BY 1, 2, 3, 26, 27`; its `Ord` is the order SQLite's
/// grouping sort leaves the groups in (numbers, then names byte by byte).
type GroupKey<'t> = (u32, u32, u32, &'t str, Cow<'t, str>);

impl StatsReport for CudaKernExecSum {
    fn name(&self) -> &'static str {
        "cuda_kern_exec_sum"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS.union(KernelNaming::needs(options))
    }

    fn title(&self) -> &'static str {
        "CUDA Kernel Launch & Exec Time Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let format = input.nsys_format;
        let naming = KernelNaming::from_options(trace, input.options);
        let stream_of_kernel = stream_of_rows(trace, trace.kernels.spans.len(), |s| &s.kernels);
        let api = &trace.api_calls;
        let mut groups: BTreeMap<GroupKey, Vec<Launch>> = BTreeMap::new();
        for launch in kern_exec::launches(trace, input.filter, &stream_of_kernel) {
            let (i, c) = (launch.kernel as usize, launch.call as usize);
            let Some(stream) = trace.streams.get(stream_of_kernel[i] as usize) else {
                continue;
            };
            let g = GlobalTid(api.global_tid[c]);
            let key = (
                g.pid(),
                g.tid(),
                stream.key.device,
                strip_version_suffix(trace.str(api.spans.name[c])),
                naming.kernel_name(i),
            );
            groups.entry(key).or_default().push(launch);
        }

        let mut rows: Vec<(f64, Vec<Cell>, RowEvents)> = Vec::with_capacity(groups.len());
        let mut texts = SharedTexts::new(trace);
        for ((pid, tid, device, api_name, kernel_name), launches) in groups {
            let n = launches.len();
            let (mut total, mut api_ns, mut queue, mut kernel) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
            );
            for l in &launches {
                let p = l.phases(trace);
                total.push(p.total_ns);
                api_ns.push(p.api_ns);
                queue.extend(p.queue_ns);
                kernel.push(p.kernel_ns);
            }
            let t = Summary::of(&mut total);
            let mut cells = vec![
                Cell::Int(pid as i64),
                Cell::Int(tid as i64),
                Cell::Int(device as i64),
                Cell::Int(n as i64),
                Cell::Int(queue.len() as i64),
            ];
            cells.extend(stat_cells(&t, format));
            cells.extend(stat_cells(&Summary::of(&mut api_ns), format));
            cells.extend(stat_cells(&Summary::of(&mut queue), format));
            cells.extend(stat_cells(&Summary::of(&mut kernel), format));
            cells.push(Cell::text(texts.text(api_name)));
            cells.push(Cell::text(texts.text(&kernel_name)));
            let events = if input.with_events {
                RowEvents::Events(
                    launches
                        .iter()
                        .flat_map(|l| {
                            [
                                EventRef::new(EventTable::ApiCalls, l.call as usize),
                                EventRef::new(EventTable::Kernels, l.kernel as usize),
                            ]
                        })
                        .collect(),
                )
            } else {
                RowEvents::None
            };
            rows.push((format.round(t.avg, 1), cells, events));
        }
        // `ORDER BY 6 DESC`: the rounded average total; the sort is stable, so equal averages
        // keep the grouping order.
        rows.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut table = Table::new(&COLUMNS);
        for (_, cells, events) in rows {
            table.push(cells, events);
        }
        table
    }
}

/// `round(avg, 1)`, `round(median, 1)`, `min`, `max`, `round(stdev, 1)` of one column: the
/// first four NULL over no values, the standard deviation then 0.0 (nsys's `stdev` gives 0 below
/// two values, as its output shows for kernels that never queued).
fn stat_cells(s: &Summary, format: NsysFormat) -> [Cell; 5] {
    let round = |x: f64| Cell::Float(format.round(x, 1));
    if s.count == 0 {
        return [Cell::Null, Cell::Null, Cell::Null, Cell::Null, round(0.0)];
    }
    [
        round(s.avg),
        round(s.median),
        Cell::Int(s.min),
        Cell::Int(s.max),
        round(s.stddev),
    ]
}
