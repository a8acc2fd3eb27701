//! Parses one batch of events (their bytes, as the framer found them) into columns of the trace
//! model, with names interned in a table of the batch's own. Batches are parsed in parallel and
//! joined in file order by [`super::build`].
//!
//! Categories, current schema and the 2021 one: `kernel`/`Kernel`, `gpu_memcpy`/`Memcpy`,
//! `gpu_memset`/`Memset` are GPU work; `cuda_runtime`, `cuda_driver`/`Runtime` CUDA calls;
//! `cpu_op`/`Operator`, `user_annotation`, `python_function`, `gpu_user_annotation` and Kineto's
//! own `overhead` ranges (placed on a thread by [`super::overhead`]); `[memory]` instants
//! allocator events; `M` events name processes and threads. Everything else (flows, `Trace`
//! spans, unknown categories) is counted and left out.

use std::collections::HashMap;
use std::ops::Range;

use super::event::{self, RawEvent, int};
use crate::trace::{
    ApiCalls, CollectiveCall, CopyKind, Kernels, Memcpys, Memsets, NO_INDEX, NO_STACK, NvtxRanges,
    NvtxStyle, RangeKind, StrId, StreamKey, StringTable, SyncEvents, TorchMemoryEvents,
};

/// The `globalTid` of a CPU thread: nsys's packing (pid << 24 | tid), so that every view that
/// decodes a thread reads a PyTorch trace's the same way.
pub fn global_tid(pid: i64, tid: i64) -> i64 {
    ((pid & 0xFF_FFFF) << 24) | (tid & 0xFF_FFFF)
}

/// The `globalTid` of the lane that holds device `device`'s GPU annotations. Its pid, 0xFFFFFF,
/// is above Linux's largest (2^22), so it never meets a real process.
pub fn gpu_lane_tid(device: u32) -> i64 {
    global_tid(0xFF_FFFF, i64::from(device))
}

/// One batch's events, in file order.
#[derive(Default)]
pub struct Parsed {
    pub strings: StringTable,
    pub kernels: Kernels,
    pub kernel_streams: Vec<StreamKey>,
    pub memcpys: Memcpys,
    pub memcpy_streams: Vec<StreamKey>,
    pub memsets: Memsets,
    pub memset_streams: Vec<StreamKey>,
    pub syncs: SyncEvents,
    /// Each sync's CUPTI synchronisation type (`ENUM_CUPTI_SYNC_TYPE`), from its kind.
    pub sync_types: Vec<i64>,
    pub api: ApiCalls,
    pub ranges: NvtxRanges,
    pub memory: TorchMemoryEvents,
    /// (pid, device, time, `Total Allocated`) of each CUDA `[memory]` event that has it.
    pub memory_in_use: Vec<(u32, u32, i64, i64)>,
    /// (pid, name) from `process_name` events.
    pub process_names: Vec<(i64, String)>,
    /// (globalTid, name) from `thread_name` events.
    pub thread_names: Vec<(i64, String)>,
    /// The collective arguments of operators and kernels that carry them.
    pub collective_calls: Vec<CollectiveCall>,
    pub counts: Counts,
    /// The short name of each kernel name met (by name id), computed once.
    short_names: HashMap<StrId, StrId>,
}

/// What a batch left out or repaired, and what it kept, for the load warnings.
#[derive(Default, Clone, Copy)]
pub struct Counts {
    pub events: u64,
    pub unreadable: u64,
    pub no_ts: u64,
    pub no_dur: u64,
    pub negative_dur: u64,
    pub no_device: u64,
    /// Events of a category Sightline does not show (flows, spans, unknown categories).
    pub other: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.events += o.events;
        self.unreadable += o.unreadable;
        self.no_ts += o.no_ts;
        self.no_dur += o.no_dur;
        self.negative_dur += o.negative_dur;
        self.no_device += o.no_device;
        self.other += o.other;
    }
}

