//! `cuda_memcpy_sync` (CUDA Synchronous Memcpy): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct CudaMemcpySync;

impl Rule for CudaMemcpySync {
    fn name(&self) -> &'static str {
        "cuda_memcpy_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronous Memcpy"
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
