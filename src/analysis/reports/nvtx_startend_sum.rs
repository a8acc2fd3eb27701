//! `nvtx_startend_sum` (NVTX Start/End Range Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxStartendSum;

impl StatsReport for NvtxStartendSum {
    fn name(&self) -> &'static str {
        "nvtx_startend_sum"
    }

    fn title(&self) -> &'static str {
        "NVTX Start/End Range Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
