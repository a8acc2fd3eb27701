//! `nvtx_gpu_proj_sum` (NVTX GPU Projection Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxGpuProjSum;

impl StatsReport for NvtxGpuProjSum {
    fn name(&self) -> &'static str {
        "nvtx_gpu_proj_sum"
    }

    fn title(&self) -> &'static str {
        "NVTX GPU Projection Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
