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
//!
//! The samples are as many as nsys's join makes, so they are grouped one thread at a time, by
//! sorting packed integer keys rather than hashing strings.

use crate::trace::Needs;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::kernel_names::{KernelNameKey, KernelNaming};
use super::nvtx_projection::{Launches, op_span};
use super::nvtx_tree::{RangeForest, RangeKinds, printed_name};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::filter::EventTable;
use crate::analysis::stats::Summary;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::{GlobalTid, NO_INDEX, NvtxStyle, StrId, Trace};

pub struct NvtxKernSum;

impl StatsReport for NvtxKernSum {
    fn name(&self) -> &'static str {
        "nvtx_kern_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX.union(Needs::GPU_LINKS)
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

    fn streams(&self) -> bool {
        true
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
        let kernels = KernelNames::of(trace, &naming, &launches);
        let names = RangeNames::of(trace, &forest, input.nsys_format);
        let mut grouper = Grouper {
            forest: &forest,
            with_events: input.with_events,
            samples: Vec::new(),
            rows: Vec::new(),
        };
        let sample = |range: Option<usize>, op: EventRef| {
            let k = op.index as usize;
            let (s, e) = op_span(trace, op);
            let key = match range {
                Some(p) => {
                    let style = match trace.nvtx.style[forest.nvtx_index(p)] {
                        NvtxStyle::PushPop => 1,
                        _ => 2,
                    };
                    u64::from(names.rank[p]) << 34 | style << 32
                }
                None => 0,
            };
            Sample {
                key: key | u64::from(kernels.rank[k]),
                duration_ns: e - s,
                range: range.map_or(NO_INDEX, |p| p as u32),
                kernel: op.index,
            }
        };
        let thread_of = |g: i64| Some((GlobalTid(g).pid(), GlobalTid(g).tid()));
        // Ranges of each thread and the kernels launched inside them.
        for ((tid, ranges), calls) in forest
            .threads
            .iter()
            .zip(launches.calls_by_forest_thread(&forest))
        {
            launches.for_each_enclosed_call_of_thread(
                trace,
                &forest,
                ranges.clone(),
                calls,
                |p, c| {
                    let l = launches.launch_of_call[c] as usize;
                    for &op in launches.ops_of(l) {
                        grouper.samples.push(sample(Some(p), op));
                    }
                },
            );
            grouper.flush(thread_of(*tid));
        }
        // Launching calls inside no range, by thread; then kernels with no launching call.
        let enclosed = launches.enclosed(trace, &forest);
        for (tid, calls) in &launches.threads {
            for c in calls.clone().filter(|&c| !enclosed[c]) {
                let l = launches.launch_of_call[c] as usize;
                for &op in launches.ops_of(l) {
                    grouper.samples.push(sample(None, op));
                }
            }
            grouper.flush(thread_of(*tid));
        }
        for &op in &launches.unlaunched {
            grouper.samples.push(sample(None, op));
        }
        grouper.flush(None);
        let mut rows = grouper.rows;
        rows.sort_unstable_by_key(|r| {
            (
                r.key >> 34,
                r.thread,
                Reverse(r.stats.total),
                r.key >> 32 & 3,
                r.key & u64::from(u32::MAX),
            )
        });
        to_table(input, &names, &kernels, rows)
    }
}

/// One (range, call, kernel) sample. `key` packs the group within a thread: the rank of the
/// range's printed name (0 for none: no range, or a range without text) in bits 34.., its style
/// (0 none, 1 push/pop, 2 start/end) in bits 32..34, the rank of the kernel's name in bits
/// 0..32 — so integer order is nsys's order, SQL NULL first.
#[derive(Debug, Clone, Copy)]
struct Sample {
    key: u64,
    duration_ns: i64,
    /// Forest position, or [`NO_INDEX`].
    range: u32,
    kernel: u32,
}

/// One summarised group.
struct GroupRow {
    key: u64,
    thread: Option<(u32, u32)>,
    stats: Summary,
    ranges: usize,
    kernels: usize,
    events: Vec<EventRef>,
}

/// Turns the samples of one thread at a time into rows.
struct Grouper<'a> {
    forest: &'a RangeForest,
    with_events: bool,
    samples: Vec<Sample>,
    rows: Vec<GroupRow>,
}

impl Grouper<'_> {
    fn flush(&mut self, thread: Option<(u32, u32)>) {
        let samples = &mut self.samples;
        samples.par_sort_unstable_by_key(|s| (s.key, s.duration_ns));
        let mut durations: Vec<i64> = Vec::new();
        let mut ranges: Vec<u32> = Vec::new();
        let mut kernels: Vec<u32> = Vec::new();
        for group in samples.chunk_by(|a, b| a.key == b.key) {
            durations.clear();
            durations.extend(group.iter().map(|s| s.duration_ns));
            ranges.clear();
            ranges.extend(group.iter().map(|s| s.range).filter(|&r| r != NO_INDEX));
            ranges.sort_unstable();
            ranges.dedup();
            kernels.clear();
            kernels.extend(group.iter().map(|s| s.kernel));
            kernels.sort_unstable();
            kernels.dedup();
            let events = if self.with_events {
                let r = ranges
                    .iter()
                    .map(|&p| EventRef::new(EventTable::Nvtx, self.forest.nvtx_index(p as usize)));
                let k = kernels
                    .iter()
                    .map(|&k| EventRef::new(EventTable::Kernels, k as usize));
                r.chain(k).collect()
            } else {
                Vec::new()
            };
            self.rows.push(GroupRow {
                key: group[0].key,
                thread,
                stats: Summary::of(&mut durations),
                ranges: ranges.len(),
                kernels: kernels.len(),
                events,
            });
        }
        samples.clear();
    }
}

