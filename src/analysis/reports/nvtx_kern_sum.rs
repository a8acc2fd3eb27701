//! `nvtx_kern_sum` (NVTX Range Kernel Summary), after Nsight Systems 2023.4.4 `nvtx_kern_sum.py`:
//! kernels grouped by the NVTX ranges around their launching CUDA API call.
//!
//! Every (range, launching call, kernel) triple is one sample ([`Launches`]): a kernel inside
//! three nested ranges counts in each of them, and twice in a range that holds two calls of its
//! launch (a runtime and a driver row with one correlationId). A call inside no range gives the
//! kernel a row with no range; a kernel with no call in the trace one with no PID/TID either.
//! Groups are (PID, TID, range name, style, kernel name); `NVTX Inst` and `Kern Inst` count
//! distinct ranges and kernels, the durations every sample. Rows by range name, PID, TID (a
//! missing value first), then total time descending, then style and kernel name.

use std::collections::HashMap;

use super::kernel_names::KernelNaming;
use super::nvtx_projection::{Launches, op_span};
use super::nvtx_tree::{RangeForest, RangeKinds, printed_name};
use super::{ReportInput, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::rounding::sqlite_round;
use crate::analysis::stats::Summary;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::{GlobalTid, NvtxStyle, StrId, Trace};

pub struct NvtxKernSum;

impl StatsReport for NvtxKernSum {
    fn name(&self) -> &'static str {
        "nvtx_kern_sum"
    }

    fn title(&self) -> &'static str {
        "NVTX Range Kernel Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["base", "mangled"]
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        // nsys needs NVTX and API data to run at all.
        if trace.nvtx.spans.is_empty() || trace.api_calls.spans.is_empty() {
            return Table::default();
        }
        let forest = RangeForest::build(trace, input.filter, RangeKinds::SameThreadRanges);
        let launches = Launches::build(trace, input.filter, &[EventTable::Kernels]);
        let naming = KernelNaming::from_options(trace, input.options);
        let names = RangeNames::of(trace, &forest);
        let mut groups: HashMap<GroupKey, Samples> = HashMap::new();
        let mut add = |range: Option<usize>, thread: Option<i64>, op: EventRef| {
            let k = op.index as usize;
            let key = GroupKey {
                range: range.map(|p| (names.id[p], trace.nvtx.style[forest.nvtx_index(p)])),
                thread: thread.map(|g| (GlobalTid(g).pid(), GlobalTid(g).tid())),
                kernel: naming.key(k).kernel,
            };
            let (s, e) = op_span(trace, op);
            let g = groups.entry(key).or_default();
            g.durations.push(e - s);
            g.kernels.push(op.index);
            if let Some(p) = range {
                g.ranges.push(p as u32);
            }
        };
        let call_thread = |c: usize| trace.api_calls.global_tid[launches.calls[c] as usize];
        launches.for_each_enclosed_call(trace, &forest, |p, c| {
            let l = launches.launch_of_call[c] as usize;
            for &op in launches.ops_of(l) {
                add(Some(p), Some(call_thread(c)), op);
            }
        });
        for (c, enclosed) in launches.enclosed(trace, &forest).into_iter().enumerate() {
            if !enclosed {
                let l = launches.launch_of_call[c] as usize;
                for &op in launches.ops_of(l) {
                    add(None, Some(call_thread(c)), op);
                }
            }
        }
        for &op in &launches.unlaunched {
            add(None, None, op);
        }
        rows(input, trace, &forest, &names, &naming, groups)
    }
}

/// What a row groups by: the range's printed name and style, the launching thread, the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct GroupKey {
    range: Option<(u32, NvtxStyle)>,
    thread: Option<(u32, u32)>,
    kernel: StrId,
}

/// The samples of one group: positions of its ranges, its kernels, one duration per sample.
#[derive(Debug, Default)]
struct Samples {
    ranges: Vec<u32>,
    kernels: Vec<u32>,
    durations: Vec<i64>,
}

/// The printed names of the ranges of a forest, numbered so that equal names get one number.
struct RangeNames {
    /// Per forest position.
    id: Vec<u32>,
    text: Vec<String>,
}

impl RangeNames {
    fn of(trace: &Trace, forest: &RangeForest) -> RangeNames {
        let n = &trace.nvtx;
        let mut by_ids: HashMap<(StrId, StrId), u32> = HashMap::new();
        let mut by_text: HashMap<String, u32> = HashMap::new();
        let mut text: Vec<String> = Vec::new();
        let id = (0..forest.len())
            .map(|p| {
                let i = forest.nvtx_index(p);
                *by_ids
                    .entry((n.domain[i], n.spans.name[i]))
                    .or_insert_with(|| {
                        let name = printed_name(trace, n.domain[i], n.spans.name[i]);
                        *by_text.entry(name.clone()).or_insert_with(|| {
                            text.push(name);
                            text.len() as u32 - 1
                        })
                    })
            })
            .collect();
        RangeNames { id, text }
    }
}

fn rows(
    input: &ReportInput,
    trace: &Trace,
    forest: &RangeForest,
    names: &RangeNames,
    naming: &KernelNaming,
    groups: HashMap<GroupKey, Samples>,
) -> Table {
    let mut rows: Vec<(GroupKey, Samples, Summary)> = groups
        .into_iter()
        .map(|(key, mut s)| {
            let summary = Summary::of(&mut s.durations);
            (key, s, summary)
        })
        .collect();
    let range_name = |k: &GroupKey| k.range.map(|(id, _)| names.text[id as usize].as_str());
    rows.sort_by(|(a, _, sa), (b, _, sb)| {
        range_name(a)
            .cmp(&range_name(b))
            .then(a.thread.cmp(&b.thread))
            .then(sb.total.cmp(&sa.total))
            .then(a.range.map(|r| r.1).cmp(&b.range.map(|r| r.1)))
            .then_with(|| trace.str(a.kernel).cmp(trace.str(b.kernel)))
    });
    let mut table = Table::new(&[
        "NVTX Range",
        "Style",
        "PID",
        "TID",
        "NVTX Inst",
        "Kern Inst",
        "Total Time (ns)",
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
        "Kernel Name",
    ]);
    let round = |x: f64| Cell::Float(sqlite_round(x, 1));
    for (key, mut samples, s) in rows {
        samples.ranges.sort_unstable();
        samples.ranges.dedup();
        samples.kernels.sort_unstable();
        samples.kernels.dedup();
        let cells = vec![
            range_name(&key).map_or(Cell::Null, Cell::text),
            key.range
                .map_or(Cell::Null, |(_, style)| Cell::text(style.label())),
            Cell::opt_int(key.thread.map(|t| i64::from(t.0))),
            Cell::opt_int(key.thread.map(|t| i64::from(t.1))),
            Cell::Int(samples.ranges.len() as i64),
            Cell::Int(samples.kernels.len() as i64),
            Cell::Int(s.total),
            round(s.avg),
            round(s.median),
            Cell::Int(s.min),
            Cell::Int(s.max),
            round(s.stddev),
            Cell::text(naming.name_of(super::kernel_names::KernelNameKey {
                nvtx: None,
                kernel: key.kernel,
            })),
        ];
        let events = if input.with_events {
            let ranges = samples
                .ranges
                .iter()
                .map(|&p| EventRef::new(EventTable::Nvtx, forest.nvtx_index(p as usize)));
            let kernels = samples
                .kernels
                .iter()
                .map(|&k| EventRef::new(EventTable::Kernels, k as usize));
            RowEvents::Events(ranges.chain(kernels).collect())
        } else {
            RowEvents::None
        };
        table.push(cells, events);
    }
    table
}
