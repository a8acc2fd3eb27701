//! `nvtx_pushpop_sum` (NVTX Push/Pop Range Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxPushpopSum;

impl StatsReport for NvtxPushpopSum {
    fn name(&self) -> &'static str {
        "nvtx_pushpop_sum"
    }

    fn title(&self) -> &'static str {
        "NVTX Push/Pop Range Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
