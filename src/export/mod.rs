//! Writers: reports in the exact CSV `nsys stats` prints, raw events as CSV, folded stacks and
//! flame-graph SVGs of CPU samples, and aligned text tables.

pub mod events_csv;
pub mod folded;
pub mod nsys_csv;
pub mod text_table;
