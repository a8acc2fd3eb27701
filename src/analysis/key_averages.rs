//! PyTorch's own operator table, `prof.key_averages()`, computed from a PyTorch profiler (Kineto)
//! trace as PyTorch computes it from the same events when the profiler stops.
//!
//! The steps follow PyTorch 2.11's `torch/autograd/profiler.py` (`_parse_kineto_results`) and
//! `profiler_util.py` (`EventList._build_tree`, `FunctionEvent`, `FunctionEventAvg.add`,
//! `EventList.key_averages`):
//! 1. Every operator, `record_function` annotation (CPU and GPU side), CUDA runtime/driver call,
//!    kernel, memcpy and memset is a function event; Python frames are not. A few utility names
//!    are dropped (`[memory]`, `aten::is_leaf`, …) and `ProfilerStep#N` is keyed `ProfilerStep*`.
//! 2. A CPU event's memory is the sum of the `[memory]` records that start in `[start, end]` (both
//!    ends, any thread); a record no CPU event covers becomes a `[memory]` event of its own.
//! 3. In (start, -end) order, a CPU event with no launching op (operators and annotations, and
//!    CUDA calls without an `External id`: Kineto's `linked_correlation_id() == 0`) takes as its
//!    kernels the GPU work whose `External id` is its id; a CUDA call so linked moves to its
//!    thread. A CUDA call linked to nothing, made on a thread with no op, nests on the process's
//!    main thread.
//! 4. CPU events (not async) nest per thread by time; a child that has its parent's name and is
//!    its only child is folded into it (`_remove_dup_nodes`: the parent takes the child's children
//!    and kernels).
//! 5. Rows group by (name, device, user annotation) and, when asked, the input shapes.
//!
//! Checked against `key_averages()` saved by PyTorch 2.11 for the traces in
//! `../shared/traces/pytorch/golden` and the NCCL runs in `tests/fixtures/nccl/pytorch/golden`
//! (tests/torch_ops.rs). What the trace file cannot say:
//! - Which events are async (begun and ended on different threads): only c10d's collectives are
//!   recognised, by name (`gloo:`, `nccl:`, … below).
//! - A GPU annotation's own span: Kineto writes it wider than the GPU work it covers (its
//!   `ChromeTraceLogger` moves the start 1 ns earlier; PyTorch 2.11's files are 2 ns longer per
//!   annotation than the time PyTorch counts). The trace's span is used as written.
//! - Ties: events with equal start and end nest in the order PyTorch received them, here in the
//!   order of the trace's tables.

use std::collections::HashMap;

use super::filter::{EventTable, Filter};
use super::table::EventRef;
use crate::trace::{RangeKind, StrId, StringTable, TorchMemoryEvents, Trace};

/// Where a function event ran, as PyTorch's `DeviceType` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpDevice {
    Cpu,
    Cuda,
}

impl OpDevice {
    pub fn label(self) -> &'static str {
        match self {
            OpDevice::Cpu => "CPU",
            OpDevice::Cuda => "CUDA",
        }
    }
}

/// One row of `key_averages()`: the events of one key, summed. Times in ns, memory in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyAverage {
    /// The event name (`ProfilerStep*` for every `ProfilerStep#N`).
    pub name: String,
    pub device: OpDevice,
    /// A `record_function` range (CPU or GPU side), kept apart from an op of the same name.
    pub user_annotation: bool,
    /// `str(input_shapes)` as PyTorch prints it, when grouped by input shape.
    pub input_shapes: Option<String>,
    pub count: u64,
    pub self_cpu_ns: i64,
    pub cpu_total_ns: i64,
    pub self_cuda_ns: i64,
    pub cuda_total_ns: i64,
    pub self_cpu_mem_bytes: i64,
    pub cpu_mem_bytes: i64,
    pub self_cuda_mem_bytes: i64,
    pub cuda_mem_bytes: i64,
    /// The trace's events behind the row (when asked for; `[memory]` rows have none).
    pub events: Vec<EventRef>,
}

/// How to group and what to keep.
#[derive(Debug, Clone, Copy, Default)]
pub struct KeyAverageOptions {
    /// `key_averages(group_by_input_shape=True)`.
    pub group_by_input_shape: bool,
    /// Fill [`KeyAverage::events`].
    pub with_events: bool,
}

/// Names `_parse_kineto_results` skips (profiler_util.py `_filter_name`).
const FILTERED_NAMES: [&str; 8] = [
    "[memory]",
    "[OutOfMemory]",
    "profiler::_record_function_enter",
    "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf",
    "aten::output_nr",
    "aten::_version",
];

/// `profilingTitle` prefixes of c10d's collectives (`gloo:all_reduce`, `nccl:broadcast`, …).
/// c10d's `Work` records them with `RecordFunction::_setAsync()` (torch/csrc/distributed/c10d/
/// Work.cpp, ProcessGroupGloo.cpp: "started and completed by different threads"), so PyTorch
/// counts them as async: no self time, no children, no parent. The Chrome trace does not write
/// that flag; these names are how it shows.
const ASYNC_COLLECTIVE_PREFIXES: [&str; 5] = ["gloo:", "nccl:", "mpi:", "ucc:", "xccl:"];

