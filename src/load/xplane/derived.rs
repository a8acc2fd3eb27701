//! The lines XProf derives when it converts an XPlane for its trace viewer (xprof
//! `derived_timeline.cc`, `DeriveEventsFromAnnotations`), which are not in the file: per GPU
//! stream, **XLA Modules** (`jit_step(8621)`: module and program id) and **XLA Ops** (the HLO
//! instruction), each a range over the GPU work that ran it. Consecutive work of a stream with
//! the same name and the same step is one range (XProf's `ExpandOrAddEvent`); the step is the one
//! the work is grouped into ([`crate::trace::xla::group_into_steps`]). They become GPU-annotation
//! ranges of the device's lane, titled by their domain (`XLA Modules`, `XLA Ops`).

use std::collections::HashMap;

use crate::trace::xla::group_into_steps;
use crate::trace::{
    NvtxRanges, NvtxStyle, RangeKind, Spans, StrId, StreamKey, StringTable, XlaInfo,
};

pub const MODULES: &str = "XLA Modules";
pub const OPS: &str = "XLA Ops";

/// One GPU operation as the lines need it.
struct Work {
    key: StreamKey,
    start_ns: i64,
    end_ns: i64,
    /// Index into `XlaInfo::gpu_ops`.
    op: usize,
    /// The correlation id joining it to its launching call.
    correlation: u32,
    /// A kernel: the XLA Ops line holds kernels only (a cuBLAS call's workspace memset carries
    /// its custom-call's HLO op, and XProf's op starts at the kernel).
    kernel: bool,
}

/// What the host side says about each GPU op's step.
pub struct Host<'a> {
    /// The CUDA calls: correlation id, thread and start.
    pub api_correlation: &'a [u32],
    pub api_tid: &'a [i64],
    pub api_start_ns: &'a [i64],
    /// The step annotations' ranges (`train#3`): thread, start, end; in any order.
    pub steps: Vec<(i64, i64, i64)>,
}

/// The GPU work of one table: its streams, spans, correlation ids and `external_id`s.
pub struct Table<'a> {
    streams: &'a [StreamKey],
    spans: &'a Spans,
    correlation: &'a [u32],
    external_id: &'a [u64],
    /// The table holds kernels (the XLA Ops line is made of kernels only).
    kernels: bool,
}

impl<'a> Table<'a> {
    pub fn new(
        streams: &'a [StreamKey],
        spans: &'a Spans,
        correlation: &'a [u32],
        external_id: &'a [u64],
        kernels: bool,
    ) -> Self {
        Table {
            streams,
            spans,
            correlation,
            external_id,
            kernels,
        }
    }
}

