//! The report's verdicts add up (issue 44, item 4), read from the page's metrics JSON:
//! - a target that does not apply says so: where a GPU's copies and memsets take under 1 % of
//!   its active span, copy/compute overlap and PCIe say `not_applicable` with the share, never
//!   `not_met` (kt_train: 0.9 ms of copies in 267 ms), while a run whose copies matter
//!   (ws_baseline, serial weight streaming) still gets "not met";
//! - the findings' time lost is GPU idle time counted once: their `lost_ns` add up to no more than
//!   the idle time of the GPUs (per GPU, the headline's trace span less its busy time; and the
//!   tighter active span less busy time, `idle_ns`), and a gap cause, `gpu_gaps` or
//!   `gpu_time_util` loses no more than its rows' own length.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use serde_json::Value;
use sightline::analysis::TimeRange;
use sightline::report::{self, RunInput};

/// The page and its metrics JSON (no pictures: the figures are what is checked).
fn report_of(path: &Path) -> (String, Value) {
    let trace = sightline::load::load_file(path).unwrap();
    let built = report::build(
        RunInput {
            trace: &trace,
            range: TimeRange::ALL,
            exclusion: None,
            pictures: false,
        },
        None,
    );
    let html = report::html::page(&built);
    let open = "<script type=\"application/json\" id=\"sightline-metrics\">";
    let start = html.find(open).expect("the metrics block") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    let json = serde_json::from_str(&html[start..end]).expect("the block is JSON");
    (html, json)
}

fn headline(json: &Value, metric: &str) -> Option<f64> {
    json["headline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["metric"] == metric)
        .and_then(|f| f["value"].as_f64())
}

fn check<'a>(gpu: &'a Value, id: &str) -> &'a Value {
    gpu["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("check {id} in {gpu}"))
}

/// The traces checked: fixtures, then shared traces where present.
fn traces() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "moe",
        "ws_baseline",
        "transformer",
        "gpu_metrics",
        "p2p_2gpu",
        "cpu_side",
        "stress",
    ]
    .iter()
    .map(|n| common::fixture(n))
    .filter(|p| p.exists())
    .collect();
    if let Some(dir) = common::shared_traces() {
        for rel in [
            "pytorch/kt_train.pt.trace.json.gz",
            "pytorch/kt_moe.pt.trace.json.gz",
            "GindaChen_nsys-ai__h100_2gpu_1s.sqlite",
        ] {
            let p = dir.join(rel);
            if p.exists() {
                out.push(p);
            } else {
                println!("{rel}: not present, skipped");
            }
        }
    }
    out
}

/// Checks one trace's findings against its GPUs' idle time; returns (lost, idle) in ns.
fn findings_add_up(path: &Path) -> (i64, i64) {
    let (_, json) = report_of(path);
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let span = headline(&json, "Trace span (ns)").expect("trace span") as i64;
    let gpus = json["gpus"].as_array().unwrap();
    let mut idle_of_span = 0i64;
    let mut idle_in_windows = 0i64;
    for g in gpus {
        let device = g["device"].as_u64().unwrap();
        let busy = headline(&json, &format!("GPU {device} busy time (ns)")).expect("busy") as i64;
        assert_eq!(busy, g["busy_ns"].as_i64().unwrap(), "{name} GPU {device}");
        idle_of_span += span - busy;
        idle_in_windows += g["idle_ns"].as_i64().unwrap();
    }
    let findings = json["findings"].as_array().unwrap();
    let mut lost = 0i64;
    for f in findings {
        let (l, rows) = (
            f["lost_ns"].as_i64().unwrap(),
            f["rows_ns"].as_i64().unwrap(),
        );
        assert!(l >= 0, "{name}: {f}");
        let source = f["source"].as_str().unwrap();
        if matches!(source, "idle_causes" | "gpu_gaps" | "gpu_time_util") {
            assert!(l <= rows, "{name}: {source} loses more than its rows: {f}");
        }
        lost += l;
    }
    assert!(
        lost <= idle_in_windows && idle_in_windows <= idle_of_span,
        "{name}: findings lose {lost} ns, GPUs idle {idle_in_windows} ns in their active spans, \
         {idle_of_span} ns in the trace span; {findings:#?}"
    );
    println!(
        "{name}: {} findings lose {lost} ns of {idle_in_windows} ns idle (span less busy: {idle_of_span} ns)",
        findings.len()
    );
    (lost, idle_in_windows)
}

#[test]
fn findings_lose_no_more_than_the_gpus_idle_time() {
    let paths = traces();
    for p in &paths {
        findings_add_up(p);
    }
    // 7 fixtures, and 3 shared traces where ../shared/traces is present.
    println!("checked {} traces", paths.len());
    assert!(paths.len() >= 7, "{paths:?}");
}

/// kt_train before issue 44: GPU Time Utilization 103.1 ms (the low-use regions' length) and
/// launch-late 95.7 ms, 198.8 ms of findings against 143.0 ms of idle time; copy/compute overlap
/// "0.0 % — not met" with 0.9 ms of copies in 267 ms.
#[test]
fn kt_train_says_n_a_for_copy_targets_and_its_findings_add_up() {
    let Some(dir) = common::shared_traces() else {
        println!("../shared/traces not present: skipped");
        return;
    };
    let path = dir.join("pytorch/kt_train.pt.trace.json.gz");
    let (html, json) = report_of(&path);
    for g in json["gpus"].as_array().unwrap() {
        let share = g["memory_ns"].as_f64().unwrap() * 100.0 / g["measured_ns"].as_f64().unwrap();
        assert!(
            share < 1.0,
            "kt_train's copies are {share:.2} % of its span"
        );
        for id in ["overlap", "pcie"] {
            let c = check(g, id);
            assert_eq!(c["verdict"], "not_applicable", "{c}");
            assert_eq!(
                c["note"],
                format!("copies are {share:.1} % of the active span"),
                "{c}"
            );
        }
    }
    let overlap_row = html
        .split("Copy/compute overlap</a></td>")
        .nth(1)
        .expect("the overlap row")
        .split("</tr>")
        .next()
        .unwrap();
    assert!(!overlap_row.contains("not met"), "{overlap_row}");
    assert!(
        overlap_row.contains("n/a</span> — copies are 0.3 % of the active span"),
        "{overlap_row}"
    );
    let (lost, idle) = findings_add_up(&path);
    assert!(
        lost > idle / 2,
        "launch-late alone explains most of it: {lost} of {idle}"
    );
    // The low-use regions lose only the idle time no gap cause explained.
    let util = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"] == "gpu_time_util")
        .expect("gpu_time_util is a finding");
    assert!(
        util["lost_ns"].as_i64().unwrap() < util["rows_ns"].as_i64().unwrap() / 2,
        "{util}"
    );
}

/// Serial weight streaming: copies are a large part of the run, so the target applies and its
/// 0 % overlap is "not met".
#[test]
fn ws_baseline_still_fails_the_overlap_target() {
    let (_, json) = report_of(&common::fixture("ws_baseline"));
    let g = &json["gpus"][0];
    let share = g["memory_ns"].as_f64().unwrap() * 100.0 / g["measured_ns"].as_f64().unwrap();
    assert!(share > 1.0, "{share}");
    assert_eq!(check(g, "overlap")["verdict"], "not_met");
    assert_eq!(check(g, "overlap")["note"], Value::Null);
}
