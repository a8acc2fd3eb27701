//! Helpers shared by the integration tests: where the fixtures and shared traces are, how to
//! compare a report with its golden CSV, and scratch directories.

#![allow(dead_code)]
// Test helpers fail the test on a broken fixture, which is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use sightline::analysis::{self, Filter, NsysFormat, Report};
use sightline::export::nsys_csv;
use sightline::trace::Trace;

pub mod ncu_reader;
pub mod nvdisasm;
pub mod slurm;
pub mod ui;
pub mod venv;
pub mod xprof;

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(format!("{name}.sqlite"))
}

/// Every `.sqlite` export in `../shared/traces`, sorted; empty (with a line saying so) when the
/// folder is not beside the checkout.
pub fn shared_exports() -> Vec<PathBuf> {
    let Some(dir) = shared_traces() else {
        println!("../shared/traces not present: only the fixtures are checked");
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("list ../shared/traces")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    paths.sort();
    paths
}

/// An export opened read-only for the test's own SQL.
pub fn open_ro(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open the export read-only")
}

/// Whether the export has this table.
pub fn has_table(conn: &rusqlite::Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .expect("read sqlite_master")
        > 0
}

/// `../shared/traces/ncu` (Nsight Compute reports, the nsys exports of the same programs and
/// ncu's own pages in `oracle/`), when present; says so on stderr when it is not.
pub fn shared_ncu() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/ncu");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: {} is not there", dir.display());
        None
    }
}

/// A gzipped CSV (an oracle page such as `oracle/*.details.csv.gz`) as a flexible reader, its
/// first line the header: ncu's pages mix rows of different lengths.
pub fn gz_csv(path: &Path) -> csv::Reader<flate2::read::GzDecoder<std::fs::File>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(flate2::read::GzDecoder::new(file))
}

/// `../shared/traces` beside the checkout, when present (it is on CI).
pub fn shared_traces() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces");
    p.is_dir().then_some(p)
}

/// Runs the built `sightline` with `args`, fails the test unless it succeeds (showing its stderr),
/// and returns its stdout.
pub fn sightline_stdout(args: &[&str]) -> String {
    let out = sightline_ok(args, &[]);
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs the built `sightline` with `args` and the environment variables `env`, fails the test
/// unless it succeeds (showing its stderr), and returns what it printed.
pub fn sightline_ok<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    args: &[S],
    env: &[(&str, &str)],
) -> std::process::Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run sightline");
    assert!(
        out.status.success(),
        "sightline {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A fresh empty directory under the system temp dir.
pub fn scratch_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "sightline-test-{tag}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// The report as `nsys stats --format csv` would print it, with `\n` line endings (as the nsys
/// that wrote the trace prints it).
pub fn report_csv(trace: &Trace, report: Report) -> String {
    report_csv_as(trace, report, NsysFormat::of_trace(trace))
}

/// The report as Nsight Systems `format`'s `nsys stats --format csv` would print it.
pub fn report_csv_as(trace: &Trace, report: Report, format: NsysFormat) -> String {
    let table = analysis::compute_as(trace, report, &Filter::all(), format);
    if table.rows.is_empty() {
        return String::new();
    }
    let mut buf = Vec::new();
    nsys_csv::write_csv(&table, &mut buf).expect("write csv");
    String::from_utf8(buf).expect("utf-8")
}

/// What a golden directory says about one report.
pub enum Golden {
    Csv(String),
    /// nsys printed nothing because the trace has no such data.
    NoData,
    /// nsys 2023.4 could not read this older export: no oracle.
    NoOracle(String),
}

pub fn golden(dir: &Path, report: Report) -> Option<Golden> {
    let csv = dir.join(format!("{}.csv", report.id()));
    if let Ok(text) = std::fs::read_to_string(&csv) {
        return Some(Golden::Csv(text.replace("\r\n", "\n")));
    }
    let skipped = std::fs::read_to_string(dir.join(format!("{}.skipped", report.id()))).ok()?;
    if skipped.contains("does not contain") && skipped.contains(" data") {
        Some(Golden::NoData)
    } else {
        Some(Golden::NoOracle(skipped))
    }
}

/// The release whose output a golden directory `…/<root>/<trace>` holds: Nsight Systems 2025.3.1's
/// under `golden-2025.3`, 2023.4.4's under any other root (`golden`, `golden_options`, …).
pub fn golden_format(golden_dir: &Path) -> NsysFormat {
    let root = golden_dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    if root == Some("golden-2025.3") {
        NsysFormat::V2025_3
    } else {
        NsysFormat::V2023_4
    }
}

/// Checks every report of `trace` against `golden_dir`, printed as that directory's nsys prints
/// ([`golden_format`]); returns (checked, failures).
pub fn check_against_golden(trace: &Trace, golden_dir: &Path) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut failures = Vec::new();
    let format = golden_format(golden_dir);
    for report in Report::ALL {
        let ours = report_csv_as(trace, report, format);
        match golden(golden_dir, report) {
            Some(Golden::Csv(expected)) => {
                checked += 1;
                if ours != expected {
                    let first_diff = expected
                        .lines()
                        .zip(ours.lines().chain(std::iter::repeat("<missing>")))
                        .find(|(a, b)| a != b)
                        .map(|(a, b)| format!("expected `{a}`, got `{b}`"))
                        .unwrap_or_else(|| "extra rows".into());
                    failures.push(format!(
                        "{} {}: {first_diff}",
                        golden_dir.display(),
                        report.id()
                    ));
                }
            }
            Some(Golden::NoData) => {
                checked += 1;
                if !ours.is_empty() {
                    failures.push(format!(
                        "{} {}: expected no output",
                        golden_dir.display(),
                        report.id()
                    ));
                }
            }
            Some(Golden::NoOracle(_)) | None => {}
        }
    }
    (checked, failures)
}

