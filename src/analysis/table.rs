//! The shape every report and rule answers in: named columns and rows of typed cells, each row
//! able to say which events (or which span of time) it stands for, so the panel can sort by value,
//! the CSV writer can print exactly what nsys prints, and a click can find the events again.

use std::sync::{Arc, Mutex};

use super::filter::EventTable;
use super::rounding::py_float;

pub mod text;
pub use text::CellText;

/// One cell. Typed so that the panel sorts numbers as numbers and the CSV writer prints each the
/// way nsys's Python `csv.writer` does.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// SQL NULL: an empty CSV field.
    Null,
    Int(i64),
    /// A float as Python's `repr` prints it (`12.0`, `97.7`). Round before storing where nsys
    /// rounds in SQL ([`super::rounding::sqlite_round`]).
    Float(f64),
    /// A number printed with a fixed number of decimals, as SQL `printf('%.3f', x)` does.
    Fixed(f64, u8),
    /// Text, shared with the trace where it is a name (`Cell::text(trace.shared_str(id))`).
    Text(CellText),
}

impl Cell {
    pub fn text(s: impl Into<CellText>) -> Cell {
        Cell::Text(s.into())
    }

    /// `Int` when present, `Null` when not.
    pub fn opt_int(v: Option<i64>) -> Cell {
        v.map_or(Cell::Null, Cell::Int)
    }

    /// The text nsys's CSV holds for this cell (before CSV quoting).
    pub fn csv_text(&self) -> String {
        match self {
            Cell::Null => String::new(),
            Cell::Int(v) => v.to_string(),
            Cell::Float(v) => py_float(*v),
            Cell::Fixed(v, decimals) => format!("{v:.prec$}", prec = *decimals as usize),
            Cell::Text(s) => s.to_string(),
        }
    }

    /// Appends [`Cell::csv_text`] to `out`, allocating nothing of its own (row dumps print
    /// millions of cells).
    pub fn push_csv_text(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = match self {
            Cell::Null => Ok(()),
            Cell::Int(v) => write!(out, "{v}"),
            Cell::Float(v) => {
                out.push_str(&py_float(*v));
                Ok(())
            }
            Cell::Fixed(v, decimals) => write!(out, "{v:.prec$}", prec = *decimals as usize),
            Cell::Text(s) => {
                s.pieces().iter().for_each(|p| out.push_str(p));
                Ok(())
            }
        };
    }

    /// The value to sort by, when the cell is a number.
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Int(v) => Some(*v as f64),
            Cell::Float(v) | Cell::Fixed(v, _) => Some(*v),
            Cell::Null | Cell::Text(_) => None,
        }
    }
}

/// One event of the trace, by table and index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventRef {
    pub table: EventTable,
    pub index: u32,
}

impl EventRef {
    pub fn new(table: EventTable, index: usize) -> Self {
        Self {
            table,
            index: index as u32,
        }
    }
}

/// What a row stands for in the timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum RowEvents {
    /// Nothing to point at (a total, or a row the report made up).
    #[default]
    None,
    /// These events (one for a row dump, a group for a summary).
    Events(Vec<EventRef>),
    /// A span of time, on one GPU when `device` says so (a gap, a utilisation chunk).
    Span {
        start_ns: i64,
        end_ns: i64,
        device: Option<u32>,
    },
}

/// One row of a report or rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub cells: Vec<Cell>,
    pub events: RowEvents,
}

impl Row {
    pub fn new(cells: Vec<Cell>) -> Self {
        Self {
            cells,
            events: RowEvents::None,
        }
    }

    pub fn with_events(cells: Vec<Cell>, events: RowEvents) -> Self {
        Self { cells, events }
    }
}

/// A computed report or rule result: the columns nsys prints and the rows in nsys's order.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// Rows not kept because of [`Table::limited`] (the panel keeps the first rows of a row
    /// dump of millions; the command line keeps all).
    pub omitted: usize,
    limit: Option<usize>,
    /// Where rows go instead of [`Table::rows`] when the command line writes a row dump as it
    /// is computed ([`Table::streamed_to`]).
    sink: Option<SharedSink>,
    /// Rows handed to the sink.
    pub streamed: usize,
}

/// Takes the rows of a table one at a time, in order, as they are computed: the command line
/// writes a row dump of millions of rows without holding it.
pub trait RowSink: Send {
    fn row(&mut self, columns: &[String], cells: &[Cell]);
}

/// A sink shared between the table that fills it and the writer that reads it afterwards.
#[derive(Clone)]
pub struct SharedSink(pub Arc<Mutex<dyn RowSink>>);

impl std::fmt::Debug for SharedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSink")
    }
}

/// Tables are equal by what they hold; where their rows were streamed to does not count.
impl PartialEq for Table {
    fn eq(&self, other: &Self) -> bool {
        self.columns == other.columns
            && self.rows == other.rows
            && self.omitted == other.omitted
            && self.limit == other.limit
            && self.streamed == other.streamed
    }
}

impl Table {
    pub fn new(columns: &[&str]) -> Self {
        Self {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            ..Self::default()
        }
    }

    /// A table of these columns and rows.
    pub fn from_parts(columns: Vec<String>, rows: Vec<Row>) -> Self {
        Self {
            columns,
            rows,
            ..Self::default()
        }
    }

    /// Keeps at most `limit` rows; the others are only counted in [`Table::omitted`].
    pub fn limited(mut self, limit: Option<usize>) -> Self {
        self.limit = limit;
        self
    }

    /// Sends every row pushed from now on to `sink` (when given) instead of keeping it.
    pub fn streamed_to(mut self, sink: Option<SharedSink>) -> Self {
        self.sink = sink;
        self
    }

    pub fn push(&mut self, cells: Vec<Cell>, events: RowEvents) {
        debug_assert_eq!(cells.len(), self.columns.len());
        if let Some(sink) = &self.sink {
            if let Ok(mut sink) = sink.0.lock() {
                sink.row(&self.columns, &cells);
            }
            self.streamed += 1;
            return;
        }
        if self.limit.is_some_and(|l| self.rows.len() >= l) {
            self.omitted += 1;
            return;
        }
        self.rows.push(Row { cells, events });
    }

    /// No rows, kept or streamed.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.streamed == 0
    }

    /// Index of a column by its header.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_print_as_nsys_csv_does() {
        assert_eq!(Cell::Null.csv_text(), "");
        assert_eq!(Cell::Int(-3).csv_text(), "-3");
        assert_eq!(Cell::Float(12.0).csv_text(), "12.0");
        assert_eq!(Cell::Fixed(4.1943, 3).csv_text(), "4.194");
        assert_eq!(Cell::Fixed(0.0, 3).csv_text(), "0.000");
        assert_eq!(Cell::text("a,b").csv_text(), "a,b");
        assert_eq!(Cell::Fixed(2.5, 1).number(), Some(2.5));
        assert_eq!(Cell::text("x").number(), None);
    }

    #[test]
    fn a_limited_table_keeps_the_first_rows_and_counts_the_rest() {
        let mut t = Table::new(&["n"]).limited(Some(2));
        for i in 0..5 {
            t.push(vec![Cell::Int(i)], RowEvents::None);
        }
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1].cells, vec![Cell::Int(1)]);
        assert_eq!(t.omitted, 3);
    }
}
