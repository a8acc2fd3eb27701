//! Joins the parsed batches in file order and hands them to the same assembly an nsys export
//! goes through (sorting by track, launch links by correlation id, range nesting, indices), then
//! adds what only a PyTorch trace has: the profiler's overhead on the thread it delayed, GPU
//! annotation lanes, the allocator's memory row, GPU names from `deviceProperties`, the rank and
//! the trace's own metadata.

use std::collections::HashMap;

use super::parse::{Counts, Parsed, gpu_lane_tid};
use crate::load::nsys_sqlite::{
    Names, NvtxRead, Parts, Read, SamplesRead, SchedRead, StacksRead, assemble,
};
use crate::trace::{
    ApiCalls, GlobalTid, GpuInfo, Kernels, LoadWarnings, Memcpys, MemoryUsageSample,
    MemoryUsageTrack, Memsets, Needs, NvtxRanges, StreamKey, StringTable, SyncEvents, TorchInfo,
    TorchMemoryEvents, Trace, TraceFormat, permute,
};

/// Where a load's warnings are filed.
pub const EVENTS: &str = "traceEvents";

/// Everything read from the file: the parsed batches, the top-level members and what the
/// framer saw.
pub struct FileContents {
    pub batches: Vec<Parsed>,
    pub members: Vec<(String, String)>,
    pub warnings: LoadWarnings,
}

