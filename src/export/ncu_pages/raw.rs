//! ncu's raw page (`ncu --import R --csv --page raw`): one row per workload, the fixed columns
//! (ID, process, host, NVTX state when recorded, kernel name, context, stream, block and grid
//! size, device, compute capability) and then every metric in name order, under a row of units.

use std::io::{self, Write};

use super::format::{base_float, base_integer, scaled_float};
use super::names::KernelNames;
use super::{UnitMode, nvtx, write_row};
use crate::analysis::ncu::units::{metric_unit, scaled};
use crate::trace::ncu::{MetricId, MetricValue, NcuReport, NcuWorkload};

/// The metric columns: every metric some workload has but the names a section file uses to
/// refer to sets of metrics (`group:…`, `breakdown:…`, `regex:…`, the prefixes of the section
/// format), in byte order. Other prefixed names are metrics and print (`pmsampling:…`, the PM
/// sampling series of reports of ncu 2023.3–2025.1).
pub fn metric_columns(report: &NcuReport) -> Vec<(MetricId, &str)> {
    let mut present = vec![false; report.metric_names.len()];
    for w in &report.workloads {
        for (id, _) in &w.metrics {
            if let Some(p) = present.get_mut(*id as usize) {
                *p = true;
            }
        }
    }
    let mut cols: Vec<(MetricId, &str)> = report
        .metric_names
        .iter()
        .enumerate()
        .filter(|(i, n)| present[*i] && !is_section_reference(n))
        .map(|(i, n)| (i as MetricId, n.as_str()))
        .collect();
    cols.sort_by(|a, b| a.1.cmp(b.1));
    cols
}

/// A name of the section format's metric sets, not a metric.
pub fn is_section_reference(name: &str) -> bool {
    name.split_once(':')
        .is_some_and(|(prefix, _)| matches!(prefix, "group" | "breakdown" | "regex"))
}

/// How one column prints.
struct Column {
    id: MetricId,
    unit: String,
    factor: f64,
    max_is_zero: bool,
}

/// The largest number each metric (by id) holds over all workloads, in one pass.
fn column_maxima(report: &NcuReport) -> Vec<Option<f64>> {
    let mut max: Vec<Option<f64>> = vec![None; report.metric_names.len()];
    for w in &report.workloads {
        for (id, v) in &w.metrics {
            if let (Some(slot), Some(x)) = (max.get_mut(*id as usize), v.as_f64()) {
                *slot = Some(slot.map_or(x, |m: f64| m.max(x)));
            }
        }
    }
    max
}

fn column(
    report: &NcuReport,
    id: MetricId,
    name: &str,
    max: Option<f64>,
    mode: UnitMode,
) -> Column {
    let unit = metric_unit(report, id, name);
    let max = max.unwrap_or(0.0);
    let (unit, factor) = match mode {
        UnitMode::Auto if !unit.is_empty() => scaled(&unit, max),
        _ => (unit, 1.0),
    };
    Column {
        id,
        unit,
        factor,
        // ncu prints `0` throughout a column whose largest value is not positive: zero, a
        // negative counter (a hardware counter's wrapped difference) or NaN (public reports).
        max_is_zero: max.is_nan() || max <= 0.0,
    }
}

/// A value in base units (and any value of a metric with no unit).
pub fn base_value(v: &MetricValue) -> String {
    match v {
        MetricValue::Str(s) => s.clone(),
        MetricValue::F32(x) => base_float(f64::from(*x)),
        MetricValue::F64(x) => base_float(*x),
        MetricValue::U32(x) => base_integer(u64::from(*x)),
        MetricValue::U64(x) => base_integer(*x),
        MetricValue::List(items) if items.is_empty() => "no data".into(),
        MetricValue::List(_) | MetricValue::Unknown => String::new(),
    }
}

