//! The `torch_ops` report against PyTorch's own `prof.key_averages()`, saved by PyTorch 2.11 in
//! the same run as each trace (`../shared/traces/pytorch/golden/<trace>/key_averages.csv` and
//! `key_averages_shapes.csv`), and the command line's `summary --report torch_ops`.
//!
//! The golden CSVs have no device column: a key there twice is a CPU row and a CUDA row (a
//! `record_function` range and its GPU side). Counts and bytes must be equal; times (µs there, ns
//! here) within max(2 µs, 0.5 %).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sightline::analysis::reports;
use sightline::analysis::{Cell, Filter, NsysFormat, ReportInput, Table};

const HEADER: &str = "Name,Device,Calls,Self CPU (ns),CPU Total (ns),Self CUDA (ns),CUDA Total (ns),\
Self CPU Mem (B),CPU Mem (B),Self CUDA Mem (B),CUDA Mem (B)";

/// One row, golden or ours: times in ns, memory in bytes.
#[derive(Debug, Clone)]
struct Row {
    key: String,
    shapes: Option<String>,
    /// Ours only: "CPU" or "CUDA".
    device: Option<String>,
    count: i64,
    /// Self CPU, CPU total, self CUDA, CUDA total.
    times_ns: [f64; 4],
    /// Self CPU, CPU, self CUDA, CUDA memory.
    bytes: [i64; 4],
}

impl Row {
    fn differences(&self, ours: &Row) -> Vec<String> {
        let mut out = Vec::new();
        if self.count != ours.count {
            out.push(format!("count {} ≠ {}", self.count, ours.count));
        }
        const TIMES: [&str; 4] = ["self CPU", "CPU total", "self CUDA", "CUDA total"];
        for (k, name) in TIMES.iter().enumerate() {
            let (want, got) = (self.times_ns[k], ours.times_ns[k]);
            if (want - got).abs() > (want.abs() * 0.005).max(2000.0) {
                out.push(format!("{name} {want:.0} ns ≠ {got:.0} ns"));
            }
        }
        const BYTES: [&str; 4] = ["self CPU mem", "CPU mem", "self CUDA mem", "CUDA mem"];
        for (k, name) in BYTES.iter().enumerate() {
            if self.bytes[k] != ours.bytes[k] {
                out.push(format!("{name} {} ≠ {}", self.bytes[k], ours.bytes[k]));
            }
        }
        // A golden row with CPU time is a CPU row.
        if self.times_ns[1] > 0.0 && ours.device.as_deref() != Some("CPU") {
            out.push(format!("device {:?} for a row with CPU time", ours.device));
        }
        out
    }
}

/// PyTorch's `key_averages()` as the golden CSV holds it.
fn golden_rows(path: &Path) -> Vec<Row> {
    let mut reader = csv::Reader::from_path(path).expect("read golden CSV");
    let headers = reader.headers().expect("golden header").clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{}: no column {name}", path.display()))
    };
    let time_cols = [
        col("self_cpu_time_total"),
        col("cpu_time_total"),
        col("self_device_time_total"),
        col("device_time_total"),
    ];
    let byte_cols = [
        col("self_cpu_memory_usage"),
        col("cpu_memory_usage"),
        col("self_device_memory_usage"),
        col("device_memory_usage"),
    ];
    let (key, count) = (col("key"), col("count"));
    let shapes = headers.iter().position(|h| h == "input_shapes");
    reader
        .records()
        .map(|r| {
            let r = r.expect("golden row");
            Row {
                key: r[key].to_string(),
                shapes: shapes.map(|c| r[c].to_string()),
                device: None,
                count: r[count].parse().expect("count"),
                times_ns: time_cols.map(|c| r[c].parse::<f64>().expect("time") * 1000.0),
                bytes: byte_cols.map(|c| r[c].parse().expect("bytes")),
            }
        })
        .collect()
}