/// Builds the trace.
pub fn build(read: FileContents) -> Trace {
    let FileContents {
        batches,
        members,
        mut warnings,
    } = read;
    let mut strings = StringTable::new();
    let mut kernels = Kernels::default();
    let mut kernel_streams: Vec<StreamKey> = Vec::new();
    let mut memcpys = Memcpys::default();
    let mut memcpy_streams: Vec<StreamKey> = Vec::new();
    let mut memsets = Memsets::default();
    let mut memset_streams: Vec<StreamKey> = Vec::new();
    let mut syncs = SyncEvents::default();
    let mut sync_types: Vec<i64> = Vec::new();
    let mut api = ApiCalls::default();
    let mut ranges = NvtxRanges::default();
    let mut memory = TorchMemoryEvents::default();
    let mut memory_in_use: Vec<(u32, u32, i64, i64)> = Vec::new();
    let mut process_names: Vec<(i64, String)> = Vec::new();
    let mut thread_names: Vec<(i64, String)> = Vec::new();
    let mut counts = Counts::default();
    let mut collective_calls = Vec::new();
    for mut b in batches {
        let remap = strings.merge(&b.strings);
        let map = |ids: &mut [u32]| ids.iter_mut().for_each(|id| *id = remap[*id as usize]);
        map(&mut b.kernels.spans.name);
        map(&mut b.kernels.short_name);
        map(&mut b.kernels.mangled_name);
        map(&mut b.memcpys.spans.name);
        map(&mut b.memcpys.kineto_name);
        map(&mut b.memsets.spans.name);
        map(&mut b.memsets.kineto_name);
        map(&mut b.syncs.spans.name);
        map(&mut b.syncs.kineto_name);
        map(&mut b.api.spans.name);
        map(&mut b.ranges.spans.name);
        map(&mut b.ranges.input_shapes);
        map(&mut b.ranges.input_types);
        map(&mut b.ranges.input_strides);
        map(&mut b.ranges.concrete_inputs);
        kernels.append(&mut b.kernels);
        kernel_streams.append(&mut b.kernel_streams);
        memcpys.append(&mut b.memcpys);
        memcpy_streams.append(&mut b.memcpy_streams);
        memsets.append(&mut b.memsets);
        memset_streams.append(&mut b.memset_streams);
        syncs.append(&mut b.syncs);
        sync_types.append(&mut b.sync_types);
        api.append(&mut b.api);
        append_ranges(&mut ranges, &mut b.ranges);
        append_memory(&mut memory, &mut b.memory);
        memory_in_use.append(&mut b.memory_in_use);
        process_names.append(&mut b.process_names);
        thread_names.append(&mut b.thread_names);
        counts.add(&b.counts);
        collective_calls.append(&mut b.collective_calls);
    }
    collective_calls.sort_by_key(|c: &crate::trace::CollectiveCall| c.external_id);
    count_warnings(&counts, &mut warnings);
    super::overhead::place(&mut ranges, &api.global_tid, &mut warnings);

    // File order: the position of each row in its table, as nsys's row dumps break ties.
    let order = |n: usize| (0..n).map(|i| i.min(u32::MAX as usize) as u32).collect();
    kernels.file_order = order(kernels.spans.len());
    memcpys.file_order = order(memcpys.spans.len());
    memsets.file_order = order(memsets.spans.len());
    api.file_order = order(api.spans.len());
    ranges.row_id = (0..ranges.spans.len() as i64).collect();

    // A GPU op runs on a stream of the process whose CUDA call launched it (same correlation id);
    // Kineto files GPU work under the device instead. The busiest process takes the rest.
    let mut calls_per_pid: HashMap<u32, usize> = HashMap::new();
    let mut pid_of_correlation: HashMap<u32, u32> = HashMap::with_capacity(api.spans.len());
    for (&c, &g) in api.correlation_id.iter().zip(&api.global_tid) {
        let pid = GlobalTid(g).pid();
        *calls_per_pid.entry(pid).or_default() += 1;
        pid_of_correlation.entry(c).or_insert(pid);
    }
    let main_pid = calls_per_pid
        .iter()
        .max_by_key(|&(pid, n)| (*n, std::cmp::Reverse(*pid)))
        .map(|(&pid, _)| pid)
        .or_else(|| {
            ranges
                .global_tid
                .iter()
                .map(|&g| GlobalTid(g).pid())
                .find(|&p| p != GlobalTid(gpu_lane_tid(0)).pid())
        })
        .unwrap_or(0);
    for (keys, correlation) in [
        (&mut kernel_streams, &kernels.correlation_id),
        (&mut memcpy_streams, &memcpys.correlation_id),
        (&mut memset_streams, &memsets.correlation_id),
    ] {
        for (key, c) in keys.iter_mut().zip(correlation) {
            key.pid = pid_of_correlation.get(c).copied().unwrap_or(main_pid);
        }
    }

    // XLA's JSON puts a GPU's work in a process named `/device:GPU:N`, with no `args.device`:
    // the process id stood for the device (parse.rs); the name says which it is.
    let xla_devices: HashMap<u32, u32> = process_names
        .iter()
        .filter_map(|(pid, name)| {
            let device = crate::load::xplane::build::device_number(name, "/device:GPU:")?;
            Some((u32::try_from(*pid).ok()?, device))
        })
        .collect();
    if !xla_devices.is_empty() {
        for key in kernel_streams
            .iter_mut()
            .chain(memcpy_streams.iter_mut())
            .chain(memset_streams.iter_mut())
        {
            if let Some(&device) = xla_devices.get(&key.device) {
                key.device = device;
            }
        }
        for d in &mut memcpys.src_device {
            *d = xla_devices.get(&u32::from(*d)).map_or(*d, |&v| v as u16);
        }
        for d in &mut memcpys.dst_device {
            *d = xla_devices.get(&u32::from(*d)).map_or(*d, |&v| v as u16);
        }
    }
    let metadata = Metadata::read(&members);
    let mut names = Names::default();
    for (pid, name) in process_names {
        let pid = pid.clamp(0, u32::MAX as i64) as u32;
        if !names.processes.iter().any(|(p, _)| *p == pid) {
            names.processes.push((pid, name));
        }
    }
    for (g, name) in thread_names {
        if !name.is_empty() {
            names.threads.entry(g).or_insert(name);
        }
    }
    let lanes: Vec<u32> = {
        let mut d: Vec<u32> = ranges
            .global_tid
            .iter()
            .zip(&ranges.kind)
            .filter(|&(_, k)| *k == crate::trace::RangeKind::GpuAnnotation)
            .map(|(&g, _)| GlobalTid(g).tid())
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    for &device in &lanes {
        names
            .threads
            .insert(gpu_lane_tid(device), format!("GPU {device} annotations"));
    }
    let memory_usage = memory_tracks(memory_in_use);
    let memory = {
        let order = sorted_by_time(&memory.time_ns);
        let mut m = memory;
        permute(&mut m.time_ns, &order);
        permute(&mut m.global_tid, &order);
        permute(&mut m.bytes, &order);
        permute(&mut m.device_type, &order);
        permute(&mut m.device_id, &order);
        m
    };

    let parts = Parts {
        // Every name is an id of `strings`, handed over as the range table's strings: assembly
        // merges those into this empty table first, each string at the id it has now.
        strings: StringTable::new(),
        kernels: read_of(kernels, kernel_streams),
        memcpys: read_of(memcpys, memcpy_streams),
        memsets: read_of(memsets, memset_streams),
        graphs: read_of(Default::default(), Vec::new()),
        api: (api, LoadWarnings::default()),
        nvtx: NvtxRead {
            ranges,
            strings,
            thread_names: Vec::new(),
            warnings: LoadWarnings::default(),
        },
        osrt: Default::default(),
        syncs: (syncs, sync_types, LoadWarnings::default()),
        gpus: metadata.gpus.clone(),
        names,
        session: (metadata.base_time_ns, None, None),
        memory: memory_usage,
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
        // A PyTorch trace is one JSON document: everything in it is read.
        loaded: Needs::ALL,
    };
    let mut trace = assemble(parts);
    for t in &mut trace.threads {
        if let Some(&device) = lanes.iter().find(|&&d| gpu_lane_tid(d) == t.global_tid) {
            t.gpu_lane = Some(device);
        }
    }
    trace.format = TraceFormat::Kineto;
    trace.torch = Some(TorchInfo {
        memory,
        rank: metadata.rank,
        world_size: metadata.world_size,
        backend: metadata.backend,
        base_time_ns: metadata.base_time_ns,
        schema_version: metadata.schema_version,
        collective_calls,
        metadata: metadata.options,
    });
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

fn sorted_by_time(time_ns: &[i64]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..time_ns.len() as u32).collect();
    order.sort_by_key(|&i| time_ns[i as usize]);
    order
}

/// The allocator's `Total Allocated` after each CUDA `[memory]` event, per (process, device): the
/// memory-in-use row, as nsys's `CUDA_GPU_MEMORY_USAGE_EVENTS`.
/// Memory-in-use tracks from (pid, device, time, bytes in use) samples in any order.
pub(crate) fn memory_tracks(mut samples: Vec<(u32, u32, i64, i64)>) -> Vec<MemoryUsageTrack> {
    samples.sort_by_key(|&(pid, device, time, _)| (pid, device, time));
    let mut tracks: Vec<MemoryUsageTrack> = Vec::new();
    for (pid, device, time_ns, bytes_in_use) in samples {
        if tracks
            .last()
            .is_none_or(|t| t.pid != pid || t.device != device)
        {
            tracks.push(MemoryUsageTrack {
                pid,
                device,
                samples: Vec::new(),
            });
        }
        if let Some(t) = tracks.last_mut() {
            t.samples.push(MemoryUsageSample {
                time_ns,
                bytes_in_use,
            });
        }
    }
    tracks
}

fn append_ranges(to: &mut NvtxRanges, from: &mut NvtxRanges) {
    to.spans.append(&mut from.spans);
    to.domain.append(&mut from.domain);
    to.color_argb.append(&mut from.color_argb);
    to.style.append(&mut from.style);
    to.depth.append(&mut from.depth);
    to.global_tid.append(&mut from.global_tid);
    to.unclosed.append(&mut from.unclosed);
    to.row_id.append(&mut from.row_id);
    to.ended_on_other_thread
        .append(&mut from.ended_on_other_thread);
    to.kind.append(&mut from.kind);
    to.external_id.append(&mut from.external_id);
    to.input_shapes.append(&mut from.input_shapes);
    to.input_types.append(&mut from.input_types);
    to.input_strides.append(&mut from.input_strides);
    to.concrete_inputs.append(&mut from.concrete_inputs);
}

fn append_memory(to: &mut TorchMemoryEvents, from: &mut TorchMemoryEvents) {
    to.time_ns.append(&mut from.time_ns);
    to.global_tid.append(&mut from.global_tid);
    to.bytes.append(&mut from.bytes);
    to.device_type.append(&mut from.device_type);
    to.device_id.append(&mut from.device_id);
}

fn count_warnings(c: &Counts, w: &mut LoadWarnings) {
    w.add_rows_read(EVENTS, c.events);
    let mut skip = |what: &str, n: u64| {
        w.skip(EVENTS, what, n);
    };
    skip(
        "[is|are] not a readable JSON event (left out)",
        c.unreadable,
    );
    skip("[has|have] no readable `ts` (left out)", c.no_ts);
    skip(
        "[is|are] GPU work with no device (no `args.device`; left out)",
        c.no_device,
    );
    w.add(EVENTS, "[has|have] no `dur` (kept as instants)", c.no_dur);
    w.add(
        EVENTS,
        "[has|have] a negative `dur` (kept as instants)",
        c.negative_dur,
    );
}

/// The top-level members Sightline reads.
#[derive(Default)]
struct Metadata {
    gpus: Vec<GpuInfo>,
    rank: Option<u32>,
    world_size: Option<u32>,
    backend: Option<String>,
    base_time_ns: Option<i64>,
    schema_version: Option<i64>,
    /// The other scalar members (capture options, versions), as written.
    options: Vec<(String, String)>,
}

impl Metadata {
    fn read(members: &[(String, String)]) -> Self {
        use serde_json::Value;
        let mut m = Metadata::default();
        for (key, text) in members {
            let Ok(value) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            match key.as_str() {
                "deviceProperties" => {
                    for d in value.as_array().into_iter().flatten() {
                        let Some(id) = d.get("id").and_then(Value::as_u64) else {
                            continue;
                        };
                        m.gpus.push(GpuInfo {
                            device: id.min(u32::MAX as u64) as u32,
                            name: d
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                            sm_count: d
                                .get("numSms")
                                .and_then(Value::as_u64)
                                .map(|v| v.min(u32::MAX as u64) as u32),
                            memory_bytes: d.get("totalGlobalMem").and_then(Value::as_u64),
                            bus_location: None,
                            compute_capability: d
                                .get("computeMajor")
                                .and_then(Value::as_u64)
                                .zip(d.get("computeMinor").and_then(Value::as_u64))
                                .map(|(a, b)| (a.min(99) as u32, b.min(99) as u32)),
                            kind: Default::default(),
                        });
                    }
                }
                "distributedInfo" => {
                    let num = |k: &str| {
                        value
                            .get(k)
                            .and_then(Value::as_u64)
                            .map(|v| v.min(u32::MAX as u64) as u32)
                    };
                    m.rank = num("rank");
                    m.world_size = num("world_size");
                    m.backend = value
                        .get("backend")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                "baseTimeNanoseconds" => m.base_time_ns = value.as_i64(),
                "schemaVersion" => m.schema_version = value.as_i64(),
                _ => {
                    let text = match &value {
                        Value::String(s) => s.clone(),
                        Value::Number(_) | Value::Bool(_) => value.to_string(),
                        _ => continue,
                    };
                    m.options.push((key.clone(), text));
                }
            }
        }
        m
    }
}