/// What a function event came from.
#[derive(Debug, Clone, Copy)]
enum Source {
    Event(EventRef),
    /// An allocator record no CPU event covers.
    Memory,
    /// A `cuda_sync` event of a PyTorch trace (a GPU-side wait; no table of the filter's).
    Sync,
}

/// PyTorch's `FunctionEvent`, reduced to what `key_averages` reads.
#[derive(Debug)]
struct FunctionEvent<'a> {
    name: &'a str,
    source: Source,
    device: OpDevice,
    user_annotation: bool,
    is_async: bool,
    start_ns: i64,
    end_ns: i64,
    /// `globalTid` of the thread it nests on.
    thread: i64,
    /// Kineto's `correlation_id()`: an op's own `External id`; a CUDA call's CUPTI correlation.
    id: u64,
    /// Kineto's `linked_correlation_id()`: the `External id` of the op that launched it, 0 none.
    linked: u64,
    input_shapes: StrId,
    cpu_mem_bytes: i64,
    cuda_mem_bytes: i64,
    /// Summed duration of its kernels (replaced, not added to, when a duplicate child is folded).
    kernel_ns: i64,
    children: Vec<u32>,
    parent: Option<u32>,
}

impl<'a> FunctionEvent<'a> {
    /// An event with no thread, links, shapes, memory or kernels yet.
    fn new(name: &'a str, source: Source, device: OpDevice, start_ns: i64, end_ns: i64) -> Self {
        Self {
            name,
            source,
            device,
            user_annotation: false,
            is_async: false,
            start_ns,
            end_ns,
            thread: 0,
            id: 0,
            linked: 0,
            input_shapes: StringTable::EMPTY,
            cpu_mem_bytes: 0,
            cuda_mem_bytes: 0,
            kernel_ns: 0,
            children: Vec::new(),
            parent: None,
        }
    }

    fn cpu_total_ns(&self) -> i64 {
        match self.device {
            OpDevice::Cpu => self.end_ns.saturating_sub(self.start_ns),
            OpDevice::Cuda => 0,
        }
    }

    /// Nests on its thread and has self time (PyTorch: `device_type == CPU and not is_async`).
    fn is_sync_cpu(&self) -> bool {
        self.device == OpDevice::Cpu && !self.is_async
    }
}

/// `key_averages()` of a PyTorch profiler trace; empty for a trace without PyTorch data. Under a
/// filter, the events that start in its range (and are not excluded) count, each with the
/// children, kernels and memory it has in the whole trace. Rows in no particular order.
pub fn key_averages(trace: &Trace, filter: &Filter, options: KeyAverageOptions) -> Vec<KeyAverage> {
    let Some(torch) = &trace.torch else {
        return Vec::new();
    };
    let mut events = function_events(trace);
    add_memory(&mut events, &torch.memory);
    // `_parse_kineto_results` sorts by (start, -end) (the sort is stable), and links in that
    // order: where a CUDA call's CUPTI correlation equals an op's External id (NCCL's watchdog
    // `cudaEventQuery` of correlation 1952 beside `aten::mm` of External id 1952 in
    // tests/fixtures/nccl/pytorch/kt_ddp_rank0), both take the op's kernels and the later one
    // takes its calls to its thread (PyTorch 2.11's key_averages of those traces agree).
    events.sort_by(|a, b| {
        a.start_ns
            .cmp(&b.start_ns)
            .then_with(|| b.end_ns.cmp(&a.end_ns))
    });
    link_kernels(&mut events);
    calls_of_unknown_threads_to_main(&mut events);
    populate_cpu_children(&mut events);
    let alive = remove_dup_nodes(&mut events);
    aggregate(trace, &events, &alive, filter, options)
}

