//! Fills the trace model from a decoded [`XSpace`]: the `/device:GPU:N` planes' stream lines give
//! kernels, copies and memsets (told apart by their `*_details` stats, as XLA's CUPTI collector
//! writes them), the `/host:CPU` plane's lines give threads whose events are CUDA calls (those
//! with a `correlation_id`, joined to the GPU work they launched) or TraceMe ranges (Python
//! frames, `$file:line name`, apart); `/host:metadata` and `Task Environment` give the versions
//! and the session's wall-clock start. Then the nsys loader's assembly sorts, links and indexes.
//!
//! Times: an event starts at its line's `timestamp_ns` (× 1000) plus its `offset_ps`, ends
//! `duration_ps` later; both are computed in picoseconds and rounded down to the model's
//! nanoseconds (XLA's GPU events are whole nanoseconds; the exact picoseconds of each GPU op are
//! kept in [`XlaInfo`]).

use std::collections::HashMap;

use super::derived;
use super::proto::{EventData, XEvent, XLine, XPlane, XSpace};
use super::stats::{self, StatNames};
use crate::load::nsys_sqlite::{
    Names, NvtxRead, Parts, Read, SamplesRead, SchedRead, StacksRead, assemble,
};
use crate::trace::{
    ApiCalls, CopyKind, GpuInfo, Kernels, LoadWarnings, Memcpys, Memsets, NO_INDEX, NO_STACK,
    Needs, NvtxRanges, NvtxStyle, RangeKind, StreamKey, StringTable, SyncEvents, Trace,
    TraceFormat, XlaGpuOp, XlaInfo,
};

/// Where the load's warnings are filed.
pub const EVENTS: &str = "XPlane events";

/// The GPU work and host events read, before assembly.
#[derive(Default)]
struct Tables {
    strings: StringTable,
    kernels: Kernels,
    kernel_streams: Vec<StreamKey>,
    memcpys: Memcpys,
    memcpy_streams: Vec<StreamKey>,
    memsets: Memsets,
    memset_streams: Vec<StreamKey>,
    api: ApiCalls,
    ranges: NvtxRanges,
    names: Names,
    gpus: Vec<GpuInfo>,
    xla: XlaInfo,
    /// The step annotations' ranges (`train#3`): thread, start, end (ns).
    step_ranges: Vec<(i64, i64, i64)>,
    /// A GPU allocator's bytes in use after each of its allocations and frees: (pid, device,
    /// time ns, bytes).
    memory: Vec<(u32, u32, i64, i64)>,
    /// Events that are aggregates (`num_occurrences`) rather than placed in time.
    aggregated: u64,
    events: u64,
}

/// An event's start and end in picoseconds from the session start.
pub(super) fn times_ps(line: &XLine, event: &XEvent) -> Option<(i64, i64)> {
    let offset = match event.data {
        Some(EventData::OffsetPs(o)) => o,
        Some(EventData::NumOccurrences(_)) => return None,
        None => 0,
    };
    let start = line.timestamp_ns.checked_mul(1000)?.checked_add(offset)?;
    Some((start, start.checked_add(event.duration_ps.max(0))?))
}

pub(super) fn ps_to_ns(ps: i64) -> i64 {
    ps.div_euclid(1000)
}

/// The number in a plane's name after `prefix` (`/device:GPU:3` → 3).
pub fn device_number(plane_name: &str, prefix: &str) -> Option<u32> {
    plane_name.strip_prefix(prefix)?.parse().ok()
}

