//! Writers: reports in the exact CSV `nsys stats` prints, raw events as CSV, folded stacks and
//! flame-graph SVGs of CPU samples, aligned text tables, and names shortened so that rows stay
//! apart (shared with the window's tables).

pub mod elide;
pub mod events_csv;
pub mod fit_width;
pub mod folded;
pub mod ncu_pages;
pub mod nsys_csv;
pub mod text_table;