/// Step 1: the function events of every op, annotation, CUDA call and GPU operation.
fn function_events(trace: &Trace) -> Vec<FunctionEvent<'_>> {
    let mut out = Vec::new();
    let nvtx = &trace.nvtx;
    for i in 0..nvtx.spans.len() {
        let kind = nvtx.kind_of(i);
        let (device, user_annotation) = match kind {
            RangeKind::Operator => (OpDevice::Cpu, false),
            RangeKind::Annotation => (OpDevice::Cpu, true),
            RangeKind::GpuAnnotation => (OpDevice::Cuda, true),
            RangeKind::Nvtx | RangeKind::Python => continue,
        };
        let name = trace.str(nvtx.spans.name[i]);
        let Some(name) = key_name(name) else {
            continue;
        };
        let is_async = kind == RangeKind::Annotation
            && ASYNC_COLLECTIVE_PREFIXES
                .iter()
                .any(|p| name.starts_with(p));
        // A GPU annotation is linked to nothing: its time is not a kernel of the CPU range of
        // the same External id (PyTorch 2.11's golden files agree).
        let external_id = nvtx.external_id.get(i).copied().unwrap_or(0);
        let source = Source::Event(EventRef::new(EventTable::Nvtx, i));
        let (start_ns, end_ns) = (nvtx.spans.start_ns[i], nvtx.spans.end_ns[i]);
        out.push(FunctionEvent {
            user_annotation,
            is_async,
            thread: nvtx.global_tid.get(i).copied().unwrap_or(0),
            id: if device == OpDevice::Cpu {
                external_id
            } else {
                0
            },
            input_shapes: nvtx
                .input_shapes
                .get(i)
                .copied()
                .unwrap_or(StringTable::EMPTY),
            ..FunctionEvent::new(name, source, device, start_ns, end_ns)
        });
    }
    let api = &trace.api_calls;
    for i in 0..api.spans.len() {
        let Some(name) = key_name(trace.str(api.spans.name[i])) else {
            continue;
        };
        let source = Source::Event(EventRef::new(EventTable::ApiCalls, i));
        let (start_ns, end_ns) = (api.spans.start_ns[i], api.spans.end_ns[i]);
        out.push(FunctionEvent {
            thread: api.global_tid.get(i).copied().unwrap_or(0),
            id: api.correlation_id.get(i).map_or(0, |&c| u64::from(c)),
            linked: api.external_id.get(i).copied().unwrap_or(0),
            ..FunctionEvent::new(name, source, OpDevice::Cpu, start_ns, end_ns)
        });
    }
    let gpu_tables = [
        (
            EventTable::Kernels,
            &trace.kernels.spans,
            &trace.kernels.external_id,
            &[][..],
        ),
        (
            EventTable::Memcpys,
            &trace.memcpys.spans,
            &trace.memcpys.external_id,
            &trace.memcpys.kineto_name[..],
        ),
        (
            EventTable::Memsets,
            &trace.memsets.spans,
            &trace.memsets.external_id,
            &trace.memsets.kineto_name[..],
        ),
    ];
    for (table, spans, external_id, kineto_name) in gpu_tables {
        for i in 0..spans.len() {
            // Memcpys and memsets under Kineto's own names ("Memcpy HtoD (Pageable -> Device)").
            let name_id = kineto_name
                .get(i)
                .copied()
                .filter(|&n| n != StringTable::EMPTY)
                .unwrap_or(spans.name[i]);
            let Some(name) = key_name(trace.str(name_id)) else {
                continue;
            };
            let source = Source::Event(EventRef::new(table, i));
            let (start_ns, end_ns) = (spans.start_ns[i], spans.end_ns[i]);
            out.push(FunctionEvent {
                linked: external_id.get(i).copied().unwrap_or(0),
                ..FunctionEvent::new(name, source, OpDevice::Cuda, start_ns, end_ns)
            });
        }
    }
    // CUDA synchronisation events (`enable_cuda_sync_events`): device events of the op whose
    // call waited ("Stream Sync" under `aten::_local_scalar_dense`'s cudaStreamSynchronize),
    // rows of their own, as PyTorch's profiler keeps them.
    let syncs = &trace.syncs;
    for i in 0..syncs.kineto_name.len().min(syncs.spans.len()) {
        let Some(name) = key_name(trace.str(syncs.kineto_name[i])) else {
            continue;
        };
        // Kineto writes a sync made outside any op with its own correlation as `External id`
        // (kt_ws_streaming_sync's Context Syncs and Stream Wait Events, kt_train_sync's Context
        // Sync): PyTorch's key_averages() counts those in no op and in no CUDA call.
        let external = syncs.external_id.get(i).copied().unwrap_or(0);
        let own = syncs.correlation_id.get(i).map(|&c| u64::from(c)) == Some(external);
        out.push(FunctionEvent {
            linked: if own { 0 } else { external },
            ..FunctionEvent::new(
                name,
                Source::Sync,
                OpDevice::Cuda,
                syncs.spans.start_ns[i],
                syncs.spans.end_ns[i],
            )
        });
    }
    out
}

/// The key PyTorch gives `name`, `None` for a name it drops (`_filter_name`, `_rewrite_name`).
fn key_name(name: &str) -> Option<&str> {
    if FILTERED_NAMES.contains(&name) {
        None
    } else if name.starts_with("ProfilerStep#") {
        Some("ProfilerStep*")
    } else {
        Some(name)
    }
}

/// Which of PyTorch's memory columns a record's bytes go to (`_cpu_memory_usage`,
/// `_device_memory_usage`: c10 `DeviceType` CPU 0, MKLDNN 2, IDEEP 5; CUDA 1, HIP 6, XPU 12,
/// PrivateUse1 20).
fn memory_side(device_type: u8) -> Option<OpDevice> {
    match device_type {
        0 | 2 | 5 => Some(OpDevice::Cpu),
        1 | 6 | 12 | 20 => Some(OpDevice::Cuda),
        _ => None,
    }
}