/// Builds the trace from `space`.
pub fn build(space: &XSpace) -> Trace {
    let mut t = Tables {
        strings: StringTable::new(),
        ..Default::default()
    };
    let mut warnings = LoadWarnings::default();
    let host_pid = space
        .planes
        .iter()
        .find(|p| p.name == "/host:CPU")
        .and_then(|p| plane_stat_i64(p, "process_id"))
        .map_or(0, |v| v.clamp(0, 0xFF_FFFF) as u32);
    let mut session_start_utc_ns = None;
    let (mut unread_planes, mut unread_events) = (Vec::<String>::new(), 0u64);
    let mut tpu_lanes: Vec<u32> = Vec::new();
    let programs = space
        .planes
        .iter()
        .find(|p| p.name == "/host:metadata")
        .map(hlo_programs)
        .unwrap_or_default();
    for plane in &space.planes {
        if let Some(device) = device_number(&plane.name, "/device:GPU:") {
            read_gpu_plane(&mut t, plane, device, host_pid, &programs);
        } else if let Some(device) = device_number(&plane.name, "/device:TPU:") {
            let lane = crate::load::kineto::gpu_lane_tid(device);
            let (events, gpu) =
                super::tpu::read_tpu_plane(plane, device, lane, &mut t.strings, &mut t.ranges);
            t.events += events;
            t.gpus.push(gpu);
            t.names
                .threads
                .insert(lane, format!("TPU {device} (its own lines)"));
            tpu_lanes.push(device);
        } else if plane.name == "/host:CPU" {
            read_host_plane(&mut t, plane, host_pid);
        } else if plane.name == "/host:metadata" {
            let names = StatNames::new(plane);
            for s in &plane.stats {
                t.xla
                    .metadata
                    .push((names.name(s.metadata_id).to_string(), names.text(s).into()));
            }
        } else if plane.name == "Task Environment" {
            session_start_utc_ns = plane_stat_i64(plane, "profile_start_time");
        } else {
            // Planes this loader does not read: said, with their events, rather than left out
            // silently.
            let events: usize = plane.lines.iter().map(|l| l.events.len()).sum();
            if events > 0 {
                unread_planes.push(plane.name.clone());
                unread_events += events as u64;
            }
        }
    }
    t.events += unread_events;
    t.xla.hostnames = space.hostnames.clone();
    t.xla.profiler_messages = space
        .errors
        .iter()
        .chain(&space.warnings)
        .cloned()
        .collect();
    warnings.add_rows_read(EVENTS, t.events);
    warnings.skip(
        EVENTS,
        "[is|are] aggregated counts with no time (`num_occurrences`; left out)",
        t.aggregated,
    );
    warnings.skip(
        EVENTS,
        &format!(
            "[is|are] on planes not read yet ({}: only GPU, TPU and host planes are; left out)",
            named_planes(&unread_planes)
        ),
        unread_events,
    );
    if !t.names.processes.iter().any(|(p, _)| *p == host_pid) {
        t.names.processes.push((host_pid, "python3".into()));
    }
    // XProf's derived XLA Modules / XLA Ops lines, on each GPU's lane.
    let tables = [
        derived::Table::new(
            &t.kernel_streams,
            &t.kernels.spans,
            &t.kernels.correlation_id,
            &t.kernels.external_id,
            true,
        ),
        derived::Table::new(
            &t.memset_streams,
            &t.memsets.spans,
            &t.memsets.correlation_id,
            &t.memsets.external_id,
            false,
        ),
        derived::Table::new(
            &t.memcpy_streams,
            &t.memcpys.spans,
            &t.memcpys.correlation_id,
            &t.memcpys.external_id,
            false,
        ),
    ];
    let host = derived::Host {
        api_correlation: &t.api.correlation_id,
        api_tid: &t.api.global_tid,
        api_start_ns: &t.api.spans.start_ns,
        steps: t.step_ranges.clone(),
    };
    let mut lanes = derived::add_xla_lines(
        &tables,
        &t.xla,
        &host,
        &mut t.strings,
        &mut t.ranges,
        crate::load::kineto::gpu_lane_tid,
    );
    for &device in &lanes {
        t.names.threads.insert(
            crate::load::kineto::gpu_lane_tid(device),
            format!("GPU {device} · XLA (derived as XProf does)"),
        );
    }
    lanes.extend(tpu_lanes);
    let order = |n: usize| (0..n).map(|i| i.min(u32::MAX as usize) as u32).collect();
    t.kernels.file_order = order(t.kernels.spans.len());
    t.memcpys.file_order = order(t.memcpys.spans.len());
    t.memsets.file_order = order(t.memsets.spans.len());
    t.api.file_order = order(t.api.spans.len());
    t.ranges.row_id = (0..t.ranges.spans.len() as i64).collect();

    let parts = Parts {
        // Every name is an id of `t.strings`, handed over as the range table's strings:
        // assembly merges those into this empty table first, each string at the id it has now.
        strings: StringTable::new(),
        kernels: read_of(t.kernels, t.kernel_streams),
        memcpys: read_of(t.memcpys, t.memcpy_streams),
        memsets: read_of(t.memsets, t.memset_streams),
        graphs: read_of(Default::default(), Vec::new()),
        api: (t.api, LoadWarnings::default()),
        nvtx: NvtxRead {
            ranges: t.ranges,
            strings: t.strings,
            thread_names: Vec::new(),
            warnings: LoadWarnings::default(),
        },
        osrt: Default::default(),
        syncs: (SyncEvents::default(), Vec::new(), LoadWarnings::default()),
        gpus: t.gpus,
        names: t.names,
        session: (session_start_utc_ns, None, None),
        memory: crate::load::kineto::memory_tracks(std::mem::take(&mut t.memory)),
        profiler_overhead: Default::default(),
        unified_memory: Default::default(),
        openacc: Default::default(),
        openmp: Default::default(),
        gpu_metrics: Default::default(),
        samples: (
            SamplesRead {
                time_ns: Vec::new(),
                global_tid: Vec::new(),
                stack: Vec::new(),
                stacks: Default::default(),
            },
            LoadWarnings::default(),
        ),
        sched: (
            SchedRead {
                global_tid: Vec::new(),
                start_ns: Vec::new(),
                end_ns: Vec::new(),
                cpu: Vec::new(),
                spans: Vec::new(),
            },
            LoadWarnings::default(),
        ),
        backtraces: (empty_stacks(), empty_stacks(), LoadWarnings::default()),
        warnings,
        // An XPlane is one message: everything in it is read.
        loaded: Needs::ALL,
    };
    let mut trace = assemble(parts);
    for thread in &mut trace.threads {
        let lane = |&&d: &&u32| crate::load::kineto::gpu_lane_tid(d) == thread.global_tid;
        if let Some(&device) = lanes.iter().find(lane) {
            thread.gpu_lane = Some(device);
        }
    }
    trace.format = TraceFormat::XPlane;
    trace.xla = Some(t.xla);
    trace
}

