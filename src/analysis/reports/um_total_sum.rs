//! `um_total_sum` (Unified Memory Totals Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct UmTotalSum;

impl StatsReport for UmTotalSum {
    fn name(&self) -> &'static str {
        "um_total_sum"
    }

    fn title(&self) -> &'static str {
        "Unified Memory Totals Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