/// What a category of complete (`ph: X`) event becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Kernel,
    Memcpy,
    Memset,
    /// `cuda_sync`: a stream / event / device synchronisation the GPU side recorded.
    Sync,
    Api,
    Range(RangeKind),
    Other,
}

fn family(cat: &str) -> Family {
    match cat {
        "kernel" | "Kernel" => Family::Kernel,
        "gpu_memcpy" | "Memcpy" => Family::Memcpy,
        "gpu_memset" | "Memset" => Family::Memset,
        "cuda_sync" => Family::Sync,
        "cuda_runtime" | "cuda_driver" | "Runtime" | "Driver" => Family::Api,
        "cpu_op" | "Operator" => Family::Range(RangeKind::Operator),
        "user_annotation" => Family::Range(RangeKind::Annotation),
        "python_function" => Family::Range(RangeKind::Python),
        "gpu_user_annotation" => Family::Range(RangeKind::GpuAnnotation),
        "overhead" => Family::Range(RangeKind::ProfilerOverhead),
        _ => Family::Other,
    }
}

/// What an event of XLA's trace-viewer JSON (no `cat`) is, by its arguments: GPU work by its
/// details (as its XPlane's stats say), a CUDA call by its `correlation_id` and `device_id`.
/// Its other events (TraceMe ranges, Python frames) are not read from the JSON: the XPlane
/// beside it has them.
fn xla_family(args: &event::Args) -> Family {
    if args.memcpy_details.is_some() && args.xla_device.is_none() {
        Family::Memcpy
    } else if args.memset_details.is_some() && args.xla_device.is_none() {
        Family::Memset
    } else if args.kernel_details.is_some() {
        Family::Kernel
    } else if args.xla_correlation.is_some() && args.xla_device.is_some() {
        Family::Api
    } else {
        Family::Other
    }
}

/// Parses the events at `ranges` of `bytes`.
pub fn parse_batch(bytes: &[u8], ranges: &[Range<usize>]) -> Parsed {
    let mut p = Parsed {
        strings: StringTable::new(),
        ..Default::default()
    };
    let mut shapes_cache: HashMap<&str, StrId> = HashMap::new();
    for r in ranges {
        p.counts.events += 1;
        let Ok(ev) = serde_json::from_slice::<RawEvent>(&bytes[r.clone()]) else {
            p.counts.unreadable += 1;
            continue;
        };
        add_event(&mut p, &ev, &mut shapes_cache);
    }
    p
}

