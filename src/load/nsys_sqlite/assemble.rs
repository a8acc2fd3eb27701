//! Turns the tables read in file order into a [`Trace`]: merges strings, sorts each table by
//! (track, start), links GPU operations to the API calls that launched them (same correlationId
//! in the same process), computes NVTX nesting depth and builds the tracks with their indices.

use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Range;

use rayon::prelude::*;

use super::callchains::StacksRead;
use super::gpu_ops::Read;
use super::nvtx::NvtxRead;
use super::samples::SamplesRead;
use super::sched::SchedRead;
use super::system::Names;
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

/// The permutation that sorts rows by `key(i)`.
fn sort_order<K: Ord + Send>(n: usize, key: impl Fn(usize) -> K + Sync) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_by_cached_key(|&i| key(i as usize));
    order
}

/// Numbers the distinct values of a column in ascending order: returns the number of each row's
/// value and the distinct values. Rows of one track tend to come in runs, so the last value is
/// checked before the map.
fn dense_ranks<K: Copy + Eq + Hash + Ord>(column: &[K]) -> (Vec<u32>, Vec<K>) {
    // A trace has a few dozen streams or threads: while there are few keys, a scan of them beats
    // hashing every row (rows of several streams interleave, so `last` often misses).
    const FEW: usize = 32;
    let mut few: Vec<K> = Vec::new();
    let mut seen: HashMap<K, u32> = HashMap::new();
    let mut ids: Vec<u32> = Vec::with_capacity(column.len());
    let mut last: Option<(K, u32)> = None;
    for &k in column {
        let id = match last {
            Some((lk, id)) if lk == k => id,
            _ => {
                let id = if seen.is_empty() {
                    match few.iter().position(|&f| f == k) {
                        Some(i) => i as u32,
                        None if few.len() < FEW => {
                            few.push(k);
                            few.len() as u32 - 1
                        }
                        None => {
                            seen.extend(few.iter().enumerate().map(|(i, &f)| (f, i as u32)));
                            let next = seen.len() as u32;
                            *seen.entry(k).or_insert(next)
                        }
                    }
                } else {
                    let next = seen.len() as u32;
                    *seen.entry(k).or_insert(next)
                };
                last = Some((k, id));
                id
            }
        };
        ids.push(id);
    }
    if seen.is_empty() {
        seen.extend(few.iter().enumerate().map(|(i, &f)| (f, i as u32)));
    }
    let mut keys: Vec<(K, u32)> = seen.into_iter().collect();
    keys.sort_unstable();
    let mut rank_of = vec![0u32; keys.len()];
    for (rank, &(_, id)) in keys.iter().enumerate() {
        rank_of[id as usize] = rank as u32;
    }
    ids.iter_mut().for_each(|id| *id = rank_of[*id as usize]);
    (ids, keys.into_iter().map(|(k, _)| k).collect())
}

/// The permutation that orders rows by (track, start, row), and the rows of each track after it.
///
/// A counting sort by track, then a stable sort by start inside each track: rows arrive nearly in
/// time order, so that sort is close to one pass, and no per-row sort key is materialised.
fn order_by_track_and_start(
    ranks: &[u32],
    tracks: usize,
    start_ns: &[i64],
) -> (Vec<u32>, Vec<Range<usize>>) {
    let mut offsets = vec![0usize; tracks + 1];
    for &r in ranks {
        offsets[r as usize + 1] += 1;
    }
    for t in 0..tracks {
        offsets[t + 1] += offsets[t];
    }
    let ranges: Vec<Range<usize>> = (0..tracks).map(|t| offsets[t]..offsets[t + 1]).collect();
    let mut order = vec![0u32; ranks.len()];
    for (i, &r) in ranks.iter().enumerate() {
        let slot = &mut offsets[r as usize];
        order[*slot] = i as u32;
        *slot += 1;
    }
    let mut buckets: Vec<&mut [u32]> = Vec::with_capacity(tracks);
    let mut rest: &mut [u32] = &mut order;
    for r in &ranges {
        let (bucket, tail) = rest.split_at_mut(r.len());
        buckets.push(bucket);
        rest = tail;
    }
    buckets.into_par_iter().for_each(|bucket| {
        if !bucket.is_sorted_by_key(|&i| start_ns[i as usize]) {
            bucket.par_sort_by_key(|&i| start_ns[i as usize]);
        }
    });
    (order, ranges)
}

/// Each track's key with the range of its rows.
type TrackRows<K> = Vec<(K, Range<usize>)>;