fn read_of<T>(table: T, streams: Vec<StreamKey>) -> Read<T> {
    Read {
        table,
        streams,
        warnings: LoadWarnings::default(),
    }
}

fn empty_stacks() -> StacksRead {
    StacksRead {
        stacks: Default::default(),
        by_file_id: HashMap::new(),
    }
}

/// Up to four plane names, then how many more.
fn named_planes(names: &[String]) -> String {
    let shown = names.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
    match names.len() {
        0..=4 => shown,
        n => format!("{shown} and {} more", n - 4),
    }
}

fn plane_stat_i64(plane: &XPlane, name: &str) -> Option<i64> {
    let names = StatNames::new(plane);
    let stat = StatNames::find(&plane.stats, names.id(name))?;
    stats::integer(stat, &names)
}

/// The stat ids a GPU event is read through.
struct GpuStatIds {
    correlation: Option<i64>,
    kernel_details: Option<i64>,
    memcpy_details: Option<i64>,
    memset_details: Option<i64>,
    hlo_op: Option<i64>,
    hlo_module: Option<i64>,
    tf_op: Option<i64>,
    program_id: Option<i64>,
    occupancy: Option<i64>,
    cuda_graph: Option<i64>,
    context: Option<i64>,
}

/// Each program's instructions' framework ops (see [`super::hlo`]), by program id.
type Programs = HashMap<u64, HashMap<String, String>>;

/// The programs of the `/host:metadata` plane: an event metadata per program, named
/// `jit_step(8621)` (the id in brackets), with its `HloProto` as the bytes of stat `Hlo Proto`.
fn hlo_programs(plane: &XPlane) -> Programs {
    let names = StatNames::new(plane);
    let hlo = names.id("Hlo Proto");
    let mut out = Programs::new();
    for m in plane.event_metadata.values() {
        let Some(super::proto::StatValue::Bytes(bytes)) =
            StatNames::find(&m.stats, hlo).and_then(|s| s.value.as_ref())
        else {
            continue;
        };
        let id = m
            .name
            .rsplit_once('(')
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .and_then(|n| n.parse().ok());
        if let (Some(id), Some(ops)) = (id, super::hlo::framework_ops(bytes)) {
            out.entry(id).or_insert(ops);
        }
    }
    out
}