/// Step 2: each CPU event's memory (`MemRecordsAcc.in_interval`: records with start in
/// `[start, end]`), and a `[memory]` event for each record no CPU event covers.
fn add_memory<'a>(events: &mut Vec<FunctionEvent<'a>>, memory: &TorchMemoryEvents) {
    let mut order: Vec<usize> = (0..memory.len()).collect();
    order.sort_by_key(|&i| memory.time_ns[i]);
    let times: Vec<i64> = order.iter().map(|&i| memory.time_ns[i]).collect();
    let bytes_of = |i: usize, side: OpDevice| -> i64 {
        let device_type = memory.device_type.get(i).copied().unwrap_or(u8::MAX);
        if memory_side(device_type) == Some(side) {
            memory.bytes.get(i).copied().unwrap_or(0)
        } else {
            0
        }
    };
    // Prefix sums over the time order: an event's bytes in O(log n), nesting however deep.
    let mut cpu_prefix = vec![0i64; order.len() + 1];
    let mut cuda_prefix = vec![0i64; order.len() + 1];
    for (k, &i) in order.iter().enumerate() {
        cpu_prefix[k + 1] = cpu_prefix[k].saturating_add(bytes_of(i, OpDevice::Cpu));
        cuda_prefix[k + 1] = cuda_prefix[k].saturating_add(bytes_of(i, OpDevice::Cuda));
    }
    // +1 where a covering interval opens, -1 past where it closes: a record is used where the
    // running sum is positive.
    let mut cover = vec![0i64; order.len() + 1];
    for e in events.iter_mut().filter(|e| e.device == OpDevice::Cpu) {
        let lo = times.partition_point(|&t| t < e.start_ns);
        let hi = times.partition_point(|&t| t <= e.end_ns);
        if lo >= hi {
            continue;
        }
        e.cpu_mem_bytes = cpu_prefix[hi] - cpu_prefix[lo];
        e.cuda_mem_bytes = cuda_prefix[hi] - cuda_prefix[lo];
        cover[lo] += 1;
        cover[hi] -= 1;
    }
    let mut running = 0i64;
    for (k, &i) in order.iter().enumerate() {
        running += cover[k];
        if running > 0 {
            continue;
        }
        let time_ns = memory.time_ns[i];
        events.push(FunctionEvent {
            thread: memory.global_tid.get(i).copied().unwrap_or(0),
            cpu_mem_bytes: bytes_of(i, OpDevice::Cpu),
            cuda_mem_bytes: bytes_of(i, OpDevice::Cuda),
            ..FunctionEvent::new("[memory]", Source::Memory, OpDevice::Cpu, time_ns, time_ns)
        });
    }
}

/// Step 3: kernels of each op, and the thread of each CUDA call it made.
fn link_kernels(events: &mut [FunctionEvent]) {
    let mut by_linked: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.linked > 0 {
            by_linked.entry(e.linked).or_default().push(i as u32);
        }
    }
    let mut moves: Vec<(u32, i64)> = Vec::new();
    for i in 0..events.len() {
        let e = &events[i];
        if e.linked != 0 || !e.is_sync_cpu() {
            continue;
        }
        let Some(linked) = by_linked.get(&e.id) else {
            continue;
        };
        let thread = e.thread;
        let mut kernel_ns = 0i64;
        for &j in linked {
            let f = &events[j as usize];
            match f.device {
                OpDevice::Cuda => {
                    kernel_ns = kernel_ns.saturating_add(f.end_ns.saturating_sub(f.start_ns));
                }
                OpDevice::Cpu => moves.push((j, thread)),
            }
        }
        events[i].kernel_ns = events[i].kernel_ns.saturating_add(kernel_ns);
    }
    for (j, thread) in moves {
        events[j as usize].thread = thread;
    }
}

/// Step 3b: a CUDA call linked to no op, made on a thread where PyTorch recorded no op or
/// annotation (NCCL's watchdog polling `cudaEventQuery`; CUPTI names such a thread by a number
/// Kineto cannot map to a system thread, e.g. 1654507200), nests on its process's main thread (tid
/// = pid), as in PyTorch 2.11's `key_averages()` of the NCCL runs in tests/fixtures/nccl/pytorch:
/// there its time counts as a child of the main thread's ops (`aten::gelu`, `cudaLaunchKernelExC`).
fn calls_of_unknown_threads_to_main(events: &mut [FunctionEvent]) {
    let known: std::collections::HashSet<i64> = events
        .iter()
        .filter(|e| e.device == OpDevice::Cpu && e.linked == 0)
        .filter(|e| matches!(e.source, Source::Event(r) if r.table == EventTable::Nvtx))
        .map(|e| e.thread)
        .collect();
    for e in events.iter_mut() {
        let is_call = matches!(e.source, Source::Event(r) if r.table == EventTable::ApiCalls);
        if is_call && !known.contains(&e.thread) {
            let pid = e.thread >> 24;
            e.thread = (pid << 24) | pid;
        }
    }
}

