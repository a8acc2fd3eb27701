//! Turns the tables read in file order into a [`Trace`]: merges strings, sorts each table by
//! (track, start), links GPU operations to the API calls that launched them (same correlationId
//! in the same process), computes NVTX nesting depth and builds the tracks with their indices.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use super::gpu_ops::Read;
use super::nvtx::NvtxRead;
use super::system::Names;
use crate::trace::*;

pub struct Parts {
    pub strings: StringTable,
    pub kernels: Read<Kernels>,
    pub memcpys: Read<Memcpys>,
    pub memsets: Read<Memsets>,
    pub api: (ApiCalls, LoadWarnings),
    pub nvtx: NvtxRead,
    pub osrt: (OsrtCalls, Vec<i64>, LoadWarnings),
    pub syncs: (SyncEvents, Vec<i64>, LoadWarnings),
    pub gpus: Vec<GpuInfo>,
    pub names: Names,
    pub session: (Option<i64>, Option<String>),
    pub memory: Vec<MemoryUsageTrack>,
    pub warnings: LoadWarnings,
}

/// The permutation that sorts rows by `key(i)`.
fn sort_order<K: Ord + Send>(n: usize, key: impl Fn(usize) -> K + Sync) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_by_cached_key(|&i| key(i as usize));
    order
}

/// Runs of equal keys in a sorted key column: (key, rows).
fn runs<K: PartialEq + Copy>(keys: &[K]) -> Vec<(K, Range<usize>)> {
    let mut out: Vec<(K, Range<usize>)> = Vec::new();
    for (i, &k) in keys.iter().enumerate() {
        match out.last_mut() {
            Some((last, r)) if *last == k => r.end = i + 1,
            _ => out.push((k, i..i + 1)),
        }
    }
    out
}

fn permuted<T: Copy>(column: &[T], order: &[u32]) -> Vec<T> {
    order.iter().map(|&i| column[i as usize]).collect()
}

