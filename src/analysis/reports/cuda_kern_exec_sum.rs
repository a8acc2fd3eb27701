//! `cuda_kern_exec_sum` (CUDA Kernel Launch & Exec Time Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaKernExecSum;

impl StatsReport for CudaKernExecSum {
    fn name(&self) -> &'static str {
        "cuda_kern_exec_sum"
    }

    fn title(&self) -> &'static str {
        "CUDA Kernel Launch & Exec Time Summary"
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
