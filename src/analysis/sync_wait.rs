//! How much of its time each host thread that launches GPU work spends waiting for the GPU: the
//! guides' "synchronisation wait < 10 %" target.
//!
//! A thread *launches work* when at least one kernel, memcpy, memset or CUDA graph execution
//! kept by the filter is linked to one of its CUDA calls (the loader's correlation link). For
//! such a thread, over its kept CUDA calls (runtime and driver):
//! - active span = from the start of its first kept call to the end of its last;
//! - sync wait = |union of its kept synchronising calls| ([`super::gap_causes::is_sync_call`]:
//!   device/context/stream/event synchronize, synchronous memcpy/memset), a driver call nested
//!   in a runtime call counted once;
//! - share = sync wait ÷ active span.
//!
//! The devices a thread launched work on are listed so a per-GPU figure can sum the threads
//! that fed that GPU.

use std::collections::{BTreeMap, BTreeSet};

use super::filter::{EventTable, Filter};
use super::gap_causes::is_sync_call;
use super::intervals;
use crate::trace::{NO_INDEX, Trace};

/// One launching thread's wait.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadSyncWait {
    pub global_tid: i64,
    pub pid: u32,
    pub tid: u32,
    /// The thread's name ("" when the trace gives none).
    pub name: String,
    /// Devices that ran work this thread launched, ascending.
    pub devices: Vec<u32>,
    /// Kept calls that launched GPU work.
    pub launches: usize,
    /// First kept call start to last kept call end.
    pub active_ns: i64,
    /// Union of the kept synchronising calls.
    pub sync_ns: i64,
}

impl ThreadSyncWait {
    /// Sync wait over the active span, in percent; `None` when the span is empty.
    pub fn sync_percent(&self) -> Option<f64> {
        (self.active_ns > 0).then(|| self.sync_ns as f64 * 100.0 / self.active_ns as f64)
    }
}

/// Every thread that launched kept GPU work, by (pid, tid).
pub fn sync_wait(trace: &Trace, filter: &Filter) -> Vec<ThreadSyncWait> {
    // Launching call → devices its work ran on.
    let mut launched: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    let calls = trace.api_calls.spans.len();
    let mut link = |call: u32, device: u32| {
        if call != NO_INDEX && (call as usize) < calls {
            launched.entry(call as usize).or_default().insert(device);
        }
    };
    for s in &trace.streams {
        let device = s.key.device;
        let k = &trace.kernels;
        for i in s.kernels.range.clone() {
            if filter.keeps(EventTable::Kernels, i, k.spans.start_ns[i]) {
                link(k.api_call.get(i).copied().unwrap_or(NO_INDEX), device);
            }
        }
        let m = &trace.memcpys;
        for i in s.memcpys.range.clone() {
            if filter.keeps(EventTable::Memcpys, i, m.spans.start_ns[i]) {
                link(m.api_call.get(i).copied().unwrap_or(NO_INDEX), device);
            }
        }
        let m = &trace.memsets;
        for i in s.memsets.range.clone() {
            if filter.keeps(EventTable::Memsets, i, m.spans.start_ns[i]) {
                link(m.api_call.get(i).copied().unwrap_or(NO_INDEX), device);
            }
        }
        // Graph executions have no exclusion table of their own: the range decides.
        let g = &trace.graphs;
        for i in s.graphs.range.clone() {
            if filter.range.contains(g.spans.start_ns[i]) {
                link(g.api_call.get(i).copied().unwrap_or(NO_INDEX), device);
            }
        }
    }
    let a = &trace.api_calls;
    let mut out = Vec::new();
    for t in &trace.threads {
        let kept: Vec<usize> = t
            .api_calls
            .range
            .clone()
            .filter(|&i| filter.keeps(EventTable::ApiCalls, i, a.spans.start_ns[i]))
            .collect();
        let mut devices = BTreeSet::new();
        let mut launches = 0;
        for i in &kept {
            if let Some(d) = launched.get(i) {
                launches += 1;
                devices.extend(d.iter().copied());
            }
        }
        if launches == 0 {
            continue;
        }
        let first = kept.iter().map(|&i| a.spans.start_ns[i]).min();
        let last = kept.iter().map(|&i| a.spans.end_ns[i]).max();
        let active_ns = match (first, last) {
            (Some(f), Some(l)) => (l - f).max(0),
            _ => 0,
        };
        let syncs = kept
            .iter()
            .filter(|&&i| is_sync_call(trace.str(a.spans.name[i])))
            .map(|&i| (a.spans.start_ns[i], a.spans.end_ns[i]))
            .collect();
        out.push(ThreadSyncWait {
            global_tid: t.global_tid,
            pid: t.pid,
            tid: t.tid,
            name: trace.str(t.name).to_string(),
            devices: devices.into_iter().collect(),
            launches,
            active_ns,
            sync_ns: intervals::total_ns(&intervals::union(syncs)),
        });
    }
    out
}

/// The wait of the threads that launched work on `device`, summed: Σ sync ÷ Σ active span, in
/// percent; `None` when no thread launched work there.
pub fn device_sync_percent(threads: &[ThreadSyncWait], device: u32) -> Option<f64> {
    let (sync, active) = threads
        .iter()
        .filter(|t| t.devices.contains(&device))
        .fold((0i64, 0i64), |(s, a), t| (s + t.sync_ns, a + t.active_ns));
    (active > 0).then(|| sync as f64 * 100.0 / active as f64)
}
