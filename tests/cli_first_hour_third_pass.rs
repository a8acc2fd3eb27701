//! The command line as a new user meets it, third pass (issue 47, item 11): `summary TRACE --ncu R`
//! without `--report` prints `ncu_join` after the default reports (it was read by nothing, in
//! silence); with a `--report` list that lacks `ncu_join` the user is told that nothing reads
//! `--ncu`; `sightline --help` and `summary --help` name every format Sightline opens.
//! Item 1: terminal tables of totals fit 200 columns, names cut where they agree (never two rows
//! reading the same), `--wide` / `--name-width N` for more; item 11: `critical_path` and
//! `iterations` of a PyTorch trace count from its first event in the terminal, as the window
//! does, and keep the file's clock in CSV.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::{Command, Output};

use common::fixtures;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

#[test]
fn ncu_without_report_prints_the_join_after_the_default_reports() {
    let trace = fixtures().join("kt_pair.pt.trace.json.gz");
    let report = fixtures().join("ncu_kt_pair.ncu-repz");
    let (trace, report) = (trace.to_str().unwrap(), report.to_str().unwrap());
    let out = run(&["summary", trace, "--ncu", report]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("(cuda_gpu_kern_sum)"), "{stdout:.400}");
    assert!(
        stdout.contains("ncu_join"),
        "no ncu_join table: {stdout:.400}"
    );
    assert!(stderr.contains("profiled kernels matched"), "{stderr}");

    // A list without ncu_join: the join is not printed, and stderr says why --ncu was not read.
    let out = run(&[
        "summary",
        trace,
        "--ncu",
        report,
        "--report",
        "cuda_gpu_kern_sum",
    ]);
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--ncu is read by --report ncu_join only"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("ncu_join"));
}