/// Appends the XLA Modules and XLA Ops ranges of every GPU stream to `ranges`, on the lane of
/// the stream's device (`lane_tid`), and returns the lanes that got some.
pub fn add_xla_lines(
    tables: &[Table],
    xla: &XlaInfo,
    host: &Host,
    strings: &mut StringTable,
    ranges: &mut NvtxRanges,
    lane_tid: impl Fn(u32) -> i64,
) -> Vec<u32> {
    let mut work: Vec<Work> = Vec::new();
    for t in tables {
        for i in 0..t.spans.len() {
            let Some(op) = t.external_id.get(i).and_then(|&x| x.checked_sub(1)) else {
                continue;
            };
            let (Some(&key), Some(&correlation)) = (t.streams.get(i), t.correlation.get(i)) else {
                continue;
            };
            work.push(Work {
                key,
                start_ns: t.spans.start_ns[i],
                end_ns: t.spans.end_ns[i],
                op: op as usize,
                correlation,
                kernel: t.kernels,
            });
        }
    }
    if work.is_empty() {
        return Vec::new();
    }
    let step_of = steps_of(&work, xla, host);
    let (modules, ops) = (strings.intern(MODULES), strings.intern(OPS));
    let mut order: Vec<usize> = (0..work.len()).collect();
    order.sort_by_key(|&w| (work[w].key, work[w].start_ns, work[w].end_ns));
    let mut lanes: Vec<u32> = Vec::new();
    // (domain, name) of the open range of the stream, with its step and its index.
    let mut open: HashMap<(StreamKey, StrId), (StrId, Option<usize>, usize)> = HashMap::new();
    let mut module_names: HashMap<(StrId, Option<u64>), StrId> = HashMap::new();
    for &w in &order {
        let Work {
            key,
            start_ns,
            end_ns,
            op,
            kernel,
            ..
        } = work[w];
        let Some(facts) = xla.gpu_ops.get(op) else {
            continue;
        };
        let step = step_of[w];
        let mut names: Vec<(StrId, StrId, u16)> = Vec::new();
        if facts.hlo_module != StringTable::EMPTY {
            let module = *module_names
                .entry((facts.hlo_module, facts.program_id))
                .or_insert_with(|| {
                    let text = strings.get(facts.hlo_module).to_string();
                    match facts.program_id {
                        Some(id) => strings.intern(&format!("{text}({id})")),
                        None => facts.hlo_module,
                    }
                });
            names.push((modules, module, 0));
        }
        if kernel && facts.hlo_op != StringTable::EMPTY {
            names.push((ops, facts.hlo_op, 1));
        }
        for (domain, name, depth) in names {
            match open.get(&(key, domain)) {
                // The same name in the same step, next on the stream: the range grows.
                Some(&(n, s, r)) if n == name && s == step => {
                    let end = &mut ranges.spans.end_ns[r];
                    *end = (*end).max(end_ns);
                }
                _ => {
                    let r = push_range(
                        ranges, domain, name, depth, start_ns, end_ns, &lane_tid, key.device,
                    );
                    open.insert((key, domain), (name, step, r));
                }
            }
        }
        if !lanes.contains(&key.device) {
            lanes.push(key.device);
        }
    }
    lanes.sort_unstable();
    lanes
}

#[allow(clippy::too_many_arguments)]
fn push_range(
    r: &mut NvtxRanges,
    domain: StrId,
    name: StrId,
    depth: u16,
    start_ns: i64,
    end_ns: i64,
    lane_tid: &impl Fn(u32) -> i64,
    device: u32,
) -> usize {
    r.spans.push(start_ns, end_ns, name);
    r.domain.push(domain);
    r.color_argb.push(0);
    r.style.push(NvtxStyle::PushPop);
    r.depth.push(depth);
    r.global_tid.push(lane_tid(device));
    r.unclosed.push(false);
    r.ended_on_other_thread.push(false);
    r.kind.push(RangeKind::GpuAnnotation);
    r.external_id.push(0);
    r.input_shapes.push(StringTable::EMPTY);
    r.spans.len() - 1
}

/// Each work's step: the step range on the launching call's thread that holds the call, else
/// the one before (by the steps' first work).
fn steps_of(work: &[Work], xla: &XlaInfo, host: &Host) -> Vec<Option<usize>> {
    let mut steps = host.steps.clone();
    steps.sort_by_key(|&(_, start, _)| start);
    let call_of: HashMap<u32, usize> = host
        .api_correlation
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c != 0)
        .map(|(i, &c)| (c, i))
        .collect();
    let ops: Vec<(i64, Option<usize>)> = work
        .iter()
        .map(|w| {
            let begin = xla
                .gpu_ops
                .get(w.op)
                .map_or(w.start_ns * 1000, |o| o.start_ps);
            let claim = call_of.get(&w.correlation).and_then(|&c| {
                let (tid, at) = (host.api_tid[c], host.api_start_ns[c]);
                steps
                    .iter()
                    .position(|&(g, s, e)| g == tid && s <= at && at <= e)
            });
            (begin, claim)
        })
        .collect();
    group_into_steps(&ops, steps.len())
}
