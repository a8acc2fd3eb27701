//! What `cuda_kern_exec_trace` and `cuda_kern_exec_sum` share: each kernel joined to the CUDA API
//! call that launched it, and the launch's phases (API time, queue time, kernel time, total), as
//! nsys 2023.4.4's `cuda_kern_exec_trace.py` / `cuda_kern_exec_sum.py` compute them.
//!
//! The join is nsys's SQL one, not the model's `api_call` link: a kernel meets every row of
//! `CUPTI_ACTIVITY_KIND_RUNTIME` with its correlationId in its process (none, one, or several
//! when the file repeats an id), and rows of an old export's DRIVER table are not looked at.
//! Also [`stream_of_rows`], which the GPU row dumps use to find each operation's stream.

use crate::analysis::filter::{EventTable, Filter};
use crate::trace::{GlobalTid, Slice, StreamTrack, Trace};

/// One kernel with one API call that launched it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Index into `trace.kernels`.
    pub kernel: u32,
    /// Index into `trace.api_calls`.
    pub call: u32,
}

/// The phases of one launch, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phases {
    pub api_start_ns: i64,
    pub api_ns: i64,
    /// From the end of the call to the kernel's start; `None` when the kernel started before the
    /// call returned (nsys then reports no queue time).
    pub queue_ns: Option<i64>,
    pub kernel_start_ns: i64,
    pub kernel_ns: i64,
    /// From the start of the call to whichever ends last, the call or the kernel.
    pub total_ns: i64,
}

impl Launch {
    pub fn phases(self, trace: &Trace) -> Phases {
        let api = &trace.api_calls.spans;
        let k = &trace.kernels.spans;
        let (c, i) = (self.call as usize, self.kernel as usize);
        let (api_start, api_end) = (api.start_ns[c], api.end_ns[c]);
        let (kernel_start, kernel_end) = (k.start_ns[i], k.end_ns[i]);
        Phases {
            api_start_ns: api_start,
            api_ns: api_end.saturating_sub(api_start),
            queue_ns: (kernel_start >= api_end).then(|| kernel_start - api_end),
            kernel_start_ns: kernel_start,
            kernel_ns: kernel_end.saturating_sub(kernel_start),
            total_ns: api_end.max(kernel_end).saturating_sub(api_start),
        }
    }
}

/// For each row of one GPU table, the index into `trace.streams` of its stream (`u32::MAX` for a
/// row no stream lists, which a loaded trace does not have).
pub fn stream_of_rows(
    trace: &Trace,
    rows: usize,
    slice: impl Fn(&StreamTrack) -> &Slice,
) -> Vec<u32> {
    let mut out = vec![u32::MAX; rows];
    for (s, stream) in trace.streams.iter().enumerate() {
        let range = slice(stream).range.clone();
        if let Some(part) = out.get_mut(range) {
            part.fill(s as u32);
        }
    }
    out
}

