//! Iterations of a family of repeated ranges (issues #23, #44): each iteration's range, the
//! kernels launched by CUDA calls (runtime or driver) that any thread of its process started
//! inside it, and the GPU-time union of every operation those calls launched (copies and memsets
//! included), checked against the files themselves — SQL on the nsys exports (NVTX_EVENTS +
//! CUPTI_ACTIVITY_KIND_RUNTIME + GPU activity by correlationId in the same process), the JSON
//! events of a PyTorch trace — and the `iterations` CSV report.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;

use sightline::analysis::iterations::{self, FamilyChoice};
use sightline::analysis::{Excluded, TimeRange};
use sightline::load;

/// Total length of the union of `spans`, by sorting and merging (the test's own).
fn union_ns(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let mut total = 0;
    let mut current: Option<(i64, i64)> = None;
    for (s, e) in spans {
        match current {
            Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                current = Some((s, e));
            }
            None => current = Some((s, e)),
        }
    }
    total + current.map_or(0, |(s, e)| e - s)
}

/// One range of the export and what its process launched in it, as SQL finds them.
#[derive(Debug)]
struct SqlRange {
    text: String,
    start: i64,
    end: i64,
    kernels: Vec<(i64, i64)>,
    /// Every operation: kernels, copies, memsets.
    ops: Vec<(i64, i64)>,
}

/// NVTX push/pop ranges of `path` whose text matches the SQL `LIKE` pattern, in start order, each
/// with the kernels and the operations launched by runtime calls of any thread of its process that
/// start inside it (`[start, end)`).
fn sql_ranges(path: &std::path::Path, like: &str) -> Vec<SqlRange> {
    let conn = common::open_ro(path);
    let mut ranges: Vec<SqlRange> = conn
        .prepare(
            "SELECT n.rowid, coalesce(n.text, s.value), n.start, n.end FROM NVTX_EVENTS n
             LEFT JOIN StringIds s ON s.id = n.textId
             WHERE coalesce(n.text, s.value) LIKE ?1 ESCAPE '\\' AND n.end IS NOT NULL
             AND n.eventType = 59 ORDER BY n.start",
        )
        .unwrap()
        .query_map([like], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                SqlRange {
                    text: r.get(1)?,
                    start: r.get(2)?,
                    end: r.get(3)?,
                    kernels: Vec::new(),
                    ops: Vec::new(),
                },
            ))
        })
        .unwrap()
        .map(|r| r.unwrap())
        .map(|(rowid, mut range)| {
            let launched = |table: &str| -> Vec<(i64, i64)> {
                conn.prepare(&format!(
                    "SELECT DISTINCT k.rowid, k.start, k.end FROM NVTX_EVENTS n
                     JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
                          ON r.globalTid / 16777216 = n.globalTid / 16777216
                          AND r.start >= n.start AND r.start < n.end
                     JOIN {table} k ON k.correlationId = r.correlationId
                          AND k.globalPid / 16777216 = r.globalTid / 16777216
                     WHERE n.rowid = ?1"
                ))
                .unwrap()
                .query_map([rowid], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
            };
            range.kernels = launched("CUPTI_ACTIVITY_KIND_KERNEL");
            range.ops = range.kernels.clone();
            for table in ["CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"] {
                // An export without copies or memsets has no such table.
                let exists: i64 = conn
                    .query_row(
                        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                        [table],
                        |r| r.get(0),
                    )
                    .unwrap();
                if exists > 0 {
                    range.ops.extend(launched(table));
                }
            }
            range
        })
        .collect();
    ranges.sort_by_key(|r| r.start);
    ranges
}

