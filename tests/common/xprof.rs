//! Sightline's XLA reports against XProf's tool JSON (Google-Charts tables, `{"cols": [...],
//! "rows": [{"c": [{"v": …}]}]}`), cell by cell: `xla_kernel_stats` against `kernel_stats`,
//! `xla_op_stats` against the first table of `framework_op_stats`, the steps of
//! `analysis::xla_steps` against `overview_page`'s `stepTimeMs`. Used with the stored oracle
//! (`tests/xplane_load.rs`) and with XProf run live (`tests/xplane_xprof.rs`).

use serde_json::Value;
use sightline::analysis::{ReportInput, ReportOptions, StatsReport, Table};
use sightline::trace::Trace;

/// What a comparison counted: the cells compared and those that differ (`row N Column: ours !=
/// XProf's`); a row count or column that differs is one entry.
#[derive(Debug, Default)]
pub struct Compared {
    pub rows: usize,
    pub cells: usize,
    pub differ: Vec<String>,
}

fn compute(report: &dyn StatsReport, t: &Trace) -> Table {
    let filter = sightline::analysis::filter::Filter::all();
    report.compute(&ReportInput {
        trace: t,
        filter: &filter,
        options: &ReportOptions::default(),
        with_events: false,
        row_limit: None,
        nsys_format: Default::default(),
        sink: None,
    })
}

/// Compares `table` with the XProf table `theirs` over its first `columns` columns: strings and
/// booleans as text, numbers equal to within 1e-12, relative (serde_json's float parsing may be
/// an ulp off: `167.34629999999999` reads as 167.3463).
fn compare_table(table: &Table, theirs: &Value, columns: usize) -> Compared {
    let mut out = Compared::default();
    let labels: Vec<&str> = theirs["cols"].as_array().map_or(Vec::new(), |cols| {
        cols.iter()
            .take(columns)
            .map(|c| c["label"].as_str().unwrap_or(""))
            .collect()
    });
    if table.columns != labels {
        out.differ
            .push(format!("columns {:?} != {labels:?}", table.columns));
        return out;
    }
    let rows = theirs["rows"].as_array().cloned().unwrap_or_default();
    out.rows = rows.len();
    if table.rows.len() != rows.len() {
        out.differ
            .push(format!("{} rows != {} rows", table.rows.len(), rows.len()));
    }
    for (r, (mine, theirs)) in table.rows.iter().zip(&rows).enumerate() {
        for (c, cell) in mine.cells.iter().enumerate().take(columns) {
            let v = &theirs["c"][c]["v"];
            let equal = match v {
                Value::Bool(b) => cell.csv_text() == b.to_string(),
                Value::String(s) => cell.csv_text() == *s,
                Value::Number(n) => {
                    let expected = n.as_f64().unwrap_or(f64::NAN);
                    cell.number().is_some_and(|got| {
                        (got - expected).abs() <= 1e-12 * expected.abs().max(1.0)
                    })
                }
                _ => false,
            };
            out.cells += 1;
            if !equal {
                let got = cell
                    .number()
                    .map_or_else(|| cell.csv_text(), |n| n.to_string());
                out.differ
                    .push(format!("row {} {}: {got} != {v}", r + 1, labels[c]));
            }
        }
    }
    out
}

/// `xla_kernel_stats` of `t` against XProf's `kernel_stats`: every column, every row.
pub fn kernel_stats(t: &Trace, xprof: &Value) -> Compared {
    let table = compute(
        &sightline::analysis::reports::xla_kernel_stats::XlaKernelStats,
        t,
    );
    let columns = xprof["cols"].as_array().map_or(0, Vec::len);
    compare_table(&table, xprof, columns)
}

/// `xla_op_stats` of `t` against the first table of XProf's `framework_op_stats` (its first
/// nine columns; Device and Host rows with their IDLE rows).
pub fn framework_op_stats(t: &Trace, xprof: &Value) -> Compared {
    let table = compute(&sightline::analysis::reports::xla_op_stats::XlaOpStats, t);
    compare_table(&table, &xprof[0], 9)
}

