//! Loader for the CSV pages Nsight Compute prints (`ncu --import R.ncu-rep --csv --page raw`
//! or `--page details`), into the same model as a report ([`NcuReport`]).
//!
//! Both pages start with the fixed columns `ID, Process ID, Process Name, Host Name`, the NVTX
//! columns when the report has NVTX state, then `Kernel Name, Context, Stream, Block Size, Grid
//! Size, Device, CC`. The raw page follows with one column per metric (its id), a units row
//! under the header, and one row per kernel; the details page is long: one row per kernel ×
//! section × metric (`Section Name, Body Item Label, Metric Name, Metric Unit, Metric Value`,
//! then the rule columns), where a metric is named by its label (`DRAM Frequency`), not its id.
//! A file is told by its first line (`"ID","Process ID"`), not its name; gzipped files too.
//! Numbers are read with the separators the whole file uses ([`numbers`]).

pub mod numbers;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::ncu::{MetricId, NcuProcess, NcuReport, NcuWorkload};
use crate::trace::{Trace, TraceFormat};
use numbers::{NumberStyle, detect_style, parse_value};

/// The first cells of both pages.
const FIRST_CELLS: &[u8] = b"\"ID\",\"Process ID\"";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Is the file one of ncu's CSV pages (plain or gzipped)? Reads its first bytes.
pub fn is_ncu_csv(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 2];
    let gzipped = (&file).read_exact(&mut head).is_ok() && head == GZIP_MAGIC;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = Vec::with_capacity(32);
    let reader: Box<dyn Read> = if gzipped {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    if reader.take(32).read_to_end(&mut first).is_err() && first.is_empty() {
        return false;
    }
    let first = first.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(&first);
    first.starts_with(FIRST_CELLS)
}

/// Loads a page as a [`Trace`] with no timeline: the report in [`Trace::ncu`].
pub fn load(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    let report = load_report(path, control)?;
    Ok(Trace {
        path: path.to_path_buf(),
        format: TraceFormat::NsightCompute,
        warnings: report.warnings.clone(),
        ncu: Some(Arc::new(report)),
        ..Default::default()
    })
}

