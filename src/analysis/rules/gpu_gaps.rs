//! `gpu_gaps` (GPU Gaps): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct GpuGaps;

impl Rule for GpuGaps {
    fn name(&self) -> &'static str {
        "gpu_gaps"
    }

    fn title(&self) -> &'static str {
        "GPU Gaps"
    }

    fn advice(&self) -> &'static str {
        ""
    }

    fn no_result(&self) -> &'static str {
        "no findings"
    }

    fn options(&self) -> &'static [&'static str] {
        &["gap"]
    }

    fn compute(&self, _input: &RuleInput) -> Result<Table, String> {
        Ok(Table::default())
    }
}
