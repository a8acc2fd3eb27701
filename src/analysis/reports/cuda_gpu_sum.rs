//! `cuda_gpu_sum` (CUDA GPU Summary (Kernels/MemOps)): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaGpuSum;

impl StatsReport for CudaGpuSum {
    fn name(&self) -> &'static str {
        "cuda_gpu_sum"
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Summary (Kernels/MemOps)"
    }

    fn missing_data(&self) -> &'static str {
        "GPU kernel/memory operations data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