fn read_gpu_plane(t: &mut Tables, plane: &XPlane, device: u32, host_pid: u32, programs: &Programs) {
    let names = StatNames::new(plane);
    let ids = GpuStatIds {
        correlation: names.id("correlation_id"),
        kernel_details: names.id("kernel_details"),
        memcpy_details: names.id("memcpy_details"),
        memset_details: names.id("Memset_details"),
        hlo_op: names.id("hlo_op"),
        hlo_module: names.id("hlo_module"),
        tf_op: names.id("tf_op"),
        program_id: names.id("program_id"),
        occupancy: names.id("theoretical_occupancy_pct"),
        cuda_graph: names.id("cuda_graph_id"),
        context: names.id("context_id"),
    };
    let plane_text = |name: &str| {
        StatNames::find(&plane.stats, names.id(name)).map(|s| names.text(s).into_owned())
    };
    let plane_int = |name: &str| {
        StatNames::find(&plane.stats, names.id(name)).and_then(|s| stats::integer(s, &names))
    };
    if !t.gpus.iter().any(|g| g.device == device) {
        t.gpus.push(GpuInfo {
            device,
            name: plane_text("gpu_device_name").unwrap_or_default(),
            sm_count: plane_int("core_count").and_then(|v| u32::try_from(v).ok()),
            memory_bytes: plane_int("memory_size").and_then(|v| u64::try_from(v).ok()),
            bus_location: None,
            compute_capability: plane_int("compute_cap_major")
                .zip(plane_int("compute_cap_minor"))
                .and_then(|(major, minor)| {
                    Some((u32::try_from(major).ok()?, u32::try_from(minor).ok()?))
                }),
            kind: Default::default(),
        });
    }
    let pid = plane_int("process_id").map_or(host_pid, |v| v.clamp(0, 0xFF_FFFF) as u32);
    for line in &plane.lines {
        // XLA names a stream's line `Stream #14(Memset,Compute)`; its id is the stream's.
        let Some(stream) = stream_number(&line.name) else {
            continue;
        };
        for event in &line.events {
            t.events += 1;
            let Some((start_ps, end_ps)) = times_ps(line, event) else {
                t.aggregated += 1;
                continue;
            };
            let name = plane
                .event_metadata
                .get(&event.metadata_id)
                .map_or("", |m| m.name.as_str());
            add_gpu_event(
                t,
                &names,
                &ids,
                event,
                name,
                (start_ps, end_ps),
                device,
                pid,
                stream,
            );
            if let Some(op) = t.xla.gpu_ops.last_mut() {
                let framework = op
                    .program_id
                    .and_then(|p| programs.get(&p))
                    .and_then(|ops| ops.get(t.strings.get(op.hlo_op)));
                op.framework_op = framework.map(|name| t.strings.intern(name));
            }
        }
    }
}

