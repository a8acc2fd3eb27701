//! `nvtx_gpu_proj_trace` (NVTX GPU Projection Trace): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxGpuProjTrace;

impl StatsReport for NvtxGpuProjTrace {
    fn name(&self) -> &'static str {
        "nvtx_gpu_proj_trace"
    }

    fn title(&self) -> &'static str {
        "NVTX GPU Projection Trace"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
