//! `cuda_gpu_trace` (CUDA GPU Trace): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaGpuTrace;

impl StatsReport for CudaGpuTrace {
    fn name(&self) -> &'static str {
        "cuda_gpu_trace"
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Trace"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel/memory operations data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
