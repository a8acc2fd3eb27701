//! Time the profiler itself spent in the profiled process (`PROFILER_OVERHEAD`): CUPTI buffer
//! flushes, injection start-up, ... nsys's GPU rules (gpustats.py, used by `gpu_gaps` and
//! `gpu_time_util`) count the CUDA profiling overhead among a GPU's busy time, because the user
//! cannot remove it.

use super::events::Spans;

/// The overhead rows in file order; `spans.name` says what the profiler was doing.
#[derive(Debug, Default, Clone)]
pub struct ProfilerOverhead {
    pub spans: Spans,
    /// `globalTid` of the thread that paid for it.
    pub global_tid: Vec<i64>,
}

impl ProfilerOverhead {
    /// Names of the overhead that stalls the GPU work of its process (gpustats.py's
    /// `_query_cuda_gpu_ops`).
    pub const CUDA_NAMES: [&'static str; 3] = [
        "CUDA profiling data flush overhead",
        "CUDA profiling stop overhead",
        "CUDA profiling overhead",
    ];
}
