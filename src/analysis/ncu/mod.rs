//! Pure computations over an Nsight Compute report ([`crate::trace::ncu::NcuReport`]): the
//! kernel table's rows with their filters and sort ([`kernels`]), the FP32/FP64 roofline as
//! ncu's `SpeedOfLight_RooflineChart` section computes it ([`roofline`]), throughput breakdowns
//! ([`breakdown`]), metric values with the
//! units ncu-ui prints them in ([`units`]); and, read beside a timeline of the same program,
//! which timeline kernel each profiled workload measured ([`join`]) and what that adds to the
//! timeline's numbers ([`facts`]: per-kernel metrics, per-name averages, what is worth
//! optimising, DRAM throughput weighted by timeline time); and two reports kernel by kernel
//! ([`diff`]). Nothing here knows about drawing.

pub mod breakdown;
pub mod diff;
pub mod facts;
pub mod join;
pub mod kernels;
mod pairing;
pub mod roofline;
pub mod rule_text;
pub mod units;

pub use join::{MatchOutcome, NcuJoin, WorkloadMatch, join};

use crate::trace::ncu::{NcuReport, NcuWorkload};

/// What ncu shows in place of the NVLink topology of a GPU with no NVLink connections.
pub const NO_NVLINK: &str = "The system does not have any NVLink connections.";

/// Whether the report says the workload's GPU has no NVLink connections (no logical links).
pub fn has_no_nvlink(report: &NcuReport, w: &NcuWorkload) -> bool {
    report.number(w, "nvlink__count_logical") == Some(0.0)
}
