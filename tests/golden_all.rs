//! Every golden file, first and second tier: for each `<name>.csv`, `<name>.sha256` or
//! `<name>.skipped` under `tests/fixtures/golden/<trace>/` and (when present)
//! `../shared/traces/golden/<trace>/` and `../shared/traces/golden-2025.3/<trace>/`, runs the
//! matching registered report or rule on the trace, exactly as `sightline summary --report NAME
//! --format csv` / `sightline analyze --rule SPEC --format csv` would, and compares byte for byte
//! (SHA-256 for long row dumps). Empty outputs are checked too. nsys's "no ENUM table" skips have
//! no oracle and are counted apart.
//!
//! `golden/` holds what Nsight Systems 2023.4.4 printed, `golden-2025.3/` what 2025.3.1 printed.
//! A trace must match its `golden-2025.3/` folder with the default format (the one its writer
//! picks), and its `golden/` folder by default too unless nsys 2025.3 or newer wrote it; then it
//! is compared as `--nsys-format 2023.4` prints it.
//!
//! While working on one report: `GOLDEN_ONLY=cuda_gpu_trace,analyze.gpu_gaps GOLDEN_TRACE=moe
//! cargo test --release --test golden_all -- --nocapture`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use sightline::analysis::{Filter, NsysFormat, ReportInput, RuleInput, reports, rules};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::Trace;

/// The exact rule specs the oracle was made with (../shared/traces/README.md).
const RULE_SPECS: [&str; 6] = [
    "cuda_api_sync:rows=-1",
    "cuda_memcpy_async:rows=-1",
    "cuda_memcpy_sync:rows=-1",
    "cuda_memset_sync:rows=-1",
    "gpu_gaps:rows=-1:gap=1",
    "gpu_time_util:rows=-1",
];

/// What `sightline summary --report NAME --format csv --nsys-format F` or `analyze` prints for an
/// output name (`cuda_gpu_trace`, `analyze.gpu_gaps`); `Err` when Sightline does not know the name.
fn output_of(trace: &Trace, name: &str, nsys_format: NsysFormat) -> Result<String, String> {
    let filter = Filter::all();
    let table = if let Some(rule) = name.strip_prefix("analyze.") {
        let spec = RULE_SPECS
            .iter()
            .find(|s| s.split(':').next() == Some(rule))
            .copied()
            .unwrap_or(rule);
        let (rule, options) = rules::parse_spec(spec)?;
        rule.compute(&RuleInput {
            trace,
            filter: &filter,
            options: &options,
            nsys_format,
        })?
    } else {
        let (report, options) = reports::parse_spec(name)?;
        report.compute(&ReportInput {
            trace,
            filter: &filter,
            options: &options,
            with_events: false,
            row_limit: None,
            nsys_format,
            sink: None,
        })
    };
    if table.is_empty() {
        return Ok(String::new());
    }
    let mut buf = Vec::new();
    nsys_csv::write_table_csv(&table, &mut buf).expect("write csv");
    Ok(String::from_utf8(buf).expect("utf-8"))
}

fn first_difference(expected: &str, ours: &str) -> String {
    let mut exp = expected.lines();
    let mut got = ours.lines();
    let mut line = 1;
    loop {
        match (exp.next(), got.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (Some(a), Some(b)) => return format!("line {line}: expected `{a}`, got `{b}`"),
            (Some(a), None) => return format!("line {line}: expected `{a}`, got nothing"),
            (None, Some(b)) => return format!("line {line}: extra `{b}`"),
            (None, None) => return "line ends differ".into(),
        }
    }
}