/// Step 4a (`_populate_cpu_children`): on each thread, in (start, -end) order, an event's parent
/// is the innermost open event that contains it.
fn populate_cpu_children(events: &mut [FunctionEvent]) {
    let mut by_thread: HashMap<i64, Vec<u32>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.is_sync_cpu() {
            by_thread.entry(e.thread).or_default().push(i as u32);
        }
    }
    let mut stack: Vec<u32> = Vec::new();
    for list in by_thread.values() {
        stack.clear();
        for &i in list {
            let (start, end) = (events[i as usize].start_ns, events[i as usize].end_ns);
            while let Some(&top) = stack.last() {
                let parent_end = events[top as usize].end_ns;
                if start >= parent_end || end > parent_end {
                    stack.pop();
                } else {
                    events[top as usize].children.push(i);
                    events[i as usize].parent = Some(top);
                    break;
                }
            }
            stack.push(i);
        }
    }
}

/// Step 4b (`_remove_dup_nodes`): folds each only child of the same name into its parent, pass
/// after pass until none is left. Returns which events remain.
fn remove_dup_nodes(events: &mut [FunctionEvent]) -> Vec<bool> {
    let mut alive = vec![true; events.len()];
    loop {
        let mut removed = false;
        for i in 0..events.len() {
            if !alive[i] {
                continue;
            }
            let Some(p) = events[i].parent else {
                continue;
            };
            let p = p as usize;
            if events[p].name != events[i].name || events[p].children.len() != 1 {
                continue;
            }
            let children = std::mem::take(&mut events[i].children);
            for &c in &children {
                events[c as usize].parent = Some(p as u32);
            }
            events[p].children = children;
            events[p].kernel_ns = events[i].kernel_ns;
            alive[i] = false;
            removed = true;
        }
        if !removed {
            return alive;
        }
    }
}

/// Step 5: the per-event totals (`FunctionEvent` properties) summed per key
/// (`FunctionEventAvg.add`).
fn aggregate(
    trace: &Trace,
    events: &[FunctionEvent],
    alive: &[bool],
    filter: &Filter,
    options: KeyAverageOptions,
) -> Vec<KeyAverage> {
    // device_time_total: children come after their parent in (start, -end) order, so one pass
    // from the end has every child's total ready.
    let mut cuda_total = vec![0i64; events.len()];
    for i in (0..events.len()).rev() {
        let e = &events[i];
        cuda_total[i] = match e.device {
            OpDevice::Cuda => e.end_ns.saturating_sub(e.start_ns),
            OpDevice::Cpu if e.is_async => 0,
            OpDevice::Cpu => e.children.iter().fold(e.kernel_ns, |sum, &c| {
                sum.saturating_add(cuda_total[c as usize])
            }),
        };
    }
    let mut rows: Vec<KeyAverage> = Vec::new();
    let mut index: HashMap<(&str, OpDevice, bool, Option<String>), usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if !alive[i] || !keeps(filter, e) {
            continue;
        }
        let shapes = options
            .group_by_input_shape
            .then(|| python_input_shapes(trace.str(e.input_shapes)));
        let key = (e.name, e.device, e.user_annotation, shapes);
        let row = *index.entry(key.clone()).or_insert_with(|| {
            rows.push(KeyAverage {
                name: e.name.to_string(),
                device: e.device,
                user_annotation: e.user_annotation,
                input_shapes: key.3,
                count: 0,
                self_cpu_ns: 0,
                cpu_total_ns: 0,
                self_cuda_ns: 0,
                cuda_total_ns: 0,
                self_cpu_mem_bytes: 0,
                cpu_mem_bytes: 0,
                self_cuda_mem_bytes: 0,
                cuda_mem_bytes: 0,
                events: Vec::new(),
            });
            rows.len() - 1
        });
        let children = || e.children.iter().map(|&c| &events[c as usize]);
        let cpu_total = e.cpu_total_ns();
        let (self_cpu, self_cpu_mem, self_cuda_mem) = if e.is_sync_cpu() {
            (
                cpu_total - children().map(|c| c.cpu_total_ns()).sum::<i64>(),
                e.cpu_mem_bytes - children().map(|c| c.cpu_mem_bytes).sum::<i64>(),
                e.cuda_mem_bytes - children().map(|c| c.cuda_mem_bytes).sum::<i64>(),
            )
        } else {
            (0, 0, 0)
        };
        let self_cuda = match e.device {
            OpDevice::Cuda => cuda_total[i],
            OpDevice::Cpu => {
                cuda_total[i]
                    - e.children
                        .iter()
                        .map(|&c| cuda_total[c as usize])
                        .sum::<i64>()
            }
        };
        let r = &mut rows[row];
        r.count += 1;
        r.self_cpu_ns += self_cpu;
        r.cpu_total_ns += cpu_total;
        r.self_cuda_ns += self_cuda;
        r.cuda_total_ns += cuda_total[i];
        r.self_cpu_mem_bytes += self_cpu_mem;
        r.cpu_mem_bytes += e.cpu_mem_bytes;
        r.self_cuda_mem_bytes += self_cuda_mem;
        r.cuda_mem_bytes += e.cuda_mem_bytes;
        if let (true, Source::Event(event)) = (options.with_events, e.source) {
            r.events.push(event);
        }
    }
    rows
}

