//! `sightline diff` against the golden `cuda_gpu_kern_sum` tables of the two runs (nsys's own
//! numbers), on two exports of one capture (no difference at all), on runs with different kernels
//! (new / gone), and per step on transformer (its step ranges counted with SQL).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;

use common::{fixture, fixtures, sightline_stdout};

/// A CSV as header → value maps.
fn records(text: &str) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

fn golden(name: &str) -> HashMap<String, HashMap<String, String>> {
    let text =
        std::fs::read_to_string(fixtures().join(format!("golden/{name}/cuda_gpu_kern_sum.csv")))
            .unwrap();
    records(&text)
        .into_iter()
        .map(|r| (r["Name"].clone(), r))
        .collect()
}

fn num(s: &str) -> f64 {
    s.parse().unwrap()
}

/// SQLite's round(x, 1), which nsys uses.
fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

const COLUMNS: &str = "Name,Base Instances,New Instances,Base Total (ns),New Total (ns),\
Delta Total (ns),Delta Total (%),Base Avg (ns),New Avg (ns),Delta Avg (%),Status";

fn diff(base: &str, new: &str, extra: &[&str]) -> String {
    let (b, n) = (fixture(base), fixture(new));
    let mut args = vec![
        "diff",
        b.to_str().unwrap(),
        n.to_str().unwrap(),
        "--format",
        "csv",
    ];
    args.extend_from_slice(extra);
    sightline_stdout(&args)
}

#[test]
fn per_kernel_deltas_equal_the_golden_tables() {
    let out = diff("ws_baseline", "ws_streaming", &[]);
    assert_eq!(out.lines().next().unwrap(), COLUMNS);
    let (gb, gn) = (golden("ws_baseline"), golden("ws_streaming"));
    let rows = records(&out);
    assert_eq!(rows.len(), gb.len().max(gn.len()));
    let mut last = f64::INFINITY;
    for r in &rows {
        let (b, n) = (&gb[&r["Name"]], &gn[&r["Name"]]);
        let (bt, nt) = (num(&b["Total Time (ns)"]), num(&n["Total Time (ns)"]));
        assert_eq!(r["Status"], "both");
        assert_eq!(r["Base Instances"], b["Instances"]);
        assert_eq!(r["New Instances"], n["Instances"]);
        assert_eq!(num(&r["Base Total (ns)"]), bt);
        assert_eq!(num(&r["New Total (ns)"]), nt);
        assert_eq!(num(&r["Delta Total (ns)"]), nt - bt);
        assert_eq!(num(&r["Delta Total (%)"]), round1(100.0 * (nt - bt) / bt));
        let (ba, na) = (num(&b["Avg (ns)"]), num(&n["Avg (ns)"]));
        assert_eq!(num(&r["Base Avg (ns)"]), ba);
        assert_eq!(num(&r["New Avg (ns)"]), na);
        assert_eq!(num(&r["Delta Avg (%)"]), round1(100.0 * (na - ba) / ba));
        // By |Δ total| descending.
        assert!((nt - bt).abs() <= last);
        last = (nt - bt).abs();
    }
}

#[test]
fn two_exports_of_one_capture_differ_by_nothing() {
    let rows = records(&diff("moe", "moe_export2023", &[]));
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r["Status"], "both", "{}", r["Name"]);
        assert_eq!(r["Delta Total (ns)"], "0");
        assert_eq!(r["Delta Total (%)"], "0.0");
        assert_eq!(r["Delta Avg (%)"], "0.0");
    }
    // A trace against itself, every report.
    for report in [
        "cuda_api_sum",
        "cuda_gpu_mem_time_sum",
        "cuda_gpu_mem_size_sum",
        "nvtx_sum",
    ] {
        let rows = records(&diff("moe", "moe", &["--report", report]));
        assert!(!rows.is_empty(), "{report}");
        assert!(rows.iter().all(|r| {
            r["Status"] == "both"
                && num(&r[r
                    .keys()
                    .find(|k| k.starts_with("Delta Total (") && !k.ends_with("(%)"))
                    .unwrap()])
                    == 0.0
        }));
    }
}

#[test]
fn names_of_one_run_only_are_new_or_gone() {
    let (gb, gn) = (golden("moe"), golden("transformer"));
    let rows = records(&diff("moe", "transformer", &[]));
    let names: std::collections::BTreeSet<&String> = gb.keys().chain(gn.keys()).collect();
    assert_eq!(rows.len(), names.len());
    for r in &rows {
        let want = match (gb.get(&r["Name"]), gn.get(&r["Name"])) {
            (Some(_), Some(_)) => "both",
            (None, Some(n)) => {
                assert_eq!(r["New Total (ns)"], n["Total Time (ns)"]);
                assert_eq!(r["Delta Total (%)"], "", "no percentage of nothing");
                "new"
            }
            (Some(b), None) => {
                assert_eq!(num(&r["Delta Total (ns)"]), -num(&b["Total Time (ns)"]));
                assert_eq!(num(&r["Delta Total (%)"]), -100.0);
                "gone"
            }
            (None, None) => unreachable!(),
        };
        assert_eq!(r["Status"], want, "{}", r["Name"]);
    }
    assert!(rows.iter().any(|r| r["Status"] == "new"));
    assert!(rows.iter().any(|r| r["Status"] == "gone"));
}

