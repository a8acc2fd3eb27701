//! The `sightline summary` command line, run as a user runs it.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::Command;

fn sightline(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

fn golden(trace: &str, report: &str) -> String {
    std::fs::read_to_string(
        common::fixtures()
            .join("golden")
            .join(trace)
            .join(format!("{report}.csv")),
    )
    .expect("golden")
    .replace("\r\n", "\n")
}

#[test]
fn csv_output_equals_nsys_stats_byte_for_byte() {
    let path = common::fixture("transformer");
    let p = path.to_string_lossy();
    for report in [
        "cuda_gpu_kern_sum",
        "cuda_api_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
        "nvtx_sum",
    ] {
        let out = sightline(&["summary", &p, "--report", report, "--format", "csv"]);
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            golden("transformer", report),
            "{report}"
        );
    }
}

#[test]
fn several_reports_are_each_preceded_by_their_name() {
    let path = common::fixture("moe");
    let out = sightline(&[
        "summary",
        &path.to_string_lossy(),
        "--report",
        "nvtx_sum,cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    assert!(out.status.success());
    let expected = format!(
        "# nvtx_sum\n{}# cuda_gpu_kern_sum\n{}",
        golden("moe", "nvtx_sum"),
        golden("moe", "cuda_gpu_kern_sum")
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

#[test]
fn ranges_select_events_by_start_time() {
    let path = common::fixture("moe");
    let p = path.to_string_lossy();
    let all = sightline(&[
        "summary",
        &p,
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
        "--range",
        ":",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&all.stdout),
        golden("moe", "cuda_gpu_kern_sum")
    );
    // A range before the first event has no data: nothing on stdout, a note on stderr, exit 0.
    let none = sightline(&[
        "summary",
        &p,
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
        "--range",
        "0:1us",
    ]);
    assert!(none.status.success());
    assert!(none.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&none.stderr).lines().count(), 1);
    // Splitting the trace in two halves splits the instances.
    let trace = sightline::load::load_file(&path).expect("load");
    let mut starts = trace.kernels.spans.start_ns.clone();
    starts.sort_unstable();
    let mid = starts[starts.len() / 2];
    let count = |range: String| -> u64 {
        let out = sightline(&[
            "summary",
            &p,
            "--report",
            "cuda_gpu_kern_sum",
            "--format",
            "csv",
            "--range",
            &range,
        ]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').nth(2).and_then(|c| c.parse::<u64>().ok()))
            .sum()
    };
    let (a, b) = (count(format!(":{mid}")), count(format!("{mid}:")));
    assert!(a > 0 && b > 0);
    assert_eq!(a + b, trace.kernels.spans.len() as u64);
}

#[test]
fn report_with_no_data_prints_nothing_and_succeeds() {
    // An export from nsys 2022.1 with no NVTX at all.
    let Some(shared) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces not present");
        return;
    };
    let path = shared.join("johncardona1992_IMGA_CUDA__report2.sqlite");
    let out = sightline(&[
        "summary",
        &path.to_string_lossy(),
        "--report",
        "nvtx_sum",
        "--format",
        "csv",
    ]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not contain"));
}

#[test]
fn errors_are_one_clear_line_and_non_zero() {
    let fixture = common::fixture("moe");
    let f = fixture.to_string_lossy();
    let cases: [&[&str]; 4] = [
        &["summary", "/no/such/trace.sqlite"],
        &["summary", &f, "--report", "cuda_gpu_kern_summ"],
        &["summary", &f, "--range", "5s:1s"],
        &["summary", &f, "--range", "abc:"],
    ];
    for args in cases {
        let out = sightline(args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn rows_the_loader_skipped_are_named_on_stderr() {
    // A copy of a real export where some copies end before they start.
    let dir = common::scratch_dir("damaged-summary");
    let path = dir.join("moe_damaged.sqlite");
    std::fs::copy(common::fixture("moe"), &path).expect("copy fixture");
    let conn = rusqlite::Connection::open(&path).expect("open copy");
    let changed = conn
        .execute(
            "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET \"end\" = start - 5 WHERE rowid % 7 = 0",
            [],
        )
        .expect("damage the copy");
    drop(conn);
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "summary",
            "--report",
            "cuda_gpu_mem_time_sum",
            "--format",
            "csv",
        ])
        .arg(&path)
        .output()
        .expect("run sightline");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line =
        format!("moe_damaged.sqlite: {changed} memory copy rows end before they start (skipped)");
    assert!(
        stderr.contains("warning: ") && stderr.contains(&line),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--nsys-format`: an export of nsys 2025.3 prints as 2025.3.1 printed it by default and as
/// 2023.4.4 printed it when asked; the same for `analyze` and `diff`; a release Sightline does not
/// copy is refused.
#[test]
fn nsys_format_follows_the_writer_unless_chosen() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is not present beside the checkout");
        return;
    };
    let trace = dir.join("n25_rank1.sqlite");
    let (Ok(new), Ok(old)) = (
        std::fs::read_to_string(dir.join("golden-2025.3/n25_rank1/nvtx_sum.csv")),
        std::fs::read_to_string(dir.join("golden/n25_rank1/nvtx_sum.csv")),
    ) else {
        println!("SKIPPED: no golden nvtx_sum of n25_rank1");
        return;
    };
    let p = trace.to_string_lossy();
    let csv = |extra: &[&str]| {
        let mut args = vec!["summary", &*p, "--report", "nvtx_sum", "--format", "csv"];
        args.extend_from_slice(extra);
        let out = sightline(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    assert_eq!(csv(&[]), new.replace("\r\n", "\n"));
    assert_eq!(csv(&["--nsys-format", "2025.3"]), new.replace("\r\n", "\n"));
    assert_eq!(csv(&["--nsys-format", "2023.4"]), old.replace("\r\n", "\n"));
    // An export of nsys 2022.4 prints as 2023.4 by default, as 2025.3 when asked.
    let moe = common::fixture("moe");
    let m = moe.to_string_lossy();
    let out = sightline(&["summary", &m, "--report", "nvtx_sum", "--format", "csv"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        golden("moe", "nvtx_sum")
    );
    let out = sightline(&[
        "summary",
        &m,
        "--report",
        "nvtx_sum",
        "--format",
        "csv",
        "--nsys-format",
        "2025.3",
    ]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    // `:name` in the default domain, `workload:name` in moe's own domain.
    assert!(
        text.lines()
            .skip(1)
            .all(|l| l.contains("PushPop,:") || l.contains("PushPop,workload:")),
        "{text}"
    );
    // analyze takes it too (the rules print the same in both).
    for format in ["2023.4", "2025.3"] {
        let out = sightline(&[
            "analyze",
            &p,
            "--rule",
            "gpu_gaps:rows=-1:gap=1",
            "--format",
            "csv",
            "--nsys-format",
            format,
        ]);
        let want =
            std::fs::read_to_string(dir.join("golden-2025.3/n25_rank1/analyze.gpu_gaps.csv"))
                .expect("golden gpu_gaps")
                .replace("\r\n", "\n");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{format}");
    }
    // diff computes both runs in one format: NVTX names meet whatever wrote each run.
    let out = sightline(&[
        "diff",
        &p,
        &dir.join("n25_rank0.sqlite").to_string_lossy(),
        "--report",
        "nvtx_sum",
        "--format",
        "csv",
        "--nsys-format",
        "2023.4",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("\ncompute,12,12,"), "{text}");
    let out = sightline(&["summary", &p, "--nsys-format", "2024.1"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2023.4, 2025.3"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// All the reports nsys 2023.4 printed for each bundled trace, asked for in one `summary`: the
/// reports are computed side by side and the row dumps written as they are computed, yet the
/// output is nsys's, report for report, in the order asked.
#[test]
fn every_golden_report_at_once_prints_nsys_output_in_order() {
    let root = common::fixtures().join("golden");
    let mut traces = 0;
    let mut reports_checked = 0;
    for dir in std::fs::read_dir(&root).expect("golden folder") {
        let dir = dir.expect("entry").path();
        let trace = dir.file_name().unwrap().to_string_lossy().to_string();
        let path = common::fixtures().join(format!("{trace}.sqlite"));
        if !path.exists() {
            continue;
        }
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .expect("trace folder")
            .filter_map(|e| {
                let name = e.ok()?.file_name().to_string_lossy().to_string();
                let report = name.strip_suffix(".csv")?;
                (!report.starts_with("analyze.")).then(|| report.to_string())
            })
            .collect();
        names.sort();
        // Row dumps first and last, so the order printed is not the order finished.
        names.reverse();
        let expected: String = names
            .iter()
            .map(|r| format!("# {r}\n{}", golden(&trace, r)))
            .collect();
        let out = sightline(&[
            "summary",
            &path.to_string_lossy(),
            "--report",
            &names.join(","),
            "--format",
            "csv",
            "--nsys-format",
            "2023.4",
        ]);
        assert!(out.status.success(), "{trace}");
        let printed = String::from_utf8_lossy(&out.stdout);
        if printed != expected {
            for r in &names {
                let one = sightline(&[
                    "summary",
                    &path.to_string_lossy(),
                    "--report",
                    r,
                    "--format",
                    "csv",
                    "--nsys-format",
                    "2023.4",
                ]);
                assert_eq!(
                    String::from_utf8_lossy(&one.stdout),
                    golden(&trace, r),
                    "{trace} {r}"
                );
            }
            panic!("{trace}: each report alone matches, all together do not");
        }
        traces += 1;
        reports_checked += names.len();
    }
    println!("{reports_checked} reports of {traces} bundled traces printed at once");
    assert!(
        traces >= 5,
        "only {traces} bundled traces with golden output"
    );
}

/// `sightline summary … | head -1`: the reader leaves early; the command stops quietly. (The
/// two row dumps of stress print 5.9 MB, 90 times a pipe's buffer: the writes do fail.)
#[test]
fn a_reader_that_leaves_early_is_not_an_error() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["summary", &common::fixture("stress").to_string_lossy()])
        .args([
            "--report",
            "cuda_gpu_trace,cuda_api_trace",
            "--format",
            "csv",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run sightline");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("a line");
    assert_eq!(first.trim_end(), "# cuda_gpu_trace");
    // The pipe's reader is gone now (the BufReader was dropped).
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{:?}", out.status);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("sightline:"), "{stderr}");
}
