//! Pure computations over a [`crate::trace::Trace`] and a time range: the `nsys stats` reports,
//! and the filters that choose which events count. Nothing here knows about drawing.

pub mod filter;
pub mod range;
pub mod stats;

pub use filter::{EventTable, Excluded, Filter};
pub use range::{TimeRange, parse_range, parse_time_ns};
pub use stats::{Report, ReportTable, Summary, SummaryRow, compute};