#[test]
fn per_step_divides_by_the_step_ranges_of_each_run() {
    let conn = rusqlite::Connection::open_with_flags(
        fixture("transformer"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let steps: f64 = conn
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS WHERE text GLOB 'step_*'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(steps, 10.0, "transformer has 10 steps after its warm-up");
    let g = golden("transformer");
    let rows = records(&diff(
        "transformer",
        "transformer",
        &["--per-step", "^step_"],
    ));
    assert_eq!(rows.len(), g.len());
    for r in &rows {
        let k = &g[&r["Name"]];
        let per = |col: &str| ((num(&k[col]) / steps) * 1000.0).round() / 1000.0;
        assert_eq!(num(&r["Base Total (ns)"]), per("Total Time (ns)"));
        assert_eq!(num(&r["Base Instances"]), per("Instances"));
        assert_eq!(
            num(&r["Base Avg (ns)"]),
            num(&k["Avg (ns)"]),
            "average per instance"
        );
    }
    // The headline counts them too, and a run compared with itself moves nowhere.
    let head = records(&diff(
        "transformer",
        "transformer",
        &[
            "--report",
            "headline",
            "--per-step",
            "^step_",
            "--exclude-warmup",
        ],
    ));
    let steps_row = head
        .iter()
        .find(|r| r["Metric"] == "Iterations: ^step_")
        .unwrap();
    assert_eq!(num(&steps_row["Base"]), steps);
    for r in &head {
        assert_eq!(num(&r["Delta"]), 0.0, "{}", r["Metric"]);
    }
}

#[test]
fn headline_has_the_metrics_of_both_runs() {
    let head = records(&diff(
        "ws_baseline",
        "ws_streaming",
        &["--report", "headline"],
    ));
    let metrics: Vec<&str> = head.iter().map(|r| r["Metric"].as_str()).collect();
    for m in [
        "Trace span (ns)",
        "GPU 0 busy (%)",
        "Kernels",
        "Copy/compute overlap (%)",
    ] {
        assert!(metrics.contains(&m), "{m} in {metrics:?}");
    }
    let kernels = head.iter().find(|r| r["Metric"] == "Kernels").unwrap();
    let count = |name: &str| -> f64 { golden(name).values().map(|r| num(&r["Instances"])).sum() };
    assert_eq!(num(&kernels["Base"]), count("ws_baseline"));
    assert_eq!(num(&kernels["New"]), count("ws_streaming"));
    // Streaming overlaps its copies with compute; the baseline does not.
    let o = head
        .iter()
        .find(|r| r["Metric"] == "Copy/compute overlap (%)")
        .unwrap();
    assert!(num(&o["New"]) > num(&o["Base"]));
}

/// Issue 47 item 9: the headline compares what bounds an iteration — the median time its
/// critical path spends on the CPU, in kernels and in H2D copies — each equal to the median of
/// that column of `summary --report critical_path` for the run; weight streaming takes most H2D
/// copies off the path.
#[test]
fn headline_compares_the_critical_paths_parts() {
    let head = records(&diff(
        "ws_baseline",
        "ws_streaming",
        &["--report", "headline"],
    ));
    let median_of = |name: &str, column: &str| -> f64 {
        let f = fixture(name);
        let rows = records(&sightline_stdout(&[
            "summary",
            f.to_str().unwrap(),
            "--report",
            "critical_path",
            "--format",
            "csv",
        ]));
        let key = rows[0]
            .keys()
            .find(|k| k.starts_with(column))
            .unwrap_or_else(|| panic!("{column} in {:?}", rows[0].keys()))
            .clone();
        let mut v: Vec<f64> = rows.iter().map(|r| num(&r[&key])).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let mut compared = 0;
    for (part, column) in [
        ("CPU", "CPU"),
        ("Kernels", "Kernels"),
        ("Copies H2D", "Copies H2D"),
    ] {
        let row = head
            .iter()
            .find(|r| r["Metric"].starts_with(&format!("Critical path {part}:")))
            .unwrap_or_else(|| panic!("no critical path {part} in the headline"));
        for (side, name) in [("Base", "ws_baseline"), ("New", "ws_streaming")] {
            let want = median_of(name, column);
            assert!(
                (num(&row[side]) - want).abs() <= 1.0,
                "{part} {side}: {} against critical_path's median {want}",
                row[side]
            );
            compared += 1;
        }
    }
    let h2d = head
        .iter()
        .find(|r| r["Metric"].starts_with("Critical path Copies H2D:"))
        .unwrap();
    assert!(
        num(&h2d["New"]) < num(&h2d["Base"]) / 2.0,
        "streaming keeps H2D copies on the path: {h2d:?}"
    );
    eprintln!(
        "{compared} critical-path medians equal critical_path's; H2D on path {} → {} ns",
        h2d["Base"], h2d["New"]
    );
}
