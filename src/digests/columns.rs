//! A digest table as one Parquet file: named columns of 64-bit integers, doubles or UTF-8 text,
//! each nullable, written with Parquet's low-level column writer (no Arrow) and read back whole.
//! Integers are delta-encoded (times in ns are sorted or close), text is dictionary-encoded; no
//! codec, so any Parquet reader (pyarrow, Polars, DuckDB, Spark) reads the files as they are.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::reader::ColumnReader;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

/// One column's values, `None` for a null.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table: columns of equal length, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Columns(pub Vec<(String, Values)>);

impl Columns {
    pub fn push(&mut self, name: &str, values: Values) {
        self.0.push((name.to_string(), values));
    }

    /// Rows (the first column's length; 0 without columns).
    pub fn rows(&self) -> usize {
        self.0.first().map_or(0, |(_, v)| v.len())
    }

    fn get(&self, name: &str) -> Result<&Values> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| anyhow!("no column '{name}'"))
    }

    /// Column `name` as integers (nulls stay `None`).
    pub fn ints(&self, name: &str) -> Result<&[Option<i64>]> {
        match self.get(name)? {
            Values::Int(v) => Ok(v),
            _ => bail!("column '{name}' does not hold integers"),
        }
    }

    /// Column `name` as texts.
    pub fn texts(&self, name: &str) -> Result<&[Option<String>]> {
        match self.get(name)? {
            Values::Text(v) => Ok(v),
            _ => bail!("column '{name}' does not hold text"),
        }
    }

    /// Row `row` of integer column `name`, required to be there.
    pub fn int(&self, name: &str, row: usize) -> Result<i64> {
        self.ints(name)?
            .get(row)
            .copied()
            .flatten()
            .ok_or_else(|| anyhow!("column '{name}' has no value in row {row}"))
    }

    /// Row `row` of text column `name`, required to be there.
    pub fn text(&self, name: &str, row: usize) -> Result<&str> {
        self.texts(name)?
            .get(row)
            .and_then(|t| t.as_deref())
            .ok_or_else(|| anyhow!("column '{name}' has no value in row {row}"))
    }
}