/// Sorts the rows of a table by (track key, start); returns the permutation and each track's
/// key with its rows. A lean load ([`Needs::lean`]: the classic summaries of the command line,
/// which draw nothing) keeps its rows in file order and makes no tracks: no permutation, no runs.
fn sort_by_track<K: Copy + Eq + Hash + Ord>(
    lean: bool,
    track_of_row: &[K],
    start_ns: &[i64],
) -> (Option<Vec<u32>>, TrackRows<K>) {
    if lean {
        return (None, Vec::new());
    }
    let (ranks, keys) = dense_ranks(track_of_row);
    let (order, ranges) = order_by_track_and_start(&ranks, keys.len(), start_ns);
    (Some(order), keys.into_iter().zip(ranges).collect())
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
    for id in nv.spans.name.iter_mut().chain(nv.domain.iter_mut()) {
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

/// CPU samples sorted by (thread, time), with the range of each `globalTid`; the `thread`
/// column is filled once the threads are numbered.
fn sort_samples(
    time_ns: Vec<i64>,
    tids: &[i64],
    stack: Vec<StackId>,
) -> (CpuSamples, Vec<(i64, Range<usize>)>) {
    let order = sort_order(time_ns.len(), |i| (tids[i], time_ns[i]));
    let mut samples = CpuSamples {
        thread: vec![0; time_ns.len()],
        time_ns,
        stack,
    };
    permute(&mut samples.time_ns, &order);
    permute(&mut samples.stack, &order);
    let sorted_tids: Vec<i64> = order.iter().map(|&i| tids[i as usize]).collect();
    (samples, runs_of(&sorted_tids))
}

/// Ranges of equal values in a sorted column.
fn runs_of(sorted: &[i64]) -> Vec<(i64, Range<usize>)> {
    let mut runs = Vec::new();
    let mut from = 0;
    for chunk in sorted.chunk_by(|a, b| a == b) {
        runs.push((chunk[0], from..from + chunk.len()));
        from += chunk.len();
    }
    runs
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

/// The API call of each correlationId of one process: a table indexed by correlationId when the
/// ids are dense (nsys numbers them from 1 per process), else a map.
enum CallsByCorrelation {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl CallsByCorrelation {
    fn get(&self, correlation_id: u32) -> Option<u32> {
        match self {
            Self::Dense(v) => v
                .get(correlation_id as usize)
                .copied()
                .filter(|&a| a != NO_INDEX),
            Self::Sparse(m) => m.get(&correlation_id).copied(),
        }
    }
}

/// One table of GPU operations to link: its correlation ids, its rows per stream, the
/// `api_call` column to fill, and (copies) each row's kind: unified-memory migrations are
/// launched by no call, so they are not counted as unlinked.
type GpuOpsToLink<'a> = (
    &'a [u32],
    &'a [(StreamKey, Range<usize>)],
    &'a mut Vec<u32>,
    Option<&'a [CopyKind]>,
);

/// Counts the `cudaGraphLaunch` calls that launched no GPU work in this export: nsys 2022.4–2023.4
/// traced a graph as a whole without exporting any row for its GPU work, so its time shows idle.
fn warn_graph_launches_without_work(
    api: &ApiCalls,
    launched_by: [&[u32]; 4],
    strings: &StringTable,
    warnings: &mut LoadWarnings,
) {
    let launches: Vec<bool> = (0..strings.len() as StrId)
        .map(|id| strings.get(id).starts_with("cudaGraphLaunch"))
        .collect();
    if !api
        .spans
        .name
        .iter()
        .any(|&n| launches.get(n as usize) == Some(&true))
    {
        return;
    }
    let mut has_work = vec![false; api.spans.len()];
    for column in launched_by {
        for &a in column {
            if let Some(flag) = has_work.get_mut(a as usize) {
                *flag = true;
            }
        }
    }
    let silent = (0..api.spans.len())
        .filter(|&i| launches.get(api.spans.name[i] as usize) == Some(&true) && !has_work[i])
        .count() as u64;
    warnings.add_about(
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "cudaGraphLaunch [call has|calls have]",
        GRAPH_LAUNCH_WITHOUT_WORK,
        silent,
    );
}

/// What the load warning about graph launches with no GPU work says after its count.
pub const GRAPH_LAUNCH_WITHOUT_WORK: &str = "no GPU work in this export (CUDA graphs traced as a whole by an nsys older than 2024): their GPU time shows as idle; capture with `--cuda-graph-trace=node` or a newer nsys";

/// A GPU operation belongs to the API call with the same correlationId in the same process; the
/// first such call in (thread, start) order when the file repeats an id.
fn link_gpu_ops_to_api_calls(
    api: &ApiCalls,
    api_runs: &[(i64, Range<usize>)],
    ops: [GpuOpsToLink; 4],
    warnings: &mut LoadWarnings,
) {
    // (max correlationId, calls) per process.
    let mut extent: HashMap<u32, (u32, usize)> = HashMap::new();
    for (tid, rows) in api_runs {
        let e = extent.entry(GlobalTid(*tid).pid()).or_default();
        e.0 = e.0.max(
            api.correlation_id[rows.clone()]
                .iter()
                .copied()
                .max()
                .unwrap_or(0),
        );
        e.1 += rows.len();
    }
    let mut by_pid: HashMap<u32, CallsByCorrelation> = extent
        .into_iter()
        .map(|(pid, (max, calls))| {
            let table = if (max as usize) < 4 * calls + 4096 {
                CallsByCorrelation::Dense(vec![NO_INDEX; max as usize + 1])
            } else {
                CallsByCorrelation::Sparse(HashMap::with_capacity(calls))
            };
            (pid, table)
        })
        .collect();
    for (tid, rows) in api_runs {
        let Some(table) = by_pid.get_mut(&GlobalTid(*tid).pid()) else {
            continue;
        };
        for i in rows.clone() {
            let c = api.correlation_id[i];
            match table {
                CallsByCorrelation::Dense(v) => {
                    if v[c as usize] == NO_INDEX {
                        v[c as usize] = i as u32;
                    }
                }
                CallsByCorrelation::Sparse(m) => {
                    m.entry(c).or_insert(i as u32);
                }
            }
        }
    }
    let mut unlinked = 0u64;
    for (correlation, tracks, api_call, copy_kind) in ops {
        for (key, rows) in tracks {
            let table = by_pid.get(&key.pid);
            for i in rows.clone() {
                match table.and_then(|t| t.get(correlation[i])) {
                    Some(a) => api_call[i] = a,
                    None if copy_kind
                        .and_then(|k| k.get(i))
                        .is_some_and(|k| k.is_unified_migration()) => {}
                    None => unlinked += 1,
                }
            }
        }
    }
    warnings.add_about(
        "CUPTI_ACTIVITY_KIND_*",
        "GPU [operation has|operations have]",
        "no launching CUDA API call in the trace (shown unlinked)",
        unlinked,
    );
}

/// Assigns each NVTX range its nesting depth among the ranges of its kind on its thread, then
/// orders the table by (thread, kind, depth, start) so every depth of every kind of every thread is
/// one slice. Returns each (thread, kind, depth) with its rows.
fn sort_nvtx_by_depth(nv: &mut NvtxRanges) -> Vec<((i64, RangeKind, u16), Range<usize>)> {
    // By (thread, kind, start, longest first): a counting sort by track, then each track's rows.
    let tracks: Vec<(i64, RangeKind)> = if nv.kind.is_empty() {
        nv.global_tid
            .iter()
            .map(|&g| (g, RangeKind::Nvtx))
            .collect()
    } else {
        nv.global_tid
            .iter()
            .copied()
            .zip(nv.kind.iter().copied())
            .collect()
    };
    let (ranks, keys) = dense_ranks(&tracks);
    drop(tracks);
    let (mut order, track_rows) = order_by_track_and_start(&ranks, keys.len(), &nv.spans.start_ns);
    drop(ranks);
    let (start_ns, end_ns) = (&nv.spans.start_ns, &nv.spans.end_ns);
    let mut buckets: Vec<&mut [u32]> = Vec::with_capacity(track_rows.len());
    let mut rest: &mut [u32] = &mut order;
    for r in &track_rows {
        let (bucket, tail) = rest.split_at_mut(r.len());
        buckets.push(bucket);
        rest = tail;
    }
    // Equal starts: the longer range is the outer one. The sort is stable, so ties keep file order.
    buckets.into_par_iter().for_each(|bucket| {
        bucket.sort_by_key(|&i| (start_ns[i as usize], std::cmp::Reverse(end_ns[i as usize])));
    });
    nv.permute(&order);
    // A range nests inside the innermost open range that ends no earlier than it starts.
    let mut open: Vec<i64> = Vec::new();
    let mut max_depth = vec![0u16; track_rows.len()];
    for (t, rows) in track_rows.iter().enumerate() {
        open.clear();
        for i in rows.clone() {
            let (s, e) = (nv.spans.start_ns[i], nv.spans.end_ns[i]);
            while open.last().is_some_and(|&end| end <= s) {
                open.pop();
            }
            let depth = open.len().min(u16::MAX as usize) as u16;
            nv.depth[i] = depth;
            max_depth[t] = max_depth[t].max(depth);
            open.push(e);
        }
    }
    // Within each track, a stable counting sort by depth keeps the start order of each depth.
    let mut out = Vec::new();
    for (t, rows) in track_rows.iter().enumerate() {
        let levels = max_depth[t] as usize + 1;
        let mut offsets = vec![0usize; levels + 1];
        for i in rows.clone() {
            offsets[nv.depth[i] as usize + 1] += 1;
        }
        for d in 0..levels {
            offsets[d + 1] += offsets[d];
        }
        for d in 0..levels {
            let r = rows.start + offsets[d]..rows.start + offsets[d + 1];
            if !r.is_empty() {
                out.push(((keys[t].0, keys[t].1, d as u16), r));
            }
        }
        for i in rows.clone() {
            let slot = &mut offsets[nv.depth[i] as usize];
            order[rows.start + *slot] = i as u32;
            *slot += 1;
        }
    }
    nv.permute(&order);
    out
}
