//! The command line as a new user meets it (issue 25, items 1 and 12), on real exports: the
//! `diff` headline leads with GPU work and reads the outermost repeated range's iterations
//! (ws_baseline → ws_streaming: `token_N`, −10.4 % per token, medians from SQL), `gaps --causes`
//! fits 120 columns (names cut where they agree, the host-time split under `--wide`, both
//! checked against the CSV), `render --range gpu` draws the GPU span SQL finds, and
//! `analyze gpu_gaps` finding nothing at nsys's 500 ms keeps stdout empty and says on stderr
//! what lists shorter gaps.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{fixture, open_ro, shared_exports, sightline_stdout};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn records(text: &str) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Durations of the NVTX ranges named `token_<number>` (SQL), sorted.
fn token_durations(path: &Path) -> Vec<i64> {
    let conn = open_ro(path);
    let mut st = conn
        .prepare(
            "SELECT n.end - n.start, COALESCE(n.text, s.value) AS nm FROM NVTX_EVENTS n \
             LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND nm GLOB 'token_[0-9]*'",
        )
        .unwrap();
    let mut d: Vec<i64> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    d.sort_unstable();
    d
}

fn median(d: &[i64]) -> f64 {
    let n = d.len();
    if n % 2 == 1 {
        d[n / 2] as f64
    } else {
        (d[n / 2 - 1] + d[n / 2]) as f64 / 2.0
    }
}

#[test]
fn the_headline_leads_with_gpu_work_and_reads_tokens_as_iterations() {
    let (base, new) = (fixture("ws_baseline"), fixture("ws_streaming"));
    let (b, n) = (
        median(&token_durations(&base)),
        median(&token_durations(&new)),
    );
    let pct = ((100.0 * (n - b) / b) * 10.0).round() / 10.0;
    assert_eq!(pct, -10.4, "the per-token gain the issue cites");
    // With --per-step, and by default (the outermost repeated range both runs have: token_N).
    for (extra, label) in [
        (vec!["--per-step", "^token_"], "^token_"),
        (vec![], "token_*"),
    ] {
        let mut args = vec![
            "diff",
            p(&base),
            p(&new),
            "--report",
            "headline",
            "--format",
            "csv",
        ];
        args.extend(extra.iter());
        let rows = records(&sightline_stdout(&args));
        let metrics: Vec<&str> = rows.iter().map(|r| r["Metric"].as_str()).collect();
        let row = |m: &str| {
            rows.iter()
                .find(|r| r["Metric"] == m)
                .unwrap_or_else(|| panic!("{m} in {metrics:?}"))
        };
        let it = row(&format!("Iteration median: {label} (ns)"));
        assert_eq!(it["Base"].parse::<f64>().unwrap(), b.round());
        assert_eq!(it["New"].parse::<f64>().unwrap(), n.round());
        assert_eq!(it["Delta (%)"].parse::<f64>().unwrap(), pct);
        assert_eq!(row(&format!("Iterations: {label}"))["Base"], "4");
        // GPU work first, the span last.
        assert_eq!(metrics[0], "GPU 0 busy time (ns)");
        assert_eq!(*metrics.last().unwrap(), "Trace span (ns)");
        let at = |m: &str| metrics.iter().position(|x| x.starts_with(m)).unwrap();
        assert!(at("GPU 0 busy") < at("Idle in gaps") && at("Idle in gaps") < at("Copy/compute"));
        assert!(
            at("Copy/compute") < at("Iteration median") && at("Iteration median") < at("Kernels")
        );
    }
    // The table reads with units: the span in ms with one decimal, as the CSV's ns say.
    let csv = records(&sightline_stdout(&[
        "diff",
        p(&base),
        p(&new),
        "--report",
        "headline",
        "--format",
        "csv",
    ]));
    let span = csv
        .iter()
        .find(|r| r["Metric"] == "Trace span (ns)")
        .unwrap();
    let ms = |v: &str| format!("{:.1} ms", v.parse::<f64>().unwrap() / 1e6);
    let table = sightline_stdout(&["diff", p(&base), p(&new), "--report", "headline"]);
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("Trace span"))
        .expect("a span line");
    assert!(
        line.contains(&ms(&span["Base"])) && line.contains(&ms(&span["New"])),
        "{line}"
    );
    assert!(
        !table.contains(&span["Base"]),
        "no raw nanoseconds: {table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.contains("Iteration median: token_*") && l.contains("-10.4 %"))
    );
}