/// The stream of a GPU plane's line, `None` for lines that are not streams.
fn stream_number(line_name: &str) -> Option<u32> {
    let rest = line_name.strip_prefix("Stream #")?;
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

#[allow(clippy::too_many_arguments)]
fn add_gpu_event(
    t: &mut Tables,
    names: &StatNames,
    ids: &GpuStatIds,
    event: &XEvent,
    name: &str,
    (start_ps, end_ps): (i64, i64),
    device: u32,
    pid: u32,
    stream: u32,
) {
    let find = |id: Option<i64>| StatNames::find(&event.stats, id);
    let text = |id: Option<i64>| find(id).map(|s| names.text(s)).unwrap_or_default();
    let correlation = find(ids.correlation)
        .and_then(|s| stats::integer(s, names))
        .map_or(0, |v| v.clamp(0, u32::MAX as i64) as u32);
    let context = find(ids.context)
        .map(|s| names.text(s))
        .and_then(|c| c.trim_start_matches('$').parse::<u32>().ok())
        .unwrap_or(0);
    let key = StreamKey {
        device,
        pid,
        context,
        stream,
    };
    let (start, end) = (ps_to_ns(start_ps), ps_to_ns(end_ps));
    let name_id = t.strings.intern(name);
    let kernel_details = text(ids.kernel_details);
    let op = XlaGpuOp {
        start_ps,
        duration_ps: end_ps - start_ps,
        hlo_op: t.strings.intern(&text(ids.hlo_op)),
        hlo_module: t.strings.intern(&text(ids.hlo_module)),
        tf_op: t.strings.intern(&text(ids.tf_op)),
        program_id: find(ids.program_id)
            .and_then(|s| stats::integer(s, names))
            .and_then(|v| u64::try_from(v).ok()),
        kernel_details: t.strings.intern(&kernel_details),
        occupancy_pct: find(ids.occupancy).and_then(|s| stats::number(s, names)),
        cuda_graph_id: find(ids.cuda_graph)
            .and_then(|s| stats::integer(s, names))
            .and_then(|v| u64::try_from(v).ok()),
        framework_op: None,
    };
    t.xla.gpu_ops.push(op);
    let external_id = t.xla.gpu_ops.len() as u64;
    if let Some(details) = find(ids.memcpy_details).map(|s| names.text(s)) {
        let m = &mut t.memcpys;
        m.spans.push(start, end, name_id);
        m.correlation_id.push(correlation);
        m.bytes
            .push(stats::detail_u64(&details, "size").unwrap_or(0));
        m.copy_kind.push(copy_kind(name));
        m.src_kind
            .push(memory_kind(stats::detail(&details, "kind_src")));
        m.dst_kind
            .push(memory_kind(stats::detail(&details, "kind_dst")));
        let d = device.min(u16::MAX as u32) as u16;
        let dest = stats::detail_u64(&details, "dest").map_or(d, |v| v.min(u16::MAX as u64) as u16);
        m.src_device.push(d);
        m.dst_device.push(dest);
        m.api_call.push(NO_INDEX);
        m.green_context.push(0);
        m.virtual_address.push(0);
        m.external_id.push(external_id);
        m.kineto_name.push(name_id);
        t.memcpy_streams.push(key);
    } else if let Some(details) = find(ids.memset_details)
        .map(|s| names.text(s))
        .or_else(|| name.starts_with("Memset").then(Default::default))
    {
        let m = &mut t.memsets;
        m.spans.push(start, end, name_id);
        m.correlation_id.push(correlation);
        m.bytes
            .push(stats::detail_u64(&details, "num_bytes").unwrap_or(0));
        m.api_call.push(NO_INDEX);
        m.mem_kind
            .push(memory_kind(stats::detail(&details, "kind")));
        m.green_context.push(0);
        m.external_id.push(external_id);
        m.kineto_name.push(name_id);
        t.memset_streams.push(key);
    } else {
        let short = t
            .strings
            .intern(crate::load::kineto::short_kernel_name(name));
        let k = &mut t.kernels;
        k.spans.push(start, end, name_id);
        k.short_name.push(short);
        k.mangled_name.push(name_id);
        k.correlation_id.push(correlation);
        k.grid.push(stats::detail_dims(&kernel_details, "grid"));
        k.block.push(
            stats::detail_dims(&kernel_details, "block").map(|v| v.min(u16::MAX as u32) as u16),
        );
        let num = |key: &str| stats::detail_u64(&kernel_details, key).unwrap_or(0);
        k.registers_per_thread
            .push(num("regs").min(u16::MAX as u64) as u16);
        k.static_shared_bytes
            .push(num("static_shared").min(u32::MAX as u64) as u32);
        k.dynamic_shared_bytes
            .push(num("dynamic_shared").min(u32::MAX as u64) as u32);
        k.api_call.push(NO_INDEX);
        k.green_context.push(0);
        k.external_id.push(external_id);
        t.kernel_streams.push(key);
    }
}

/// The GPU an XLA allocator serves, from its name: `GPU_0_bfc` → 0 (the host's allocators,
/// `xla_gpu_host_bfc`, serve none).
fn gpu_of_allocator(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("GPU_")?;
    let digits: &str = &rest[..rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len())];
    digits.parse().ok()
}

/// A copy's direction from XLA's event name (`MemcpyH2D`, `MemcpyD2H`, `MemcpyD2D`, `MemcpyP2P`).
pub fn copy_kind(name: &str) -> CopyKind {
    CopyKind(match name.strip_prefix("Memcpy").unwrap_or("") {
        "H2D" => 1,
        "D2H" => 2,
        "D2D" => 8,
        "P2P" => 10,
        _ => 0,
    })
}

