//! `cuda_api_gpu_sum` (CUDA Summary (API/Kernels/MemOps)): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaApiGpuSum;

impl StatsReport for CudaApiGpuSum {
    fn name(&self) -> &'static str {
        "cuda_api_gpu_sum"
    }

    fn title(&self) -> &'static str {
        "CUDA Summary (API/Kernels/MemOps)"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA API, GPU kernel, nor memory operations data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