/// The Parquet schema of `columns`: every column optional.
fn schema(columns: &Columns) -> Result<Type> {
    let fields = columns
        .0
        .iter()
        .map(|(name, values)| {
            let (physical, logical) = match values {
                Values::Int(_) => (Physical::INT64, None),
                Values::Float(_) => (Physical::DOUBLE, None),
                Values::Text(_) => (
                    Physical::BYTE_ARRAY,
                    Some(parquet::basic::LogicalType::String),
                ),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(parquet::basic::Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    Ok(Type::group_type_builder("digest")
        .with_fields(fields)
        .build()?)
}

fn properties(columns: &Columns) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_created_by(format!("sightline {}", env!("CARGO_PKG_VERSION")))
        .set_dictionary_enabled(false);
    for (name, values) in &columns.0 {
        let path = ColumnPath::from(name.as_str());
        b = match values {
            Values::Int(_) => b.set_column_encoding(path, Encoding::DELTA_BINARY_PACKED),
            Values::Float(_) => b,
            Values::Text(_) => b.set_column_dictionary_enabled(path, true),
        };
    }
    b.build()
}

/// Definition levels and the non-null values of `v`.
fn split<T: Clone>(v: &[Option<T>]) -> (Vec<i16>, Vec<T>) {
    let levels = v.iter().map(|x| i16::from(x.is_some())).collect();
    let values = v.iter().flatten().cloned().collect();
    (levels, values)
}

/// `columns` as one Parquet file written to `out`.
pub fn write<W: Write + Send>(columns: &Columns, out: W) -> Result<()> {
    let rows = columns.rows();
    if let Some((name, _)) = columns.0.iter().find(|(_, v)| v.len() != rows) {
        bail!("column '{name}' is not {rows} rows long");
    }
    let mut writer = SerializedFileWriter::new(
        out,
        Arc::new(schema(columns)?),
        Arc::new(properties(columns)),
    )?;
    let mut group = writer.next_row_group()?;
    let mut given = columns.0.iter();
    while let Some(mut column) = group.next_column()? {
        let (_, values) = given
            .next()
            .ok_or_else(|| anyhow!("more columns in the schema than given"))?;
        match (column.untyped(), values) {
            (ColumnWriter::Int64ColumnWriter(w), Values::Int(v)) => {
                let (levels, values) = split(v);
                w.write_batch(&values, Some(&levels), None)?;
            }
            (ColumnWriter::DoubleColumnWriter(w), Values::Float(v)) => {
                let (levels, values) = split(v);
                w.write_batch(&values, Some(&levels), None)?;
            }
            (ColumnWriter::ByteArrayColumnWriter(w), Values::Text(v)) => {
                let levels: Vec<i16> = v.iter().map(|x| i16::from(x.is_some())).collect();
                let values: Vec<ByteArray> = v
                    .iter()
                    .flatten()
                    .map(|s| ByteArray::from(s.as_str()))
                    .collect();
                w.write_batch(&values, Some(&levels), None)?;
            }
            _ => bail!("a column's writer does not match its values"),
        }
        column.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(())
}

/// The values read with `levels` (1: present) back into options.
fn join<T>(levels: &[i16], values: Vec<T>) -> Vec<Option<T>> {
    let mut values = values.into_iter();
    levels
        .iter()
        .map(|&l| if l > 0 { values.next() } else { None })
        .collect()
}

const BATCH: usize = 64 * 1024;

/// Reads a whole column from every row group.
fn read_column(reader: &SerializedFileReader<Bytes>, i: usize) -> Result<Values> {
    let physical = reader.metadata().file_metadata().schema_descr().column(i);
    let mut out = match physical.physical_type() {
        Physical::INT64 => Values::Int(Vec::new()),
        Physical::DOUBLE => Values::Float(Vec::new()),
        Physical::BYTE_ARRAY => Values::Text(Vec::new()),
        other => bail!("column {} is {other}, not a digest column", physical.name()),
    };
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g)?;
        let rows = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
        let column = group.get_column_reader(i)?;
        let mut levels: Vec<i16> = Vec::with_capacity(rows);
        match (column, &mut out) {
            (ColumnReader::Int64ColumnReader(mut r), Values::Int(all)) => {
                let mut values = Vec::with_capacity(rows);
                while r
                    .read_records(BATCH, Some(&mut levels), None, &mut values)?
                    .0
                    > 0
                {}
                all.extend(join(&levels, values));
            }
            (ColumnReader::DoubleColumnReader(mut r), Values::Float(all)) => {
                let mut values = Vec::with_capacity(rows);
                while r
                    .read_records(BATCH, Some(&mut levels), None, &mut values)?
                    .0
                    > 0
                {}
                all.extend(join(&levels, values));
            }
            (ColumnReader::ByteArrayColumnReader(mut r), Values::Text(all)) => {
                let mut values: Vec<ByteArray> = Vec::with_capacity(rows);
                while r
                    .read_records(BATCH, Some(&mut levels), None, &mut values)?
                    .0
                    > 0
                {}
                let texts = values
                    .iter()
                    .map(|b| b.as_utf8().map(str::to_string))
                    .collect::<parquet::errors::Result<Vec<String>>>()?;
                all.extend(join(&levels, texts));
            }
            _ => bail!("column {} changes type between row groups", physical.name()),
        }
    }
    Ok(out)
}

/// A Parquet file's columns, read whole.
pub fn read(bytes: Bytes) -> Result<Columns> {
    let reader = SerializedFileReader::new(bytes)?;
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let columns = (0..descr.num_columns())
        .map(|i| Ok((descr.column(i).name().to_string(), read_column(&reader, i)?)))
        .collect::<Result<Vec<_>>>()?;
    Ok(Columns(columns))
}

/// [`read`] of the file at `path`.
pub fn read_file(path: &std::path::Path) -> Result<Columns> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    read(Bytes::from(bytes)).with_context(|| format!("{} is not a digest table", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_column_round_trips_with_its_nulls() -> Result<()> {
        let mut c = Columns::default();
        c.push(
            "t",
            Values::Int(vec![Some(5), None, Some(i64::MIN), Some(i64::MAX)]),
        );
        c.push(
            "x",
            Values::Float(vec![None, Some(0.25), Some(-1e300), None]),
        );
        c.push(
            "name",
            Values::Text(vec![
                Some("a".into()),
                Some("é".into()),
                None,
                Some(String::new()),
            ]),
        );
        let mut file = Vec::new();
        write(&c, &mut file)?;
        assert_eq!(read(Bytes::from(file))?, c);
        Ok(())
    }

    #[test]
    fn an_empty_table_keeps_its_columns() -> Result<()> {
        let mut c = Columns::default();
        c.push("start_ns", Values::Int(Vec::new()));
        let mut file = Vec::new();
        write(&c, &mut file)?;
        let back = read(Bytes::from(file))?;
        assert_eq!(back, c);
        assert_eq!(back.rows(), 0);
        Ok(())
    }

    #[test]
    fn a_file_that_is_not_parquet_is_refused() {
        assert!(read(Bytes::from_static(b"not parquet at all")).is_err());
    }
}
