//! Turns the tables read in file order into a [`Trace`]: merges strings, sorts each table by
//! (track, start), links GPU operations to the API calls that launched them (same correlationId
//! in the same process), computes NVTX nesting depth and builds the tracks with their indices.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use super::callchains::StacksRead;
use super::gpu_links::*;
use super::gpu_ops::Read;
use super::nvtx::NvtxRead;
use super::samples::SamplesRead;
use super::sched::SchedRead;
use super::system::Names;
use super::track_order::*;
use crate::trace::*;

pub struct Parts {
    pub strings: StringTable,
    pub kernels: Read<Kernels>,
    pub memcpys: Read<Memcpys>,
    pub memsets: Read<Memsets>,
    pub graphs: Read<GraphExecutions>,
    pub api: (ApiCalls, LoadWarnings),
    pub nvtx: NvtxRead,
    pub osrt: (OsrtCalls, Vec<i64>, LoadWarnings),
    pub syncs: (SyncEvents, Vec<i64>, LoadWarnings),
    pub gpus: Vec<GpuInfo>,
    pub names: Names,
    pub session: super::system::Session,
    pub memory: Vec<MemoryUsageTrack>,
    pub profiler_overhead: (ProfilerOverhead, LoadWarnings),
    pub unified_memory: (UnifiedMemory, LoadWarnings),
    pub openacc: (OpenAccEvents, LoadWarnings),
    pub openmp: (OpenMpEvents, LoadWarnings),
    pub gpu_metrics: (GpuMetrics, LoadWarnings),
    pub samples: (SamplesRead, LoadWarnings),
    pub sched: (SchedRead, LoadWarnings),
    /// CUDA and OS-runtime call backtraces.
    pub backtraces: (StacksRead, StacksRead, LoadWarnings),
    pub warnings: LoadWarnings,
    /// What the loader was asked to read: GPU work is joined to its API calls only when
    /// [`Needs::GPU_LINKS`] is in it (and then both sides were read whole).
    pub loaded: Needs,
}

