//! `nvtx_pushpop_trace` (NVTX Push/Pop Range Trace): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct NvtxPushpopTrace;

impl StatsReport for NvtxPushpopTrace {
    fn name(&self) -> &'static str {
        "nvtx_pushpop_trace"
    }

    fn title(&self) -> &'static str {
        "NVTX Push/Pop Range Trace"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
