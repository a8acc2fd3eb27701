//! `cuda_api_trace` (CUDA API Trace): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct CudaApiTrace;

impl StatsReport for CudaApiTrace {
    fn name(&self) -> &'static str {
        "cuda_api_trace"
    }

    fn title(&self) -> &'static str {
        "CUDA API Trace"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA trace data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
