//! `um_cpu_page_faults_sum` (Unified Memory CPU Page Faults Summary): TODO — not implemented yet (stub registered so the list is complete).

use super::{ReportInput, StatsReport};
use crate::analysis::table::Table;

pub struct UmCpuPageFaultsSum;

impl StatsReport for UmCpuPageFaultsSum {
    fn name(&self) -> &'static str {
        "um_cpu_page_faults_sum"
    }

    fn title(&self) -> &'static str {
        "Unified Memory CPU Page Faults Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn compute(&self, _input: &ReportInput) -> Table {
        Table::default()
    }
}