/// SHA-256 of a CSV as the oracle hashed it: CRLF → LF, surrounding whitespace stripped, one
/// final newline.
fn oracle_sha256(csv: &str) -> String {
    let text = format!("{}\n", csv.replace("\r\n", "\n").trim());
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
struct Tally {
    files: usize,
    compared: usize,
    empty_checked: usize,
    no_oracle: usize,
    /// Trace files compared with `--nsys-format` other than their default (nsys 2025.3 or newer
    /// wrote them; `golden/` holds 2023.4's output).
    format_overridden: usize,
    failures: Vec<String>,
}

fn wanted(name: &str) -> bool {
    std::env::var("GOLDEN_ONLY").map_or(true, |only| only.split(',').any(|o| o == name))
}

fn check_trace(trace_path: &Path, golden_dir: &Path, tally: &mut Tally) {
    let stem = golden_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    if let Ok(only) = std::env::var("GOLDEN_TRACE")
        && !only.split(',').any(|t| t == stem)
    {
        return;
    }
    let trace = match load::load_file(trace_path) {
        Ok(t) => t,
        Err(e) => {
            tally.failures.push(format!("{stem}: load failed: {e}"));
            return;
        }
    };
    let oracle = common::golden_format(golden_dir);
    let default = NsysFormat::of_trace(&trace);
    if default != oracle {
        if oracle == NsysFormat::V2025_3 {
            tally.failures.push(format!(
                "{stem}: written by {:?}, printed as nsys {default} by default; {} holds nsys \
                 {oracle}'s output",
                trace.exporter_version,
                golden_dir.display()
            ));
        }
        tally.format_overridden += 1;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(golden_dir)
        .expect("read golden dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let Some((name, kind)) = file.rsplit_once('.') else {
            continue;
        };
        if !wanted(name) {
            continue;
        }
        let expected_text = std::fs::read_to_string(&path).expect("read golden file");
        if kind == "skipped" && expected_text.contains("does not contain ENUM_") {
            tally.no_oracle += 1;
            continue;
        }
        let ours = match output_of(&trace, name, oracle) {
            Ok(o) => o,
            Err(e) => {
                tally.failures.push(format!("{stem} {name}: {e}"));
                continue;
            }
        };
        match kind {
            "csv" => {
                tally.compared += 1;
                let expected = expected_text.replace("\r\n", "\n");
                if ours != expected {
                    tally.failures.push(format!(
                        "{stem} {name}: {}",
                        first_difference(&expected, &ours)
                    ));
                }
            }
            "sha256" => {
                tally.compared += 1;
                let want = expected_text.split_whitespace().next().unwrap_or_default();
                let got = oracle_sha256(&ours);
                if got != want {
                    tally.failures.push(format!(
                        "{stem} {name}: SHA-256 differs ({}; ours has {} lines)",
                        expected_text.trim(),
                        ours.lines().count()
                    ));
                }
            }
            "skipped" => {
                tally.empty_checked += 1;
                if !ours.is_empty() {
                    tally.failures.push(format!(
                        "{stem} {name}: nsys printed nothing ({}), we print {} lines starting `{}`",
                        expected_text.trim(),
                        ours.lines().count(),
                        ours.lines().nth(1).unwrap_or_default()
                    ));
                }
            }
            _ => {}
        }
    }
    tally.files += 1;
}

fn check_dir(traces: &Path, golden: &Path, tally: &mut Tally) {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(golden)
        .expect("read golden root")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let stem = dir.file_name().unwrap().to_string_lossy().to_string();
        let trace = traces.join(format!("{stem}.sqlite"));
        if trace.is_file() {
            check_trace(&trace, &dir, tally);
        } else {
            tally
                .failures
                .push(format!("{}: no trace {stem}.sqlite", dir.display()));
        }
    }
}

fn report(what: &str, tally: &Tally) {
    println!(
        "{what}: checked {} trace files ({} of them with --nsys-format other than their \
         default), {} outputs compared byte for byte or by hash, {} empty outputs checked, {} \
         skipped with no oracle (nsys could not read the export), {} failures",
        tally.files,
        tally.format_overridden,
        tally.compared,
        tally.empty_checked,
        tally.no_oracle,
        tally.failures.len()
    );
    for f in &tally.failures {
        println!("  FAIL {f}");
    }
}

#[test]
fn fixture_outputs_equal_every_golden_file() {
    let mut tally = Tally::default();
    let fixtures = common::fixtures();
    check_dir(&fixtures, &fixtures.join("golden"), &mut tally);
    report("fixtures", &tally);
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
    if std::env::var("GOLDEN_TRACE").is_err() {
        assert!(tally.files >= 10, "expected the 10 bundled traces");
    }
}

#[test]
fn shared_trace_outputs_equal_every_golden_file() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is not present beside the checkout; 0 files checked");
        return;
    };
    let mut tally = Tally::default();
    check_dir(&dir, &dir.join("golden"), &mut tally);
    report("../shared/traces/golden (nsys 2023.4.4)", &tally);
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
    if std::env::var("GOLDEN_TRACE").is_err() {
        assert!(
            tally.files > 0,
            "no golden directories under {}",
            dir.display()
        );
    }
}

/// The two-GPU NCCL runs made for this project (tests/fixtures/nccl/, nsys 2025.3.1, one export per
/// rank) against what that nsys printed for them (tests/tracegen/run_nccl_device.sh).
#[test]
fn nccl_fixture_outputs_equal_every_golden_2025_3_file() {
    let mut tally = Tally::default();
    let dir = common::fixtures().join("nccl");
    check_dir(&dir, &dir.join("golden-2025.3"), &mut tally);
    report("tests/fixtures/nccl/golden-2025.3 (nsys 2025.3.1)", &tally);
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
    if std::env::var("GOLDEN_TRACE").is_err() {
        assert_eq!(tally.files, 4, "two runs of two ranks");
        assert_eq!(tally.format_overridden, 0, "all by default");
    }
}