fn cell(col: &Column, v: &MetricValue, mode: UnitMode) -> String {
    if mode == UnitMode::Base || col.unit.is_empty() {
        return base_value(v);
    }
    let integer = |x: u64| {
        if col.factor == 1.0 {
            x.to_string()
        } else {
            scaled_float(x as f64, col.factor)
        }
    };
    let float = |x: f64| {
        if col.factor == 1.0 && col.max_is_zero {
            "0".to_string()
        } else {
            scaled_float(x, col.factor)
        }
    };
    match v {
        MetricValue::U32(x) => integer(u64::from(*x)),
        MetricValue::U64(x) => integer(*x),
        MetricValue::F32(x) => float(f64::from(*x)),
        MetricValue::F64(x) => float(*x),
        other => base_value(other),
    }
}

fn shape(v: [u64; 3]) -> String {
    format!("({}, {}, {})", v[0], v[1], v[2])
}

/// The device index and compute capability ncu prints for a workload.
pub fn device_and_cc(report: &NcuReport, w: &NcuWorkload) -> (String, String) {
    let int = |name: &str| report.number(w, name).map(|v| v as u64);
    let device = int("device__attribute_device_index")
        .map(|d| d.to_string())
        .unwrap_or_default();
    let cc = match (
        int("device__attribute_compute_capability_major"),
        int("device__attribute_compute_capability_minor"),
    ) {
        (Some(a), Some(b)) => format!("{a}.{b}"),
        _ => String::new(),
    };
    (device, cc)
}

/// The fixed columns' header, with the NVTX ones when the report recorded NVTX state.
pub fn fixed_header(with_nvtx: bool) -> Vec<String> {
    let mut h: Vec<&str> = vec!["ID", "Process ID", "Process Name", "Host Name"];
    if with_nvtx {
        h.extend([nvtx::PUSH_POP_HEADER, nvtx::START_END_HEADER]);
    }
    h.extend([
        "Kernel Name",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    ]);
    h.into_iter().map(String::from).collect()
}

/// A workload's fixed cells, as [`fixed_header`] names them.
pub fn fixed_cells(
    report: &NcuReport,
    names: &KernelNames,
    w: &NcuWorkload,
    with_nvtx: bool,
) -> Vec<String> {
    let process = report.process(w);
    let mut cells = vec![
        w.id.to_string(),
        w.pid.to_string(),
        process.map(|p| p.name().to_string()).unwrap_or_default(),
        process.map(|p| p.host_name.clone()).unwrap_or_default(),
    ];
    if with_nvtx {
        cells.push(nvtx::push_pop_cell(&w.nvtx));
        cells.push(nvtx::start_end_cell(&w.nvtx));
    }
    let (device, cc) = device_and_cc(report, w);
    cells.extend([
        names.get(w).to_string(),
        w.context.to_string(),
        w.stream.to_string(),
        shape(w.block),
        shape(w.grid),
        device,
        cc,
    ]);
    cells
}

/// Writes the raw page.
pub fn write(report: &NcuReport, mode: UnitMode, out: &mut dyn Write) -> io::Result<()> {
    let with_nvtx = report.workloads.iter().any(|w| w.nvtx.has_ranges());
    let metric_cols = metric_columns(report);
    let maxima = column_maxima(report);
    let cols: Vec<Column> = metric_cols
        .iter()
        .map(|&(id, name)| {
            let max = maxima.get(id as usize).copied().flatten();
            column(report, id, name, max, mode)
        })
        .collect();
    let fixed = fixed_header(with_nvtx);
    let mut header = fixed.clone();
    header.extend(metric_cols.iter().map(|(_, n)| n.to_string()));
    write_row(out, &header)?;
    let mut units = vec![String::new(); fixed.len()];
    units.extend(cols.iter().map(|c| c.unit.clone()));
    write_row(out, &units)?;
    let names = KernelNames::of(report);
    for w in &report.workloads {
        let mut row = fixed_cells(report, &names, w, with_nvtx);
        row.extend(
            cols.iter()
                .map(|c| w.metric(c.id).map(|v| cell(c, v, mode)).unwrap_or_default()),
        );
        write_row(out, &row)?;
    }
    Ok(())
}
