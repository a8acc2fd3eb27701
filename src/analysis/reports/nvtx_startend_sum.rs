//! `nvtx_startend_sum` (NVTX Start/End Range Summary), after Nsight Systems 2023.4.4
//! `nvtx_startend_sum.py`: `nvtx_pushpop_sum` over the start/end ranges instead.

use super::{ReportInput, ReportOptions, StatsReport, nvtx_pushpop_sum};
use crate::analysis::table::Table;
use crate::trace::Needs;
use crate::trace::NvtxStyle;

pub struct NvtxStartendSum;

impl StatsReport for NvtxStartendSum {
    fn name(&self) -> &'static str {
        "nvtx_startend_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX
    }

    fn title(&self) -> &'static str {
        "NVTX Start/End Range Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        nvtx_pushpop_sum::summary_of_style(input, NvtxStyle::StartEnd)
    }
}