/// The current exports (nsys 2025.3) against what Nsight Systems 2025.3.1 printed for them, with
/// the format their writer picks by default.
#[test]
fn shared_trace_outputs_equal_every_golden_2025_3_file() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is not present beside the checkout; 0 files checked");
        return;
    };
    let golden = dir.join("golden-2025.3");
    if !golden.is_dir() {
        println!("SKIPPED: no {}; 0 files checked", golden.display());
        return;
    }
    let mut tally = Tally::default();
    check_dir(&dir, &golden, &mut tally);
    report("../shared/traces/golden-2025.3 (nsys 2025.3.1)", &tally);
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
    if std::env::var("GOLDEN_TRACE").is_err() {
        assert!(
            tally.files > 0,
            "no golden directories under {}",
            golden.display()
        );
        assert_eq!(tally.format_overridden, 0, "all by default");
    }
}

/// The generated 500k-event trace against what nsys 2023.4.4 printed for it
/// (tests/fixtures/golden_generated/README.txt): every report and rule at scale.
#[test]
fn generated_500k_trace_outputs_equal_nsys() {
    let golden = common::fixtures().join("golden_generated/gen500k");
    if std::env::var("GOLDEN_TRACE").is_ok_and(|t| !t.split(',').any(|t| t == "gen500k")) {
        return;
    }
    let dir = common::scratch_dir("gen500k");
    let trace = dir.join("gen500k.sqlite");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["gen-trace", "--events", "500000"])
        .arg(&trace)
        .status()
        .expect("run gen-trace");
    assert!(status.success());
    let mut tally = Tally::default();
    check_trace(&trace, &golden, &mut tally);
    report("generated 500k-event trace", &tally);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(tally.failures.is_empty(), "{}", tally.failures.join("\n"));
}

/// The panel lists the reports `has_data` accepts: it must accept every report that has rows
/// over the whole trace, and a report it refuses must have none.
#[test]
fn has_data_agrees_with_the_reports() {
    let mut checked = 0;
    for name in [
        "transformer",
        "moe",
        "ws_baseline",
        "p2p_2gpu",
        "cpu_side",
        "gpu_metrics",
        "stress",
    ] {
        let trace = load::load_file(&common::fixture(name)).expect("load fixture");
        checked += check_has_data(name, &trace);
    }
    if let Some(dir) = common::shared_traces() {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("read shared traces")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
            .collect();
        paths.sort();
        for path in paths {
            let trace = load::load_file(&path).expect("load shared trace");
            checked += check_has_data(&path.display().to_string(), &trace);
        }
    }
    println!("has_data checked against {checked} computed reports");
}

fn check_has_data(name: &str, trace: &Trace) -> usize {
    let mut checked = 0;
    {
        for report in reports::REPORTS {
            let rows = report
                .compute(&ReportInput {
                    trace,
                    filter: &Filter::all(),
                    options: &Default::default(),
                    with_events: false,
                    row_limit: None,
                    nsys_format: NsysFormat::of_trace(trace),
                    sink: None,
                })
                .rows
                .len();
            let listed = reports::has_data(*report, trace);
            if report.rows_depend_on_threshold() {
                // Listed whenever the trace has what it reads; no rows is an answer.
                assert!(listed || rows == 0, "{name} {}: {rows} rows", report.name());
            } else {
                assert_eq!(listed, rows > 0, "{name} {}: {rows} rows", report.name());
            }
            checked += 1;
        }
    }
    checked
}

/// The panel's bound on a row dump keeps the first rows, exactly as the full dump has them, and
/// counts the rest.
#[test]
fn a_row_limit_keeps_the_first_rows_of_a_dump() {
    let trace = load::load_file(&common::fixture("stress")).expect("load stress");
    for name in [
        "cuda_api_trace",
        "cuda_gpu_trace",
        "cuda_kern_exec_trace",
        "nvtx_pushpop_trace",
        "nvtx_gpu_proj_trace",
    ] {
        let report = reports::find(name).expect("registered");
        let compute = |row_limit| {
            report.compute(&ReportInput {
                trace: &trace,
                filter: &Filter::all(),
                options: &Default::default(),
                with_events: true,
                row_limit,
                nsys_format: NsysFormat::of_trace(&trace),
                sink: None,
            })
        };
        let all = compute(None);
        let first = compute(Some(1000));
        assert!(all.rows.len() > 1000, "{name}: {} rows", all.rows.len());
        assert_eq!(all.omitted, 0);
        assert_eq!(first.rows.as_slice(), &all.rows[..1000], "{name}");
        assert_eq!(first.omitted, all.rows.len() - 1000, "{name}");
    }
}
