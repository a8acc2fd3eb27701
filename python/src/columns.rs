//! Tables handed to Python as typed columns that NumPy reads in place: integers and floats as
//! little-endian `bytearray`s (`numpy.frombuffer`, no Python object per value), names as the
//! codes and categories of a `pandas.Categorical`, and only a column that mixes numbers and text
//! as a list of Python values. `sightline/_frame.py` turns them into a DataFrame.
//!
//! Columns are encoded without the GIL ([`encode`]); only [`Encoded::into_py`] needs it.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyList};

/// One cell, borrowed from a report's [`sightline::analysis::Cell`] or a query's SQLite value.
pub enum Value<'a> {
    Null,
    Int(i64),
    /// A float; `Some(d)` when the command line prints it with `d` decimals.
    Float(f64, Option<u8>),
    Text(std::borrow::Cow<'a, str>),
}

/// A column ready to cross into Python.
pub enum Encoded {
    /// int64 values; `nulls[i]` where row `i` is empty (then a pandas nullable `Int64`).
    Int {
        values: Vec<i64>,
        nulls: Option<Vec<u8>>,
    },
    /// float64 values (an empty cell is NaN); the most decimals the command line prints.
    Float {
        values: Vec<f64>,
        decimals: Option<u8>,
    },
    /// A categorical: a code per row (-1: empty) into `categories`.
    Category {
        codes: Vec<i32>,
        categories: Vec<String>,
    },
    /// Numbers and text mixed: one Python value per row.
    Mixed(Vec<Owned>),
}

/// A cell of a [`Encoded::Mixed`] column.
pub enum Owned {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

/// Encodes column `column` of `rows` rows, reading each cell through `cell(row)`.
pub fn encode<'a>(rows: usize, cell: impl Fn(usize) -> Value<'a>) -> Encoded {
    let (mut ints, mut floats, mut texts, mut nulls) = (false, false, false, false);
    let mut decimals: Option<u8> = None;
    for r in 0..rows {
        match cell(r) {
            Value::Null => nulls = true,
            Value::Int(_) => ints = true,
            Value::Float(_, d) => {
                floats = true;
                decimals = decimals.max(d);
            }
            Value::Text(_) => texts = true,
        }
    }
    if texts && (ints || floats) {
        return Encoded::Mixed(
            (0..rows)
                .map(|r| match cell(r) {
                    Value::Null => Owned::Null,
                    Value::Int(v) => Owned::Int(v),
                    Value::Float(v, _) => Owned::Float(v),
                    Value::Text(t) => Owned::Text(t.into_owned()),
                })
                .collect(),
        );
    }
    if texts || rows == 0 || !(ints || floats) {
        // Text (an empty or all-empty column too: pandas shows it as empty names).
        let mut index: HashMap<std::borrow::Cow<'a, str>, i32> = HashMap::new();
        let mut categories = Vec::new();
        let codes = (0..rows)
            .map(|r| match cell(r) {
                Value::Text(t) => *index.entry(t).or_insert_with_key(|t| {
                    categories.push(t.to_string());
                    categories.len() as i32 - 1
                }),
                _ => -1,
            })
            .collect();
        return Encoded::Category { codes, categories };
    }
    if floats {
        let values = (0..rows)
            .map(|r| match cell(r) {
                Value::Int(v) => v as f64,
                Value::Float(v, _) => v,
                _ => f64::NAN,
            })
            .collect();
        return Encoded::Float { values, decimals };
    }
    let values = (0..rows)
        .map(|r| match cell(r) {
            Value::Int(v) => v,
            _ => 0,
        })
        .collect();
    let nulls = nulls.then(|| {
        (0..rows)
            .map(|r| u8::from(matches!(cell(r), Value::Null)))
            .collect()
    });
    Encoded::Int { values, nulls }
}

/// Encodes every column of a table of `rows` rows.
pub fn encode_table<'a>(
    columns: &[String],
    rows: usize,
    cell: impl Fn(usize, usize) -> Value<'a>,
) -> Vec<(String, Encoded)> {
    columns
        .iter()
        .enumerate()
        .map(|(c, name)| (name.clone(), encode(rows, |r| cell(r, c))))
        .collect()
}

/// A report's or rule's table (`sightline::analysis::Table`), typed as its cells are.
pub fn encode_report_table(table: &sightline::analysis::Table) -> Vec<(String, Encoded)> {
    use sightline::analysis::Cell;
    encode_table(&table.columns, table.rows.len(), |r, c| {
        match table.rows[r].cells.get(c) {
            None | Some(Cell::Null) => Value::Null,
            Some(Cell::Int(v)) => Value::Int(*v),
            Some(Cell::Float(v)) => Value::Float(*v, None),
            Some(Cell::Fixed(v, d)) => Value::Float(*v, Some(*d)),
            Some(Cell::Text(t)) => Value::Text(t.as_str()),
        }
    })
}

fn bytes_of<T: Copy, const N: usize>(values: &[T], to_le: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&to_le(v));
    }
    out
}

