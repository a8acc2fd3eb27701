//! The HTML report (`sightline report`): its metrics equal the analyses the panel reads and an
//! independent computation on the file (SQL on nsys exports of 2022.4, 2023.4, 2025.3 and 2026.2;
//! the JSON events of a PyTorch trace), the page loads nothing from anywhere, and `--baseline`
//! shows ws_baseline → ws_streaming's copy/compute overlap going from 0 % to about 81 %.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::Value;
use sightline::analysis::comm_overlap::{comm_compute_overlap, default_comm_regex};
use sightline::analysis::{self, Filter, TimeRange};
use sightline::report::{self, RunInput};
use sightline::trace::Trace;

type Interval = (i64, i64);

/// The test's own union of intervals (independent of `analysis::intervals`).
fn union(mut v: Vec<Interval>) -> Vec<Interval> {
    v.retain(|(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<Interval> = Vec::new();
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn total(v: &[Interval]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
}

/// |a ∩ b| of two unions, by brute force over pairs (the lists are small).
fn intersection_ns(a: &[Interval], b: &[Interval]) -> i64 {
    let mut t = 0;
    for &(s1, e1) in a {
        for &(s2, e2) in b {
            t += (e1.min(e2) - s1.max(s2)).max(0);
        }
    }
    t
}

/// GPU operations of one device as the file stores them: (kernels, memory ops).
#[derive(Default)]
struct DeviceOps {
    kernels: Vec<Interval>,
    memory: Vec<Interval>,
}

/// Per device, the kernels (and graph executions) and the memcpys and memsets, by SQL.
fn sql_ops(path: &Path) -> BTreeMap<u32, DeviceOps> {
    let conn = common::open_ro(path);
    let mut out: BTreeMap<u32, DeviceOps> = BTreeMap::new();
    for (table, kernel) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", true),
        ("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", true),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", false),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ] {
        if !common::has_table(&conn, table) {
            continue;
        }
        let mut stmt = conn
            .prepare(&format!("SELECT deviceId, start, end FROM {table}"))
            .unwrap();
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .unwrap();
        for row in rows {
            let (d, s, e) = row.unwrap();
            let ops = out.entry(d as u32).or_default();
            if kernel {
                ops.kernels.push((s, e));
            } else {
                ops.memory.push((s, e));
            }
        }
    }
    out
}

/// Per device from the file: (busy ns, window ns, overlap ns, memory ns).
fn independent(ops: &BTreeMap<u32, DeviceOps>) -> BTreeMap<u32, (i64, i64, i64, i64)> {
    ops.iter()
        .map(|(&d, o)| {
            let all: Vec<Interval> = o.kernels.iter().chain(&o.memory).copied().collect();
            let first = all.iter().map(|x| x.0).min().unwrap();
            let last = all.iter().map(|x| x.1).max().unwrap();
            let k = union(o.kernels.clone());
            let m = union(o.memory.clone());
            (
                d,
                (
                    total(&union(all)),
                    last - first,
                    intersection_ns(&k, &m),
                    total(&m),
                ),
            )
        })
        .collect()
}

/// The page's JSON block, parsed.
fn metrics_json(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"sightline-metrics\">";
    let start = html.find(open).expect("the metrics block") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("the block is JSON")
}

/// The report of `trace` (no pictures: the figures are what is checked here) and its JSON.
fn report_of(trace: &Trace, baseline: Option<&Trace>) -> (String, Value) {
    let input = |trace| RunInput {
        trace,
        range: TimeRange::ALL,
        exclusion: None,
        pictures: false,
    };
    let built = report::build(input(trace), baseline.map(input));
    let html = report::html::page(&built);
    let json = metrics_json(&html);
    (html, json)
}

fn gpu(json: &Value, device: u32) -> &Value {
    json["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["device"] == device)
        .unwrap_or_else(|| panic!("GPU {device} in {json}"))
}

fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

/// The report's figures equal the analyses the panel shows and the file's own numbers.
fn check_against_panel_and_file(trace: &Trace, file: &BTreeMap<u32, (i64, i64, i64, i64)>) {
    let (_, json) = report_of(trace, None);
    let filter = Filter::all();
    let activity = analysis::gpu_activity(trace, &filter);
    let overlap = analysis::copy_compute_overlap(trace, &filter);
    let comm = comm_compute_overlap(trace, &filter, &default_comm_regex());
    let name = trace.path.display();
    assert_eq!(
        json["gpus"].as_array().unwrap().len(),
        file.len(),
        "{name}: one entry per GPU with work"
    );
    for (&device, &(busy, window, overlap_ns, memory_ns)) in file {
        let g = gpu(&json, device);
        // The panel's analyses.
        let a = activity.iter().find(|a| a.device == device).unwrap();
        assert_eq!(g["busy_ns"], a.busy_ns, "{name} GPU {device}");
        assert_eq!(g["idle_ns"], a.idle_ns, "{name} GPU {device}");
        // JSON numbers read back to within an ulp or so (serde_json's fast float parsing).
        let same = |v: &Value, x: Option<f64>| match (v.as_f64(), x) {
            (Some(a), Some(b)) => close(a, b, 1e-9),
            (a, b) => a.is_none() && b.is_none(),
        };
        assert!(
            same(&g["utilization_pct"], a.busy_percent()),
            "{name} GPU {device}"
        );
        let o = overlap.iter().find(|o| o.device == device).unwrap();
        assert!(
            same(&g["copy_compute_overlap_pct"], o.overlap_percent()),
            "{name} GPU {device}"
        );
        let c = comm.iter().find(|c| c.device == device).unwrap();
        assert_eq!(g["exposed_comm_ns"], c.exposed_ns(), "{name} GPU {device}");
        // The file.
        assert_eq!(g["busy_ns"], busy, "{name} GPU {device}: busy by SQL");
        assert_eq!(g["measured_ns"], window, "{name} GPU {device}: span by SQL");
        let util = g["utilization_pct"].as_f64().unwrap();
        assert!(close(util, 100.0 * busy as f64 / window as f64, 1e-9));
        match g["copy_compute_overlap_pct"].as_f64() {
            Some(p) => assert!(
                close(p, 100.0 * overlap_ns as f64 / memory_ns as f64, 1e-9),
                "{name} GPU {device}: overlap {p} vs {overlap_ns}/{memory_ns}"
            ),
            None => assert_eq!(memory_ns, 0, "{name} GPU {device}"),
        }
        // Each check's verdict follows its value and the guides' target.
        let util_check = &g["checks"][0];
        assert_eq!(util_check["id"], "utilization");
        let met = if util > 85.0 { "met" } else { "not_met" };
        assert_eq!(util_check["verdict"], met, "{name} GPU {device}");
    }
}

fn fixture_or_shared(name: &str) -> Option<PathBuf> {
    let f = common::fixture(name);
    if f.exists() {
        return Some(f);
    }
    let shared = common::shared_traces()?.join(format!("{name}.sqlite"));
    if shared.exists() {
        Some(shared)
    } else {
        println!("{name}: not present, skipped");
        None
    }
}

#[test]
fn nsys_exports_of_four_versions_match_the_panel_and_sql() {
    let mut checked = Vec::new();
    for name in [
        "moe",                             // 2022.4
        "moe_export2023",                  // 2023.4
        "p2p_2gpu",                        // 2022.4, two GPUs
        "n25_moe",                         // 2025.3
        "n25_graphs",                      // 2025.3, graph executions
        "GindaChen_nsys-ai__h100_2gpu_1s", // 2026.2, NCCL on two GPUs
    ] {
        let Some(path) = fixture_or_shared(name) else {
            continue;
        };
        let trace = sightline::load::load_file(&path).unwrap();
        let file = independent(&sql_ops(&path));
        assert!(!file.is_empty(), "{name} has GPU work");
        check_against_panel_and_file(&trace, &file);
        checked.push(name);
    }
    assert!(checked.len() >= 3, "checked {checked:?}");
}

/// The sync-wait share of moe's launching thread, from the file: its CUDA runtime calls' span
/// and the union of its synchronising calls.
#[test]
fn sync_wait_matches_sql_on_moe() {
    let path = common::fixture("moe");
    let trace = sightline::load::load_file(&path).unwrap();
    let (_, json) = report_of(&trace, None);
    let conn = common::open_ro(&path);
    let launching: BTreeSet<i64> = conn
        .prepare(
            "SELECT DISTINCT r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId IN \
             (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL UNION \
              SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION \
              SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET)",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(launching.len(), 1, "moe launches from one thread");
    let tid = *launching.iter().next().unwrap();
    let calls: Vec<(String, i64, i64)> = conn
        .prepare(
            "SELECT s.value, r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
             JOIN StringIds s ON s.id = r.nameId WHERE r.globalTid = ?1",
        )
        .unwrap()
        .query_map([tid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Synchronising calls, as the guides count them: the synchronize calls and the
    // synchronous (non-Async) memcpy and memset.
    let sync =
        Regex::new(r"^cuda(Device|Stream|Event|Ctx)Synchronize|^cuda(Memcpy|Memset)(_v\d+)?$")
            .unwrap();
    let first = calls.iter().map(|c| c.1).min().unwrap();
    let last = calls.iter().map(|c| c.2).max().unwrap();
    let waits = union(
        calls
            .iter()
            .filter(|c| sync.is_match(&c.0))
            .map(|c| (c.1, c.2))
            .collect(),
    );
    let expected = 100.0 * total(&waits) as f64 / (last - first) as f64;
    let threads = json["host_threads"].as_array().unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0]["sync_wait_ns"], total(&waits));
    assert_eq!(threads[0]["active_ns"], last - first);
    let got = gpu(&json, 0)["sync_wait_pct"].as_f64().unwrap();
    assert!(close(got, expected, 1e-9), "{got} vs {expected}");
    assert!(got > 10.0, "moe waits on syncs: {got}");
    assert_eq!(gpu(&json, 0)["checks"][2]["verdict"], "not_met");
}

/// The configuration names what the capture traced, as the export's META_DATA_CAPTURE says.
#[test]
fn configuration_lists_the_capture_options_the_export_records() {
    let path = common::fixture("moe_export2023");
    let trace = sightline::load::load_file(&path).unwrap();
    let (html, json) = report_of(&trace, None);
    let conn = common::open_ro(&path);
    let traced: String = conn
        .query_row(
            "SELECT group_concat(value, ', ') FROM (SELECT value FROM META_DATA_CAPTURE \
             WHERE name = 'CAPTURE_EVENT_TYPE' ORDER BY rowid)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let options = json["config"]["options"].as_array().unwrap();
    assert_eq!(options[0], serde_json::json!(["Traced", traced]));
    assert!(html.contains(&format!("<th>Traced</th><td>{traced}</td>")));
    let mode = options
        .iter()
        .find(|o| o[0] == "CUDA_GRAPH_TRACE_OPTIONS:MODE")
        .unwrap();
    assert_eq!(mode[1], "Graph");
    assert!(!html.contains("ENVIRONMENT_VARIABLE"));
    // A 2022.4 export has no such table: nothing is made up.
    let moe = sightline::load::load_file(&common::fixture("moe")).unwrap();
    let (_, json) = report_of(&moe, None);
    assert_eq!(json["config"]["options"], serde_json::json!([]));
}

/// GPU metrics (2023.4 tables): SM active and DRAM from the export's own samples.
#[test]
fn gpu_metric_averages_match_sql() {
    let path = common::fixture("gpu_metrics_2023");
    let trace = sightline::load::load_file(&path).unwrap();
    let (_, json) = report_of(&trace, None);
    let g = gpu(&json, 0);
    let (w0, w1) = (
        g["window_start_ns"].as_i64().unwrap(),
        g["window_end_ns"].as_i64().unwrap(),
    );
    let conn = common::open_ro(&path);
    let avg = |metric: &str| -> f64 {
        conn.query_row(
            "SELECT avg(m.value) FROM GPU_METRICS m JOIN TARGET_INFO_GPU_METRICS t \
             ON t.metricId = m.metricId AND t.typeId = m.typeId \
             WHERE t.metricName = ?1 AND (m.typeId & 255) = 0 AND m.timestamp >= ?2 AND m.timestamp < ?3",
            rusqlite::params![metric, w0, w1],
            |r| r.get(0),
        )
        .unwrap()
    };
    let sm = g["sm_active_pct"].as_f64().unwrap();
    assert!(close(sm, avg("SM Active [Throughput %]"), 1e-9), "{sm}");
    let dram = g["dram_bandwidth_pct"].as_f64().unwrap();
    let expected =
        avg("DRAM Read Bandwidth [Throughput %]") + avg("DRAM Write Bandwidth [Throughput %]");
    assert!(close(dram, expected, 1e-9), "{dram} vs {expected}");
    let dram_check = g["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "dram")
        .unwrap();
    assert_eq!(
        dram_check["verdict"],
        if dram > 80.0 { "met" } else { "not_met" }
    );
    // Without GPU metrics the same check cannot be measured.
    let moe = sightline::load::load_file(&common::fixture("moe")).unwrap();
    let (_, json) = report_of(&moe, None);
    let dram_check = gpu(&json, 0)["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "dram")
        .cloned()
        .unwrap();
    assert_eq!(dram_check["verdict"], "not_measurable");
}

/// A decimal number of microseconds as written in the JSON, in ns, exactly.
fn micros_to_ns(text: &str) -> i64 {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut frac3: String = frac.chars().take(3).collect();
    while frac3.len() < 3 {
        frac3.push('0');
    }
    int.parse::<i64>().unwrap() * 1000 + frac3.parse::<i64>().unwrap()
}

#[derive(serde::Deserialize)]
struct KinetoEvent<'a> {
    cat: Option<String>,
    ph: Option<String>,
    #[serde(borrow)]
    ts: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    dur: Option<&'a serde_json::value::RawValue>,
    args: Option<BTreeMap<String, Value>>,
}

#[derive(serde::Deserialize)]
struct KinetoFile<'a> {
    #[serde(borrow, rename = "traceEvents")]
    events: Vec<KinetoEvent<'a>>,
}

#[test]
fn a_pytorch_trace_matches_the_panel_and_its_events() {
    let Some(dir) = common::shared_traces() else {
        println!("../shared/traces not present: skipped");
        return;
    };
    let path = dir.join("pytorch/kt_train.pt.trace.json.gz");
    let trace = sightline::load::load_file(&path).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap()),
        &mut text,
    )
    .unwrap();
    let file: KinetoFile = serde_json::from_str(&text).unwrap();
    let mut ops: BTreeMap<u32, DeviceOps> = BTreeMap::new();
    for e in &file.events {
        let (Some(cat), Some("X"), Some(ts), Some(dur)) =
            (e.cat.as_deref(), e.ph.as_deref(), e.ts, e.dur)
        else {
            continue;
        };
        let kernel = match cat {
            "kernel" => true,
            "gpu_memcpy" | "gpu_memset" => false,
            _ => continue,
        };
        let device = e
            .args
            .as_ref()
            .and_then(|a| a.get("device"))
            .and_then(Value::as_u64)
            .unwrap() as u32;
        let start = micros_to_ns(ts.get());
        let span = (start, start + micros_to_ns(dur.get()));
        let d = ops.entry(device).or_default();
        if kernel {
            d.kernels.push(span);
        } else {
            d.memory.push(span);
        }
    }
    assert!(!ops.is_empty());
    check_against_panel_and_file(&trace, &independent(&ops));
    let (html, json) = report_of(&trace, None);
    assert_eq!(json["config"]["format"], "PyTorch profiler trace");
    assert!(
        html.contains("torch_ops"),
        "PyTorch operators are a top table"
    );
    assert!(
        json["iterations"]["family"]
            .as_str()
            .unwrap()
            .starts_with("ProfilerStep")
    );
}

/// Every `src`, `href`, `@import` and `url(` of the page, where they point.
fn references(html: &str) -> Vec<String> {
    let re =
        Regex::new(r#"(?i)(src|href)\s*=\s*["']?([^"'\s>]*)|@import|url\s*\(([^)]*)"#).unwrap();
    re.captures_iter(html)
        .map(|c| c.get(0).unwrap().as_str().to_string())
        .collect()
}

#[test]
fn the_page_loads_nothing_from_anywhere() {
    let dir = common::scratch_dir("report-html");
    let out = dir.join("moe.html");
    let moe = common::fixture("moe");
    common::sightline_stdout(&[
        "report",
        moe.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&out).unwrap();
    let refs = references(&html);
    let images: Vec<&String> = refs
        .iter()
        .filter(|r| r.to_ascii_lowercase().starts_with("src"))
        .collect();
    assert_eq!(
        images.len(),
        3,
        "the whole run, the longest gap and the critical path of a step: {images:?}"
    );
    for r in &refs {
        let lower = r.to_ascii_lowercase();
        assert!(
            !lower.starts_with("@import") && !lower.starts_with("url"),
            "{r}"
        );
        if lower.starts_with("src") {
            assert!(lower.contains("data:image/png;base64,"), "{r}");
        } else {
            // Links within the page only.
            assert!(lower.contains("\"#"), "{r}");
        }
    }
    assert!(!html.contains("<link"), "no stylesheet or icon is linked");
    assert!(
        !Regex::new(r"(?i)<script[^>]*\bsrc")
            .unwrap()
            .is_match(&html)
    );
    // Every script is the data block.
    assert_eq!(html.matches("<script").count(), 1);
    let json = metrics_json(&html);
    assert_eq!(json["gpus"][0]["device"], 0);
    // A file name that is not .html is refused before loading.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["report", moe.to_str().unwrap(), "--out"])
        .arg(dir.join("moe.txt"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains(".html"));
}

#[test]
fn baseline_shows_overlap_going_from_zero_to_about_81_percent() {
    let base_path = common::fixture("ws_baseline");
    let new_path = common::fixture("ws_streaming");
    let base = sightline::load::load_file(&base_path).unwrap();
    let new = sightline::load::load_file(&new_path).unwrap();
    let (html, json) = report_of(&new, Some(&base));
    let sql = |p: &Path| {
        let (_, _, o, m) = independent(&sql_ops(p))[&0];
        100.0 * o as f64 / m as f64
    };
    let (b, n) = (sql(&base_path), sql(&new_path));
    assert_eq!(b, 0.0);
    assert!(
        (78.0..84.0).contains(&n),
        "ws_streaming's overlap by SQL: {n}"
    );
    let got_new = gpu(&json, 0)["copy_compute_overlap_pct"].as_f64().unwrap();
    let got_base = gpu(&json["baseline"], 0)["copy_compute_overlap_pct"]
        .as_f64()
        .unwrap();
    assert!(close(got_new, n, 1e-9) && close(got_base, b, 1e-9));
    // The page shows both side by side with the change, and says it got better.
    let row = Regex::new(
        r#"Copy/compute overlap</a></td><td class="num">0\.0 %</td><td class="num">(\d+\.\d) %</td><td class="num"><span class="better">\+(\d+\.\d) pt"#,
    )
    .unwrap();
    let c = row
        .captures(&html)
        .expect("the overlap row with baseline, new and change");
    assert_eq!(c[1], format!("{n:.1}"));
    assert_eq!(c[2], format!("{n:.1}"));
    let better = html.split("class=\"better\">Better").nth(1).unwrap();
    assert!(
        better
            .split("</div>")
            .next()
            .unwrap()
            .contains("Copy/compute overlap")
    );
    let comparison = json["comparison"].as_array().unwrap();
    let overlap = comparison
        .iter()
        .find(|c| c["metric"] == "Copy/compute overlap (%)")
        .unwrap();
    assert!(close(overlap["delta"].as_f64().unwrap(), n - b, 1e-9));
}

/// A finding's count and its rows' total are over every row the rule finds, not the 50 `analyze`
/// lists by default (issue 33, item 3): on moe, `cuda_memcpy_sync` and `cuda_api_sync` find
/// more than 50 rows; the page and its JSON say what `analyze --rule NAME:rows=-1` finds. (Its
/// time lost is the GPU idle time it explains: `tests/report_verdicts.rs`.)
#[test]
fn findings_count_every_row_not_the_listed_ones() {
    let path = common::fixture("moe");
    let trace = sightline::load::load_file(&path).unwrap();
    let (html, json) = report_of(&trace, None);
    let findings = json["findings"].as_array().expect("findings");
    let mut checked = 0;
    for rule in ["cuda_memcpy_sync", "cuda_api_sync"] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["analyze", "--format", "csv", "--rule"])
            .arg(format!("{rule}:rows=-1"))
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().unwrap().clone();
        let dur = header.iter().position(|h| h == "Duration (ns)").unwrap();
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
        let rows_ns: f64 = rows.iter().map(|r| r[dur].parse::<f64>().unwrap()).sum();
        assert!(rows.len() > 50, "{rule}: {} rows", rows.len());
        let f = findings
            .iter()
            .find(|f| f["source"] == rule)
            .unwrap_or_else(|| panic!("{rule} is a finding"));
        assert_eq!(f["count"].as_u64().unwrap() as usize, rows.len(), "{rule}");
        assert_eq!(
            f["rows_ns"].as_i64().unwrap(),
            rows_ns.round() as i64,
            "{rule}"
        );
        assert!(
            html.contains(&format!("in {} findings", rows.len())),
            "{rule}: the page says {} findings",
            rows.len()
        );
        checked += 1;
    }
    assert_eq!(checked, 2);
}
