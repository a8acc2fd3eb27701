//! `cuda_memset_sync` (CUDA Synchronous Memset): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct CudaMemsetSync;

impl Rule for CudaMemsetSync {
    fn name(&self) -> &'static str {
        "cuda_memset_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronous Memset"
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