impl Encoded {
    /// `(kind, data, extra)`: ("int", int64 bytes, null mask bytes or None), ("float", float64
    /// bytes, decimals or None), ("category", int32 code bytes, categories), ("mixed", values,
    /// None).
    pub fn into_py(self, py: Python<'_>) -> PyResult<(&'static str, Py<PyAny>, Py<PyAny>)> {
        Ok(match self {
            Encoded::Int { values, nulls } => (
                "int",
                PyByteArray::new(py, &bytes_of(&values, i64::to_le_bytes))
                    .into_any()
                    .unbind(),
                match nulls {
                    Some(n) => PyByteArray::new(py, &n).into_any().unbind(),
                    None => py.None(),
                },
            ),
            Encoded::Float { values, decimals } => (
                "float",
                PyByteArray::new(py, &bytes_of(&values, f64::to_le_bytes))
                    .into_any()
                    .unbind(),
                decimals.into_pyobject(py)?.into_any().unbind(),
            ),
            Encoded::Category { codes, categories } => (
                "category",
                PyByteArray::new(py, &bytes_of(&codes, i32::to_le_bytes))
                    .into_any()
                    .unbind(),
                PyList::new(py, categories)?.into_any().unbind(),
            ),
            Encoded::Mixed(values) => {
                let list = PyList::empty(py);
                for v in values {
                    match v {
                        Owned::Null => list.append(py.None())?,
                        Owned::Int(i) => list.append(i)?,
                        Owned::Float(f) => list.append(f)?,
                        Owned::Text(t) => list.append(t)?,
                    }
                }
                ("mixed", list.into_any().unbind(), py.None())
            }
        })
    }
}

/// A table as Python receives it: a list of `(name, kind, data, extra)`.
pub type PyColumns = Vec<(String, &'static str, Py<PyAny>, Py<PyAny>)>;

/// Converts encoded columns for Python (with the GIL).
pub fn to_py(py: Python<'_>, columns: Vec<(String, Encoded)>) -> PyResult<PyColumns> {
    columns
        .into_iter()
        .map(|(name, e)| {
            let (kind, data, extra) = e.into_py(py)?;
            Ok((name, kind, data, extra))
        })
        .collect()
}

/// Columns built row by row from a query's values as SQLite hands them out: numbers kept as
/// numbers, each distinct text copied once per column (its code is its category), so no
/// `String` is made per cell. [`Self::finish`] types each column as [`encode`] would.
#[derive(Default)]
pub struct RowColumns {
    columns: Vec<Column>,
}

#[derive(Default)]
struct Column {
    cells: Vec<Cell>,
    texts: Vec<String>,
    index: HashMap<String, i32>,
}

#[derive(Clone, Copy)]
enum Cell {
    Null,
    Int(i64),
    Float(f64),
    Text(i32),
}

impl RowColumns {
    /// Adds a row (a value per column).
    pub fn push(&mut self, row: &[rusqlite::types::ValueRef<'_>]) {
        use rusqlite::types::ValueRef;
        if self.columns.len() < row.len() {
            self.columns.resize_with(row.len(), Column::default);
        }
        for (column, value) in self.columns.iter_mut().zip(row) {
            let cell = match *value {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(i) => Cell::Int(i),
                ValueRef::Real(f) => Cell::Float(f),
                ValueRef::Text(t) => Cell::Text(column.intern(&String::from_utf8_lossy(t))),
                ValueRef::Blob(b) => {
                    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    Cell::Text(column.intern(&hex))
                }
            };
            column.cells.push(cell);
        }
    }

    /// The columns `names`, typed: ints (nullable), floats, categories, or mixed values.
    pub fn finish(self, names: Vec<String>) -> Vec<(String, Encoded)> {
        let mut columns = self.columns.into_iter();
        names
            .into_iter()
            .map(|name| (name, columns.next().unwrap_or_default().finish()))
            .collect()
    }
}

impl Column {
    fn intern(&mut self, text: &str) -> i32 {
        if let Some(&code) = self.index.get(text) {
            return code;
        }
        let code = self.texts.len() as i32;
        self.texts.push(text.to_string());
        self.index.insert(text.to_string(), code);
        code
    }

    /// As [`encode`] types a column.
    fn finish(self) -> Encoded {
        let (mut ints, mut floats, mut nulls) = (false, false, false);
        for c in &self.cells {
            match c {
                Cell::Null => nulls = true,
                Cell::Int(_) => ints = true,
                Cell::Float(_) => floats = true,
                Cell::Text(_) => {}
            }
        }
        let texts = !self.texts.is_empty();
        let cells = self.cells;
        if texts && (ints || floats) {
            let names = self.texts;
            return Encoded::Mixed(
                cells
                    .iter()
                    .map(|c| match *c {
                        Cell::Null => Owned::Null,
                        Cell::Int(v) => Owned::Int(v),
                        Cell::Float(v) => Owned::Float(v),
                        Cell::Text(t) => Owned::Text(names[t as usize].clone()),
                    })
                    .collect(),
            );
        }
        if texts || cells.is_empty() || !(ints || floats) {
            let codes = cells
                .iter()
                .map(|c| match *c {
                    Cell::Text(t) => t,
                    _ => -1,
                })
                .collect();
            return Encoded::Category {
                codes,
                categories: self.texts,
            };
        }
        if floats {
            let values = cells
                .iter()
                .map(|c| match *c {
                    Cell::Int(v) => v as f64,
                    Cell::Float(v) => v,
                    _ => f64::NAN,
                })
                .collect();
            return Encoded::Float {
                values,
                decimals: None,
            };
        }
        let values = cells
            .iter()
            .map(|c| match *c {
                Cell::Int(v) => v,
                _ => 0,
            })
            .collect();
        let nulls = nulls.then(|| {
            cells
                .iter()
                .map(|c| u8::from(matches!(c, Cell::Null)))
                .collect()
        });
        Encoded::Int { values, nulls }
    }
}