/// The steps XProf lists (`overview_page`'s table with a `stepTimeMs` column: all but the first
/// and last) against the complete steps of `analysis::xla_steps`: the name `train#N` from the
/// step number, the step time (XProf writes ms with six decimals: whole nanoseconds).
pub fn overview_steps(t: &Trace, overview: &Value) -> Compared {
    let mut out = Compared::default();
    let steps = sightline::analysis::xla_steps::xla_steps(t);
    let listed: Vec<_> = steps.iter().filter(|s| s.complete).collect();
    let table = overview.as_array().and_then(|tables| {
        tables.iter().find(|t| {
            t["cols"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["id"] == "stepTimeMs"))
        })
    });
    let Some(table) = table else {
        out.differ
            .push("overview_page has no table with stepTimeMs".into());
        return out;
    };
    let column = table["cols"]
        .as_array()
        .and_then(|c| c.iter().position(|c| c["id"] == "stepTimeMs"))
        .unwrap_or(0);
    let rows = table["rows"].as_array().cloned().unwrap_or_default();
    out.rows = rows.len();
    if listed.len() != rows.len() {
        out.differ.push(format!(
            "{} complete steps != {} steps listed",
            listed.len(),
            rows.len()
        ));
    }
    for (step, row) in listed.iter().zip(&rows) {
        let number = row["c"][0]["v"].as_str().unwrap_or("");
        let family = step.name.split('#').next().unwrap_or("");
        out.cells += 2;
        if *step.name != *format!("{family}#{number}") {
            out.differ
                .push(format!("step {}: XProf's number {number}", step.name));
        }
        let xprof_ns = (row["c"][column]["v"].as_f64().unwrap_or(f64::NAN) * 1e6).round() as i64;
        if step.duration_ps() != xprof_ns * 1000 {
            out.differ.push(format!(
                "step {}: {} ps != XProf's {} ns",
                step.name,
                step.duration_ps(),
                xprof_ns
            ));
        }
    }
    out
}

/// The derived lines of XProf's `trace_viewer` tool data (`XLA Modules - from #N`, `XLA Ops -
/// from #N` of each `/device:GPU:N`) against the GPU-annotation ranges of the same domain: the
/// same number per line, each with the same name, start and duration (XProf writes µs with
/// three decimals; ours are whole ns).
pub fn derived_lines(t: &Trace, trace_viewer: &Value) -> Compared {
    use std::collections::HashMap;
    let events = trace_viewer["traceEvents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut line_names: HashMap<(i64, i64), String> = HashMap::new();
    for e in &events {
        if e["ph"] == "M" && e["name"] == "thread_name" {
            line_names.insert(
                (
                    e["pid"].as_i64().unwrap_or(-1),
                    e["tid"].as_i64().unwrap_or(-1),
                ),
                e["args"]["name"].as_str().unwrap_or("").to_string(),
            );
        }
    }
    // XProf's: (domain, name, start ns, duration ns), by start.
    let mut theirs: Vec<(String, String, i64, i64)> = Vec::new();
    for e in &events {
        if e["ph"] != "X" {
            continue;
        }
        let key = (
            e["pid"].as_i64().unwrap_or(-1),
            e["tid"].as_i64().unwrap_or(-1),
        );
        let Some(line) = line_names.get(&key) else {
            continue;
        };
        let domain = ["XLA Modules", "XLA Ops"]
            .into_iter()
            .find(|d| line.starts_with(&format!("{d} - from #")));
        if let Some(domain) = domain {
            let us = |v: &Value| (v.as_f64().unwrap_or(f64::NAN) * 1000.0).round() as i64;
            theirs.push((
                domain.to_string(),
                e["name"].as_str().unwrap_or("").to_string(),
                us(&e["ts"]),
                us(&e["dur"]),
            ));
        }
    }
    let n = &t.nvtx;
    let mut ours: Vec<(String, String, i64, i64)> = (0..n.spans.len())
        .filter(|&i| n.kind_of(i) == sightline::trace::RangeKind::GpuAnnotation)
        .map(|i| {
            (
                t.str(n.domain[i]).to_string(),
                t.str(n.spans.name[i]).to_string(),
                n.spans.start_ns[i],
                n.spans.end_ns[i] - n.spans.start_ns[i],
            )
        })
        .collect();
    theirs.sort_by(|a, b| (&a.0, a.2, &a.1).cmp(&(&b.0, b.2, &b.1)));
    ours.sort_by(|a, b| (&a.0, a.2, &a.1).cmp(&(&b.0, b.2, &b.1)));
    let mut differ = Vec::new();
    if theirs.len() != ours.len() {
        differ.push(format!("{} ranges, XProf {}", ours.len(), theirs.len()));
    }
    for (a, b) in ours.iter().zip(&theirs) {
        let close = a.0 == b.0 && a.1 == b.1 && (a.2 - b.2).abs() <= 1 && (a.3 - b.3).abs() <= 1;
        if !close && differ.len() < 20 {
            differ.push(format!("ours {a:?} XProf {b:?}"));
        }
    }
    Compared {
        rows: theirs.len(),
        cells: theirs.len() * 4,
        differ,
    }
}