/// The printed names of the ranges of a forest, ranked in byte order from 1 (0: no name).
struct RangeNames {
    /// Per forest position.
    rank: Vec<u32>,
    /// Name of rank `r` at `r - 1`, shared by the rows that print it.
    text: Vec<Arc<str>>,
}

impl RangeNames {
    fn of(trace: &Trace, forest: &RangeForest, format: NsysFormat) -> RangeNames {
        let n = &trace.nvtx;
        let mut by_ids: HashMap<(StrId, StrId), usize> = HashMap::new();
        let mut pairs: Vec<Option<String>> = Vec::new();
        let pair_of: Vec<usize> = (0..forest.len())
            .map(|p| {
                let i = forest.nvtx_index(p);
                *by_ids
                    .entry((n.domain[i], n.spans.name[i]))
                    .or_insert_with(|| {
                        pairs.push(printed_name(trace, n.domain[i], n.spans.name[i], format));
                        pairs.len() - 1
                    })
            })
            .collect();
        // Different (domain, text) pairs can print alike: equal names share a rank.
        let mut text: Vec<String> = pairs.iter().flatten().cloned().collect();
        text.sort_unstable();
        text.dedup();
        let rank_of_pair: Vec<u32> = pairs
            .iter()
            .map(|name| {
                name.as_ref()
                    .map_or(0, |name| text.partition_point(|t| t < name) as u32 + 1)
            })
            .collect();
        RangeNames {
            rank: pair_of.iter().map(|&k| rank_of_pair[k]).collect(),
            text: text.into_iter().map(Arc::from).collect(),
        }
    }

    fn name(&self, rank: u32) -> Option<&Arc<str>> {
        let r = rank.checked_sub(1)?;
        self.text.get(r as usize)
    }
}

/// The printed names of the kernels (under the report's naming options), ranked in byte order.
struct KernelNames {
    /// Per kernel (index into `trace.kernels`); only the kernels of the report are set.
    rank: Vec<u32>,
    /// Name of each rank, shared by the rows that print it.
    text: Vec<Arc<str>>,
}

impl KernelNames {
    fn of(trace: &Trace, naming: &KernelNaming, launches: &Launches) -> KernelNames {
        let kernel_ops = (0..launches.launch_count())
            .flat_map(|l| launches.ops_of(l))
            .chain(&launches.unlaunched)
            .map(|op| op.index as usize);
        let mut ids: Vec<(usize, StrId)> = kernel_ops.map(|k| (k, naming.key(k).kernel)).collect();
        let mut distinct: Vec<StrId> = ids.iter().map(|&(_, id)| id).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut text: Vec<String> = distinct
            .iter()
            .map(|&id| {
                naming
                    .name_of(KernelNameKey {
                        nvtx: None,
                        kernel: id,
                    })
                    .into_owned()
            })
            .collect();
        let by_id: HashMap<StrId, String> = distinct.iter().copied().zip(text.clone()).collect();
        text.sort_unstable();
        text.dedup();
        let rank_of: HashMap<StrId, u32> = by_id
            .iter()
            .map(|(&id, name)| (id, text.partition_point(|t| t < name) as u32))
            .collect();
        let mut rank = vec![0u32; trace.kernels.spans.len()];
        for (k, id) in ids.drain(..) {
            rank[k] = rank_of.get(&id).copied().unwrap_or(0);
        }
        KernelNames {
            rank,
            text: text.into_iter().map(Arc::from).collect(),
        }
    }
}

fn to_table(
    input: &ReportInput,
    names: &RangeNames,
    kernels: &KernelNames,
    rows: Vec<GroupRow>,
) -> Table {
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
    ])
    .streamed_to(input.sink.clone());
    let round = |x: f64| Cell::Float(input.nsys_format.round(x, 1));
    for row in rows {
        let s = &row.stats;
        let name = names.name((row.key >> 34) as u32);
        let style = match row.key >> 32 & 3 {
            0 => None,
            1 => Some(NvtxStyle::PushPop),
            _ => Some(NvtxStyle::StartEnd),
        };
        let kernel = kernels
            .text
            .get((row.key & u64::from(u32::MAX)) as usize)
            .cloned()
            .unwrap_or_else(|| Arc::from(""));
        let cells = vec![
            name.map_or(Cell::Null, |name| Cell::text(Arc::clone(name))),
            style.map_or(Cell::Null, |s| Cell::text(s.label())),
            Cell::opt_int(row.thread.map(|t| i64::from(t.0))),
            Cell::opt_int(row.thread.map(|t| i64::from(t.1))),
            Cell::Int(row.ranges as i64),
            Cell::Int(row.kernels as i64),
            Cell::Int(s.total),
            round(s.avg),
            round(s.median),
            Cell::Int(s.min),
            Cell::Int(s.max),
            round(s.stddev),
            Cell::text(kernel),
        ];
        let events = if input.with_events && !row.events.is_empty() {
            RowEvents::Events(row.events)
        } else {
            RowEvents::None
        };
        table.push(cells, events);
    }
    table
}
