//! Writers: reports in the exact CSV `nsys stats` prints, and aligned text tables.

pub mod nsys_csv;
pub mod text_table;