fn add_event<'a>(p: &mut Parsed, ev: &RawEvent<'a>, shapes_cache: &mut HashMap<&'a str, StrId>) {
    let ph = ev.ph.as_deref().unwrap_or("");
    let name = ev.name.as_deref().unwrap_or("");
    match ph {
        "X" => {}
        "i" | "I" if name == "[memory]" => return add_memory(p, ev),
        "M" => return add_metadata(p, ev, name),
        _ => {
            p.counts.other += 1;
            return;
        }
    }
    let default_args = event::Args::default();
    let args = ev.args.as_ref().unwrap_or(&default_args);
    let fam = match ev.cat.as_deref() {
        Some(cat) => family(cat),
        None => xla_family(args),
    };
    if fam == Family::Other {
        p.counts.other += 1;
        return;
    }
    let Some(start) = ev.ts.and_then(event::micros_to_ns) else {
        p.counts.no_ts += 1;
        return;
    };
    let dur = match ev.dur.and_then(event::micros_to_ns) {
        Some(d) if d >= 0 => d,
        Some(_) => {
            p.counts.negative_dur += 1;
            0
        }
        None => {
            p.counts.no_dur += 1;
            0
        }
    };
    let end = start.saturating_add(dur);
    let pid = event::id_of(ev.pid).unwrap_or(0);
    let tid = event::id_of(ev.tid).unwrap_or(0);
    let external_id = int(args.external_id).unwrap_or(0).max(0) as u64;
    let correlation = int(args.correlation)
        .or(int(args.xla_correlation))
        .unwrap_or(0)
        .clamp(0, u32::MAX as i64) as u32;
    let name_id = p.strings.intern(name);
    if external_id > 0
        && matches!(fam, Family::Kernel | Family::Range(RangeKind::Operator))
        && (args.collective_name.is_some() || args.seq.is_some())
    {
        p.collective_calls.push(CollectiveCall {
            external_id,
            collective: args
                .collective_name
                .map(event::raw_text)
                .unwrap_or_default(),
            seq: int(args.seq).and_then(|s| u64::try_from(s).ok()),
            group: args.process_group.map(event::raw_text).unwrap_or_default(),
        });
    }
    match fam {
        Family::Kernel | Family::Memcpy | Family::Memset => {
            // The device is `args.device`; events of old writers that lack it sit on a pid
            // that is the device.
            let Some(device) = int(args.device).or((0..4096).contains(&pid).then_some(pid)) else {
                p.counts.no_device += 1;
                return;
            };
            let key = StreamKey {
                device: device.clamp(0, u32::MAX as i64) as u32,
                // The launching process is found once every CUDA call is read (build.rs).
                pid: 0,
                context: int(args.context).unwrap_or(0).clamp(0, u32::MAX as i64) as u32,
                stream: int(args.stream).unwrap_or(tid).clamp(0, u32::MAX as i64) as u32,
            };
            match fam {
                Family::Kernel => add_kernel(p, args, start, end, name_id, name, correlation, key),
                Family::Memcpy => add_memcpy(p, args, start, end, name_id, name, correlation, key),
                _ => add_memset(p, args, start, end, name_id, name, correlation, key),
            }
            match fam {
                Family::Kernel => p.kernels.external_id.push(external_id),
                Family::Memcpy => p.memcpys.external_id.push(external_id),
                _ => p.memsets.external_id.push(external_id),
            }
        }
        Family::Sync => {
            let s = &mut p.syncs;
            // The row is named by its type at assembly, as an nsys export's; Kineto's name is
            // the key PyTorch's key_averages() gives it.
            // The event's name is its kind (`args.cuda_sync_kind` repeats it).
            p.sync_types.push(match name {
                "Event Sync" => 1,
                "Stream Wait Event" => 2,
                "Stream Sync" => 3,
                "Context Sync" => 4,
                _ => 0,
            });
            s.spans.push(start, end, name_id);
            s.kineto_name.push(name_id);
            s.correlation_id.push(correlation);
            s.global_pid.push(0);
            s.device
                .push(int(args.device).unwrap_or(0).clamp(0, i64::from(u16::MAX)) as u16);
            s.stream
                .push(int(args.stream).unwrap_or(0).clamp(0, u32::MAX as i64) as u32);
            s.external_id.push(external_id);
        }
        Family::Api => {
            let a = &mut p.api;
            a.spans.push(start, end, name_id);
            a.correlation_id.push(correlation);
            a.global_tid.push(global_tid(pid, tid));
            a.return_value.push(ApiCalls::NO_RESULT);
            a.file_order.push(0);
            a.callchain.push(NO_STACK);
            a.external_id.push(external_id);
        }
        Family::Range(kind) => {
            let gtid = if kind == RangeKind::GpuAnnotation {
                let device = int(args.device).unwrap_or(pid).clamp(0, 0xFF_FFFF) as u32;
                gpu_lane_tid(device)
            } else {
                global_tid(pid, tid)
            };
            let shapes = match args.input_dims {
                Some(raw) => *shapes_cache
                    .entry(raw.get())
                    .or_insert_with(|| p.strings.intern(&event::input_shapes_text(raw))),
                None => StringTable::EMPTY,
            };
            let r = &mut p.ranges;
            r.spans.push(start, end, name_id);
            r.domain.push(StringTable::EMPTY);
            r.color_argb.push(0);
            r.style.push(NvtxStyle::PushPop);
            r.depth.push(0);
            r.global_tid.push(gtid);
            r.unclosed.push(false);
            r.row_id.push(0);
            r.ended_on_other_thread.push(false);
            r.kind.push(kind);
            r.external_id.push(external_id);
            r.input_shapes.push(shapes);
            // As written: the JSON text, shared by the many calls with the same arguments.
            let mut json = |raw: Option<&serde_json::value::RawValue>| {
                raw.map_or(StringTable::EMPTY, |raw| p.strings.intern(raw.get()))
            };
            let (types, strides, concrete) = (
                json(args.input_type),
                json(args.input_strides),
                json(args.concrete_inputs),
            );
            let r = &mut p.ranges;
            r.input_types.push(types);
            r.input_strides.push(strides);
            r.concrete_inputs.push(concrete);
        }
        Family::Other => {}
    }
}

