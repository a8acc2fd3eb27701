//! Writers: reports in the exact CSV `nsys stats` prints, raw events as CSV, and aligned text
//! tables.

pub mod events_csv;
pub mod nsys_csv;
pub mod text_table;
