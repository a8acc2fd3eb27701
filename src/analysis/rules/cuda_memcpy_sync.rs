//! `cuda_memcpy_sync` (CUDA Synchronous Memcpy), after Nsight Systems 2023.4.4's
//! `rules/cuda_memcpy_sync.py`: copies made by a synchronous `cudaMemcpy*` call (no "Async" in
//! its name), leaving out host-to-device copies of at most 64 000 bytes (which return before the
//! copy ends) and peer copies within one device.

use super::api_matches::ops_with_calls;
use super::cuda_memcpy_async::{memcpy_findings, memcpy_table};
use super::scope::{RuleScope, sql_like};
use super::{Rule, RuleInput};
use crate::analysis::table::Table;
use crate::trace::CopyKind;

pub struct CudaMemcpySync;

/// Host-to-device copies up to this size do not block (nsys's "64 KB", written 64000).
const SMALL_HTOD_BYTES: u64 = 64_000;

impl Rule for CudaMemcpySync {
    fn name(&self) -> &'static str {
        "cuda_memcpy_sync"
    }

    fn title(&self) -> &'static str {
        "CUDA Synchronous Memcpy"
    }

    fn advice(&self) -> &'static str {
        "The following are synchronous memory transfers that block the host. This does not \
         include host to device transfers of a memory block of 64 KB or less."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected related to synchronous memcpy operations."
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let scope = RuleScope::parse(input.trace, input.options)?;
        let m = &input.trace.memcpys;
        let found = ops_with_calls(
            input,
            &scope,
            &memcpy_table(input),
            |name| sql_like(name, "cudaMemcpy%") && !sql_like(name, "%Async%"),
            |i| {
                let small_htod =
                    m.bytes[i] <= SMALL_HTOD_BYTES && m.copy_kind[i] == CopyKind::HOST_TO_DEVICE;
                // `srcDeviceId IS NOT NULL AND srcDeviceId == dstDeviceId`: nsys fills the
                // device ids of peer copies only (the model reads NULL as 0).
                let same_device =
                    m.copy_kind[i] == CopyKind::PEER_TO_PEER && m.src_device[i] == m.dst_device[i];
                !small_htod && !same_device
            },
        );
        Ok(memcpy_findings(input, &found))
    }
}