/// Our report's rows.
fn our_rows(table: &Table) -> Vec<Row> {
    let col = |name: &str| table.column(name).expect("column");
    let int = |cell: &Cell| match cell {
        Cell::Int(v) => *v,
        other => panic!("not an integer: {other:?}"),
    };
    let shapes = table.column("Input Shapes");
    table
        .rows
        .iter()
        .map(|r| {
            let c = &r.cells;
            Row {
                key: c[col("Name")].csv_text(),
                shapes: shapes.map(|s| c[s].csv_text()),
                device: Some(c[col("Device")].csv_text()),
                count: int(&c[col("Calls")]),
                times_ns: [
                    "Self CPU (ns)",
                    "CPU Total (ns)",
                    "Self CUDA (ns)",
                    "CUDA Total (ns)",
                ]
                .map(|n| int(&c[col(n)]) as f64),
                bytes: [
                    "Self CPU Mem (B)",
                    "CPU Mem (B)",
                    "Self CUDA Mem (B)",
                    "CUDA Mem (B)",
                ]
                .map(|n| int(&c[col(n)])),
            }
        })
        .collect()
}

/// Pairs golden rows with ours by (key, shapes); within a key, each golden row takes the first
/// unused row of ours that agrees. Returns the failures.
fn compare(golden: &[Row], ours: &[Row]) -> Vec<String> {
    let mut by_key: HashMap<(&str, Option<&str>), Vec<usize>> = HashMap::new();
    for (i, r) in ours.iter().enumerate() {
        by_key
            .entry((r.key.as_str(), r.shapes.as_deref()))
            .or_default()
            .push(i);
    }
    let mut used = vec![false; ours.len()];
    let mut failures = Vec::new();
    for g in golden {
        let free: Vec<usize> = by_key
            .get(&(g.key.as_str(), g.shapes.as_deref()))
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .copied()
            .filter(|&i| !used[i])
            .collect();
        let agreeing = free.iter().find(|&&i| g.differences(&ours[i]).is_empty());
        match agreeing.or(free.first()) {
            None => failures.push(format!("missing row {:?} {:?}", g.key, g.shapes)),
            Some(&i) => {
                used[i] = true;
                let differences = g.differences(&ours[i]);
                if !differences.is_empty() {
                    failures.push(format!(
                        "{:?} {:?}: {}",
                        g.key,
                        g.shapes,
                        differences.join(", ")
                    ));
                }
            }
        }
    }
    for (i, r) in ours.iter().enumerate() {
        if !used[i] {
            failures.push(format!(
                "extra row {:?} {:?} {:?}",
                r.key, r.device, r.shapes
            ));
        }
    }
    failures
}

/// (trace, golden directory) for every PyTorch trace with a golden `key_averages.csv` in `dir`
/// (laid out as `../shared/traces/pytorch`: traces beside `golden/<trace>/`).
fn traces_with_golden_in(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir.join("golden")) else {
        return out;
    };
    for entry in entries {
        let golden = entry.expect("golden entry").path();
        let Some(name) = golden.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let trace = [".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"]
            .iter()
            .map(|ext| dir.join(format!("{name}{ext}")))
            .find(|p| p.is_file());
        if let (Some(trace), true) = (trace, golden.join("key_averages.csv").is_file()) {
            out.push((trace, golden));
        }
    }
    out.sort();
    out
}

fn torch_ops(trace: &sightline::trace::Trace, by_shape: bool) -> Table {
    let report = reports::find("torch_ops").expect("torch_ops is registered");
    let spec = if by_shape {
        "torch_ops:group_by_input_shape"
    } else {
        "torch_ops"
    };
    let (_, options) = reports::parse_spec(spec).expect("spec");
    report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &options,
        with_events: true,
        row_limit: None,
        nsys_format: NsysFormat::of_trace(trace),
        sink: None,
    })
}