pub fn assemble(parts: Parts) -> Trace {
    let Parts {
        mut strings,
        kernels,
        memcpys,
        memsets,
        api: (mut api, api_warnings),
        nvtx,
        osrt: (mut osrt, osrt_tids, osrt_warnings),
        syncs: (mut syncs, sync_types, sync_warnings),
        gpus,
        names,
        session: (session_start_utc_ns, exporter_version),
        memory,
        mut warnings,
    } = parts;
    for w in [
        kernels.warnings.clone(),
        memcpys.warnings.clone(),
        memsets.warnings.clone(),
    ] {
        warnings.extend(w);
    }
    warnings.extend(api_warnings);
    warnings.extend(osrt_warnings);
    warnings.extend(sync_warnings);
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

    // GPU operations: fixed names, then sorted by (stream, start).
    let mut k = kernels.table;
    let order = sort_order(k.spans.len(), |i| {
        (kernels.streams[i], k.spans.start_ns[i], i)
    });
    k.permute(&order);
    let kernel_streams = permuted(&kernels.streams, &order);

    let mut m = memcpys.table;
    let labels: Vec<StrId> = (0..=255u8)
        .map(|c| strings.intern(&format!("[CUDA memcpy {}]", CopyKind(c).label())))
        .collect();
    for (name, kind) in m.spans.name.iter_mut().zip(&m.copy_kind) {
        *name = labels[kind.0 as usize];
    }
    let order = sort_order(m.spans.len(), |i| {
        (memcpys.streams[i], m.spans.start_ns[i], i)
    });
    m.permute(&order);
    let memcpy_streams = permuted(&memcpys.streams, &order);

    let mut ms = memsets.table;
    let memset_name = strings.intern("[CUDA memset]");
    ms.spans.name.iter_mut().for_each(|n| *n = memset_name);
    let order = sort_order(ms.spans.len(), |i| {
        (memsets.streams[i], ms.spans.start_ns[i], i)
    });
    ms.permute(&order);
    let memset_streams = permuted(&memsets.streams, &order);

    for (name, &t) in syncs.spans.name.iter_mut().zip(&sync_types) {
        *name = strings.intern(sync_type_label(t));
    }
    let order = sort_order(syncs.spans.len(), |i| (syncs.spans.start_ns[i], i));
    syncs.permute(&order);

    // CPU side: API calls and OS runtime by (thread, start).
    let order = sort_order(api.spans.len(), |i| {
        (api.global_tid[i], api.spans.start_ns[i], i)
    });
    api.permute(&order);
    let order = sort_order(osrt.spans.len(), |i| {
        (osrt_tids[i], osrt.spans.start_ns[i], i)
    });
    osrt.spans.permute(&order);
    let osrt_tids = permuted(&osrt_tids, &order);

    link_gpu_ops_to_api_calls(
        &api,
        [
            (&k.correlation_id, &kernel_streams, &mut k.api_call),
            (&m.correlation_id, &memcpy_streams, &mut m.api_call),
            (&ms.correlation_id, &memset_streams, &mut ms.api_call),
        ],
        &mut warnings,
    );
    let nvtx_keys = sort_nvtx_by_depth(&mut nv);

    // Tracks.
    let mut stream_keys: Vec<StreamKey> = kernel_streams
        .iter()
        .chain(&memcpy_streams)
        .chain(&memset_streams)
        .copied()
        .collect();
    stream_keys.sort_unstable();
    stream_keys.dedup();
    let kernel_runs: HashMap<StreamKey, Range<usize>> = runs(&kernel_streams).into_iter().collect();
    let memcpy_runs: HashMap<StreamKey, Range<usize>> = runs(&memcpy_streams).into_iter().collect();
    let memset_runs: HashMap<StreamKey, Range<usize>> = runs(&memset_streams).into_iter().collect();
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
            }
        })
        .collect();
    let mut streams = streams;
    for s in &mut streams {
        s.name = names.streams.get(&s.key).map(|n| strings.intern(n));
    }

    let mut tids: Vec<i64> = api
        .global_tid
        .iter()
        .chain(&osrt_tids)
        .chain(nvtx_keys.iter().map(|k| &k.0))
        .copied()
        .collect();
    tids.sort_unstable();
    tids.dedup();
    let api_runs: HashMap<i64, Range<usize>> = runs(&api.global_tid).into_iter().collect();
    let osrt_runs: HashMap<i64, Range<usize>> = runs(&osrt_tids).into_iter().collect();
    let mut nvtx_runs: HashMap<i64, Vec<Range<usize>>> = HashMap::new();
    for ((tid, depth), r) in runs(&nvtx_keys) {
        let levels = nvtx_runs.entry(tid).or_default();
        while levels.len() < depth as usize {
            levels.push(r.start..r.start);
        }
        levels.push(r);
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
                api_calls: slice(api_runs.get(&g), &api.spans),
                osrt: slice(osrt_runs.get(&g), &osrt.spans),
                nvtx_levels: nvtx_runs
                    .get(&g)
                    .map(|levels| {
                        levels
                            .iter()
                            .map(|r| Slice::new(r.clone(), &nv.spans.start_ns, &nv.spans.end_ns))
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect();
    for t in &mut threads {
        t.name = thread_names
            .get(&t.global_tid)
            .copied()
            .unwrap_or(StringTable::EMPTY);
    }
    threads.sort_by_key(|t| (t.pid, t.tid));

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
        strings,
        kernels: k,
        memcpys: m,
        memsets: ms,
        api_calls: api,
        nvtx: nv,
        osrt,
        syncs,
        memory_usage: memory,
        gpus,
        processes,
        streams,
        threads,
        session_start_utc_ns,
        first_ns,
        last_ns,
        exporter_version,
        warnings,
    }
}

/// A GPU operation belongs to the API call with the same correlationId in the same process.
fn link_gpu_ops_to_api_calls(
    api: &ApiCalls,
    ops: [(&[u32], &[StreamKey], &mut Vec<u32>); 3],
    warnings: &mut LoadWarnings,
) {
    let key = |pid: u32, corr: u32| (u64::from(pid) << 32) | u64::from(corr);
    let mut by_corr: HashMap<u64, u32> = HashMap::with_capacity(api.spans.len());
    for i in 0..api.spans.len() {
        by_corr
            .entry(key(
                GlobalTid(api.global_tid[i]).pid(),
                api.correlation_id[i],
            ))
            .or_insert(i as u32);
    }
    let mut unlinked = 0u64;
    for (correlation, streams, api_call) in ops {
        for i in 0..correlation.len() {
            match by_corr.get(&key(streams[i].pid, correlation[i])) {
                Some(&a) => api_call[i] = a,
                None => unlinked += 1,
            }
        }
    }
    warnings.add(
        "CUPTI_ACTIVITY_KIND_*",
        "GPU operations whose launching API call is not in the trace",
        unlinked,
    );
}

/// Assigns each NVTX range its nesting depth on its thread, then orders the table by
/// (thread, depth, start) so every depth of every thread is one slice. Returns the sorted
/// (thread, depth) key of each row.
fn sort_nvtx_by_depth(nv: &mut NvtxRanges) -> Vec<(i64, u16)> {
    let order = sort_order(nv.spans.len(), |i| {
        (
            nv.global_tid[i],
            nv.spans.start_ns[i],
            std::cmp::Reverse(nv.spans.end_ns[i]),
            i,
        )
    });
    nv.permute(&order);
    // A range nests inside the innermost open range that ends no earlier than it starts.
    let mut open: Vec<i64> = Vec::new();
    let mut current_tid = None;
    for i in 0..nv.spans.len() {
        if current_tid != Some(nv.global_tid[i]) {
            open.clear();
            current_tid = Some(nv.global_tid[i]);
        }
        let (s, e) = (nv.spans.start_ns[i], nv.spans.end_ns[i]);
        while open.last().is_some_and(|&end| end <= s) {
            open.pop();
        }
        nv.depth[i] = open.len().min(u16::MAX as usize) as u16;
        open.push(e);
    }
    let order = sort_order(nv.spans.len(), |i| {
        (nv.global_tid[i], nv.depth[i], nv.spans.start_ns[i], i)
    });
    nv.permute(&order);
    (0..nv.spans.len())
        .map(|i| (nv.global_tid[i], nv.depth[i]))
        .collect()
}
