//! `sightline.ncu(path)`: an Nsight Compute report's raw page as typed columns — a row per
//! profiled kernel, ncu's fixed columns, then a column per metric in base units, as
//! `sightline summary R --report ncu_raw --print-units base` prints it (the same columns, built by
//! `sightline::export::ncu_pages::raw`), with each metric's unit beside it.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use sightline::analysis::ncu::source::KernelSelection;
use sightline::analysis::ncu::units::metric_unit;
use sightline::export::ncu_pages::names::KernelNames;
use sightline::export::ncu_pages::raw;
use sightline::export::ncu_pages::{NcuPage, UnitMode};
use sightline::trace::ncu::{MetricValue, NcuReport as Report};

use crate::columns::{self, Value};
use crate::{arg, capsule, error, function, handle, object, without_gil};

/// The capsule name of an Nsight Compute report.
const NAME: &std::ffi::CStr = c"sightline.NcuReport";

/// A loaded Nsight Compute report.
pub struct NcuReport {
    pub(crate) report: Arc<Report>,
    /// Its file, read again for the Source page's per-instruction data.
    path: PathBuf,
}

/// Loads an Nsight Compute report (`.ncu-rep`, `.ncu-rep.gz`, `.ncu-repz`, ncu's CSV pages).
fn ncu(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let path: PathBuf = arg(args, 0)?;
    let report = without_gil(py, "loading", || {
        let trace = sightline::load::load_file(&path).map_err(error)?;
        match trace.ncu {
            Some(report) => Ok(NcuReport {
                report,
                path: path.clone(),
            }),
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

/// `ncu_page(r, page, print_units, kernel, launch)`: the details or summary page as ncu prints
/// it (`(columns, other lines)`); `kernel`/`launch` pick the details page's kernels.
fn page(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let item = args.get_item(0)?;
    let r: &NcuReport = handle(&item, NAME)?;
    let name: String = arg(args, 1)?;
    let mode = UnitMode::parse(&arg::<String>(args, 2)?).map_err(error)?;
    let kernel: Option<String> = arg(args, 3)?;
    let launch: Option<usize> = arg(args, 4)?;
    let page =
        NcuPage::from_report_name(&name).ok_or_else(|| error(format!("no ncu page '{name}'")))?;
    let filtered = kernel.is_some() || launch.is_some();
    if filtered && page != NcuPage::Details {
        return Err(error(
            "kernel and launch pick the kernels of the details and source pages",
        ));
    }
    let selection = KernelSelection::parse(kernel.as_deref(), launch).map_err(error)?;
    let (encoded, other) = without_gil(py, "the page", || {
        let ids = filtered.then(|| selection.select(&r.report));
        crate::ncu_pages::page(&r.report, page, mode, ids.as_deref())
    })?;
    object(py, (columns::to_py(py, encoded)?, other))
}

/// `ncu_source(r, kernel, launch)`: the Source page's SASS rows of the kernels picked.
fn source(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let item = args.get_item(0)?;
    let r: &NcuReport = handle(&item, NAME)?;
    let kernel: Option<String> = arg(args, 1)?;
    let launch: Option<usize> = arg(args, 2)?;
    let selection = KernelSelection::parse(kernel.as_deref(), launch).map_err(error)?;
    let encoded = without_gil(py, "the source page", || {
        crate::ncu_pages::source(&r.path, &r.report, &selection)
    })?;
    object(py, columns::to_py(py, encoded)?)
}

/// `ncu_join(t, r)`: each profiled kernel of `r` with the timeline kernel of the trace `t` it
/// measured, as `summary TRACE --ncu R --report ncu_join --format csv` prints them (`Matched`
/// as a bool); with how many matched and the join's notes.
fn join(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let item = args.get_item(0)?;
    let t: &crate::trace::Trace = handle(&item, crate::trace::NAME)?;
    let item = args.get_item(1)?;
    let r: &NcuReport = handle(&item, NAME)?;
    let (encoded, matched, notes) = without_gil(py, "the join", || {
        let (trace, report) = (&*t.model, &*r.report);
        let join = sightline::analysis::ncu::join(trace, report);
        let rows = sightline::cli::ncu_join_rows(trace, report, &join);
        let header: Vec<String> = sightline::cli::NCU_JOIN_COLUMNS
            .iter()
            .map(|c| c.to_string())
            .collect();
        let encoded = columns::encode_table(&header, rows.len(), |r, c| {
            let text = rows[r][c].as_str();
            match (c, text.parse::<i64>()) {
                (_, _) if text.is_empty() => Value::Null,
                (1, _) => Value::Text(Cow::Borrowed(text)),
                // Matched: yes / no.
                (2, _) => Value::Int(i64::from(text == "yes")),
                (_, Ok(v)) => Value::Int(v),
                (_, Err(_)) => Value::Text(Cow::Borrowed(text)),
            }
        });
        Ok((encoded, join.matched_count(), join.notes.clone()))
    })?;
    object(py, (columns::to_py(py, encoded)?, matched, notes))
}

/// `ncu(path)`, `ncu_raw(r)`, `ncu_kernels(r)`, `ncu_page(…)`, `ncu_source(…)`, `ncu_join(t, r)`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    function(module, c"ncu", ncu)?;
    function(module, c"ncu_page", page)?;
    function(module, c"ncu_source", source)?;
    function(module, c"ncu_join", join)?;
    function(module, c"ncu_raw", raw)?;
    function(module, c"ncu_kernels", kernels)
}