/// Does `filter` keep the event: its start in the range, itself not excluded.
fn keeps(filter: &Filter, e: &FunctionEvent) -> bool {
    match e.source {
        Source::Event(r) => filter.keeps(r.table, r.index as usize, e.start_ns),
        Source::Memory | Source::Sync => filter.range.contains(e.start_ns),
    }
}

/// `str(input_shapes)` for the `Input Dims` text of a trace. PyTorch's `shapes()` holds one list
/// of sizes per argument and an empty one for anything else, a list of tensors included, where
/// the trace's `Input Dims` writes the list's shapes (`[[[244, 512], [261, 512]], []]` is keyed
/// `[[], []]`); Python prints `, ` between items. No text (a kernel, a CUDA call) is `[]`.
pub fn python_input_shapes(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "[]".to_string();
    }
    match parse_shapes(text) {
        Some(args) => {
            let args: Vec<String> = args
                .iter()
                .map(|sizes| match sizes {
                    Some(sizes) => format!("[{}]", sizes.join(", ")),
                    None => "[]".to_string(),
                })
                .collect();
            format!("[{}]", args.join(", "))
        }
        None => text.to_string(),
    }
}

/// One argument of an `Input Dims` text: its sizes, `None` when it nests lists.
type ArgumentSizes<'a> = Option<Vec<&'a str>>;