#[allow(clippy::too_many_arguments)]
fn add_kernel(
    p: &mut Parsed,
    args: &event::Args,
    start: i64,
    end: i64,
    name_id: StrId,
    name: &str,
    correlation: u32,
    key: StreamKey,
) {
    let short = match p.short_names.get(&name_id) {
        Some(&s) => s,
        None => {
            let s = p.strings.intern(short_kernel_name(name));
            p.short_names.insert(name_id, s);
            s
        }
    };
    let k = &mut p.kernels;
    k.spans.push(start, end, name_id);
    k.short_name.push(short);
    k.mangled_name.push(name_id);
    k.correlation_id.push(correlation);
    if let Some(d) = args.kernel_details.as_deref() {
        // XLA's JSON: the launch as its XPlane's `kernel_details` stat writes it.
        use crate::load::xplane::stats::{detail_dims, detail_u64};
        let num = |key: &str| detail_u64(d, key).unwrap_or(0);
        k.grid.push(detail_dims(d, "grid"));
        k.block
            .push(detail_dims(d, "block").map(|v| v.min(u16::MAX as u32) as u16));
        k.registers_per_thread
            .push(num("regs").min(u16::MAX as u64) as u16);
        k.static_shared_bytes
            .push(num("static_shared").min(u32::MAX as u64) as u32);
        k.dynamic_shared_bytes
            .push(num("dynamic_shared").min(u32::MAX as u64) as u32);
    } else {
        k.grid.push(event::triple(args.grid));
        let b = event::triple(args.block);
        k.block.push(b.map(|v| v.min(u16::MAX as u32) as u16));
        k.registers_per_thread
            .push(int(args.registers).unwrap_or(0).clamp(0, u16::MAX as i64) as u16);
        // Kineto writes one "shared memory" figure: the static and dynamic shared memory
        // together.
        k.static_shared_bytes.push(
            int(args.shared_memory)
                .unwrap_or(0)
                .clamp(0, u32::MAX as i64) as u32,
        );
        k.dynamic_shared_bytes.push(0);
    }
    k.api_call.push(NO_INDEX);
    k.file_order.push(0);
    k.green_context.push(0);
    p.kernel_streams.push(key);
}

#[allow(clippy::too_many_arguments)]
fn add_memcpy(
    p: &mut Parsed,
    args: &event::Args,
    start: i64,
    end: i64,
    name_id: StrId,
    name: &str,
    correlation: u32,
    key: StreamKey,
) {
    let (kind, src, dst, bytes) = match args.memcpy_details.as_deref() {
        // XLA's JSON: `MemcpyH2D` with `kind_src:pinned kind_dst:device size:4 …`.
        Some(d) => {
            use crate::load::xplane::{build, stats};
            (
                build::copy_kind(name),
                build::memory_kind(stats::detail(d, "kind_src")),
                build::memory_kind(stats::detail(d, "kind_dst")),
                stats::detail_u64(d, "size"),
            )
        }
        None => {
            let (kind, src, dst) = memcpy_kinds(name);
            (kind, src, dst, None)
        }
    };
    let m = &mut p.memcpys;
    m.spans.push(start, end, name_id);
    m.correlation_id.push(correlation);
    m.bytes
        .push(bytes.unwrap_or(int(args.bytes).unwrap_or(0).max(0) as u64));
    m.copy_kind.push(kind);
    m.src_kind.push(src);
    m.dst_kind.push(dst);
    let device = key.device.min(u16::MAX as u32) as u16;
    m.src_device.push(device);
    m.dst_device.push(device);
    m.api_call.push(NO_INDEX);
    m.file_order.push(0);
    m.green_context.push(0);
    m.virtual_address.push(0);
    m.kineto_name.push(name_id);
    p.memcpy_streams.push(key);
}

