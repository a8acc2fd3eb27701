//! `sightline.ncu(path)`: an Nsight Compute report's raw page as typed columns — a row per
//! profiled kernel, ncu's fixed columns, then a column per metric in base units, as
//! `sightline summary R --report ncu_raw --print-units base` prints it (the same columns, built by
//! `sightline::export::ncu_pages::raw`), with each metric's unit beside it.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use sightline::analysis::ncu::units::metric_unit;
use sightline::export::ncu_pages::names::KernelNames;
use sightline::export::ncu_pages::raw;
use sightline::trace::ncu::{MetricValue, NcuReport as Report};

use crate::columns::{self, Value};
use crate::{arg, capsule, error, function, handle, object, without_gil};

/// The capsule name of an Nsight Compute report.
const NAME: &std::ffi::CStr = c"sightline.NcuReport";

/// A loaded Nsight Compute report.
pub struct NcuReport {
    report: Arc<Report>,
}

/// Loads an Nsight Compute report (`.ncu-rep`, `.ncu-rep.gz`, `.ncu-repz`, ncu's CSV pages).
fn ncu(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let path: PathBuf = arg(args, 0)?;
    let report = without_gil(py, "loading", || {
        let trace = sightline::load::load_file(&path).map_err(error)?;
        match trace.ncu {
            Some(report) => Ok(NcuReport { report }),
            None => Err(error(format!(
                "{}: not an Nsight Compute report (sightline.open reads Nsight Systems and \
                 PyTorch traces)",
                path.display()
            ))),
        }
    })?;
    capsule(py, report, NAME)
}

/// A metric's value in base units: numbers as numbers, an empty instanced metric as ncu's
/// `no data`, others empty.
fn metric_value(v: &MetricValue) -> Value<'_> {
    match v {
        MetricValue::Str(s) => Value::Text(Cow::Borrowed(s.as_str())),
        MetricValue::F32(x) => Value::Float(f64::from(*x), Some(2)),
        MetricValue::F64(x) => Value::Float(*x, Some(2)),
        MetricValue::U32(x) => Value::Int(i64::from(*x)),
        MetricValue::U64(x) => i64::try_from(*x).map_or(Value::Float(*x as f64, None), Value::Int),
        MetricValue::List(items) if items.is_empty() => Value::Text(Cow::Borrowed("no data")),
        MetricValue::List(_) | MetricValue::Unknown => Value::Null,
    }
}

impl NcuReport {
    /// The raw page: `(columns, units)`, the units by column name (empty where ncu prints none).
    fn raw_columns(&self, py: Python<'_>) -> PyResult<(columns::PyColumns, Vec<(String, String)>)> {
        let (encoded, units) = without_gil(py, "the raw page", || {
            let report = &*self.report;
            let with_nvtx = report.workloads.iter().any(|w| !w.nvtx.is_empty());
            let metrics = raw::metric_columns(report);
            let fixed = raw::fixed_header(with_nvtx);
            let names = KernelNames::of(report);
            let fixed_cells: Vec<Vec<String>> = report
                .workloads
                .iter()
                .map(|w| raw::fixed_cells(report, &names, w, with_nvtx))
                .collect();
            let mut header = fixed.clone();
            header.extend(metrics.iter().map(|(_, n)| n.to_string()));
            let mut units: Vec<(String, String)> =
                fixed.iter().map(|n| (n.clone(), String::new())).collect();
            units.extend(
                metrics
                    .iter()
                    .map(|&(id, n)| (n.to_string(), metric_unit(report, id, n))),
            );
            let encoded = columns::encode_table(&header, report.workloads.len(), |r, c| {
                if let Some(&(id, _)) = c.checked_sub(fixed.len()).and_then(|m| metrics.get(m)) {
                    return report.workloads[r]
                        .metric(id)
                        .map_or(Value::Null, metric_value);
                }
                let text = fixed_cells[r][c].as_str();
                // ID, process, context and stream are numbers; the device too where known.
                match (fixed[c].as_str(), text.parse::<i64>()) {
                    ("ID" | "Process ID" | "Context" | "Stream" | "Device", Ok(v)) => Value::Int(v),
                    (_, _) if text.is_empty() => Value::Null,
                    _ => Value::Text(Cow::Borrowed(text)),
                }
            });
            Ok((encoded, units))
        })?;
        Ok((columns::to_py(py, encoded)?, units))
    }
}

fn raw(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let report: &NcuReport = handle(&item, NAME)?;
    object(args.py(), report.raw_columns(args.py())?)
}

/// How many kernels the report profiled.
fn kernels(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let report: &NcuReport = handle(&item, NAME)?;
    object(args.py(), report.report.workloads.len())
}

/// `ncu(path)`, `ncu_raw(r)`, `ncu_kernels(r)`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    function(module, c"ncu", ncu)?;
    function(module, c"ncu_raw", raw)?;
    function(module, c"ncu_kernels", kernels)
}
