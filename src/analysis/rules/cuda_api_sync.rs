//! `cuda_api_sync` (CUDA Synchronization APIs): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct CudaApiSync;

impl Rule for CudaApiSync {
    fn name(&self) -> &'static str {
        "cuda_api_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronization APIs"
    }

    fn advice(&self) -> &'static str {
        ""
    }

    fn no_result(&self) -> &'static str {
        "no findings"
    }

    fn compute(&self, _input: &RuleInput) -> Result<Table, String> {
        Ok(Table::default())
    }
}