/// The table `gaps` prints, cut into cells by the widths of its dashed line.
fn table_cells(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let lines: Vec<&str> = text.lines().collect();
    let dashes = lines
        .iter()
        .position(|l| l.trim_start().starts_with("---"))
        .expect("dashes");
    let spans: Vec<(usize, usize)> = {
        let chars: Vec<char> = lines[dashes].chars().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '-' {
                let s = i;
                while i < chars.len() && chars[i] == '-' {
                    i += 1;
                }
                out.push((s, i));
            } else {
                i += 1;
            }
        }
        out
    };
    let cut = |line: &str| -> Vec<String> {
        let chars: Vec<char> = line.chars().collect();
        spans
            .iter()
            .map(|&(s, e)| {
                chars.get(s..e.min(chars.len())).map_or(String::new(), |c| {
                    c.iter().collect::<String>().trim().to_string()
                })
            })
            .collect()
    };
    let header = cut(lines[dashes - 1]);
    let rows = lines[dashes + 1..]
        .iter()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| cut(l))
        .collect();
    (header, rows)
}

fn all_exports() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "moe",
        "transformer",
        "ws_baseline",
        "cpu_side",
        "p2p_2gpu",
        "stress",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    v.extend(shared_exports());
    v
}

#[test]
fn gaps_causes_fit_120_columns_and_wide_keeps_the_host_split() {
    for path in all_exports() {
        let table = sightline_stdout(&["gaps", p(&path), "--causes"]);
        for line in table.lines() {
            assert!(
                line.chars().count() <= 120,
                "{}: {} characters: {line}",
                path.display(),
                line.chars().count()
            );
        }
        let csv = records(&sightline_stdout(&[
            "gaps",
            p(&path),
            "--causes",
            "--format",
            "csv",
        ]));
        if csv.is_empty() {
            continue;
        }
        let (header, rows) = table_cells(&table);
        assert_eq!(
            header.last().map(String::as_str),
            Some("Cause"),
            "{}",
            path.display()
        );
        assert_eq!(rows.len(), csv.len());
        let num = |s: &str| s.replace(',', "");
        for (row, c) in rows.iter().zip(&csv) {
            assert_eq!(num(&row[2]), c["Start (ns)"]);
            assert_eq!(num(&row[4]), c["Duration (ns)"]);
            assert_eq!(row[7], c["Cause"]);
            // A name is whole, or its start and end around "…".
            for (k, col) in [(5, "Before"), (6, "After")] {
                let (shown, full) = (&row[k], &c[col]);
                if shown != full {
                    let (head, tail) = shown.split_once('…').expect("cut with …");
                    assert!(
                        full.starts_with(head) && full.ends_with(tail),
                        "{shown} is not a cut of {full}"
                    );
                }
            }
        }
        // Copies keep the end that tells their direction.
        for (row, c) in rows.iter().zip(&csv) {
            if c["Before"] == "[CUDA memcpy Device-to-Host]" {
                assert!(row[5].ends_with("Device-to-Host]"), "{}", row[5]);
            }
        }
        // --wide: the host-time split, as the CSV has it.
        let wide = sightline_stdout(&["gaps", p(&path), "--causes", "--wide"]);
        let (header, rows) = table_cells(&wide);
        assert_eq!(
            &header[7..],
            [
                "Cause",
                "Sync (ns)",
                "CUDA API (ns)",
                "OS Runtime (ns)",
                "Untraced (ns)",
                "Host Inside"
            ]
        );
        for (row, c) in rows.iter().zip(&csv) {
            for col in [
                "Sync (ns)",
                "CUDA API (ns)",
                "OS Runtime (ns)",
                "Untraced (ns)",
            ] {
                let k = header.iter().position(|h| h == col).unwrap();
                assert_eq!(num(&row[k]), c[col], "{}", path.display());
            }
        }
    }
}

/// First start and last end of the kernels, copies and memsets (SQL).
fn gpu_span(path: &Path) -> (i64, i64) {
    let conn = open_ro(path);
    let mut lo = i64::MAX;
    let mut hi = i64::MIN;
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        if !common::has_table(&conn, table) {
            continue;
        }
        let (a, b): (Option<i64>, Option<i64>) = conn
            .query_row(
                &format!("SELECT MIN(start), MAX(end) FROM {table}"),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        lo = lo.min(a.unwrap_or(i64::MAX));
        hi = hi.max(b.unwrap_or(i64::MIN));
    }
    (lo, hi)
}

