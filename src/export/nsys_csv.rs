//! Writes reports and rule findings cell for cell as `nsys stats` / `nsys analyze --format csv`
//! (Nsight Systems 2023.4) print them: each [`crate::analysis::Cell`] knows its text (SQLite's
//! `round(x, 1)` where nsys rounds, Python's `repr` of floats, MB with 3 decimals), this module
//! adds Python's `csv.writer` quoting.

use std::io::Write;

pub use crate::analysis::rounding::{py_float, sqlite_round};
use crate::analysis::{Report, ReportTable, Table};

/// Header of each classic report, as nsys prints it.
pub fn header(report: Report) -> Vec<&'static str> {
    crate::analysis::reports::classic::header(report)
}

/// The cells of every row of a classic report, as nsys prints them.
pub fn rows(table: &ReportTable) -> Vec<Vec<String>> {
    crate::analysis::reports::classic::cells(table)
        .iter()
        .map(|row| row.iter().map(|c| c.csv_text()).collect())
        .collect()
}

/// Writes the report as CSV: one header row, then the rows (RFC 4180 quoting).
pub fn write_csv(table: &ReportTable, out: impl Write) -> csv::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(out);
    w.write_record(header(table.report))?;
    for r in rows(table) {
        w.write_record(&r)?;
    }
    w.flush()?;
    Ok(())
}

/// Writes a report or rule table as nsys's Python `csv.writer` does: a header row, then the
/// rows, fields quoted only when needed, `\r\n` line ends turned into `\n`.
pub fn write_table_csv(table: &Table, out: impl Write) -> csv::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(out);
    w.write_record(&table.columns)?;
    let mut text = String::new();
    for row in &table.rows {
        for cell in &row.cells {
            text.clear();
            cell.push_csv_text(&mut text);
            w.write_field(&text)?;
        }
        w.write_record(None::<&[u8]>)?;
    }
    w.flush()?;
    Ok(())
}

/// The cells of a table as text, for [`super::text_table::render`].
pub fn table_text_rows(table: &Table) -> Vec<Vec<String>> {
    table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.csv_text()).collect())
        .collect()
}
