//! `openmp_sum` (OpenMP Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct OpenmpSum;

impl StatsReport for OpenmpSum {
    fn name(&self) -> &'static str {
        "openmp_sum"
    }

    fn title(&self) -> &'static str {
        "OpenMP Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OpenMP event data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
