//! `cuda_api_gpu_sum` (CUDA Summary (API/Kernels/MemOps)), after nsys 2023.4.4's
//! `cuda_api_gpu_sum.py`: `cuda_gpu_sum` with the CUDA API calls added as `CUDA_API` rows, named
//! as `cuda_api_sum` names them (without the `_vNNNN` suffix).

use super::cuda_gpu_sum::gpu_summary;
use super::kernel_names::KernelNaming;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::table::Table;
use crate::trace::Needs;

pub struct CudaApiGpuSum;

impl StatsReport for CudaApiGpuSum {
    fn name(&self) -> &'static str {
        "cuda_api_gpu_sum"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS.union(KernelNaming::needs(options))
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

    fn compute(&self, input: &ReportInput) -> Table {
        gpu_summary(input, true)
    }
}
