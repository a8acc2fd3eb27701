//! How the loader orders a table's rows: by (track, start), with each track's rows as one
//! range; CPU samples by (thread, time); NVTX by (thread, kind, depth, start) with each range's
//! nesting depth.

use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Range;

use rayon::prelude::*;

use crate::trace::*;

/// The permutation that sorts rows by `key(i)`.
pub(super) fn sort_order<K: Ord + Send>(n: usize, key: impl Fn(usize) -> K + Sync) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.par_sort_by_cached_key(|&i| key(i as usize));
    order
}

/// Numbers the distinct values of a column in ascending order: returns the number of each row's
/// value and the distinct values. Rows of one track tend to come in runs, so the last value is
/// checked before the map.
pub(super) fn dense_ranks<K: Copy + Eq + Hash + Ord>(column: &[K]) -> (Vec<u32>, Vec<K>) {
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
pub(super) fn order_by_track_and_start(
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
pub(super) type TrackRows<K> = Vec<(K, Range<usize>)>;

/// Sorts the rows of a table by (track key, start); returns the permutation and each track's
/// key with its rows. A lean load ([`Needs::lean`]: the classic summaries of the command line,
/// which draw nothing) keeps its rows in file order and makes no tracks: no permutation, no runs.
pub(super) fn sort_by_track<K: Copy + Eq + Hash + Ord>(
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

/// CPU samples sorted by (thread, time), with the range of each `globalTid`; the `thread`
/// column is filled once the threads are numbered.
pub(super) fn sort_samples(
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
pub(super) fn runs_of(sorted: &[i64]) -> Vec<(i64, Range<usize>)> {
    let mut runs = Vec::new();
    let mut from = 0;
    for chunk in sorted.chunk_by(|a, b| a == b) {
        runs.push((chunk[0], from..from + chunk.len()));
        from += chunk.len();
    }
    runs
}

/// Assigns each NVTX range its nesting depth among the ranges of its kind on its thread, then
/// orders the table by (thread, kind, depth, start) so every depth of every kind of every thread is
/// one slice. Returns each (thread, kind, depth) with its rows.
pub(super) fn sort_nvtx_by_depth(
    nv: &mut NvtxRanges,
) -> Vec<((i64, RangeKind, u16), Range<usize>)> {
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
    // A range nests inside the innermost open range that ends no earlier than it starts. Lines
    // a loader derived (a GPU lane's ranges with a domain: an XPlane's XLA Modules and XLA Ops)
    // keep the line it gave them: kernels launched back to back overlap a little, and their ops
    // would climb a level each.
    let mut open: Vec<i64> = Vec::new();
    let mut max_depth = vec![0u16; track_rows.len()];
    for (t, rows) in track_rows.iter().enumerate() {
        open.clear();
        for i in rows.clone() {
            if nv.kind.get(i) == Some(&RangeKind::GpuAnnotation)
                && nv
                    .domain
                    .get(i)
                    .is_some_and(|&d| d != crate::trace::StringTable::EMPTY)
            {
                max_depth[t] = max_depth[t].max(nv.depth[i]);
                continue;
            }
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
