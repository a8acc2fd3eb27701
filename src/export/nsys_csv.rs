//! Formats a [`ReportTable`] cell for cell as `nsys stats --format csv` (Nsight Systems 2023.4)
//! prints it: SQLite's `round(x, 1)` for averages, medians, deviations and percentages, Python's
//! `repr` of the resulting float, and sizes converted to decimal MB with 3 decimals.

use std::io::Write;

pub use crate::analysis::rounding::{py_float, sqlite_round};
use crate::analysis::{Report, ReportTable, Table};

/// Header of each report, as nsys prints it.
pub fn header(report: Report) -> Vec<&'static str> {
    let ns = |count: &'static str, name: &'static str| {
        vec![
            "Time (%)",
            "Total Time (ns)",
            count,
            "Avg (ns)",
            "Med (ns)",
            "Min (ns)",
            "Max (ns)",
            "StdDev (ns)",
            name,
        ]
    };
    match report {
        Report::Kernels => ns("Instances", "Name"),
        Report::CudaApi => ns("Num Calls", "Name"),
        Report::MemoryTime => ns("Count", "Operation"),
        Report::MemorySize => vec![
            "Total (MB)",
            "Count",
            "Avg (MB)",
            "Med (MB)",
            "Min (MB)",
            "Max (MB)",
            "StdDev (MB)",
            "Operation",
        ],
        Report::Nvtx => {
            let mut h = ns("Instances", "Style");
            h.push("Range");
            h
        }
    }
}

/// The cells of every row, as strings.
pub fn rows(table: &ReportTable) -> Vec<Vec<String>> {
    table
        .rows
        .iter()
        .map(|row| {
            let s = &row.stats;
            if table.report == Report::MemorySize {
                let mb = |bytes: f64| format!("{:.3}", bytes / 1e6);
                return vec![
                    mb(s.total as f64),
                    s.count.to_string(),
                    mb(s.avg),
                    mb(s.median),
                    mb(s.min as f64),
                    mb(s.max as f64),
                    mb(s.stddev),
                    row.name.clone(),
                ];
            }
            let mut cells = vec![
                py_float(sqlite_round(row.percent, 1)),
                s.total.to_string(),
                s.count.to_string(),
                py_float(sqlite_round(s.avg, 1)),
                py_float(sqlite_round(s.median, 1)),
                s.min.to_string(),
                s.max.to_string(),
                py_float(sqlite_round(s.stddev, 1)),
            ];
            if let Some(style) = row.style {
                cells.push(style.label().to_string());
            }
            cells.push(row.name.clone());
            cells
        })
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
    for row in &table.rows {
        w.write_record(row.cells.iter().map(|c| c.csv_text()))?;
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
