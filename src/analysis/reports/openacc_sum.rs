//! `openacc_sum` (OpenACC Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct OpenaccSum;

impl StatsReport for OpenaccSum {
    fn name(&self) -> &'static str {
        "openacc_sum"
    }

    fn title(&self) -> &'static str {
        "OpenACC Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OpenACC event data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