#[allow(clippy::too_many_arguments)]
fn add_memset(
    p: &mut Parsed,
    args: &event::Args,
    start: i64,
    end: i64,
    name_id: StrId,
    name: &str,
    correlation: u32,
    key: StreamKey,
) {
    let xla_bytes = args
        .memset_details
        .as_deref()
        .and_then(|d| crate::load::xplane::stats::detail_u64(d, "num_bytes"));
    let m = &mut p.memsets;
    m.spans.push(start, end, name_id);
    m.correlation_id.push(correlation);
    m.bytes
        .push(xla_bytes.unwrap_or(int(args.bytes).unwrap_or(0).max(0) as u64));
    m.api_call.push(NO_INDEX);
    let inside = name
        .split_once('(')
        .map_or("", |(_, r)| r.trim_end_matches(')'));
    m.mem_kind.push(memory_kind_code(inside));
    m.file_order.push(0);
    m.green_context.push(0);
    m.kineto_name.push(name_id);
    p.memset_streams.push(key);
}

fn add_memory(p: &mut Parsed, ev: &RawEvent) {
    let Some(time) = ev.ts.and_then(event::micros_to_ns) else {
        p.counts.no_ts += 1;
        return;
    };
    let default_args = event::Args::default();
    let args = ev.args.as_ref().unwrap_or(&default_args);
    let pid = event::id_of(ev.pid).unwrap_or(0);
    let tid = event::id_of(ev.tid).unwrap_or(0);
    let device_type = int(args.device_type).unwrap_or(0).clamp(0, 255) as u8;
    let device_id = int(args.device_id).unwrap_or(-1).clamp(-1, i16::MAX as i64) as i16;
    let m = &mut p.memory;
    m.time_ns.push(time);
    m.global_tid.push(global_tid(pid, tid));
    m.bytes.push(int(args.alloc_bytes).unwrap_or(0));
    m.device_type.push(device_type);
    m.device_id.push(device_id);
    if device_type == TorchMemoryEvents::CUDA
        && device_id >= 0
        && let Some(total) = int(args.total_allocated)
    {
        let pid = pid.clamp(0, u32::MAX as i64) as u32;
        p.memory_in_use
            .push((pid, device_id as u32, time, total.max(0)));
    }
}

fn add_metadata(p: &mut Parsed, ev: &RawEvent, what: &str) {
    let Some(name) = ev.args.as_ref().and_then(|a| a.name.as_deref()) else {
        return;
    };
    let Some(pid) = event::id_of(ev.pid) else {
        return;
    };
    match what {
        "process_name" => p.process_names.push((pid, name.to_string())),
        "thread_name" => {
            let tid = event::id_of(ev.tid).unwrap_or(0);
            p.thread_names
                .push((global_tid(pid, tid), thread_name(name).to_string()));
        }
        _ => {}
    }
}

/// Kineto names threads `thread 516 (pt_autograd_0)`: the part in brackets is the name.
fn thread_name(name: &str) -> &str {
    name.strip_prefix("thread ")
        .and_then(|rest| rest.split_once(" ("))
        .and_then(|(_, inner)| inner.strip_suffix(')'))
        .unwrap_or(name)
        .trim()
}

