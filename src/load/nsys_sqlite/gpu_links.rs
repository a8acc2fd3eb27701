//! Joining GPU operations to the CUDA API calls that launched them: the same correlationId in
//! the same process, and the warnings when a launch has no work or work has no launch.

use std::collections::HashMap;
use std::ops::Range;

use crate::trace::*;

/// The API call of each correlationId of one process: a table indexed by correlationId when the
/// ids are dense (nsys numbers them from 1 per process), else a map.
pub(super) enum CallsByCorrelation {
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
pub(super) type GpuOpsToLink<'a> = (
    &'a [u32],
    &'a [(StreamKey, Range<usize>)],
    &'a mut Vec<u32>,
    Option<&'a [CopyKind]>,
);

/// Counts the `cudaGraphLaunch` calls that launched no GPU work in this export: nsys 2022.4–2023.4
/// traced a graph as a whole without exporting any row for its GPU work, so its time shows idle.
pub(super) fn warn_graph_launches_without_work(
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
pub(super) fn link_gpu_ops_to_api_calls(
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