#[test]
fn help_names_every_format_sightline_opens() {
    let top = String::from_utf8_lossy(&run(&["--help"]).stdout).into_owned();
    let first = top.lines().next().unwrap_or("");
    for format in [".sqlite", ".nsys-rep", ".pt.trace.json", ".ncu-rep"] {
        assert!(first.contains(format), "{format} not in: {first}");
    }
    let summary = String::from_utf8_lossy(&run(&["summary", "--help"]).stdout).into_owned();
    for format in [".sqlite", ".nsys-rep", ".json.gz", ".ncu-rep"] {
        assert!(summary.contains(format), "{format} not in summary --help");
    }
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The rows of a terminal table (after its title and dashes) up to the blank line that ends it.
fn table_rows(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("---"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

/// `torch_ops` on kt_train had 1,000-character lines (a name of ~850 characters padded the
/// Name column): every line now fits 200 characters, the names that differ in CSV differ on
/// screen, the numbers are the CSV's; `--wide` prints the names whole, `--name-width 30` cuts
/// them to 30. Every summary table of every shared PyTorch trace, and of moe.sqlite, whose
/// numbers fit 200 columns fits 200 columns.
#[test]
fn summary_tables_fit_200_columns_with_names_that_stay_apart() {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout");
        return;
    };
    let trace = dir.join("pytorch/kt_train.pt.trace.json.gz");
    let trace = trace.to_str().unwrap();
    let args = ["summary", trace, "--report", "torch_ops"];
    let table = stdout_of(&args);
    let rows = table_rows(&table);
    let csv = stdout_of(&[&args[..], &["--format", "csv"]].concat());
    let csv_rows: Vec<Vec<String>> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), csv_rows.len());
    let longest = csv_rows.iter().map(|r| r[0].chars().count()).max().unwrap();
    assert!(longest > 200, "kt_train has a name of {longest} characters");
    for line in table.lines() {
        assert!(
            line.chars().count() <= 200,
            "{} characters: {line:.120}",
            line.chars().count()
        );
    }
    // Rows that differ in CSV (name, device) differ on screen; the numbers are the CSV's.
    fn key(r: &str) -> Vec<&str> {
        r.split("  ")
            .filter(|s| !s.is_empty())
            .map(str::trim)
            .collect()
    }
    let mut shown: Vec<Vec<&str>> = rows.iter().map(|r| key(r)).collect();
    for (row, c) in shown.iter().zip(&csv_rows) {
        let calls = row[2].replace(',', "");
        assert_eq!(calls, c[2], "{row:?} against {c:?}");
    }
    let distinct_csv: std::collections::HashSet<(&str, &str)> = csv_rows
        .iter()
        .map(|r| (r[0].as_str(), r[1].as_str()))
        .collect();
    shown.sort();
    shown.dedup_by(|a, b| a[0] == b[0] && a[1] == b[1]);
    assert_eq!(shown.len(), distinct_csv.len(), "two rows read the same");

    let wide = stdout_of(&[&args[..], &["--wide"]].concat());
    assert!(
        wide.lines().any(|l| l.chars().count() > longest),
        "--wide prints names whole"
    );
    let narrow = stdout_of(&[&args[..], &["--name-width", "30"]].concat());
    for row in table_rows(&narrow) {
        let first = row.trim_start().split("  ").next().unwrap_or("");
        assert!(first.chars().count() <= 30, "{first}");
    }

    // Every summary table whose numbers fit fits, on every shared PyTorch trace and moe.sqlite.
    let mut traces: Vec<std::path::PathBuf> = std::fs::read_dir(dir.join("pytorch"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    traces.sort();
    traces.push(fixtures().join("moe.sqlite"));
    let (mut tables, mut fitted) = (0, 0);
    for path in &traces {
        let text = stdout_of(&["summary", path.to_str().unwrap()]);
        for block in text.split("\n\n ").filter(|b| b.contains("\n ---")) {
            let lines: Vec<Vec<char>> = block.lines().map(|l| l.chars().collect()).collect();
            let Some(d) = lines
                .iter()
                .position(|l| l.iter().collect::<String>().trim_start().starts_with("---"))
            else {
                continue;
            };
            // Columns from the dashes: runs of '-'.
            let dashes = &lines[d];
            let mut columns: Vec<(usize, usize)> = Vec::new();
            for (i, &ch) in dashes.iter().enumerate() {
                match (ch, columns.last_mut()) {
                    ('-', Some((_, end))) if *end == i => *end = i + 1,
                    ('-', _) => columns.push((i, i + 1)),
                    _ => {}
                }
            }
            let cell = |l: &Vec<char>, (a, b): (usize, usize)| -> String {
                l.get(a.min(l.len())..b.min(l.len()))
                    .unwrap_or(&[])
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_string()
            };
            let numeric = |v: &str| v.chars().all(|c| c.is_ascii_digit() || ".,-e+".contains(c));
            // Numbers are never cut; a text column is cut to no less than 20 characters.
            let least: usize = columns
                .iter()
                .map(|&c| {
                    let text = lines[d + 1..].iter().any(|l| !numeric(&cell(l, c)));
                    if text { 20 } else { c.1 - c.0 }
                })
                .sum::<usize>()
                + 1
                + 2 * (columns.len() - 1);
            tables += 1;
            if least <= 200 {
                fitted += 1;
                assert!(
                    dashes.len() <= 200,
                    "{}: a table of {} characters: {}",
                    path.display(),
                    dashes.len(),
                    block.lines().next().unwrap_or("")
                );
            }
        }
    }
    eprintln!(
        "checked {tables} tables of {} traces: {fitted} whose numbers fit 200 columns fit them",
        traces.len()
    );
    assert!(fitted > 20);
}

/// A PyTorch trace's clock counts from an epoch: `critical_path` and `iterations` printed
/// 4,977,740,894,052,981 where the window counts from the trace's first event. The terminal
/// now counts from there and says so; CSV keeps the file's clock, and the two differ by the
/// origin the terminal names.
#[test]
fn step_tables_of_a_pytorch_trace_count_from_its_first_event() {
    let trace = fixtures().join("kt_pair.pt.trace.json.gz");
    let trace = trace.to_str().unwrap();
    let loaded = sightline::load::load_file(std::path::Path::new(trace)).unwrap();
    let origin = loaded.time_origin_ns();
    assert!(
        origin > 1_000_000_000_000_000,
        "an epoch-based clock: {origin}"
    );
    for report in ["iterations", "critical_path"] {
        let table = stdout_of(&["summary", trace, "--report", report]);
        let csv = stdout_of(&["summary", trace, "--report", report, "--format", "csv"]);
        assert!(
            table.contains(&format!("count from the trace's first event, {origin} ns")),
            "{table}"
        );
        let starts: Vec<i64> = table_rows(&table)
            .iter()
            .map(|r| {
                let cells: Vec<&str> = r.split_whitespace().collect();
                cells[2].replace(',', "").parse().unwrap()
            })
            .collect();
        let csv_starts: Vec<i64> = csv::Reader::from_reader(csv.as_bytes())
            .records()
            .map(|r| r.unwrap()[2].parse().unwrap())
            .collect();
        assert!(!starts.is_empty(), "{report}: no rows");
        assert_eq!(starts.len(), csv_starts.len());
        for (t, c) in starts.iter().zip(&csv_starts) {
            assert_eq!(t + origin, *c, "{report}");
            assert!(*t >= 0 && *t < 100_000_000_000, "{report}: {t}");
        }
    }
}
