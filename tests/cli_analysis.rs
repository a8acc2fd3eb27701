//! `sightline summary --report overlap`, `gaps`, `export` and the warm-up flags, run as a user
//! runs them; the export is parsed back with the `csv` crate and counted against SQL.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;
use std::process::Command;

use rusqlite::Connection;

fn sightline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

fn fixture(name: &str) -> String {
    common::fixture(name).to_string_lossy().into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sql_count(conn: &Connection, sql: &str) -> usize {
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .map_or(0, |n| n as usize) // a table the file lacks counts as 0 rows
}

#[test]
fn overlap_report_has_the_documented_columns_and_values() {
    let run = |name: &str| {
        let out = sightline(&[
            "summary",
            &fixture(name),
            "--report",
            "overlap",
            "--format",
            "csv",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout(&out)
    };
    let baseline = run("ws_baseline");
    let mut lines = baseline.lines();
    assert_eq!(
        lines.next(),
        Some(
            "Device,Busy (%),Kernel Time (ns),Memory Op Time (ns),Overlap Time (ns),Copy/Compute Overlap (%)"
        )
    );
    let row: Vec<&str> = lines.next().expect("row").split(',').collect();
    assert_eq!(row[0], "0");
    assert_eq!(row[4], "0");
    assert_eq!(row[5], "0.0");
    let streaming = run("ws_streaming");
    let row: Vec<&str> = streaming.lines().nth(1).expect("row").split(',').collect();
    let pct: f64 = row[5].parse().expect("percent");
    assert!((70.0..=90.0).contains(&pct), "ws_streaming {pct}");
    // Two GPUs, one row each, device ids as plain integers.
    let p2p = run("p2p_2gpu");
    let devices: Vec<&str> = p2p
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap_or(""))
        .collect();
    assert_eq!(devices, ["0", "1"]);
    // Mixed with another report, each is preceded by its name.
    let out = sightline(&[
        "summary",
        &fixture("moe"),
        "--report",
        "cuda_gpu_kern_sum,overlap",
        "--format",
        "csv",
    ]);
    let text = stdout(&out);
    assert!(text.starts_with("# cuda_gpu_kern_sum\n") && text.contains("\n# overlap\nDevice,"));
}

#[test]
fn warmup_flags_change_the_kernel_report() {
    let path = fixture("transformer");
    let instances = |extra: &[&str]| -> u64 {
        let mut args = vec![
            "summary",
            &path,
            "--report",
            "cuda_gpu_kern_sum",
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        let out = sightline(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut r = csv::Reader::from_reader(out.stdout.as_slice());
        r.records()
            .map(|rec| rec.expect("record")[2].parse::<u64>().expect("instances"))
            .sum()
    };
    let all = instances(&[]);
    let no_warmup = instances(&["--exclude-warmup"]);
    let by_regex = instances(&["--exclude-nvtx", "(?i)^WARMUP$"]);
    let skip = instances(&["--skip-first", "2", "--iteration", "step_.*"]);
    let both = instances(&[
        "--exclude-warmup",
        "--skip-first",
        "2",
        "--iteration",
        "step_.*",
    ]);
    assert_eq!(all, 1578);
    assert!(no_warmup < all && skip < all);
    assert_eq!(no_warmup, by_regex);
    assert_eq!(
        both,
        no_warmup + skip - all,
        "warm-up and the first two steps are disjoint"
    );
}

#[test]
fn gaps_prints_the_documented_columns() {
    let out = sightline(&["gaps", &fixture("moe"), "--format", "csv", "--min", "1ms"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    assert_eq!(
        r.headers().expect("header").iter().collect::<Vec<_>>(),
        [
            "Device",
            "Stream",
            "Start (ns)",
            "End (ns)",
            "Duration (ns)",
            "Before",
            "After"
        ]
    );
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("record")).collect();
    assert!(!rows.is_empty());
    let mut previous = i64::MAX;
    for row in &rows {
        assert_eq!(&row[1], "", "whole-GPU gaps have no stream");
        let (s, e, d): (i64, i64, i64) = (
            row[2].parse().expect("start"),
            row[3].parse().expect("end"),
            row[4].parse().expect("duration"),
        );
        assert_eq!(e - s, d);
        assert!(
            d >= 1_000_000 && d <= previous,
            "at least --min, longest first"
        );
        previous = d;
    }
    let out = sightline(&[
        "gaps",
        &fixture("moe"),
        "--format",
        "csv",
        "--per-stream",
        "--range",
        "0.5s:0.6s",
    ]);
    assert!(out.status.success());
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    for row in r.records() {
        let row = row.expect("record");
        assert!(!row[1].is_empty(), "per-stream gaps name their stream");
        let (s, e): (i64, i64) = (row[2].parse().expect("s"), row[3].parse().expect("e"));
        assert!(s >= 500_000_000 && e <= 600_000_000, "clipped to the range");
    }
    let table = sightline(&["gaps", &fixture("ws_baseline")]);
    assert!(table.status.success());
    assert!(stdout(&table).contains(" GPU 0: busy "));
}

#[test]
fn export_writes_every_event_of_the_chosen_kinds() {
    let dir = common::scratch_dir("export");
    for name in ["moe", "transformer"] {
        let path = fixture(name);
        let file = dir.join(format!("{name}.csv"));
        let out = sightline(&["export", &path, "--out", &file.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut r = csv::Reader::from_path(&file).expect("open export");
        assert_eq!(
            r.headers()
                .expect("header")
                .iter()
                .collect::<Vec<_>>()
                .join(","),
            "kind,name,start_ns,end_ns,duration_ns,device,stream,pid,tid,correlation_id,bytes,copy_kind,grid,block,nvtx_depth,domain,address"
        );
        let mut counts: HashMap<String, usize> = HashMap::new();
        let mut grids: HashMap<String, String> = HashMap::new();
        let mut last_start = i64::MIN;
        for rec in r.records() {
            let rec = rec.expect("record");
            assert_eq!(rec.len(), 17);
            *counts.entry(rec[0].to_string()).or_default() += 1;
            let start: i64 = rec[2].parse().expect("start");
            assert!(start >= last_start, "ordered by start");
            last_start = start;
            if &rec[0] == "kernel" {
                grids.insert(rec[9].to_string(), format!("{}/{}", &rec[12], &rec[13]));
            }
        }
        let conn = Connection::open(common::fixture(name)).expect("sqlite");
        let expected = [
            ("kernel", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"),
            ("memcpy", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"),
            ("memset", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"),
            ("api", "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"),
            (
                "nvtx",
                "SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60, 70, 71)",
            ),
            ("osrt", "SELECT count(*) FROM OSRT_API"),
        ];
        for (kind, sql) in expected {
            assert_eq!(
                counts.get(kind).copied().unwrap_or(0),
                sql_count(&conn, sql),
                "{name}: {kind} rows"
            );
        }
        // Grid and block as "XxYxZ", checked for one kernel against SQL.
        let (corr, want): (i64, String) = conn
            .query_row(
                "SELECT correlationId, gridX||'x'||gridY||'x'||gridZ||'/'||blockX||'x'||blockY||'x'||blockZ \
                 FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("kernel");
        assert_eq!(grids.get(&corr.to_string()), Some(&want), "{name}");

        // A range and a kind list: counts equal SQL counts of events starting in [A, B).
        let (a, b) = (600_000_000_i64, 700_000_000_i64);
        let out = sightline(&[
            "export",
            &path,
            "--out",
            &file.to_string_lossy(),
            "--range",
            "600ms:700ms",
            "--kinds",
            "kernel,api",
        ]);
        assert!(out.status.success());
        let mut r = csv::Reader::from_path(&file).expect("open export");
        let mut counts: HashMap<String, usize> = HashMap::new();
        for rec in r.records() {
            *counts
                .entry(rec.expect("record")[0].to_string())
                .or_default() += 1;
        }
        let in_range = |table: &str| {
            sql_count(
                &conn,
                &format!("SELECT count(*) FROM {table} WHERE start >= {a} AND start < {b}"),
            )
        };
        assert_eq!(
            counts.get("kernel").copied().unwrap_or(0),
            in_range("CUPTI_ACTIVITY_KIND_KERNEL")
        );
        assert_eq!(
            counts.get("api").copied().unwrap_or(0),
            in_range("CUPTI_ACTIVITY_KIND_RUNTIME")
        );
        assert_eq!(counts.len(), 2, "{name}: only the kinds asked for");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments_give_one_clear_line_and_a_non_zero_exit() {
    let path = fixture("moe");
    let dir = common::scratch_dir("export-bad");
    let missing_dir = dir.join("no/such/dir/out.csv");
    for (args, says) in [
        (
            vec!["summary", &path, "--exclude-nvtx", "step_("],
            "not a valid regex",
        ),
        (vec!["gaps", &path, "--min", "fast"], "is not a time"),
        (
            vec!["gaps", &path, "--range", "5s:1s"],
            "ends before it starts",
        ),
        (
            vec!["export", &path, "--out", "x.csv", "--kinds", "kernels"],
            "unknown event kind",
        ),
        (
            vec!["export", &path, "--out", &missing_dir.to_string_lossy()],
            "cannot create",
        ),
        (
            vec!["summary", &path, "--report", "overlapp"],
            "unknown report",
        ),
    ] {
        let out = sightline(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("sightline:"))
            .collect();
        assert_eq!(errors.len(), 1, "{args:?}: {err}");
        assert!(errors[0].contains(says), "one line says it all: {err}");
        assert!(!err.contains("panicked"));
    }
    // --skip-first needs --iteration: clap's usage error.
    let out = sightline(&["summary", &path, "--skip-first", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
