//! `cuda_kern_exec_trace` (CUDA Kernel Launch & Exec Time Trace): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaKernExecTrace;

impl StatsReport for CudaKernExecTrace {
    fn name(&self) -> &'static str {
        "cuda_kern_exec_trace"
    }

    fn title(&self) -> &'static str {
        "CUDA Kernel Launch & Exec Time Trace"
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