pub fn assemble(parts: Parts) -> Trace {
    let Parts {
        mut strings,
        kernels,
        memcpys,
        memsets,
        graphs,
        api: (mut api, api_warnings),
        nvtx,
        osrt: (mut osrt, osrt_tids, osrt_warnings),
        syncs: (mut syncs, sync_types, sync_warnings),
        gpus,
        names,
        session: (session_start_utc_ns, exporter_version, env_rank),
        memory,
        profiler_overhead: (profiler_overhead, overhead_warnings),
        unified_memory: (unified_memory, unified_memory_warnings),
        openacc: (openacc, openacc_warnings),
        openmp: (openmp, openmp_warnings),
        gpu_metrics: (gpu_metrics, gpu_metrics_warnings),
        samples: (samples, sample_warnings),
        sched: (sched, sched_warnings),
        backtraces: (cuda_stacks, osrt_stacks, backtrace_warnings),
        mut warnings,
        loaded,
    } = parts;
    warnings.extend(sample_warnings);
    warnings.extend(sched_warnings);
    warnings.extend(backtrace_warnings);
    for w in [
        kernels.warnings.clone(),
        memcpys.warnings.clone(),
        memsets.warnings.clone(),
        graphs.warnings.clone(),
    ] {
        warnings.extend(w);
    }
    warnings.extend(api_warnings);
    warnings.extend(osrt_warnings);
    warnings.extend(sync_warnings);
    warnings.extend(overhead_warnings);
    warnings.extend(unified_memory_warnings);
    warnings.extend(openacc_warnings);
    warnings.extend(openmp_warnings);
    warnings.extend(gpu_metrics_warnings);
    warnings.extend(nvtx.warnings.clone());

    // NVTX text was interned in the reader's own table; bring it into the trace's.
    let remap = strings.merge(&nvtx.strings);
    let mut nv = nvtx.ranges;
    for id in nv
        .spans
        .name
        .iter_mut()
        .chain(nv.domain.iter_mut())
        .chain(nv.input_shapes.iter_mut())
    {
        *id = remap[*id as usize];
    }
    let nvtx_thread_names: Vec<(i64, StrId)> = nvtx
        .thread_names
        .iter()
        .map(|&(g, s)| (g, remap[s as usize]))
        .collect();

    // Call stacks: the samples', then the CUDA calls', then the OS-runtime calls'.
    let SamplesRead {
        time_ns: sample_time,
        global_tid: sample_tids,
        stack: sample_stack,
        stacks: sample_stacks,
    } = samples;
    let mut stacks = sample_stacks;
    // A CUDA call's `callchainId` counts from 0 while `CUDA_CALLCHAINS.id` counts from 1: the
    // call's own stack (its API function under its caller) is `callchainId + 1` in every export
    // with CUDA backtraces (2022.2.1 pipit saxpy: 38 of 38 calls; 2023.4.4 cpu_side: 41 of 41),
    // and equal ids give each call the previous call's stack. `OSRT_API.callchainId` is the
    // `OSRT_CALLCHAINS.id` itself (0: none).
    resolve_callchains(&mut api.callchain, cuda_stacks, 1, &mut stacks);
    resolve_callchains(&mut osrt.callchain, osrt_stacks, 0, &mut stacks);

    // The big tables sort side by side: the kernels by (stream, start); the API calls and OS
    // runtime calls by (thread, start), and NVTX by depth.
    let lean = loaded.is_lean();
    let mut k = kernels.table;
    let (kernel_runs, ((api_runs, osrt_runs), nvtx_keys)) = rayon::join(
        || {
            let (order, runs) = sort_by_track(lean, &kernels.streams, &k.spans.start_ns);
            if let Some(order) = &order {
                k.permute(order);
            }
            runs
        },
        || {
            let (order, api_runs) = sort_by_track(lean, &api.global_tid, &api.spans.start_ns);
            if let Some(order) = &order {
                api.permute(order);
            }
            drop(order);
            let (order, osrt_runs) = sort_by_track(lean, &osrt_tids, &osrt.spans.start_ns);
            if let Some(order) = &order {
                osrt.permute(order);
            }
            // A lean load draws no tracks, and its summaries count NVTX by name alone: no
            // depths, and the ranges stay in file order like the other lean tables.
            let nvtx_keys = if lean {
                Vec::new()
            } else {
                sort_nvtx_by_depth(&mut nv)
            };
            ((api_runs, osrt_runs), nvtx_keys)
        },
    );
    drop(kernels.streams);
    drop(osrt_tids);

    // The other GPU operations: fixed names, then sorted by (stream, start).

    let mut m = memcpys.table;
    let labels: Vec<StrId> = (0..=255u8)
        .map(|c| strings.intern(&format!("[CUDA memcpy {}]", CopyKind(c).label())))
        .collect();
    for (name, kind) in m.spans.name.iter_mut().zip(&m.copy_kind) {
        *name = labels[kind.0 as usize];
    }
    let (order, memcpy_runs) = sort_by_track(lean, &memcpys.streams, &m.spans.start_ns);
    if let Some(order) = &order {
        m.permute(order);
    }

    let mut ms = memsets.table;
    let memset_name = strings.intern("[CUDA memset]");
    ms.spans.name.iter_mut().for_each(|n| *n = memset_name);
    let (order, memset_runs) = sort_by_track(lean, &memsets.streams, &ms.spans.start_ns);
    if let Some(order) = &order {
        ms.permute(order);
    }

    let mut gr = graphs.table;
    let mut graph_names: HashMap<u32, StrId> = HashMap::new();
    for (name, &id) in gr.spans.name.iter_mut().zip(&gr.graph_id) {
        *name = *graph_names
            .entry(id)
            .or_insert_with(|| strings.intern(&format!("CUDA graph {id}")));
    }
    let (order, graph_runs) = sort_by_track(lean, &graphs.streams, &gr.spans.start_ns);
    if let Some(order) = &order {
        gr.permute(order);
    }

    for (name, &t) in syncs.spans.name.iter_mut().zip(&sync_types) {
        *name = strings.intern(sync_type_label(t));
    }
    let order = sort_order(syncs.spans.len(), |i| (syncs.spans.start_ns[i], i));
    syncs.permute(&order);

    if loaded.contains(Needs::GPU_LINKS) {
        link_gpu_ops_to_api_calls(
            &api,
            &api_runs,
            [
                (&k.correlation_id, &kernel_runs, &mut k.api_call, None),
                (
                    &m.correlation_id,
                    &memcpy_runs,
                    &mut m.api_call,
                    Some(&m.copy_kind[..]),
                ),
                (&ms.correlation_id, &memset_runs, &mut ms.api_call, None),
                (&gr.correlation_id, &graph_runs, &mut gr.api_call, None),
            ],
            &mut warnings,
        );
        warn_graph_launches_without_work(
            &api,
            [&k.api_call, &m.api_call, &ms.api_call, &gr.api_call],
            &strings,
            &mut warnings,
        );
    }

    // Tracks.
    let mut stream_keys: Vec<StreamKey> = kernel_runs
        .iter()
        .chain(&memcpy_runs)
        .chain(&memset_runs)
        .chain(&graph_runs)
        .map(|r| r.0)
        .collect();
    stream_keys.sort_unstable();
    stream_keys.dedup();
    let kernel_runs: HashMap<StreamKey, Range<usize>> = kernel_runs.into_iter().collect();
    let memcpy_runs: HashMap<StreamKey, Range<usize>> = memcpy_runs.into_iter().collect();
    let memset_runs: HashMap<StreamKey, Range<usize>> = memset_runs.into_iter().collect();
    let graph_runs: HashMap<StreamKey, Range<usize>> = graph_runs.into_iter().collect();
    let streams: Vec<StreamTrack> = stream_keys
        .par_iter()
        .map(|key| {
            let slice = |runs: &HashMap<StreamKey, Range<usize>>, spans: &Spans| {
                let r = runs.get(key).cloned().unwrap_or(0..0);
                Slice::new(r, &spans.start_ns, &spans.end_ns)
            };
            StreamTrack {
                key: *key,
                name: None,
                kernels: slice(&kernel_runs, &k.spans),
                memcpys: slice(&memcpy_runs, &m.spans),
                memsets: slice(&memset_runs, &ms.spans),
                graphs: slice(&graph_runs, &gr.spans),
                // Filled once the nodes are grouped (below).
                graph_launches: Slice::default(),
            }
        })
        .collect();
    let mut streams = streams;
    for s in &mut streams {
        s.name = names.streams.get(&s.key).map(|n| strings.intern(n));
    }
    let node_ops = |spans, correlation_id, api_call, graph_node| GraphNodeOps {
        spans,
        correlation_id,
        api_call,
        graph_node,
    };
    let graph_launches = group_graph_launches(
        &mut streams,
        [
            node_ops(&k.spans, &k.correlation_id, &k.api_call, &k.graph_node),
            node_ops(&m.spans, &m.correlation_id, &m.api_call, &m.graph_node),
            node_ops(&ms.spans, &ms.correlation_id, &ms.api_call, &ms.graph_node),
        ],
        &mut strings,
    );

    let (mut cpu_samples, sample_runs) = sort_samples(sample_time, &sample_tids, sample_stack);
    drop(sample_tids);
    let sched_spans: HashMap<i64, (i64, i64)> =
        sched.spans.iter().map(|&(g, a, b)| (g, (a, b))).collect();
    let (thread_states, running_runs) = thread_states_of(sched);

    let mut tids: Vec<i64> = api_runs
        .iter()
        .chain(&osrt_runs)
        .chain(&sample_runs)
        .chain(&running_runs)
        .map(|r| r.0)
        .chain(nvtx_keys.iter().map(|k| k.0.0))
        .collect();
    tids.sort_unstable();
    tids.dedup();
    let api_runs: HashMap<i64, Range<usize>> = api_runs.into_iter().collect();
    let osrt_runs: HashMap<i64, Range<usize>> = osrt_runs.into_iter().collect();
    let sample_runs: HashMap<i64, Range<usize>> = sample_runs.into_iter().collect();
    let running_runs: HashMap<i64, Range<usize>> = running_runs.into_iter().collect();
    // Each thread's levels: those of each range kind in turn (`nvtx_keys` is in (thread, kind,
    // depth) order), with the kind of each level.
    let mut nvtx_runs: HashMap<i64, (Vec<Range<usize>>, Vec<RangeKind>)> = HashMap::new();
    for ((tid, kind, _), r) in nvtx_keys {
        let (levels, kinds) = nvtx_runs.entry(tid).or_default();
        levels.push(r);
        kinds.push(kind);
    }
    let mut thread_names: HashMap<i64, StrId> = HashMap::new();
    for (g, name) in &names.threads {
        thread_names.insert(*g, strings.intern(name));
    }
    for (g, name) in nvtx_thread_names {
        thread_names.entry(g).or_insert(name);
    }
    let mut threads: Vec<ThreadTrack> = tids
        .par_iter()
        .map(|&g| {
            let slice = |r: Option<&Range<usize>>, spans: &Spans| {
                Slice::new(r.cloned().unwrap_or(0..0), &spans.start_ns, &spans.end_ns)
            };
            ThreadTrack {
                global_tid: g,
                pid: GlobalTid(g).pid(),
                tid: GlobalTid(g).tid(),
                name: StringTable::EMPTY,
                name_from_thread_names: false,
                priority: None,
                api_calls: slice(api_runs.get(&g), &api.spans),
                osrt: slice(osrt_runs.get(&g), &osrt.spans),
                nvtx_levels: nvtx_runs
                    .get(&g)
                    .map(|(levels, _)| {
                        levels
                            .iter()
                            .map(|r| Slice::new(r.clone(), &nv.spans.start_ns, &nv.spans.end_ns))
                            .collect()
                    })
                    .unwrap_or_default(),
                // NVTX alone (nsys exports) leaves the list empty: every level is NVTX.
                level_kinds: nvtx_runs
                    .get(&g)
                    .filter(|(_, kinds)| kinds.iter().any(|&k| k != RangeKind::Nvtx))
                    .map(|(_, kinds)| kinds.clone())
                    .unwrap_or_default(),
                gpu_lane: None,
                samples: sample_runs.get(&g).cloned().unwrap_or(0..0),
                running: Slice::new(
                    running_runs.get(&g).cloned().unwrap_or(0..0),
                    &thread_states.start_ns,
                    &thread_states.end_ns,
                ),
                sched_span: sched_spans.get(&g).copied(),
            }
        })
        .collect();
    for t in &mut threads {
        t.name = thread_names
            .get(&t.global_tid)
            .copied()
            .unwrap_or(StringTable::EMPTY);
        t.name_from_thread_names = names.threads.contains_key(&t.global_tid);
        t.priority = names.thread_priorities.get(&t.global_tid).copied();
    }
    threads.sort_by_key(|t| (t.pid, t.tid));
    for (i, t) in threads.iter().enumerate() {
        cpu_samples.thread[t.samples.clone()].fill(i as u32);
    }

    let mut processes: Vec<ProcessInfo> = names
        .processes
        .iter()
        .map(|(pid, name)| ProcessInfo {
            pid: *pid,
            name: strings.intern(name),
        })
        .collect();
    processes.sort_by_key(|p| p.pid);
    processes.dedup_by_key(|p| p.pid);

    let all_spans = [
        &k.spans,
        &m.spans,
        &ms.spans,
        &gr.spans,
        &api.spans,
        &nv.spans,
        &osrt.spans,
    ];
    let first_ns = all_spans
        .iter()
        .filter_map(|s| s.start_ns.iter().min())
        .min()
        .copied()
        .unwrap_or(0);
    let last_ns = all_spans
        .iter()
        .filter_map(|s| s.end_ns.iter().max())
        .max()
        .copied()
        .unwrap_or(first_ns);

    Trace {
        path: Default::default(),
        ncu: None,
        xla: None,
        strings,
        kernels: k,
        memcpys: m,
        memsets: ms,
        graphs: gr,
        graph_launches,
        api_calls: api,
        nvtx: nv,
        osrt,
        syncs,
        profiler_overhead,
        unified_memory,
        openacc,
        openmp,
        memory_usage: memory,
        gpu_metrics,
        stacks,
        cpu_samples,
        thread_states,
        gpus,
        processes,
        streams,
        threads,
        session_start_utc_ns,
        env_rank,
        first_ns,
        last_ns,
        exporter_version,
        warnings,
        format: TraceFormat::NsysSqlite,
        torch: None,
        loaded,
    }
}

/// Turns the file `callchainId`s of a table's rows into ids of `stacks`, appending the stacks of
/// that callchain table; `callchainId + id_offset` is the id in the callchain table. A row whose
/// id the table lacks gets [`NO_STACK`].
fn resolve_callchains(ids: &mut [u32], read: StacksRead, id_offset: i64, stacks: &mut CallStacks) {
    let StacksRead {
        stacks: table,
        by_file_id,
    } = read;
    let shift = stacks.append(table);
    for id in ids.iter_mut() {
        *id = if *id == NO_STACK {
            NO_STACK
        } else {
            by_file_id
                .get(&(i64::from(*id) + id_offset))
                .map_or(NO_STACK, |&s| s + shift)
        };
    }
}

/// The running intervals (already in (thread, start) order) and the range of each thread.
fn thread_states_of(sched: SchedRead) -> (ThreadStates, Vec<(i64, Range<usize>)>) {
    let runs = runs_of(&sched.global_tid);
    let states = ThreadStates {
        start_ns: sched.start_ns,
        end_ns: sched.end_ns,
        cpu: sched.cpu,
    };
    (states, runs)
}