/// Direction and memory kinds of a copy from its Kineto name: `Memcpy HtoD (Pageable -> Device)`.
pub fn memcpy_kinds(name: &str) -> (CopyKind, u8, u8) {
    let rest = name.strip_prefix("Memcpy ").unwrap_or(name);
    let (direction, inside) = rest.split_once(' ').unwrap_or((rest, ""));
    let kind = match direction {
        "HtoD" => 1,
        "DtoH" => 2,
        "HtoA" => 3,
        "AtoH" => 4,
        "AtoA" => 5,
        "AtoD" => 6,
        "DtoA" => 7,
        "DtoD" => 8,
        "HtoH" => 9,
        "PtoP" => 10,
        _ => 0,
    };
    let inside = inside.trim().trim_start_matches('(').trim_end_matches(')');
    let (src, dst) = inside.split_once("->").unwrap_or(("", ""));
    (
        CopyKind(kind),
        memory_kind_code(src.trim()),
        memory_kind_code(dst.trim()),
    )
}

/// nsys's memory-kind number of a memory named as CUPTI prints it.
fn memory_kind_code(label: &str) -> u8 {
    match label {
        "Pageable" => 0,
        "Pinned" => 1,
        "Device" => 2,
        "Array" => 3,
        "Managed" => 4,
        "Device Static" => 5,
        "Managed Static" => 6,
        _ => 7,
    }
}

/// The function name of a demangled kernel name, as nsys's `shortName`:
/// `void at::native::vectorized_gather_kernel<16, long>(char*, …)` → `vectorized_gather_kernel`.
pub fn short_kernel_name(name: &str) -> &str {
    let name = name.trim();
    // The signature starts at the first '(' outside template arguments and lambda braces.
    let mut depth = 0i32;
    let mut end = name.len();
    for (i, c) in name.char_indices() {
        match c {
            '<' | '{' => depth += 1,
            '>' | '}' => depth -= 1,
            '(' if depth == 0 && i > 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let head = &name[..end];
    // Drop template arguments at the end, then keep the last path component and word.
    let mut depth = 0i32;
    let mut cut = head.len();
    for (i, c) in head.char_indices().rev() {
        match c {
            '>' => depth += 1,
            '<' => {
                depth -= 1;
                if depth == 0 {
                    cut = i;
                }
            }
            _ => {}
        }
    }
    let head = if cut < head.len() && head.ends_with('>') {
        &head[..cut]
    } else {
        head
    };
    let last = head.rsplit("::").next().unwrap_or(head);
    let last = last.rsplit(' ').next().unwrap_or(last);
    if last.is_empty() { name } else { last }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_short_names() {
        assert_eq!(
            short_kernel_name(
                "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int)"
            ),
            "vectorized_gather_kernel"
        );
        assert_eq!(
            short_kernel_name(
                "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)"
            ),
            "Kernel2"
        );
        assert_eq!(
            short_kernel_name("ampere_sgemm_128x64_tn"),
            "ampere_sgemm_128x64_tn"
        );
        assert_eq!(
            short_kernel_name(
                "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(at::TensorIteratorBase&, {lambda(float)#1} const&)::{lambda(int)#1}>(int, float)"
            ),
            "elementwise_kernel"
        );
    }

    #[test]
    fn copy_direction_and_memory_from_the_name() {
        assert_eq!(
            memcpy_kinds("Memcpy HtoD (Pageable -> Device)"),
            (CopyKind(1), 0, 2)
        );
        assert_eq!(
            memcpy_kinds("Memcpy DtoH (Device -> Pinned)"),
            (CopyKind(2), 2, 1)
        );
        assert_eq!(
            memcpy_kinds("Memcpy DtoD (Device -> Device)").0,
            CopyKind(8)
        );
        assert_eq!(
            memcpy_kinds("Memcpy PtoP (Device -> Device)").0,
            CopyKind(10)
        );
        assert_eq!(memcpy_kinds("weird").0, CopyKind(0));
    }

    #[test]
    fn thread_names_lose_kineto_wrapping() {
        assert_eq!(thread_name("thread 516 (pt_autograd_0)"), "pt_autograd_0");
        assert_eq!(thread_name("stream 7 "), "stream 7");
    }
}
