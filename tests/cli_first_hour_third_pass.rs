//! The command line as a new user meets it, third pass (issue 47, item 11): `summary TRACE --ncu R`
//! without `--report` prints `ncu_join` after the default reports (it was read by nothing, in
//! silence); with a `--report` list that lacks `ncu_join` the user is told that nothing reads
//! `--ncu`; `sightline --help` and `summary --help` name every format Sightline opens.

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