/// Every (kernel, launching call) pair of the kernels `filter` keeps, in kernel file order and,
/// for one kernel, call file order: the order SQLite's plan (scan the kernels, look each up in an
/// automatic index on the calls' correlationId) produces them in. `stream_of_kernel` is
/// [`stream_of_rows`] of the kernels, which the callers need too.
pub fn launches(trace: &Trace, filter: &Filter, stream_of_kernel: &[u32]) -> Vec<Launch> {
    let api = &trace.api_calls;
    let k = &trace.kernels;
    let key_of = |pid: u32, correlation: u32| (u64::from(pid) << 32) | u64::from(correlation);
    // Runtime calls by (process, correlationId, file order): a kernel's calls are one run. The
    // keys sit in their own array, searched without touching the call tables.
    let mut calls: Vec<(u64, u32, u32)> = (0..api.spans.len())
        .filter(|&i| api.is_from_runtime_table(i))
        .map(|i| {
            let pid = GlobalTid(api.global_tid[i]).pid();
            let order = api.file_order.get(i).copied().unwrap_or(i as u32);
            (key_of(pid, api.correlation_id[i]), order, i as u32)
        })
        .collect();
    calls.sort_unstable();
    let keys: Vec<u64> = calls.iter().map(|c| c.0).collect();
    let mut kernels = filter.indices(trace, EventTable::Kernels);
    kernels.sort_by_key(|&i| k.file_order.get(i).copied().unwrap_or(i as u32));
    let mut out = Vec::with_capacity(kernels.len());
    for i in kernels {
        let Some(stream) = stream_of_kernel
            .get(i)
            .and_then(|&s| trace.streams.get(s as usize))
        else {
            continue;
        };
        // Correlation id 0 is how the loader keeps a NULL one: SQL's `=` never pairs NULLs, and
        // pairing them all would make one launch of every such kernel and call.
        if k.correlation_id[i] == 0 {
            continue;
        }
        let key = key_of(stream.key.pid, k.correlation_id[i]);
        let first = keys.partition_point(|&c| c < key);
        for c in calls[first..].iter().take_while(|c| c.0 == key) {
            out.push(Launch {
                kernel: i as u32,
                call: c.2,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{StreamKey, StreamTrack};

    /// pid 7 launches kernels 0..3; the file repeats correlationId 2 (calls 1 and 2), pid 8 has
    /// its own correlationId 1 (call 3), and call 4 (correlationId 3) comes from a DRIVER table.
    fn small_trace() -> Trace {
        let g = |pid: i64, tid: i64| (pid << 24) | tid;
        let mut t = Trace::default();
        let launch = t.strings.intern("cudaLaunchKernel");
        let k = t.strings.intern("k");
        for (start, end, tid, corr) in [
            (100, 110, g(7, 71), 1),
            (200, 210, g(7, 71), 2),
            (205, 215, g(7, 72), 2),
            (100, 110, g(8, 81), 1),
            (300, 310, g(7, 71), 3),
        ] {
            t.api_calls.spans.push(start, end, launch);
            t.api_calls.global_tid.push(tid);
            t.api_calls.correlation_id.push(corr);
        }
        t.api_calls.file_order = vec![0, 1, 2, 3, 4];
        t.api_calls.driver_rows_from = Some(4);
        // Kernel 0 starts before its call returns; kernels 1 and 2 are in reverse file order.
        for (start, corr, order) in [(105, 1, 0), (400, 2, 2), (230, 1, 1), (320, 3, 3)] {
            t.kernels.spans.push(start, start + 50, k);
            t.kernels.correlation_id.push(corr);
            t.kernels.file_order.push(order);
        }
        let (s, e) = (
            t.kernels.spans.start_ns.clone(),
            t.kernels.spans.end_ns.clone(),
        );
        t.streams.push(StreamTrack {
            key: StreamKey {
                device: 0,
                pid: 7,
                context: 1,
                stream: 7,
            },
            kernels: Slice::new(0..4, &s, &e),
            ..Default::default()
        });
        t
    }

    #[test]
    fn joins_every_runtime_call_of_the_process_in_file_order() {
        let t = small_trace();
        let pairs: Vec<(u32, u32)> = launches(
            &t,
            &Filter::all(),
            &stream_of_rows(&t, t.kernels.spans.len(), |s| &s.kernels),
        )
        .iter()
        .map(|l| (l.kernel, l.call))
        .collect();
        // Kernel 2 (file order 1) before kernel 1; pid 8's call 3 and the DRIVER row 4 join none.
        assert_eq!(pairs, vec![(0, 0), (2, 0), (1, 1), (1, 2)]);
    }

    #[test]
    fn queue_time_only_when_the_kernel_starts_after_the_call() {
        let t = small_trace();
        let early = Launch { kernel: 0, call: 0 }.phases(&t);
        assert_eq!(early.queue_ns, None);
        assert_eq!(early.total_ns, 55);
        let queued = Launch { kernel: 1, call: 1 }.phases(&t);
        assert_eq!(queued.queue_ns, Some(190));
        assert_eq!(
            (queued.api_ns, queued.kernel_ns, queued.total_ns),
            (10, 50, 250)
        );
    }
}
