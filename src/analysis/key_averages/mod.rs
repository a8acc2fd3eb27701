//! PyTorch's own operator table, `prof.key_averages()`, computed from a PyTorch profiler (Kineto)
//! trace as PyTorch computes it from the same events when the profiler stops.
//!
//! The steps follow PyTorch 2.11's `torch/autograd/profiler.py` (`_parse_kineto_results`) and
//! `profiler_util.py` (`EventList._build_tree`, `FunctionEvent`, `FunctionEventAvg.add`,
//! `EventList.key_averages`):
//! 1. Every operator, `record_function` annotation (CPU and GPU side), CUDA runtime/driver call,
//!    kernel, memcpy and memset is a function event, and so is Kineto's own overhead (`Activity
//!    Buffer Request`, `Buffer Flush`: a CPU event of the thread that stopped the profiler, which
//!    is taken to be the process's main thread); Python frames are not. A few utility names
//!    are dropped (`[memory]`, `aten::is_leaf`, …) and `ProfilerStep#N` is keyed `ProfilerStep*`.
//! 2. A CPU event's memory is the sum of the `[memory]` records that start in `[start, end]` (both
//!    ends, any thread); a record no CPU event covers becomes a `[memory]` event of its own.
//! 3. In (start, -end) order, a CPU event with no launching op (operators and annotations, and
//!    CUDA calls without an `External id`: Kineto's `linked_correlation_id() == 0`) takes as its
//!    kernels the GPU work whose `External id` is its id; a CUDA call so linked moves to its
//!    thread. A CUDA call linked to nothing, made on a thread with no op, nests on the process's
//!    main thread.
//! 4. CPU events (not async) nest per thread by time — overhead too, as a child of the op it
//!    interrupted or as the parent of the ops that ran on while it lasted — and a child that has
//!    its parent's name and is its only child is folded into it (`_remove_dup_nodes`: the parent
//!    takes the child's children and kernels).
//! 5. Rows group by (name, device, user annotation) and, when asked, the input shapes.
//!
//! Checked against `key_averages()` saved by PyTorch 2.11 for the traces in
//! `../shared/traces/pytorch/golden`, the NCCL runs in `tests/fixtures/nccl/pytorch/golden` and
//! the run with Kineto's buffer requests and flushes in `tests/fixtures/kineto_overhead`
//! (tests/torch_ops.rs, tests/kineto_overhead.rs). What the trace file cannot say:
//! - Which events are async (begun and ended on different threads): only c10d's collectives are
//!   recognised, by name (`gloo:`, `nccl:`, … below).
//! - A GPU annotation's own span: Kineto writes it wider than the GPU work it covers (its
//!   `ChromeTraceLogger` moves the start 1 ns earlier; PyTorch 2.11's files are 2 ns longer per
//!   annotation than the time PyTorch counts). The trace's span is used as written.
//! - Ties: events with equal start and end nest in the order PyTorch received them, here in the
//!   order of the trace's tables.
//! - Which thread stopped the profiler (where PyTorch nests its overhead events): the main
//!   thread, as in a script that runs its profiling loop there.

mod input_shapes;
mod overhead;
#[cfg(test)]
mod tests;
mod tree;

use std::collections::HashMap;

use super::filter::{EventTable, Filter};
use super::table::EventRef;
use crate::trace::{RangeKind, StrId, StringTable, TorchMemoryEvents, Trace};
pub use input_shapes::python_input_shapes;
use tree::{
    calls_of_unknown_threads_to_main, link_kernels, main_thread, populate_cpu_children,
    remove_dup_nodes,
};

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
    let overhead_ids = overhead::overhead_ids(trace);
    for i in 0..nvtx.spans.len() {
        let kind = nvtx.kind_of(i);
        let (device, user_annotation) = match kind {
            RangeKind::Operator => (OpDevice::Cpu, false),
            RangeKind::Annotation => (OpDevice::Cpu, true),
            RangeKind::GpuAnnotation => (OpDevice::Cuda, true),
            RangeKind::ProfilerOverhead => (OpDevice::Cpu, false),
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
        let thread = nvtx.global_tid.get(i).copied().unwrap_or(0);
        // PyTorch gives a Kineto event without a parent (the overhead) the thread that stopped
        // the profiler (`TransferEvents::setKinetoTID`), not the one shown.
        let thread = if kind == RangeKind::ProfilerOverhead {
            main_thread(thread)
        } else {
            thread
        };
        out.push(FunctionEvent {
            user_annotation,
            is_async,
            thread,
            id: match kind {
                RangeKind::ProfilerOverhead => overhead_ids.get(&i).copied().unwrap_or(0),
                _ if device == OpDevice::Cpu => external_id,
                _ => 0,
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