#[test]
fn render_range_gpu_draws_the_gpu_span_and_is_the_default_when_start_up_dominates() {
    let dir = common::scratch_dir("first-hour-render");
    let path = fixture("moe");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (a, b) = gpu_span(&path);
    let margin = ((b - a) as f64 * 0.02).round() as i64;
    let explicit = format!("{}:{}", a - margin, b + margin);
    let png = |file: &str, range: Option<&str>| -> (Vec<u8>, String) {
        let target = out(file);
        let mut args = vec!["render", p(&path), "--out", &target, "--height", "300"];
        if let Some(r) = range {
            args.extend(["--range", r]);
        }
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            std::fs::read(&target).unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (gpu, _) = png("gpu.png", Some("gpu"));
    let (by_sql, _) = png("sql.png", Some(&explicit));
    assert!(
        gpu == by_sql,
        "--range gpu draws the GPU span SQL finds, with 2 % margins"
    );
    // moe's process starts long before its first kernel: the default is the GPU span, and says so.
    let conn = open_ro(&path);
    let first_api: i64 = conn
        .query_row(
            "SELECT MIN(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(first_api < a);
    let (default, note) = png("default.png", None);
    assert!(default == gpu);
    assert!(note.contains("--range all"), "{note}");
    let (all, _) = png("all.png", Some("all"));
    assert!(all != gpu, "--range all draws the whole trace");
    let help = String::from_utf8_lossy(&run(&["render", "--help"]).stdout).into_owned();
    assert!(help.contains("gpu") && help.contains("80 %"), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn analyze_gpu_gaps_with_nothing_over_500_ms_points_at_shorter_gaps_on_stderr() {
    for name in ["moe", "transformer"] {
        let path = fixture(name);
        let o = run(&["analyze", p(&path), "--rule", "gpu_gaps", "--format", "csv"]);
        assert!(o.status.success());
        assert!(
            o.stdout.is_empty(),
            "stdout stays what nsys prints: nothing"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("gpu_gaps:gap="), "{err}");
        assert!(
            err.contains(&format!("sightline gaps {}", path.display())),
            "{err}"
        );
        // The count it gives is what `sightline gaps` lists.
        let listed = records(&sightline_stdout(&["gaps", p(&path), "--format", "csv"])).len();
        assert!(err.contains(&format!("({listed} here")), "{err}");
        // With a threshold of its own, no note.
        let o = run(&[
            "analyze",
            p(&path),
            "--rule",
            "gpu_gaps:gap=100000",
            "--format",
            "csv",
        ]);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("sightline gaps"));
    }
}

/// A PyTorch trace's clock counts from an epoch: `gaps`'s table counts from its first event (as the
/// window's axis does) and says so, which leaves the names room; CSV keeps the trace's clock.
#[test]
fn gaps_of_a_pytorch_trace_count_from_its_first_event() {
    let path = common::fixtures().join("nccl/pytorch/kt_moe_a2a_rank0.pt.trace.json.gz");
    let table = sightline_stdout(&["gaps", p(&path), "--causes", "--min", "20us"]);
    let csv = records(&sightline_stdout(&[
        "gaps",
        p(&path),
        "--causes",
        "--min",
        "20us",
        "--format",
        "csv",
    ]));
    assert!(!csv.is_empty(), "gaps of at least 20 µs");
    let trace = sightline::load::load_file(&path).unwrap();
    let origin = trace.time_origin_ns();
    assert!(
        origin > 1_000_000_000_000_000,
        "an epoch-based clock: {origin}"
    );
    assert!(
        table.contains(&format!("count from the trace's first event, {origin} ns")),
        "{table}"
    );
    let (_, rows) = table_cells(&table);
    assert_eq!(rows.len(), csv.len());
    let num = |s: &str| s.replace(',', "").parse::<i64>().unwrap();
    for (row, c) in rows.iter().zip(&csv) {
        assert_eq!(num(&row[2]) + origin, num(&c["Start (ns)"]));
        assert_eq!(num(&row[3]) + origin, num(&c["End (ns)"]));
    }
    for line in table.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }
    // The names keep more than the 17 characters epoch times left them.
    let widest = rows.iter().map(|r| r[5].chars().count()).max().unwrap_or(0);
    assert!(widest > 17, "Before column {widest} characters wide");
}