/// Busy and span of every GPU operation of an export, straight from its tables.
pub fn gpu_busy_and_span_by_sql(path: &Path) -> (i64, i64) {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for t in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    ] {
        let Ok(mut st) = conn.prepare(&format!("SELECT start, end FROM {t}")) else {
            continue;
        };
        let rows = st
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .unwrap();
        spans.extend(rows.map(Result::unwrap));
    }
    spans.sort_unstable();
    let (first, last) = (spans[0].0, spans.iter().map(|s| s.1).max().unwrap());
    let (mut busy, mut cur) = (0, None::<(i64, i64)>);
    for (s, e) in spans {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            _ => {
                if let Some((cs, ce)) = cur {
                    busy += ce - cs;
                }
                cur = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        busy += ce - cs;
    }
    (busy, last - first)
}

/// Loads an Nsight Compute report (plain or packed) with nothing cancelled; fails the test with
/// the loader's message when it cannot.
pub fn load_ncu(path: &Path) -> sightline::trace::ncu::NcuReport {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let control = sightline::load::LoadControl {
        progress: &|_| {},
        cancel: &cancel,
        needs: sightline::trace::Needs::ALL,
    };
    sightline::load::ncu_rep::load_report(path, &control)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The PyTorch traces of `dir` (`../shared/traces/pytorch`) but the ranks of runs (`rank` in
/// the name: `kt_ranks_rank0/1`, HTA's `trace_filter__sampled_rank-0/1`): eight programs
/// recorded at different times, by name.
pub fn unrelated_pytorch_traces(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().to_string());
        name.is_some_and(|n| n.ends_with(".json.gz") && !n.contains("rank"))
    });
    files.sort();
    files
}

/// A text file, gunzipped where its name ends in `.gz` (ncu's oracle pages).
pub fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .expect("gunzip");
        text
    } else {
        String::from_utf8(bytes).expect("utf-8")
    }
}

/// The rows of a CSV text, each as its cells (rows of different lengths allowed, no header).
pub fn csv_rows(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.expect("csv row").iter().map(String::from).collect())
        .collect()
}
