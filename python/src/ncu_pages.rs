//! An Nsight Compute report's details, summary and Source pages as typed columns.
//!
//! The details and summary pages are presentation pages: ncu prints each value rounded and
//! scaled to its unit. They are written by the command line's own writers
//! (`sightline::export::ncu_pages`, what `summary R --report ncu_details --format csv` prints)
//! into memory and read back here, a cell a value: a number as ncu prints it (`1,024`,
//! `11.89`) becomes an int or a float, other text stays text. Lines of another shape (the NUMA
//! table, the NVLink note) are handed back beside the table.
//!
//! The Source page is built from the report's own per-instruction values
//! (`sightline::load::ncu_rep::source_inputs`, `sightline::analysis::ncu::source::columns`):
//! a row per SASS instruction of each kernel asked for, at full precision.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use pyo3::prelude::*;

use sightline::analysis::ncu::source::{
    ColumnKind, KernelSelection, columns as source_columns, source_metric_names,
};
use sightline::export::ncu_pages::{self, NcuPage, UnitMode};
use sightline::load::ncu_rep::source_inputs;
use sightline::trace::ncu::NcuReport;

use crate::columns::{self, Encoded, Value};
use crate::error;

/// A page's table and the lines of another shape, as written.
pub type Page = (Vec<(String, Encoded)>, Vec<Vec<String>>);

/// `1,024`, `-0.5`, `11.89` as ncu prints numbers (thousands separated by `,`).
fn number(text: &str) -> Option<Value<'static>> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let groups: Vec<&str> = whole.split(',').collect();
    let grouped = groups.len() == 1
        || (groups[0].len() <= 3
            && !groups[0].is_empty()
            && groups[1..].iter().all(|g| g.len() == 3));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !grouped || !groups.iter().all(|g| all_digits(g)) || fraction.is_some_and(|f| !all_digits(f))
    {
        return None;
    }
    let plain = text.replace(',', "");
    match fraction {
        None => plain.parse::<i64>().ok().map(Value::Int),
        Some(f) => plain
            .parse::<f64>()
            .ok()
            .map(|v| Value::Float(v, u8::try_from(f.len()).ok())),
    }
}

/// `page` of `report` (the details page only for `ids` where given), written as the command
/// line writes it, read back as typed columns; a row that ends early (ncu's metric rows stop
/// before the rule columns) is empty in the columns it lacks.
pub fn page(
    report: &NcuReport,
    page: NcuPage,
    mode: UnitMode,
    ids: Option<&[u32]>,
) -> Result<Page, PyErr> {
    let mut written = Vec::new();
    ncu_pages::write_page(report, page, mode, ids, &mut written).map_err(error)?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(written.as_slice());
    // A row of the table has at least the kernel's fixed columns (a metric row ends before the
    // rule columns); a NUMA table's rows and the NVLink note are shorter.
    let with_nvtx = report.workloads.iter().any(|w| !w.nvtx.is_empty());
    let fixed = match page {
        NcuPage::Details | NcuPage::Raw => ncu_pages::raw::fixed_header(with_nvtx).len(),
        NcuPage::Summary => 1,
    };
    let mut header: Option<Vec<String>> = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut other = Vec::new();
    for record in reader.records() {
        let record: Vec<String> = record.map_err(error)?.iter().map(str::to_string).collect();
        match &header {
            None => header = Some(record),
            Some(h) if (fixed..=h.len()).contains(&record.len()) => rows.push(record),
            Some(_) => other.push(record),
        }
    }
    let header = header.unwrap_or_default();
    let encoded = columns::encode_table(&header, rows.len(), |r, c| {
        let text = rows[r].get(c).map_or("", String::as_str);
        if text.is_empty() {
            return Value::Null;
        }
        number(text).unwrap_or(Value::Text(Cow::Borrowed(text)))
    });
    Ok((encoded, other))
}

/// The Source page of the kernels `selection` picks: `ID`, `Kernel Name`, `Address`, `Source`,
/// then every per-instruction column any of them has (in the order first met; empty where a
/// kernel lacks it). Numbers at full precision; the memory columns as ncu names their values.
pub fn source(
    path: &Path,
    report: &NcuReport,
    selection: &KernelSelection,
) -> Result<Vec<(String, Encoded)>, PyErr> {
    let ids = selection.select(report);
    if ids.is_empty() {
        return Err(error("no kernel of the report matches kernel / launch"));
    }
    let inputs = source_inputs(path, report, &ids, &source_metric_names(report), true)
        .map_err(|e| error(format!("{}: reading the source data: {e}", path.display())))?;
    let mut names: Vec<String> = ["ID", "Kernel Name", "Address", "Source"]
        .map(String::from)
        .to_vec();
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<Vec<Value<'_>>> = Vec::new();
    for &id in &ids {
        let (Some(workload), Some(kernel)) =
            (report.workloads.get(id as usize), inputs.data.kernel(id))
        else {
            continue;
        };
        let Some(sass) = kernel
            .module
            .and_then(|r| inputs.sass.get(&(r, workload.mangled_name.clone())))
        else {
            continue;
        };
        let columns = source_columns(report, workload, kernel);
        let places: Vec<usize> = columns
            .iter()
            .map(|c| {
                *at.entry(c.label.clone()).or_insert_with(|| {
                    names.push(c.label.clone());
                    names.len() - 1
                })
            })
            .collect();
        for instruction in sass {
            let pc = instruction.address;
            let mut row = vec![
                Value::Int(i64::from(workload.id)),
                Value::Text(Cow::Owned(workload.display_name().to_string())),
                i64::try_from(pc).map_or(Value::Float(pc as f64, None), Value::Int),
                Value::Text(Cow::Owned(instruction.text.clone())),
            ];
            row.resize_with(names.len(), || Value::Null);
            for (c, &place) in columns.iter().zip(&places) {
                row[place] = match c.kind {
                    ColumnKind::Number => {
                        let v = c.value(pc).unwrap_or(0.0);
                        if v.fract() == 0.0 && v.abs() < 1e18 {
                            Value::Int(v as i64)
                        } else {
                            Value::Float(v, None)
                        }
                    }
                    _ => {
                        let mut text = String::new();
                        c.write_cell(pc, &mut text);
                        if text.is_empty() {
                            Value::Null
                        } else {
                            Value::Text(Cow::Owned(text))
                        }
                    }
                };
            }
            rows.push(row);
        }
    }
    if rows.is_empty() && !inputs.warnings.is_empty() {
        return Err(error(inputs.warnings.join("; ")));
    }
    Ok(columns::encode_table(
        &names,
        rows.len(),
        |r, c| match rows[r].get(c) {
            Some(Value::Int(v)) => Value::Int(*v),
            Some(Value::Float(v, d)) => Value::Float(*v, *d),
            Some(Value::Text(t)) => Value::Text(Cow::Borrowed(t.as_ref())),
            Some(Value::Null) | None => Value::Null,
        },
    ))
}
