//! Pure computations over a [`crate::trace::Trace`] and a time range: the `nsys stats` reports
//! and `nsys analyze` rules, the filters that choose which events count (warm-up exclusion), GPU idle gaps and busy time,
//! and copy/compute overlap. Nothing here knows about drawing.

pub mod align;
pub mod comm_overlap;
pub mod cpu_samples;
pub mod critical_path;
pub mod demangled;
pub mod diff;
pub mod filter;
pub mod gap_causes;
pub mod gap_host_ranges;
pub mod gaps;
pub mod headline;
pub mod intervals;
pub mod iterations;
pub mod key_averages;
pub mod ncu;
pub mod nsys_format;
pub mod op_efficiency;
pub mod overlap;
pub mod range;
pub mod ranks;
pub mod reports;
pub mod rounding;
pub mod rules;
pub mod stats;
pub mod sync_wait;
pub mod table;
pub mod unreadable;
pub mod warmup;
pub mod xla_steps;

pub use filter::{EventTable, Excluded, Filter};
pub use gaps::{
    DEFAULT_MIN_GAP_NS, DeviceActivity, GapOptions, GpuOpKind, GpuOpRef, IdleGap, MeasureOver,
    SelectionEdge, gpu_activity, gpu_activity_over, gpu_idle_gaps,
};
pub use nsys_format::NsysFormat;
pub use overlap::{
    CopyComputeOverlap, CopyKindOverlap, copy_compute_overlap, overlap_by_copy_kind,
};
pub use range::{TimeRange, parse_range, parse_time_ns};
pub use reports::{REPORTS, ReportInput, ReportOptions, StatsReport};
pub use rules::{RULES, Rule, RuleInput};
pub use stats::{Report, ReportTable, Summary, SummaryRow, compute, compute_as};
pub use table::{Cell, EventRef, Row, RowEvents, Table};
pub use warmup::{
    AttributionScope, ExcludedInterval, ExclusionRule, WarmupExclusion, exclude_warmup,
    is_warmup_name,
};