#[test]
fn transformer_iterations_are_its_step_ranges_and_the_kernels_they_launched() {
    let trace = load::load_file(&common::fixture("transformer")).unwrap();
    assert_eq!(
        iterations::default_family(&trace).as_deref(),
        Some("step_*")
    );
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let sql = sql_ranges(&common::fixture("transformer"), "step\\_%");
    assert_eq!(sql.len(), 10, "transformer has step_0..9");
    assert_eq!(found.family, "step_*");
    assert_eq!(found.iterations.len(), sql.len());
    for (it, row) in found.iterations.iter().zip(&sql) {
        assert_eq!(*it.name, row.text);
        assert_eq!(
            (it.start_ns, it.end_ns),
            (row.start, row.end),
            "{}",
            row.text
        );
        assert_eq!(it.kernels, row.kernels.len(), "{}", row.text);
        assert!(it.kernels > 0);
        assert_eq!(it.gpu_time_ns, union_ns(row.ops.clone()), "{}", row.text);
        // The steps come after the `warmup` range.
        assert!(!it.warmup, "{}", row.text);
    }
    // Children: the ranges in each step, every one of its forward/backward/optimizer phases.
    let conn = common::open_ro(&common::fixture("transformer"));
    let phases: i64 = conn
        .query_row(
            "SELECT count(DISTINCT c.text) FROM NVTX_EVENTS s JOIN NVTX_EVENTS c
             ON c.globalTid = s.globalTid AND c.start >= s.start AND c.end <= s.end
             AND c.rowid != s.rowid WHERE s.text = 'step_3'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let columns = &found.children.columns;
    assert_eq!(columns.len() as i64, phases, "{columns:?}");
    let forward = columns.iter().position(|c| c == "forward_pass").unwrap();
    let backward = columns.iter().position(|c| c == "backward_pass").unwrap();
    assert!(
        forward < backward,
        "columns in the order they run: {columns:?}"
    );
    // A cell is its child's duration in that iteration.
    let step3 = &sql[3];
    let (f_start, f_end): (i64, i64) = conn
        .query_row(
            "SELECT start, end FROM NVTX_EVENTS WHERE text = 'forward_pass'
             AND start >= ?1 AND end <= ?2",
            [step3.start, step3.end],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let cell = found.children.cells[3][forward].unwrap();
    assert_eq!(
        (cell.duration_ns, cell.start_ns, cell.end_ns, cell.count),
        (f_end - f_start, f_start, f_end, 1)
    );
}

#[test]
fn warm_up_iterations_are_those_in_the_warmup_range_and_outliers_follow_median_and_mad() {
    let trace = load::load_file(&common::fixture("transformer")).unwrap();
    let conn = common::open_ro(&common::fixture("transformer"));
    let (w_start, w_end): (i64, i64) = conn
        .query_row(
            "SELECT start, end FROM NVTX_EVENTS WHERE text = 'warmup'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // One name of the family `layer_*_forward`.
    let choice = FamilyChoice::Named("layer_0_forward".to_string());
    let found = iterations::iterations(&trace, TimeRange::ALL, &choice, None);
    let sql = sql_ranges(&common::fixture("transformer"), "layer\\_0\\_forward");
    assert_eq!(found.iterations.len(), sql.len());
    let mut warm = 0;
    for (it, row) in found.iterations.iter().zip(&sql) {
        let in_warmup = row.start >= w_start && row.start < w_end;
        assert_eq!(it.warmup, in_warmup, "{} at {}", row.text, row.start);
        warm += usize::from(in_warmup);
        assert_eq!(it.kernels, row.kernels.len());
    }
    assert!(
        warm > 0 && warm < sql.len(),
        "{warm} of {} in warm-up",
        sql.len()
    );

    // With no warm-up told apart, every iteration is compared: outliers lie above
    // median + 3 × MAD (at least 5 % of the median), computed here from the SQL rows.
    let none = Excluded::default();
    let all = iterations::iterations(&trace, TimeRange::ALL, &choice, Some(&none));
    let mut d: Vec<i64> = sql.iter().map(|r| r.end - r.start).collect();
    d.sort_unstable();
    let median = d[(d.len() - 1) / 2];
    let mut dev: Vec<i64> = d.iter().map(|x| (x - median).abs()).collect();
    dev.sort_unstable();
    let mad = dev[(dev.len() - 1) / 2].max(median / 20);
    let expected: Vec<bool> = sql
        .iter()
        .map(|r| r.end - r.start > median + 3 * mad)
        .collect();
    let flagged: Vec<bool> = all.iterations.iter().map(|i| i.outlier).collect();
    assert_eq!(flagged, expected);
    assert!(
        expected.iter().any(|&o| o),
        "the first (cold) layer_0_forward is slow"
    );
    assert!(all.iterations.iter().all(|i| !i.warmup));
}

#[test]
fn a_regex_family_and_a_time_range_choose_the_iterations() {
    let trace = load::load_file(&common::fixture("transformer")).unwrap();
    let choice = FamilyChoice::parse(&trace, "^layer_[0-9]+_backward$").unwrap();
    assert!(matches!(choice, FamilyChoice::Regex(_)));
    let sql = sql_ranges(&common::fixture("transformer"), "layer\\_%\\_backward");
    let found = iterations::iterations(&trace, TimeRange::ALL, &choice, None);
    assert_eq!(found.iterations.len(), sql.len());
    // Only those starting in the range.
    let (lo, hi) = (sql[10].start, sql[20].start);
    let some = iterations::iterations(&trace, TimeRange::new(lo, hi), &choice, None);
    assert_eq!(some.iterations.len(), 10);
    assert_eq!(some.iterations[0].start_ns, lo);
    // A family the trace lacks: no iterations.
    let none = FamilyChoice::parse(&trace, "^no_such_range$").unwrap();
    assert!(
        iterations::iterations(&trace, TimeRange::ALL, &none, None)
            .iterations
            .is_empty()
    );
}

/// A Chrome-trace event of a PyTorch trace: (ts, dur) in ns, rounded from µs.
fn span_ns(e: &serde_json::Value) -> (i64, i64) {
    let ts = e["ts"].as_f64().unwrap();
    let dur = e["dur"].as_f64().unwrap_or(0.0);
    let s = (ts * 1000.0).round() as i64;
    (s, s + (dur * 1000.0).round() as i64)
}

#[test]
fn pytorch_iterations_are_its_profiler_steps_and_the_kernels_they_launched() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces not present: no PyTorch trace to check");
        return;
    };
    let path = dir.join("pytorch/kt_train.pt.trace.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let cat = |e: &serde_json::Value| e["cat"].as_str().unwrap_or("").to_string();
    let thread = |e: &serde_json::Value| (e["pid"].to_string(), e["tid"].to_string());
    let steps: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| {
            cat(e) == "user_annotation"
                && e["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("ProfilerStep#")
        })
        .collect();
    assert!(steps.len() > 2);
    // GPU operations by correlation id: (is a kernel, span).
    type Op = (bool, (i64, i64));
    let mut ops: HashMap<i64, Vec<Op>> = HashMap::new();
    for e in events
        .iter()
        .filter(|e| matches!(cat(e).as_str(), "kernel" | "gpu_memcpy" | "gpu_memset"))
    {
        let corr = e["args"]["correlation"].as_i64().unwrap();
        ops.entry(corr)
            .or_default()
            .push((cat(e) == "kernel", span_ns(e)));
    }
    let calls: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| matches!(cat(e).as_str(), "cuda_runtime" | "cuda_driver"))
        .collect();
    let mut expected: BTreeMap<i64, (String, i64, usize, i64)> = BTreeMap::new();
    for step in &steps {
        let (s, e) = span_ns(step);
        // Every thread of the step's process: the autograd thread's backward pass counts.
        let mut launched: HashSet<(i64, bool, i64, i64)> = HashSet::new();
        let mut threads: HashSet<String> = HashSet::new();
        for call in calls.iter().filter(|c| c["pid"] == step["pid"]) {
            let (cs, _) = span_ns(call);
            if cs >= s && cs < e {
                let corr = call["args"]["correlation"].as_i64().unwrap_or(-1);
                for &(kernel, (ks, ke)) in ops.get(&corr).into_iter().flatten() {
                    launched.insert((corr, kernel, ks, ke));
                    threads.insert(thread(call).1);
                }
            }
        }
        assert!(
            threads.len() >= 2,
            "the main and the autograd thread launch"
        );
        let kernels = launched.iter().filter(|l| l.1).count();
        let spans: Vec<(i64, i64)> = launched.iter().map(|&(_, _, s, e)| (s, e)).collect();
        expected.insert(
            s,
            (
                step["name"].as_str().unwrap().to_string(),
                e - s,
                kernels,
                union_ns(spans),
            ),
        );
    }

    let trace = load::load_file(&path).unwrap();
    assert_eq!(
        iterations::default_family(&trace).as_deref(),
        Some("ProfilerStep*")
    );
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    assert_eq!(found.iterations.len(), steps.len());
    let mut checked = 0;
    for (it, (start, (name, duration, count, gpu))) in found.iterations.iter().zip(&expected) {
        checked += 1;
        assert_eq!(&*it.name, name.as_str());
        // The JSON's µs floats round to the ns within 1; the loader reads the text exactly.
        assert!((it.start_ns - start).abs() <= 1, "{name}");
        assert!((it.duration_ns() - duration).abs() <= 2, "{name}");
        assert_eq!(it.kernels, *count, "{name}");
        assert!(*count > 0);
        assert!(
            (it.gpu_time_ns - gpu).abs() <= 2 * *count as i64,
            "{name}: {} vs {gpu}",
            it.gpu_time_ns
        );
    }
    eprintln!("kt_train: {checked} ProfilerSteps checked against the JSON");
    assert_eq!(checked, 6);
    // Record-function phases inside the steps are the heatmap's columns; the `step_N` annotation
    // inside each ProfilerStep (one per step) is one column `step_*`, a cell in every row.
    let numbered = events
        .iter()
        .filter(|e| cat(e) == "user_annotation")
        .filter(|e| {
            e["name"]
                .as_str()
                .and_then(|n| n.strip_prefix("step_"))
                .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
        })
        .count();
    assert_eq!(numbered, steps.len(), "kt_train numbers its steps step_N");
    let columns = &found.children.columns;
    let c = columns.iter().position(|c| c == "step_*").unwrap();
    assert!(
        found
            .children
            .cells
            .iter()
            .all(|row| row[c].is_some_and(|cell| cell.count == 1))
    );
    assert!(
        !columns
            .iter()
            .any(|c| c.starts_with("step_") && c != "step_*"),
        "{columns:?}"
    );
    assert!(!found.children.columns.is_empty());
    assert!(
        found
            .children
            .columns
            .iter()
            .all(|c| !c.starts_with("aten::")),
        "{:?}",
        found.children.columns
    );
}

/// An nsys export of PyTorch training (`ncu/nsys_train.sqlite`, whose backward runs on
/// `pt_autograd_0`): every `step_N` counts what any thread of the process launched in it.
#[test]
fn nsys_training_steps_count_every_thread_of_the_process() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces not present: no nsys training export to check");
        return;
    };
    let path = dir.join("ncu/nsys_train.sqlite");
    let trace = load::load_file(&path).unwrap();
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let sql = sql_ranges(&path, "step\\_%");
    assert_eq!(found.family, "step_*");
    assert_eq!(found.iterations.len(), sql.len());
    for (it, row) in found.iterations.iter().zip(&sql) {
        assert_eq!((it.start_ns, it.end_ns), (row.start, row.end));
        assert_eq!(it.kernels, row.kernels.len(), "{}", row.text);
        assert_eq!(it.gpu_time_ns, union_ns(row.ops.clone()), "{}", row.text);
    }
    // The step's own thread launched far fewer (nsys's per-thread join, nvtx_kern_sum's).
    let conn = common::open_ro(&path);
    let own: i64 = conn
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.globalTid = n.globalTid
                  AND r.start >= n.start AND r.end <= n.end
             JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
                  AND k.globalPid / 16777216 = r.globalTid / 16777216
             WHERE coalesce(n.text, s.value) = 'step_0'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!((own as usize) < found.iterations[0].kernels, "{own}");
    eprintln!(
        "nsys_train: {} steps checked against SQL ({} kernels in step_0, {own} from its own thread)",
        sql.len(),
        found.iterations[0].kernels
    );
}

