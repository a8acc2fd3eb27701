//! An Nsight Compute report read beside a timeline of the same program: which timeline kernel
//! each profiled workload measured ([`join`]), and what that adds to the timeline's numbers
//! ([`facts`]: per-kernel metrics, per-name averages, what is worth optimising, DRAM throughput
//! weighted by timeline time).

pub mod facts;
pub mod join;

pub use join::{MatchOutcome, NcuJoin, WorkloadMatch, join};