#[test]
fn torch_ops_equals_pytorch_key_averages() {
    // The NCCL runs made for this project are bundled; the others are read from
    // ../shared/traces when it is beside the checkout.
    let bundled = traces_with_golden_in(&common::fixtures().join("nccl/pytorch"));
    assert_eq!(
        bundled.len(),
        8,
        "tests/fixtures/nccl/pytorch: two runs of two ranks, one of four"
    );
    let overhead = traces_with_golden_in(&common::fixtures().join("kineto_overhead"));
    assert_eq!(
        overhead.len(),
        1,
        "tests/fixtures/kineto_overhead: one run with Kineto's buffer requests and flushes"
    );
    let mut traces = bundled;
    traces.extend(overhead);
    // A trace too large to bundle (the 1 M-event run of issue 33), laid out the same way.
    if let Ok(extra) = std::env::var("SIGHTLINE_TORCH_OPS_EXTRA") {
        traces.extend(traces_with_golden_in(Path::new(&extra)));
    }
    match common::shared_traces() {
        Some(dir) => traces.extend(traces_with_golden_in(&dir.join("pytorch"))),
        None => println!("../shared/traces/pytorch not present: only the bundled traces checked"),
    }
    let mut failures = Vec::new();
    let mut checked_rows = 0;
    for (path, golden_dir) in &traces {
        let trace =
            sightline::load::load_file(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (file, by_shape) in [
            ("key_averages.csv", false),
            ("key_averages_shapes.csv", true),
        ] {
            let golden_path = golden_dir.join(file);
            if !golden_path.is_file() {
                continue;
            }
            let golden = golden_rows(&golden_path);
            let table = torch_ops(&trace, by_shape);
            let ours = our_rows(&table);
            // The panel outlines a row's events: every row but `[memory]` has some, and the
            // CUDA synchronisation rows (`cuda_sync` events: GPU-side waits, which the timeline
            // does not draw as events of their own).
            const SYNCS: [&str; 4] = [
                "Stream Sync",
                "Context Sync",
                "Stream Wait Event",
                "Event Sync",
            ];
            assert!(
                table
                    .rows
                    .iter()
                    .zip(&ours)
                    .all(|(r, o)| o.key == "[memory]"
                        || SYNCS.contains(&o.key.as_str())
                        || r.events != sightline::analysis::RowEvents::None),
                "{}: a row without events",
                path.display()
            );
            let found = compare(&golden, &ours);
            println!(
                "{} {file}: {} golden rows, {} of ours, {} mismatches",
                path.file_name().unwrap_or_default().to_string_lossy(),
                golden.len(),
                ours.len(),
                found.len()
            );
            checked_rows += golden.len();
            failures.extend(
                found
                    .into_iter()
                    .map(|f| format!("{} {file}: {f}", path.display())),
            );
        }
    }
    println!(
        "checked {} traces, {checked_rows} golden rows",
        traces.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A PyTorch trace written by hand: one step, one op with its CUDA call and kernel, one
/// allocation.
const TINY_TRACE: &str = r#"{
  "schemaVersion": 1,
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10, "ts": 1000.000, "dur": 100.000, "args": {"External id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 10, "ts": 1010.500, "dur": 50.250, "args": {"External id": 2, "Input Dims": [[4, 4], [4, 4]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 1020.000, "dur": 5.000, "args": {"External id": 2, "correlation": 77}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1030.000, "dur": 20.125, "args": {"External id": 2, "correlation": 77, "device": 0, "stream": 7}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 1015.000, "args": {"Bytes": 64, "Device Id": 0, "Device Type": 1}}
  ]
}"#;

#[test]
fn summary_prints_torch_ops_as_csv() {
    let dir = common::scratch_dir("torch_ops");
    let path = dir.join("tiny.pt.trace.json");
    std::fs::write(&path, TINY_TRACE).expect("write the trace");
    let path = path.to_string_lossy().into_owned();
    let out =
        common::sightline_stdout(&["summary", &path, "--report", "torch_ops", "--format", "csv"]);
    let expected = format!(
        "{HEADER}\n\
         ProfilerStep*,CPU,1,49750,100000,0,20125,0,0,0,64\n\
         aten::mm,CPU,1,45250,50250,20125,20125,0,0,64,64\n\
         gemm,CUDA,1,0,0,20125,20125,0,0,0,0\n\
         cudaLaunchKernel,CPU,1,5000,5000,0,0,0,0,0,0\n"
    );
    assert_eq!(out.replace("\r\n", "\n"), expected);

    // The flag and the report option are one thing.
    let by_flag = common::sightline_stdout(&[
        "summary",
        &path,
        "--report",
        "torch_ops",
        "--group-by-input-shape",
        "--format",
        "csv",
    ]);
    let by_option = common::sightline_stdout(&[
        "summary",
        &path,
        "--report",
        "torch_ops:group_by_input_shape",
        "--format",
        "csv",
    ]);
    assert_eq!(by_flag, by_option);
    let mut lines = by_flag.lines();
    assert_eq!(
        lines.next(),
        Some(format!("{HEADER},Input Shapes").as_str())
    );
    assert!(
        by_flag.contains("aten::mm,CPU,1,45250,50250,20125,20125,0,0,64,64,\"[[4, 4], [4, 4]]\""),
        "{by_flag}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_nsys_export_has_no_pytorch_operator_data() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["summary", "--report", "torch_ops", "--format", "csv"])
        .arg(common::fixture("moe"))
        .output()
        .expect("run sightline");
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("does not contain PyTorch operator data"),
        "{stderr}"
    );
}

/// The analysis panel lists `torch_ops` for a PyTorch trace (and not for an nsys export), shows
/// it, and sorts it by a clicked header.
#[test]
fn the_panel_lists_torch_ops_and_sorts_it_by_a_header() {
    use common::ui::{panel_harness, settle_panel};
    use egui::accesskit::Role;
    use egui_kittest::kittest::Queryable;
    use sightline::analysis::TimeRange;

    let nsys = sightline::load::load_file(&common::fixture("moe")).expect("load moe");
    let report = reports::find("torch_ops").expect("torch_ops is registered");
    assert!(!reports::has_data(report, &nsys));

    let dir = common::scratch_dir("torch_ops_panel");
    let path = dir.join("tiny.pt.trace.json");
    std::fs::write(&path, TINY_TRACE).expect("write the trace");
    let trace = sightline::load::load_file(&path).expect("load the PyTorch trace");
    let _ = std::fs::remove_dir_all(dir);
    assert!(reports::has_data(report, &trace));
    let mut h = panel_harness(trace, TimeRange::ALL);
    assert!(h.state().panel.available_reports().contains(&"torch_ops"));

    let entry = format!("{} (torch_ops)", report.title());
    for _ in 0..5 {
        if h.query_by_label(&entry).is_some() {
            break;
        }
        h.get_by_role_and_label(Role::ComboBox, "Report").click();
        settle_panel(&mut h);
    }
    h.get_by_label(&entry).click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.report, "torch_ops");
    let names = |h: &egui_kittest::Harness<'static, common::ui::PanelBench>| -> Vec<String> {
        let table = h.state().panel.visible_table().expect("table shown");
        table.rows.iter().map(|r| r.cells[0].csv_text()).collect()
    };
    // The report's order: CUDA total, then CPU total, descending.
    assert_eq!(
        names(&h),
        ["ProfilerStep*", "aten::mm", "gemm", "cudaLaunchKernel"]
    );
    // Most self CPU time first, then least.
    h.get_by_label("Self CPU (ns)").click();
    settle_panel(&mut h);
    assert_eq!(
        names(&h),
        ["ProfilerStep*", "aten::mm", "cudaLaunchKernel", "gemm"]
    );
    h.get_by_label("Self CPU (ns)").click();
    settle_panel(&mut h);
    assert_eq!(
        names(&h),
        ["gemm", "cudaLaunchKernel", "aten::mm", "ProfilerStep*"]
    );
}