#[test]
fn summary_prints_the_iterations_report_as_csv() {
    let path = common::fixture("transformer");
    let path = path.to_str().unwrap();
    let csv =
        common::sightline_stdout(&["summary", path, "--report", "iterations", "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("Iteration,Name,Start (ns),Duration (ns),GPU Time (ns),Kernels,Warm-up,Outlier")
    );
    let sql = sql_ranges(&common::fixture("transformer"), "step\\_%");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), sql.len());
    for (n, (row, r)) in rows.iter().zip(&sql).enumerate() {
        let expected = [
            n.to_string(),
            r.text.clone(),
            r.start.to_string(),
            (r.end - r.start).to_string(),
            union_ns(r.ops.clone()).to_string(),
            r.kernels.len().to_string(),
        ];
        assert_eq!(&row[..6], expected.as_slice());
    }
    // --family: a regex over the range text.
    let csv = common::sightline_stdout(&[
        "summary",
        path,
        "--report",
        "iterations",
        "--family",
        "^layer_[0-9]+_forward$",
        "--format",
        "csv",
    ]);
    assert_eq!(
        csv.lines().count() - 1,
        sql_ranges(&common::fixture("transformer"), "layer\\_%\\_forward").len()
    );
    // A bad regex is refused before anything is loaded.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args([
            "summary",
            path,
            "--report",
            "iterations",
            "--family",
            "step_(",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--family"));
}
