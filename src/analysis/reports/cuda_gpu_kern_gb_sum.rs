//! `cuda_gpu_kern_gb_sum` (CUDA GPU Kernel/Grid/Block Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaGpuKernGbSum;

impl StatsReport for CudaGpuKernGbSum {
    fn name(&self) -> &'static str {
        "cuda_gpu_kern_gb_sum"
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Kernel/Grid/Block Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
