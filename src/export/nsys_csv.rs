//! Writes reports and rule findings cell for cell as `nsys stats` / `nsys analyze --format csv`
//! (Nsight Systems 2023.4) print them: each [`crate::analysis::Cell`] knows its text (SQLite's
//! `round(x, 1)` where nsys rounds, Python's `repr` of floats, MB with 3 decimals), this module
//! adds Python's `csv.writer` quoting.

use std::io::Write;

pub use crate::analysis::rounding::{py_float, sqlite_round};
use crate::analysis::table::{Cell, CellText, RowSink};
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
    let mut rows = CsvRows::new(out, "");
    for row in &table.rows {
        rows.write(&table.columns, &row.cells)?;
    }
    if table.rows.is_empty() {
        rows.header(&table.columns)?;
    }
    rows.finish()?;
    Ok(())
}

/// A table's CSV written row by row: `prefix` and the header come before the first row.
///
/// Rows are written here rather than through `csv::Writer` (which writes the header): a row dump
/// has millions of cells and most are numbers, which never need quotes. Text is quoted as
/// `csv::QuoteStyle::Necessary` quotes it: when it holds a comma, a double quote (doubled), `\r`
/// or `\n`, or when it is the only field of its row and empty.
pub struct CsvRows<W: Write> {
    out: W,
    prefix: String,
    started: bool,
    buf: Vec<u8>,
    text: String,
}

/// Bytes gathered before they go to the output.
const CSV_BLOCK: usize = 1 << 16;

impl<W: Write> CsvRows<W> {
    pub fn new(out: W, prefix: &str) -> Self {
        Self {
            out,
            prefix: prefix.to_string(),
            started: false,
            buf: Vec::with_capacity(CSV_BLOCK + 4096),
            text: String::new(),
        }
    }

    fn header(&mut self, columns: &[String]) -> csv::Result<()> {
        if !self.started {
            self.started = true;
            self.buf.extend_from_slice(self.prefix.as_bytes());
            let mut w = csv::WriterBuilder::new()
                .quote_style(csv::QuoteStyle::Necessary)
                .from_writer(&mut self.buf);
            w.write_record(columns)?;
            w.flush()?;
        }
        Ok(())
    }

    pub fn write(&mut self, columns: &[String], cells: &[Cell]) -> csv::Result<()> {
        self.header(columns)?;
        let only = cells.len() == 1;
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            match cell {
                Cell::Null if only => self.buf.extend_from_slice(b"\"\""),
                Cell::Null => {}
                Cell::Int(v) => self
                    .buf
                    .extend_from_slice(itoa::Buffer::new().format(*v).as_bytes()),
                Cell::Text(s) => push_quoted(&mut self.buf, s, only),
                Cell::Float(_) | Cell::Fixed(..) => {
                    self.text.clear();
                    cell.push_csv_text(&mut self.text);
                    self.buf.extend_from_slice(self.text.as_bytes());
                }
            }
        }
        self.buf.push(b'\n');
        if self.buf.len() >= CSV_BLOCK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// The output, flushed; `None` when no row (nor header) was written.
    pub fn finish(self) -> csv::Result<Option<W>> {
        let (out, started) = self.into_inner()?;
        Ok(started.then_some(out))
    }

    /// The output, flushed, and whether any row (or header) was written to it.
    pub fn into_inner(mut self) -> csv::Result<(W, bool)> {
        if self.started {
            self.out.write_all(&self.buf)?;
            self.out.flush()?;
        }
        Ok((self.out, self.started))
    }
}

/// A text field, in double quotes (doubled inside) when it needs them; its pieces are written
/// one after the other, never put together first.
fn push_quoted(buf: &mut Vec<u8>, text: &CellText, only_field: bool) {
    let pieces = text.pieces();
    let needs = (only_field && text.is_empty())
        || pieces
            .iter()
            .any(|s| s.bytes().any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n')));
    if !needs {
        pieces
            .iter()
            .for_each(|s| buf.extend_from_slice(s.as_bytes()));
        return;
    }
    buf.push(b'"');
    for part in pieces.iter().flat_map(|s| s.split_inclusive('"')) {
        buf.extend_from_slice(part.as_bytes());
        if part.ends_with('"') {
            buf.push(b'"');
        }
    }
    buf.push(b'"');
}

/// The command line's sink for a row dump that streams: its CSV written to `W` as the rows come
/// (in blocks), the first error kept.
pub struct CsvSink<W: Write> {
    rows: Option<CsvRows<W>>,
    error: Option<csv::Error>,
}

impl<W: Write> CsvSink<W> {
    pub fn new(out: W, prefix: &str) -> Self {
        Self {
            rows: Some(CsvRows::new(out, prefix)),
            error: None,
        }
    }

    /// The output, flushed, and whether any row came (`None` once taken), or the first error.
    pub fn take(&mut self) -> csv::Result<Option<(W, bool)>> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.rows.take().map(CsvRows::into_inner).transpose()
    }
}

