//! `gpu_time_util` (GPU Time Utilization): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct GpuTimeUtil;

impl Rule for GpuTimeUtil {
    fn name(&self) -> &'static str {
        "gpu_time_util"
    }

    fn title(&self) -> &'static str {
        "GPU Time Utilization"
    }

    fn advice(&self) -> &'static str {
        ""
    }

    fn no_result(&self) -> &'static str {
        "no findings"
    }

    fn options(&self) -> &'static [&'static str] {
        &["threshold", "chunks"]
    }

    fn compute(&self, _input: &RuleInput) -> Result<Table, String> {
        Ok(Table::default())
    }
}
