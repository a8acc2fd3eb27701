//! `sightline bench` on bundled files: the window-start measures of a trace (first interactive
//! frame, panel settled) and the load-to-table measures of an Nsight Compute report, as JSON.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::path::Path;
use std::process::Command;

fn bench_json(file: &str, extra: &[&str]) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("bench")
        .arg(&path)
        .args(["--runs", "2", "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_trace_reports_its_first_interactive_frame_and_when_the_panel_settles() {
    let j = bench_json("moe.sqlite", &["--frames", "2"]);
    let w = &j["window_start"];
    let first = w["first_interactive_ms_runs"].as_array().unwrap();
    let settled = w["settled_ms_runs"].as_array().unwrap();
    assert_eq!((first.len(), settled.len()), (2, 2));
    for (f, s) in first.iter().zip(settled) {
        let (f, s) = (f.as_f64().unwrap(), s.as_f64().unwrap());
        // The first frame needs the load; the panel's results come after the first frame.
        assert!(f > 0.0 && f <= s, "first {f} ms, settled {s} ms");
    }
}

#[test]
fn a_report_reports_its_load_to_an_interactive_kernel_table() {
    let j = bench_json("ncu_kt_pair.ncu-repz", &[]);
    assert_eq!(j["kernels"], 60);
    let loads = j["load_ms"].as_array().unwrap();
    assert_eq!(loads.len(), 2);
    let (load, total) = (
        j["load_median_ms"].as_f64().unwrap(),
        j["to_table_median_ms"].as_f64().unwrap(),
    );
    assert!(
        load > 0.0 && total >= load,
        "load {load} ms, to table {total} ms"
    );
    assert!(j["rss_bytes"].as_u64().unwrap_or(1) > 0);
}
