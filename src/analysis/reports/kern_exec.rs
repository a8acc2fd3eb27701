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
/// automatic index on the calls' correlationId) produces them in.
pub fn launches(trace: &Trace, filter: &Filter) -> Vec<Launch> {
    let api = &trace.api_calls;
    let k = &trace.kernels;
    let pid_of_call = |i: usize| GlobalTid(api.global_tid[i]).pid();
    let call_order = |i: usize| api.file_order.get(i).copied().unwrap_or(i as u32);
    // Runtime calls by (process, correlationId, file order): a kernel's calls are one run.
    let mut calls: Vec<u32> = (0..api.spans.len())
        .filter(|&i| api.is_from_runtime_table(i))
        .map(|i| i as u32)
        .collect();
    calls.sort_unstable_by_key(|&c| {
        let c = c as usize;
        (pid_of_call(c), api.correlation_id[c], call_order(c))
    });
    let stream_of_kernel = stream_of_rows(trace, k.spans.len(), |s| &s.kernels);
    let mut kernels = filter.indices(trace, EventTable::Kernels);
    kernels.sort_by_key(|&i| k.file_order.get(i).copied().unwrap_or(i as u32));
    let mut out = Vec::with_capacity(kernels.len());
    for i in kernels {
        let Some(stream) = trace.streams.get(stream_of_kernel[i] as usize) else {
            continue;
        };
        let key = (stream.key.pid, k.correlation_id[i]);
        let first = calls.partition_point(|&c| {
            let c = c as usize;
            (pid_of_call(c), api.correlation_id[c]) < key
        });
        for &c in calls[first..].iter().take_while(|&&c| {
            let c = c as usize;
            (pid_of_call(c), api.correlation_id[c]) == key
        }) {
            out.push(Launch {
                kernel: i as u32,
                call: c,
            });
        }
    }
    out
}