/// nsys's memory-kind number of a kind as XLA's details write it (`pinned`, `device`, …).
pub fn memory_kind(kind: Option<&str>) -> u8 {
    match kind.unwrap_or("") {
        "pageable" => 0,
        "pinned" => 1,
        "device" => 2,
        "array" => 3,
        "managed" => 4,
        _ => 7,
    }
}

fn read_host_plane(t: &mut Tables, plane: &XPlane, pid: u32) {
    let names = StatNames::new(plane);
    let correlation_id = names.id("correlation_id");
    let step_num = names.id("step_num");
    let group_root = names.id("_r");
    let allocator = names.id("allocator_name");
    let bytes_allocated = names.id("bytes_allocated");
    // Threads whose line id is no 24-bit tid (XLA's named threads have 64-bit ids) get one
    // above Linux's largest pid (2^22), in line order.
    let mut next_tid = 0x40_0000u32;
    for line in &plane.lines {
        let tid = match u32::try_from(line.id) {
            Ok(id) if id < 0x40_0000 => id,
            _ => {
                next_tid = (next_tid + 1).min(0xFF_FFFE);
                next_tid
            }
        };
        let global_tid = crate::load::kineto::global_tid(i64::from(pid), i64::from(tid));
        let thread_name = if line.display_name.is_empty() {
            &line.name
        } else {
            &line.display_name
        };
        t.names.threads.insert(global_tid, thread_name.to_string());
        for event in &line.events {
            t.events += 1;
            let Some((start_ps, end_ps)) = times_ps(line, event) else {
                t.aggregated += 1;
                continue;
            };
            let (start, end) = (ps_to_ns(start_ps), ps_to_ns(end_ps));
            let name = plane
                .event_metadata
                .get(&event.metadata_id)
                .map_or("", |m| m.name.as_str());
            let find = |id: Option<i64>| StatNames::find(&event.stats, id);
            if let Some(c) = find(correlation_id).and_then(|s| stats::integer(s, &names)) {
                let a = &mut t.api;
                a.spans.push(start, end, t.strings.intern(name));
                a.correlation_id.push(c.clamp(0, u32::MAX as i64) as u32);
                a.global_tid.push(global_tid);
                a.return_value.push(ApiCalls::NO_RESULT);
                a.callchain.push(NO_STACK);
                a.external_id.push(0);
                continue;
            }
            // XLA's allocators write each allocation and free (`MemoryAllocation`,
            // `MemoryDeallocation`) with the bytes in use after it (`bytes_allocated`, XProf's
            // heap in use); a GPU's allocator is named for it (`GPU_0_bfc`).
            if matches!(name, "MemoryAllocation" | "MemoryDeallocation")
                && let Some(device) = find(allocator)
                    .map(|s| names.text(s))
                    .and_then(|a| gpu_of_allocator(&a))
                && let Some(bytes) = find(bytes_allocated).and_then(|s| stats::integer(s, &names))
            {
                t.memory.push((pid, device, start, bytes));
            }
            // A step's annotation (`StepTraceAnnotation`: `_r` and `step_num`) is named as
            // XProf's trace viewer names the step: `train#3`.
            let step = find(step_num)
                .filter(|_| find(group_root).is_some())
                .and_then(|s| stats::integer(s, &names));
            if step.is_some() {
                t.step_ranges.push((global_tid, start, end));
            }
            let (text, kind) = match (step, name.strip_prefix('$')) {
                (Some(n), _) => (format!("{name}#{n}"), RangeKind::Annotation),
                (None, Some(frame)) => (frame.to_string(), RangeKind::Python),
                (None, None) => (name.to_string(), RangeKind::Annotation),
            };
            let r = &mut t.ranges;
            r.spans.push(start, end, t.strings.intern(&text));
            r.domain.push(StringTable::EMPTY);
            r.color_argb.push(0);
            r.style.push(NvtxStyle::PushPop);
            r.depth.push(0);
            r.global_tid.push(global_tid);
            r.unclosed.push(false);
            r.ended_on_other_thread.push(false);
            r.kind.push(kind);
            r.external_id.push(0);
            r.input_shapes.push(StringTable::EMPTY);
        }
    }
}
