//! `sightline summary TRACE` with no `--report` (issue 36, item 5; issue 44, item 5): as `nsys
//! stats` does, the row dumps (`*_trace`, one line per event, and `critical_path_segments`, one
//! line per stretch of each critical path) are left out and named on stderr; `--report all` still
//! prints them. Checked on the moe fixture, whose row counts come from its own SQL.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::{Command, Output};

use common::{fixture, open_ro};

const ROW_DUMPS: [&str; 6] = [
    "cuda_gpu_trace",
    "cuda_api_trace",
    "cuda_kern_exec_trace",
    "nvtx_gpu_proj_trace",
    "nvtx_pushpop_trace",
    "critical_path_segments",
];

/// What `summary moe.sqlite` may print without `--report` (8,146 lines while
/// `critical_path_segments` was in the default set; 265 without it).
const DEFAULT_LINES_AT_MOST: usize = 1_500;

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The `(name):` title lines of a table-format summary.
fn titled(stdout: &str, name: &str) -> bool {
    stdout.lines().any(|l| l.ends_with(&format!("({name}):")))
}

#[test]
fn summary_without_report_leaves_the_row_dumps_out_and_names_them() {
    let moe = fixture("moe");
    let path = moe.to_string_lossy();
    let plain = run(&["summary", &path]);
    let stdout = String::from_utf8_lossy(&plain.stdout);
    let stderr = String::from_utf8_lossy(&plain.stderr);
    for name in ROW_DUMPS {
        assert!(!titled(&stdout, name), "{name} printed without --report");
        assert!(
            stderr.contains(name),
            "stderr does not name {name}: {stderr}"
        );
    }
    assert!(stderr.contains("--report all"), "{stderr}");
    assert!(
        stdout.lines().count() < DEFAULT_LINES_AT_MOST,
        "summary moe.sqlite printed {} lines",
        stdout.lines().count()
    );
    // The per-iteration summary of the path stays.
    assert!(titled(&stdout, "critical_path"), "critical_path missing");
    // The summaries themselves are all still there.
    for name in [
        "cuda_api_sum",
        "cuda_gpu_kern_sum",
        "cuda_gpu_mem_time_sum",
        "nvtx_sum",
    ] {
        assert!(
            titled(&stdout, name),
            "{name} missing from the default summary"
        );
    }

    // `--report all` keeps everything: the GPU trace alone has one line per kernel, copy and set.
    let all = run(&["summary", &path, "--report", "all"]);
    let all_stdout = String::from_utf8_lossy(&all.stdout);
    for name in ROW_DUMPS {
        assert!(titled(&all_stdout, name), "--report all lost {name}");
    }
    assert!(
        !String::from_utf8_lossy(&all.stderr).contains("left out"),
        "--report all has nothing left out"
    );
    let conn = open_ro(&moe);
    let gpu_rows: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)
                  + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)
                  + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)",
            [],
            |r| r.get(0),
        )
        .expect("count GPU rows");
    let (short, long) = (stdout.lines().count(), all_stdout.lines().count());
    assert!(
        long >= short + gpu_rows as usize,
        "default {short} lines, all {long}, GPU rows {gpu_rows}"
    );
    // A row dump asked for by name is printed, and nothing is said to be left out.
    let named = run(&["summary", &path, "--report", "cuda_gpu_trace"]);
    let named_stdout = String::from_utf8_lossy(&named.stdout);
    assert!(
        named_stdout.lines().count() > gpu_rows as usize,
        "{named_stdout}"
    );
    assert!(!String::from_utf8_lossy(&named.stderr).contains("left out"));
}

/// `sightline diff BASE NEW` without `--report` leads with the headline (where the story is:
/// 0.0 % → 81.2 % copy/compute overlap for the weight-streaming pair), then the kernels; with
/// `--format csv` it stays one table, the kernels (issue 36 item 10).
#[test]
fn diff_without_report_leads_with_the_headline() {
    let (base, new) = (
        common::fixture("ws_baseline"),
        common::fixture("ws_streaming_export2023"),
    );
    let (b, n) = (base.to_str().unwrap(), new.to_str().unwrap());
    let out = common::sightline_stdout(&["diff", b, n]);
    let headline = out.find("(headline):").expect("the headline first");
    let kernels = out.find("(cuda_gpu_kern_sum):").expect("then the kernels");
    assert!(headline < kernels, "{out}");
    assert!(out.contains("Copy/compute overlap"), "{out}");
    let csv = common::sightline_stdout(&["diff", b, n, "--format", "csv"]);
    assert!(csv.starts_with("Name,Base Instances,"), "{csv}");
    assert!(!csv.contains("Copy/compute overlap"));
}