impl<W: Write + Send> RowSink for CsvSink<W> {
    fn row(&mut self, columns: &[String], cells: &[Cell]) {
        if self.error.is_some() {
            return;
        }
        if let Some(rows) = &mut self.rows
            && let Err(e) = rows.write(columns, cells)
        {
            self.error = Some(e);
        }
    }
}

/// The cells of a table as text, for [`super::text_table::render`].
pub fn table_text_rows(table: &Table) -> Vec<Vec<String>> {
    table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.csv_text()).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `csv::Writer` with `QuoteStyle::Necessary` writes for the same rows.
    fn by_csv_crate(columns: &[String], rows: &[Vec<Cell>]) -> Vec<u8> {
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Necessary)
            .from_writer(Vec::new());
        w.write_record(columns).ok();
        for row in rows {
            w.write_record(row.iter().map(Cell::csv_text)).ok();
        }
        w.into_inner().unwrap_or_default()
    }

    #[test]
    fn rows_are_quoted_as_the_csv_crate_quotes_them() {
        let texts = [
            "",
            "plain",
            "a,b",
            "say \"hi\"",
            "\"",
            "\"\"x",
            "line\nbreak",
            "cr\rhere",
            " lead",
            "void f<int, 2>(float *)",
            "é,ü",
            "#comment",
        ];
        let columns: Vec<String> = ["A", "B, c", "D"].iter().map(|s| s.to_string()).collect();
        let mut rows: Vec<Vec<Cell>> = texts
            .iter()
            .map(|t| vec![Cell::text(*t), Cell::Int(-42), Cell::Null])
            .collect();
        rows.push(vec![
            Cell::Float(0.1),
            Cell::Fixed(2.5, 3),
            Cell::Int(i64::MIN),
        ]);
        let mut ours = CsvRows::new(Vec::new(), "");
        for row in &rows {
            ours.write(&columns, row).ok();
        }
        let ours = ours.finish().ok().flatten().unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&by_csv_crate(&columns, &rows))
        );
        // A text of several pieces is quoted as the text they make.
        let joined =
            |pieces: &[&str]| Cell::Text(CellText::joined(pieces.iter().map(|p| (*p).into())));
        let rows = vec![
            vec![
                joined(&["--", "say \"hi\""]),
                Cell::Int(1),
                joined(&["a", ","]),
            ],
            vec![
                joined(&["dom", ":", "text"]),
                Cell::Null,
                joined(&["\"", "\""]),
            ],
        ];
        let mut ours = CsvRows::new(Vec::new(), "");
        for row in &rows {
            ours.write(&columns, row).ok();
        }
        let ours = ours.finish().ok().flatten().unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&by_csv_crate(&columns, &rows))
        );
        // A row of one empty field is written `""`, as the crate writes it.
        let one = vec!["N".to_string()];
        for cell in [Cell::Null, Cell::text("")] {
            let mut ours = CsvRows::new(Vec::new(), "# t\n");
            ours.write(&one, std::slice::from_ref(&cell)).ok();
            let ours = ours.finish().ok().flatten().unwrap_or_default();
            let mut theirs = b"# t\n".to_vec();
            theirs.extend(by_csv_crate(&one, &[vec![cell]]));
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn a_table_without_rows_prints_its_header_and_a_stream_without_rows_nothing() {
        let table = Table::new(&["x", "y"]);
        let mut out = Vec::new();
        write_table_csv(&table, &mut out).ok();
        assert_eq!(out, b"x,y\n");
        let mut sink = CsvSink::new(Vec::new(), "# r\n");
        assert!(matches!(sink.take(), Ok(Some((out, false))) if out.is_empty()));
        assert!(matches!(sink.take(), Ok(None)));
    }
}
