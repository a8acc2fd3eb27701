//! `osrt_sum` (OS Runtime Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct OsrtSum;

impl StatsReport for OsrtSum {
    fn name(&self) -> &'static str {
        "osrt_sum"
    }

    fn title(&self) -> &'static str {
        "OS Runtime Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OS Runtime trace data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