/// The arguments of an `Input Dims` text; `None` when the text is not a list of lists.
fn parse_shapes(text: &str) -> Option<Vec<ArgumentSizes<'_>>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut nested = false;
    let mut arg_start = None;
    for (k, ch) in inner.char_indices() {
        match ch {
            '[' => {
                if depth == 0 {
                    arg_start = Some(k);
                    nested = false;
                } else {
                    nested = true;
                }
                depth += 1;
            }
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let body = inner.get(arg_start? + 1..k)?;
                    args.push(if nested {
                        None
                    } else {
                        let sizes: Vec<&str> = body
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .collect();
                        if sizes.iter().any(|s| s.parse::<i64>().is_err()) {
                            return None;
                        }
                        Some(sizes)
                    });
                    arg_start = None;
                }
            }
            ',' | ' ' if depth == 0 => {}
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    (depth == 0).then_some(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{NvtxStyle, TorchInfo, TraceFormat};

    fn g(tid: i64) -> i64 {
        (7 << 24) | tid
    }

    /// A Kineto-like trace built by hand: ranges (kind, name, start, end, tid, external id,
    /// shapes), CUDA calls (name, start, end, tid, correlation, external id), kernels (name,
    /// start, end, external id) and memory records (time, tid, bytes, device type).
    struct Build {
        trace: Trace,
    }

    impl Build {
        fn new() -> Self {
            let trace = Trace {
                strings: StringTable::new(),
                format: TraceFormat::Kineto,
                torch: Some(TorchInfo::default()),
                ..Default::default()
            };
            Self { trace }
        }

        #[allow(clippy::too_many_arguments)]
        fn range(
            mut self,
            kind: RangeKind,
            name: &str,
            start: i64,
            end: i64,
            tid: i64,
            external_id: u64,
            shapes: &str,
        ) -> Self {
            let t = &mut self.trace;
            let name = t.strings.intern(name);
            let shapes = t.strings.intern(shapes);
            let n = &mut t.nvtx;
            n.spans.push(start, end, name);
            n.style.push(NvtxStyle::PushPop);
            n.global_tid.push(g(tid));
            n.depth.push(0);
            n.kind.push(kind);
            n.external_id.push(external_id);
            n.input_shapes.push(shapes);
            self
        }

        fn op(self, name: &str, start: i64, end: i64, external_id: u64) -> Self {
            self.range(RangeKind::Operator, name, start, end, 1, external_id, "")
        }

        fn call(
            mut self,
            name: &str,
            start: i64,
            end: i64,
            tid: i64,
            correlation: u32,
            external_id: u64,
        ) -> Self {
            let t = &mut self.trace;
            let name = t.strings.intern(name);
            t.api_calls.spans.push(start, end, name);
            t.api_calls.global_tid.push(g(tid));
            t.api_calls.correlation_id.push(correlation);
            t.api_calls.external_id.push(external_id);
            self
        }

        fn kernel(mut self, name: &str, start: i64, end: i64, external_id: u64) -> Self {
            let t = &mut self.trace;
            let name = t.strings.intern(name);
            t.kernels.spans.push(start, end, name);
            t.kernels.external_id.push(external_id);
            self
        }

        fn memory(mut self, time_ns: i64, tid: i64, bytes: i64, device_type: u8) -> Self {
            if let Some(torch) = &mut self.trace.torch {
                let m = &mut torch.memory;
                m.time_ns.push(time_ns);
                m.global_tid.push(g(tid));
                m.bytes.push(bytes);
                m.device_type.push(device_type);
                m.device_id.push(if device_type == 0 { -1 } else { 0 });
            }
            self
        }

        fn rows(&self, group_by_input_shape: bool) -> Vec<KeyAverage> {
            let mut rows = key_averages(
                &self.trace,
                &Filter::all(),
                KeyAverageOptions {
                    group_by_input_shape,
                    with_events: true,
                },
            );
            rows.sort_by(|a, b| {
                (&a.name, a.device, &a.input_shapes).cmp(&(&b.name, b.device, &b.input_shapes))
            });
            rows
        }
    }

    fn row<'a>(rows: &'a [KeyAverage], name: &str, device: OpDevice) -> &'a KeyAverage {
        rows.iter()
            .find(|r| r.name == name && r.device == device)
            .unwrap_or_else(|| panic!("no row {name} {device:?} in {rows:#?}"))
    }

    #[test]
    fn self_times_kernels_and_memory_follow_the_tree() {
        // ProfilerStep#1 [0, 100) > aten::linear [10, 60) > aten::mm [20, 50) (> cudaLaunchKernel
        // [30, 35) launching gemm [40, 70) on the GPU); a 64-byte CUDA alloc at 25 (inside mm), a
        // 16-byte CPU alloc at 60 (at linear's end: both ends count), a free of 8 CPU bytes at 200
        // that no event covers.
        let b = Build::new()
            .range(RangeKind::Annotation, "ProfilerStep#1", 0, 100, 1, 1, "")
            .op("aten::linear", 10, 60, 2)
            .op("aten::mm", 20, 50, 3)
            .call("cudaLaunchKernel", 30, 35, 1, 900, 3)
            .kernel("gemm", 40, 70, 3)
            .memory(25, 1, 64, 1)
            .memory(60, 1, 16, 0)
            .memory(200, 2, -8, 0);
        let rows = b.rows(false);
        let step = row(&rows, "ProfilerStep*", OpDevice::Cpu);
        assert!(step.user_annotation);
        assert_eq!(
            (step.count, step.cpu_total_ns, step.self_cpu_ns),
            (1, 100, 50)
        );
        assert_eq!((step.cuda_total_ns, step.self_cuda_ns), (30, 0));
        assert_eq!((step.cpu_mem_bytes, step.self_cpu_mem_bytes), (16, 0));
        assert_eq!((step.cuda_mem_bytes, step.self_cuda_mem_bytes), (64, 0));
        let linear = row(&rows, "aten::linear", OpDevice::Cpu);
        assert_eq!((linear.cpu_total_ns, linear.self_cpu_ns), (50, 20));
        assert_eq!(
            (linear.self_cpu_mem_bytes, linear.self_cuda_mem_bytes),
            (16, 0)
        );
        let mm = row(&rows, "aten::mm", OpDevice::Cpu);
        assert_eq!((mm.cpu_total_ns, mm.self_cpu_ns), (30, 25));
        assert_eq!((mm.cuda_total_ns, mm.self_cuda_ns), (30, 30));
        assert_eq!(mm.self_cuda_mem_bytes, 64);
        // The CUDA call is a child of mm but has no kernels of its own: its CUPTI correlation
        // (900) is not an op's id.
        let launch = row(&rows, "cudaLaunchKernel", OpDevice::Cpu);
        assert_eq!((launch.cpu_total_ns, launch.self_cpu_ns), (5, 5));
        assert_eq!(launch.cuda_total_ns, 0);
        let gemm = row(&rows, "gemm", OpDevice::Cuda);
        assert_eq!(
            (gemm.cpu_total_ns, gemm.self_cuda_ns, gemm.cuda_total_ns),
            (0, 30, 30)
        );
        assert_eq!(gemm.events, vec![EventRef::new(EventTable::Kernels, 0)]);
        // The uncovered free is an event of its own.
        let free = row(&rows, "[memory]", OpDevice::Cpu);
        assert_eq!(
            (free.count, free.cpu_mem_bytes, free.self_cpu_mem_bytes),
            (1, -8, -8)
        );
        assert!(free.events.is_empty());
        assert_eq!(rows.len(), 6);
    }

    #[test]
    fn an_only_child_of_the_same_name_is_folded_into_its_parent() {
        // aten::to [0, 100) > aten::to [10, 90) > aten::copy_ [20, 80): the inner aten::to goes,
        // the outer one takes its child and its kernels (and drops its own).
        let b = Build::new()
            .op("aten::to", 0, 100, 1)
            .op("aten::to", 10, 90, 2)
            .op("aten::copy_", 20, 80, 3)
            .kernel("own", 200, 207, 1)
            .kernel("inner", 300, 311, 2)
            .kernel("copy", 400, 413, 3);
        let rows = b.rows(false);
        let to = row(&rows, "aten::to", OpDevice::Cpu);
        assert_eq!((to.count, to.cpu_total_ns, to.self_cpu_ns), (1, 100, 40));
        assert_eq!((to.cuda_total_ns, to.self_cuda_ns), (11 + 13, 11));
        let copy = row(&rows, "aten::copy_", OpDevice::Cpu);
        assert_eq!((copy.cuda_total_ns, copy.self_cuda_ns), (13, 13));
        // Two children: nothing folds.
        let b = Build::new()
            .op("aten::to", 0, 100, 1)
            .op("aten::to", 10, 40, 2)
            .op("aten::empty", 50, 60, 3);
        let to = row(&b.rows(false), "aten::to", OpDevice::Cpu).clone();
        assert_eq!((to.count, to.cpu_total_ns, to.self_cpu_ns), (2, 130, 90));
    }

    #[test]
    fn cuda_calls_nest_on_the_thread_of_the_op_that_made_them() {
        // The op is on thread 1; its CUDA call recorded on thread 2 nests under it all the same.
        let b = Build::new()
            .op("aten::add", 0, 100, 5)
            .call("cudaLaunchKernel", 10, 30, 2, 77, 5)
            .call("cudaDeviceSynchronize", 40, 60, 2, 78, 0);
        let rows = b.rows(false);
        assert_eq!(row(&rows, "aten::add", OpDevice::Cpu).self_cpu_ns, 80);
        // A call linked to no op stays on its own thread.
        assert_eq!(
            row(&rows, "cudaDeviceSynchronize", OpDevice::Cpu).self_cpu_ns,
            20
        );
    }

    #[test]
    fn gpu_annotations_and_collectives_are_their_own_rows() {
        let b = Build::new()
            .range(RangeKind::Annotation, "forward", 0, 100, 1, 1, "")
            .range(RangeKind::GpuAnnotation, "forward", 50, 250, 99, 1, "")
            .range(
                RangeKind::Annotation,
                "gloo:all_reduce",
                10,
                500,
                3,
                2,
                "[[4]]",
            )
            .op("aten::relu", 20, 30, 3)
            .range(RangeKind::Python, "model.py(1): f", 0, 100, 1, 0, "");
        let rows = b.rows(false);
        let cpu = row(&rows, "forward", OpDevice::Cpu);
        assert_eq!((cpu.cpu_total_ns, cpu.cuda_total_ns), (100, 0));
        let gpu = row(&rows, "forward", OpDevice::Cuda);
        assert!(gpu.user_annotation);
        assert_eq!(
            (gpu.cpu_total_ns, gpu.self_cuda_ns, gpu.cuda_total_ns),
            (0, 200, 200)
        );
        // c10d's collectives are async: CPU total only, and they parent nothing.
        let gloo = row(&rows, "gloo:all_reduce", OpDevice::Cpu);
        assert_eq!((gloo.cpu_total_ns, gloo.self_cpu_ns), (490, 0));
        assert_eq!(row(&rows, "aten::relu", OpDevice::Cpu).self_cpu_ns, 10);
        assert!(!rows.iter().any(|r| r.name.contains("model.py")));
    }

    #[test]
    fn input_shapes_group_as_python_prints_them() {
        let b = Build::new()
            .op("aten::cat", 0, 10, 1)
            .range(
                RangeKind::Operator,
                "aten::cat",
                20,
                30,
                1,
                2,
                "[[[2, 3], [4, 3]], []]",
            )
            .range(
                RangeKind::Operator,
                "aten::mm",
                40,
                50,
                1,
                3,
                "[[2,3],[3, -1]]",
            )
            .range(
                RangeKind::Operator,
                "aten::mm",
                60,
                70,
                1,
                4,
                "[[2, 3], [3, -1]]",
            );
        let rows = b.rows(true);
        let shapes: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.name.as_str(), r.input_shapes.as_deref().unwrap_or("?")))
            .collect();
        assert_eq!(
            shapes,
            vec![
                ("aten::cat", "[[], []]"),
                ("aten::cat", "[]"),
                ("aten::mm", "[[2, 3], [3, -1]]"),
            ]
        );
        assert_eq!(rows[2].count, 2);
        assert_eq!(b.rows(false).len(), 2);
    }

    #[test]
    fn shapes_text_is_reprinted_or_kept() {
        assert_eq!(python_input_shapes(""), "[]");
        assert_eq!(python_input_shapes("[]"), "[]");
        assert_eq!(
            python_input_shapes("[[], [8,256], []]"),
            "[[], [8, 256], []]"
        );
        assert_eq!(python_input_shapes("[[[1], [2]], [[]]]"), "[[], []]");
        assert_eq!(python_input_shapes("not a list"), "not a list");
        assert_eq!(python_input_shapes("[[1, x]]"), "[[1, x]]");
        assert_eq!(python_input_shapes("[[1]"), "[[1]");
    }

    #[test]
    fn an_nsys_export_has_no_rows() {
        let mut t = Trace::default();
        let name = t.strings.intern("range");
        t.nvtx.spans.push(0, 10, name);
        assert!(key_averages(&t, &Filter::all(), KeyAverageOptions::default()).is_empty());
    }

    #[test]
    fn a_range_counts_the_events_that_start_in_it() {
        let b = Build::new()
            .op("aten::add", 0, 10, 1)
            .op("aten::add", 100, 120, 2);
        let range = crate::analysis::TimeRange {
            start_ns: Some(50),
            end_ns: Some(200),
        };
        let rows = key_averages(
            &b.trace,
            &Filter::range(range),
            KeyAverageOptions::default(),
        );
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].count, rows[0].cpu_total_ns), (1, 20));
    }
}