fn not_csv(path: &Path, detail: impl Into<String>) -> LoadError {
    LoadError::NotNcuReport {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// Reads every row of the file (the pages are a few MB: ncu prints one row per kernel).
fn read_rows(path: &Path) -> Result<Vec<csv::StringRecord>, LoadError> {
    let file = std::fs::File::open(path).map_err(|e| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut head = [0u8; 2];
    let gzipped = (&file).read_exact(&mut head).is_ok() && head == GZIP_MAGIC;
    let file = std::fs::File::open(path).map_err(|e| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    })?;
    let reader: Box<dyn Read> = if gzipped {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(reader);
    let mut rows = Vec::new();
    for row in csv.records() {
        let row = row.map_err(|e| not_csv(path, format!("its CSV cannot be read ({e})")))?;
        rows.push(row);
    }
    Ok(rows)
}

/// Where the fixed columns are.
struct Fixed {
    id: usize,
    pid: usize,
    process: usize,
    host: usize,
    kernel: usize,
    context: usize,
    stream: usize,
    block: usize,
    grid: usize,
    /// The last fixed column (`CC`): the page's own columns follow.
    cc: usize,
}

impl Fixed {
    fn find(header: &csv::StringRecord) -> Option<Fixed> {
        let col = |name: &str| header.iter().position(|h| h == name);
        Some(Fixed {
            id: col("ID")?,
            pid: col("Process ID")?,
            process: col("Process Name")?,
            host: col("Host Name")?,
            kernel: col("Kernel Name")?,
            context: col("Context")?,
            stream: col("Stream")?,
            block: col("Block Size")?,
            grid: col("Grid Size")?,
            cc: col("CC")?,
        })
    }
}

/// Whether a row is a kernel's: all the fixed columns and an integer ID (the details page
/// also holds small tables of its own, e.g. `GPU ID, GPU Name, NUMA ID by CPU Affinity`).
fn is_kernel_row(fixed: &Fixed, row: &csv::StringRecord) -> bool {
    row.len() > fixed.cc
        && row
            .get(fixed.id)
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// `(64, 1, 1)` as numbers.
fn shape(cell: &str) -> [u64; 3] {
    let mut out = [0u64; 3];
    let inner = cell.trim().trim_start_matches('(').trim_end_matches(')');
    for (slot, part) in out.iter_mut().zip(inner.split(',')) {
        *slot = part.trim().parse().unwrap_or(0);
    }
    out
}

/// A kernel's fixed columns as a workload (its metrics empty).
fn workload(report: &mut NcuReport, fixed: &Fixed, row: &csv::StringRecord) -> NcuWorkload {
    let cell = |i: usize| row.get(i).unwrap_or("").trim();
    let number = |i: usize| cell(i).replace([',', '.'], "").parse::<u64>().unwrap_or(0);
    let process = NcuProcess {
        pid: number(fixed.pid) as u32,
        host_name: cell(fixed.host).to_string(),
        executable: cell(fixed.process).to_string(),
    };
    let processes = &mut report.session.processes;
    let index = match processes.iter().position(|p| *p == process) {
        Some(i) => i,
        None => {
            processes.push(process);
            processes.len() - 1
        }
    };
    NcuWorkload {
        id: number(fixed.id) as u32,
        process: Some(index as u32),
        pid: processes[index].pid,
        demangled_name: cell(fixed.kernel).to_string(),
        context: number(fixed.context) as u32,
        stream: number(fixed.stream) as u32,
        grid: shape(cell(fixed.grid)),
        block: shape(cell(fixed.block)),
        ..Default::default()
    }
}

/// Loads a page.
pub fn load_report(path: &Path, control: &LoadControl) -> Result<NcuReport, LoadError> {
    (control.progress)(&LoadProgress {
        phase: "profiled kernels",
        fraction: 0.0,
    });
    let rows = read_rows(path)?;
    let Some(header) = rows.first() else {
        return Err(not_csv(path, "the CSV file is empty"));
    };
    let Some(fixed) = Fixed::find(header) else {
        return Err(not_csv(
            path,
            "a CSV file without ncu's columns (ID, Process ID, Process Name, Host Name, Kernel Name, Context, Stream, Block Size, Grid Size, CC)",
        ));
    };
    if control.is_cancelled() {
        return Err(LoadError::Cancelled);
    }
    let mut report = NcuReport::new(path.to_path_buf());
    let metric_at = |name: &str| header.iter().position(|h| h == name);
    let details = match (metric_at("Metric Name"), metric_at("Metric Value")) {
        (Some(name), Some(value)) => Some((name, value, metric_at("Metric Unit"))),
        _ => None,
    };
    // The raw page has a units row under the header: its fixed cells are empty.
    let units_row = details.is_none()
        && rows
            .get(1)
            .is_some_and(|r| r.get(fixed.id).is_some_and(str::is_empty));
    let body = if units_row { &rows[2..] } else { &rows[1..] };
    let style = match details {
        Some((_, value, _)) => detect_style(body.iter().filter_map(|r| r.get(value))),
        None => detect_style(body.iter().flat_map(|r| r.iter().skip(fixed.cc + 1))),
    };
    match details {
        Some((name, value, unit)) => {
            read_details(&mut report, &fixed, body, style, name, value, unit)
        }
        None => read_raw(
            &mut report,
            &fixed,
            header,
            rows.get(1).filter(|_| units_row),
            body,
            style,
        ),
    }
    if report.workloads.is_empty() {
        return Err(not_csv(path, "the CSV page lists no profiled kernels"));
    }
    Ok(report)
}

/// One row per kernel, one column per metric.
fn read_raw(
    report: &mut NcuReport,
    fixed: &Fixed,
    header: &csv::StringRecord,
    units: Option<&csv::StringRecord>,
    body: &[csv::StringRecord],
    style: NumberStyle,
) {
    let columns: Vec<(usize, MetricId)> = header
        .iter()
        .enumerate()
        .skip(fixed.cc + 1)
        .filter(|(_, name)| !name.is_empty())
        .map(|(i, name)| (i, report.intern_metric(name)))
        .collect();
    if let Some(units) = units {
        for &(i, id) in &columns {
            if let Some(u) = units.get(i).filter(|u| !u.is_empty()) {
                report.units.insert(id, u.to_string());
            }
        }
    }
    for row in body.iter().filter(|r| is_kernel_row(fixed, r)) {
        let mut w = workload(report, fixed, row);
        w.metrics = columns
            .iter()
            .filter_map(|&(i, id)| Some((id, parse_value(row.get(i)?, style)?)))
            .collect();
        w.metrics.sort_by_key(|(id, _)| *id);
        report.workloads.push(w);
    }
}

/// One row per kernel × section × metric; a kernel's rows are together, in ID order.
fn read_details(
    report: &mut NcuReport,
    fixed: &Fixed,
    body: &[csv::StringRecord],
    style: NumberStyle,
    name: usize,
    value: usize,
    unit: Option<usize>,
) {
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for row in body.iter().filter(|r| is_kernel_row(fixed, r)) {
        let id = row.get(fixed.id).unwrap_or("").to_string();
        let index = match by_id.get(&id) {
            Some(&i) => i,
            None => {
                let w = workload(report, fixed, row);
                report.workloads.push(w);
                by_id.insert(id, report.workloads.len() - 1);
                report.workloads.len() - 1
            }
        };
        let (Some(metric), Some(cell)) = (row.get(name), row.get(value)) else {
            continue;
        };
        if metric.is_empty() {
            continue; // a rule row
        }
        let Some(v) = parse_value(cell, style) else {
            continue;
        };
        let id = report.intern_metric(metric);
        if let Some(u) = unit.and_then(|u| row.get(u)).filter(|u| !u.is_empty()) {
            report.units.insert(id, u.to_string());
        }
        report.workloads[index].metrics.push((id, v));
    }
    for w in &mut report.workloads {
        w.metrics.sort_by_key(|(id, _)| *id);
        w.metrics.dedup_by_key(|(id, _)| *id);
    }
}
