//! `nvtx_kern_sum` (NVTX Range Kernel Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxKernSum;

impl StatsReport for NvtxKernSum {
    fn name(&self) -> &'static str {
        "nvtx_kern_sum"
    }

    fn title(&self) -> &'static str {
        "NVTX Range Kernel Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["base", "mangled"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
