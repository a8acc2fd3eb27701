//! `cuda_memcpy_async` (CUDA Async Memcpy with Pageable Memory): TODO — not implemented yet (stub registered so the list is complete).

use super::{Rule, RuleInput};
use crate::analysis::table::Table;

pub struct CudaMemcpyAsync;

impl Rule for CudaMemcpyAsync {
    fn name(&self) -> &'static str {
        "cuda_memcpy_async"
    }

    fn title(&self) -> &'static str {
        "CUDA Async Memcpy with Pageable Memory"
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
