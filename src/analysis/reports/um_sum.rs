//! `um_sum` (Unified Memory Analysis Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct UmSum;

impl StatsReport for UmSum {
    fn name(&self) -> &'static str {
        "um_sum"
    }

    fn title(&self) -> &'static str {
        "Unified Memory Analysis Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["rows"]
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
