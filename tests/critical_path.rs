//! The critical path (`analysis::critical_path`, issue #34) on real traces:
//! - against HTA 0.5's `critical_path_analysis(...).summary()` for every `ProfilerStep` of the
//!   PyTorch traces with CUDA sync events (HTA in a scratch venv with pandas < 3, skipped loudly
//!   without the registry): our CPU share within 5 points of HTA's `cpu_bound`, HTA's
//!   `gpu_compute_bound` within 5 points of our kernels + copies + memset;
//! - the weight-streaming pairs, whose answer is known by construction, against an independent
//!   reading of the files (SQL for the nsys exports, the JSON for the PyTorch traces): the H2D
//!   copies each iteration launched, clipped to it;
//! - on every result: the parts sum to the path, the segments follow one another and add up to
//!   it, and the path is no longer than the iteration.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use sightline::analysis::TimeRange;
use sightline::analysis::critical_path::{CriticalPath, Part, step_paths};
use sightline::analysis::iterations::{self, FamilyChoice};
use sightline::load;
use sightline::trace::Trace;

/// Each iteration's range and critical path (the default family).
fn paths_of(trace: &Trace) -> Vec<((i64, i64), CriticalPath)> {
    paths_and_steady(trace).0
}

/// A check of the H2D time on a path against the H2D time launched: `check(on_path, all)`.
type Check = fn(i64, i64) -> bool;

/// Iterations' ranges with their paths, and which are steady.
type PathsAndSteady = (Vec<((i64, i64), CriticalPath)>, Vec<bool>);

/// Each iteration's range and critical path, and whether it is steady (neither warm-up nor an
/// outlier: the first token of the 2025.3.1 captures spends 0.2 s initialising on the CPU).
fn paths_and_steady(trace: &Trace) -> PathsAndSteady {
    let found = iterations::iterations(trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let steady = found
        .iterations
        .iter()
        .map(|i| !i.warmup && !i.outlier)
        .collect();
    let ranges: Vec<(i64, i64)> = found
        .iterations
        .iter()
        .map(|i| (i.start_ns, i.end_ns))
        .collect();
    assert!(
        !ranges.is_empty(),
        "{}: no iterations",
        trace.path.display()
    );
    let paths = step_paths(trace, &found.iterations);
    (ranges.into_iter().zip(paths).collect(), steady)
}

/// What every path must satisfy.
fn check_shape(name: &str, range: (i64, i64), path: &CriticalPath) {
    let total = path.path_ns();
    assert!(total > 0, "{name}: empty path");
    // The path runs from the range's start to its end: its parts sum to the duration.
    assert_eq!(
        total,
        range.1 - range.0,
        "{name}: path {total} is not the range {range:?}"
    );
    let mut cursor = i64::MIN;
    let mut by_part: HashMap<Part, i64> = HashMap::new();
    for s in &path.segments {
        assert!(
            s.start_ns >= cursor,
            "{name}: segment {s:?} starts before {cursor}"
        );
        assert!(s.end_ns > s.start_ns, "{name}: empty segment {s:?}");
        assert!(
            s.start_ns >= range.0 && s.end_ns <= range.1,
            "{name}: {s:?} outside"
        );
        cursor = s.end_ns;
        *by_part.entry(s.part).or_default() += s.end_ns - s.start_ns;
    }
    for p in Part::ALL {
        assert_eq!(
            by_part.get(&p).copied().unwrap_or(0),
            path.part_ns(p),
            "{name}: segments of {p:?} do not add up to its part"
        );
    }
    let cpu: i64 = path.cpu_by_thread.iter().map(|&(_, ns)| ns).sum();
    assert_eq!(cpu, path.part_ns(Part::Cpu), "{name}: CPU per thread");
}

fn shared(rel: &str) -> Option<PathBuf> {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not there ({rel})");
        return None;
    };
    Some(dir.join(rel))
}

/// H2D copy time each `(start, end)` launched (launching call starting inside it), clipped to it,
/// read with SQL.
fn h2d_by_sql(path: &Path, ranges: &[(i64, i64)]) -> Vec<i64> {
    let conn = common::open_ro(path);
    let mut stmt = conn
        .prepare(
            "SELECT r.start, m.start, m.end FROM CUPTI_ACTIVITY_KIND_MEMCPY m \
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId \
             AND r.globalTid / 16777216 = m.globalPid / 16777216 WHERE m.copyKind = 1",
        )
        .unwrap();
    let rows: Vec<(i64, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    clipped_sums(&rows, ranges)
}

fn clipped_sums(rows: &[(i64, i64, i64)], ranges: &[(i64, i64)]) -> Vec<i64> {
    ranges
        .iter()
        .map(|&(r0, r1)| {
            rows.iter()
                .filter(|&&(call, _, _)| call >= r0 && call <= r1)
                .map(|&(_, s, e)| (e.min(r1) - s.max(r0)).max(0))
                .sum()
        })
        .collect()
}

/// A PyTorch trace's events.
fn json_events(path: &Path) -> Vec<serde_json::Value> {
    let mut text = String::new();
    let file = std::fs::File::open(path).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["traceEvents"].as_array_mut().map(std::mem::take).unwrap()
}

/// H2D copy time each range launched, clipped to it, read from the JSON (times in ns from the
/// µs floats; Sightline keeps a PyTorch trace's epoch-based times).
fn h2d_by_json(path: &Path, ranges: &[(i64, i64)]) -> Vec<i64> {
    let events = json_events(path);
    let ns = |e: &serde_json::Value, key: &str| -> i64 {
        (e[key].as_f64().unwrap_or(0.0) * 1000.0).round() as i64
    };
    let mut calls: HashMap<i64, i64> = HashMap::new();
    for e in &events {
        if (e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
            && let Some(c) = e["args"]["correlation"].as_i64()
        {
            calls.insert(c, ns(e, "ts"));
        }
    }
    let rows: Vec<(i64, i64, i64)> = events
        .iter()
        .filter(|e| e["cat"] == "gpu_memcpy" && e["name"].as_str().unwrap_or("").contains("HtoD"))
        .filter_map(|e| {
            let call = *calls.get(&e["args"]["correlation"].as_i64()?)?;
            let s = ns(e, "ts");
            let dur = (e["dur"].as_f64()? * 1000.0).round() as i64;
            Some((call, s, s + dur))
        })
        .collect();
    clipped_sums(&rows, ranges)
}

/// The H2D time on each steady iteration's path against the H2D time it launched:
/// `check(path, all)`. Returns how many were checked.
fn check_h2d(
    name: &str,
    (paths, steady): &PathsAndSteady,
    launched: &[i64],
    check: Check,
    what: &str,
) -> usize {
    let mut checked = 0;
    for (n, ((range, path), &all)) in paths.iter().zip(launched).enumerate() {
        check_shape(&format!("{name} #{n}"), *range, path);
        if !steady[n] {
            eprintln!("{name} #{n}: warm-up or outlier, not checked for H2D");
            continue;
        }
        checked += 1;
        let on_path = path.part_ns(Part::CopyH2D);
        eprintln!("{name} #{n}: H2D on the path {on_path} ns of {all} ns launched");
        assert!(
            all > 0,
            "{name} #{n}: no H2D copies found by the independent reading"
        );
        assert!(
            check(on_path, all),
            "{name} #{n}: H2D on the path {on_path} of {all}: {what}"
        );
    }
    checked
}

#[test]
fn weight_streaming_nsys_pairs() {
    let mut checked = 0;
    let cases: [(&str, Check, &str); 4] = [
        (
            "ws_baseline.sqlite",
            |p, a| (p - a).abs() * 20 <= a,
            "within 5 %",
        ),
        ("ws_streaming.sqlite", |p, a| p * 3 <= a, "at most a third"),
        (
            "n25_ws_baseline.sqlite",
            |p, a| p * 10 >= a * 9,
            "at least 90 %",
        ),
        (
            "n25_ws_streaming.sqlite",
            |p, a| p * 10 >= a * 9,
            "at least 90 %",
        ),
    ];
    for (file, check, what) in cases {
        let Some(path) = shared(file) else { return };
        let trace = load::load_file(&path).unwrap();
        let paths = paths_and_steady(&trace);
        let ranges: Vec<(i64, i64)> = paths.0.iter().map(|(r, _)| *r).collect();
        let launched = h2d_by_sql(&path, &ranges);
        checked += check_h2d(file, &paths, &launched, check, what);
    }
    assert!(checked >= 12, "only {checked} steady iterations");
    eprintln!("checked {checked} steady iterations of 4 nsys exports");
}

#[test]
fn weight_streaming_pytorch_pair() {
    let mut checked = 0;
    for file in [
        "pytorch/kt_ws_baseline.pt.trace.json.gz",
        "pytorch/kt_ws_streaming_sync.pt.trace.json.gz",
    ] {
        let Some(path) = shared(file) else { return };
        let trace = load::load_file(&path).unwrap();
        let paths = paths_and_steady(&trace);
        let ranges: Vec<(i64, i64)> = paths.0.iter().map(|(r, _)| *r).collect();
        let launched = h2d_by_json(&path, &ranges);
        checked += check_h2d(
            file,
            &paths,
            &launched,
            |p, a| p * 10 >= a * 9,
            "at least 90 %",
        );
    }
    assert!(checked >= 4, "only {checked} steady iterations");
    eprintln!("checked {checked} steady iterations of 2 PyTorch traces");
}

/// HTA's summary of each `ProfilerStep` of `trace` (JSON lines of the script).
fn hta_summaries(python: &Path, trace: &Path, count: usize) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/hta_critical_path.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(trace)
        .arg(count.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "HTA: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn agrees_with_hta() {
    let Some(python) = common::venv::python_with(
        "sightline-hta-venv",
        "hta",
        &["holistictraceanalysis==0.5.0", "pandas<3"],
        None,
    ) else {
        return;
    };
    let mut compared = 0;
    for file in [
        "pytorch/kt_ws_streaming_sync.pt.trace.json.gz",
        "pytorch/kt_train_sync.pt.trace.json.gz",
    ] {
        let Some(path) = shared(file) else { return };
        let trace = load::load_file(&path).unwrap();
        let paths = paths_of(&trace);
        for (n, (range, path)) in paths.iter().enumerate() {
            check_shape(&format!("{file} #{n}"), *range, path);
        }
        for h in hta_summaries(&python, &path, paths.len()) {
            let n = h["instance"].as_u64().unwrap() as usize;
            if let Some(e) = h.get("error") {
                eprintln!("{file} step {n}: HTA failed ({e}); not compared");
                continue;
            }
            let (_, ours) = &paths[n];
            let total = ours.path_ns() as f64;
            let share = |parts: &[Part]| {
                parts.iter().map(|&p| ours.part_ns(p)).sum::<i64>() as f64 * 100.0 / total
            };
            let cpu = share(&[Part::Cpu]);
            let gpu = share(&[
                Part::Kernels,
                Part::CopyH2D,
                Part::CopyD2H,
                Part::CopyOther,
                Part::Memset,
            ]);
            let hta = |k: &str| h["summary"][k].as_f64().unwrap_or(0.0);
            eprintln!(
                "{file} step {n}: CPU {cpu:.2} % (HTA {:.2}), GPU work {gpu:.2} % (HTA compute {:.2})",
                hta("cpu_bound"),
                hta("gpu_compute_bound")
            );
            assert!(
                (cpu - hta("cpu_bound")).abs() <= 5.0,
                "{file} step {n}: CPU share"
            );
            assert!(
                (gpu - hta("gpu_compute_bound")).abs() <= 5.0,
                "{file} step {n}: GPU work"
            );
            compared += 1;
        }
    }
    assert!(compared >= 5, "only {compared} steps compared with HTA");
    eprintln!("compared {compared} steps with HTA 0.5");
}

#[test]
fn cli_columns_and_segments() {
    let Some(path) = shared("ws_baseline.sqlite") else {
        return;
    };
    let p = path.to_str().unwrap();
    let csv =
        common::sightline_stdout(&["summary", p, "--report", "critical_path", "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "Iteration,Name,Start (ns),Duration (ns),Path (ns),CPU (ns),Kernels (ns),Copies H2D (ns),Copies D2H (ns),Copies Other (ns),Memset (ns),Communication (ns),Launch Latency (ns),GPU Idle (ns),Unattributed (ns)"
    );
    let rows: Vec<Vec<i64>> = lines
        .map(|l| {
            l.split(',')
                .enumerate()
                .filter(|&(i, _)| i != 1)
                .map(|(_, v)| v.parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for r in &rows {
        // Iteration, Start, Duration, Path, then the ten parts.
        assert_eq!(r[3], r[4..].iter().sum::<i64>(), "parts sum to Path: {r:?}");
        assert_eq!(r[3], r[2], "Path = Duration: {r:?}");
    }
    let seg = common::sightline_stdout(&[
        "summary",
        p,
        "--report",
        "critical_path_segments",
        "--format",
        "csv",
    ]);
    assert!(seg.starts_with("Iteration,Part,Row,Start (ns),End (ns),Event\n"));
    let h2d: i64 = seg
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("0,Copies H2D,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[4].parse::<i64>().unwrap() - f[3].parse::<i64>().unwrap()
        })
        .sum();
    assert_eq!(
        h2d, rows[0][6],
        "segments of iteration 0 add up to its Copies H2D"
    );
}

#[test]
fn report_page_says_what_bounds_each_step() {
    let Some(path) = shared("ws_baseline.sqlite") else {
        return;
    };
    let out = common::scratch_dir("cp-report").join("ws_baseline.html");
    common::sightline_stdout(&[
        "report",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&out).unwrap();
    let section = &html[html.find("<h2 id=\"bounds\">").expect("the section")..];
    let section = &section[..section[1..].find("<h2 ").map_or(section.len(), |i| i + 1)];
    // One bar per iteration (4 tokens), each with its H2D copies.
    assert_eq!(section.matches("class=\"cpbar\"").count(), 4, "{section}");
    assert_eq!(section.matches("title=\"Copies H2D: ").count(), 4);
    // GPU-bound by construction: kernels hold most of the median step, then the H2D copies.
    let median = &section[section.find("median step: ").unwrap()..];
    assert!(median.starts_with("median step: Kernels "), "{median:.80}");
    assert!(median[..median.find('<').unwrap()].contains("Copies H2D"));
}

#[test]
fn says_what_the_trace_cannot_tell() {
    let Some(without) = shared("pytorch/kt_ws_baseline.pt.trace.json.gz") else {
        return;
    };
    let Some(with) = shared("pytorch/kt_ws_streaming_sync.pt.trace.json.gz") else {
        return;
    };
    let stderr_of = |p: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["summary", p.to_str().unwrap(), "--report", "critical_path"])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = stderr_of(&without);
    assert!(
        said.contains("No CUDA sync events") && said.contains("enable_cuda_sync_events=True"),
        "{said}"
    );
    assert!(!stderr_of(&with).contains("No CUDA sync events"));
}

#[test]
fn render_outlines_an_iterations_path() {
    let Some(path) = shared("ws_baseline.sqlite") else {
        return;
    };
    let out = common::scratch_dir("cp-render").join("token_1.png");
    let run = |n: &str| {
        Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args([
                "render",
                path.to_str().unwrap(),
                "--critical-path",
                n,
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let ok = run("1");
    let said = String::from_utf8_lossy(&ok.stderr);
    assert!(ok.status.success(), "{said}");
    assert!(
        said.contains("critical path of token_* #1 (token_1)"),
        "{said}"
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 1000);
    let bad = run("9");
    assert!(!bad.status.success());
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(said.contains("has 4 iterations"), "{said}");
}

/// Where the export names the event each stream wait waited for (nsys 2025.3.1: synchronization
/// rows of type "stream wait" with `eventId`, and `CUPTI_ACTIVITY_KIND_CUDA_EVENT`), the waits
/// are linked to the work recorded before the event: here, each H2D copy on the side stream. The
/// same reading in SQL: the record call's correlation id, the last copy launched before it.
#[test]
fn stream_waits_follow_the_recorded_event() {
    let Some(path) = shared("n25_ws_streaming.sqlite") else {
        return;
    };
    let trace = load::load_file(&path).unwrap();
    let prep = sightline::analysis::critical_path::Prepared::new(&trace);
    let conn = common::open_ro(&path);
    let waits: i64 = conn
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType = 2",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(waits > 0);
    assert_eq!(
        prep.wait_event.len() as i64,
        waits,
        "every stream wait linked to its call"
    );
    // For each wait: the copy SQL finds (the last H2D launched on the recorded stream before the
    // record call) is the one the analysis links.
    let mut stmt = conn
        .prepare(
            "SELECT w.start, (SELECT m.start FROM CUPTI_ACTIVITY_KIND_MEMCPY m \
               JOIN CUPTI_ACTIVITY_KIND_RUNTIME mr ON mr.correlationId = m.correlationId \
               WHERE m.streamId = e.streamId AND mr.start < rr.start ORDER BY mr.start DESC LIMIT 1), \
             s.eventId \
             FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s \
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME w ON w.correlationId = s.correlationId \
             JOIN CUPTI_ACTIVITY_KIND_CUDA_EVENT e ON e.eventId = s.eventId \
             JOIN CUPTI_ACTIVITY_KIND_RUNTIME rr ON rr.correlationId = e.correlationId \
             WHERE s.syncType = 2 AND rr.start < w.start \
             AND rr.start = (SELECT max(r2.start) FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT e2 \
               JOIN CUPTI_ACTIVITY_KIND_RUNTIME r2 ON r2.correlationId = e2.correlationId \
               WHERE e2.eventId = s.eventId AND r2.start < w.start)",
        )
        .unwrap();
    let rows: Vec<(i64, Option<i64>, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!rows.is_empty());
    let mut linked = 0;
    for (wait_start, copy_start, event) in &rows {
        let Some(copy_start) = copy_start else {
            continue;
        };
        let op = prep
            .recorded_op(&trace, *event as u64, *wait_start)
            .expect("a recorded op");
        assert_eq!(prep.ops[op as usize].start_ns, *copy_start, "event {event}");
        linked += 1;
    }
    assert!(linked > 0);
    eprintln!(
        "{linked} of {} stream waits linked through their event, as SQL reads them",
        rows.len()
    );
}

/// The CPU on the path of `path` per thread name (`python3`, `pt_autograd_0`), and whether the
/// thread `home` (the step's own) has any of it.
fn cpu_threads(trace: &Trace, path: &CriticalPath) -> Vec<String> {
    path.cpu_by_thread
        .iter()
        .filter(|&&(_, ns)| ns > 0)
        .map(|&(gtid, _)| {
            trace
                .threads
                .iter()
                .find(|t| t.global_tid == gtid)
                .map_or(String::new(), |t| trace.str(t.name).to_string())
        })
        .collect()
}

/// A step is everything its process does (issue #44): on a PyTorch training trace with CUDA sync
/// events, whose backward pass runs on `pt_autograd_0`, each step's path runs from its start to
/// its end through the main thread and the autograd thread, with under 5 % unattributed.
#[test]
fn training_steps_run_through_the_main_and_the_autograd_thread() {
    let Some(path) = shared("pytorch/kt_train_sync.pt.trace.json.gz") else {
        return;
    };
    let trace = load::load_file(&path).unwrap();
    let (paths, steady) = paths_and_steady(&trace);
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let mut checked = 0;
    for (n, (range, p)) in paths.iter().enumerate() {
        let name = format!("kt_train_sync #{n}");
        check_shape(&name, *range, p);
        let home = trace.nvtx.global_tid[found.iterations[n].nvtx];
        assert!(
            p.cpu_by_thread.iter().any(|&(t, ns)| t == home && ns > 0),
            "{name}: the step's own thread is not on its path"
        );
        let threads = cpu_threads(&trace, p);
        assert!(
            threads.iter().any(|t| t.starts_with("pt_autograd")),
            "{name}: the autograd thread is not on the path: {threads:?}"
        );
        let unattributed = p.part_ns(Part::Unattributed) as f64 / p.path_ns() as f64;
        eprintln!(
            "{name}: path {} ns = duration, threads {threads:?}, unattributed {:.2} %",
            p.path_ns(),
            unattributed * 100.0
        );
        if steady[n] {
            assert!(unattributed < 0.05, "{name}: {unattributed}");
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
    eprintln!("checked {checked} steps of kt_train_sync");
}

/// The same on an nsys export of PyTorch training with OS-runtime calls (`ncu/nsys_train.sqlite`):
/// the main thread waits in `pthread_cond_wait` during `backward_pass` while `pt_autograd_0`
/// works. Every path is its step's duration with under 5 % unattributed and the main thread on
/// it; the autograd thread is on it where its launches held the GPU back — and where it is not,
/// the GPU was busy through at least 95 % of that step's `backward_pass` (read with SQL), so the
/// backward's CPU side was hidden behind GPU work.
#[test]
fn nsys_training_steps_follow_the_autograd_thread_where_it_holds_the_gpu_back() {
    let Some(file) = shared("ncu/nsys_train.sqlite") else {
        return;
    };
    let trace = load::load_file(&file).unwrap();
    let (paths, steady) = paths_and_steady(&trace);
    let conn = common::open_ro(&file);
    let backward: Vec<(i64, i64)> = conn
        .prepare("SELECT start, end FROM NVTX_EVENTS WHERE text = 'backward_pass' ORDER BY start")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut ops: Vec<(i64, i64)> = conn
        .prepare(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
             SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL
             SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMSET",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    ops.sort_unstable();
    // GPU busy time inside [s, e): the union of the operations clipped to it.
    let busy = |s: i64, e: i64| -> i64 {
        let (mut total, mut cur): (i64, Option<(i64, i64)>) = (0, None);
        for &(a, b) in &ops {
            let (a, b) = (a.max(s), b.min(e));
            if b <= a {
                continue;
            }
            cur = match cur {
                Some((cs, ce)) if a <= ce => Some((cs, ce.max(b))),
                Some((cs, ce)) => {
                    total += ce - cs;
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        total + cur.map_or(0, |(a, b)| b - a)
    };
    let mut with_autograd = 0;
    for (n, (range, p)) in paths.iter().enumerate() {
        let name = format!("nsys_train #{n}");
        check_shape(&name, *range, p);
        let threads = cpu_threads(&trace, p);
        assert!(
            threads.iter().any(|t| t == "python3"),
            "{name}: {threads:?}"
        );
        let unattributed = p.part_ns(Part::Unattributed) as f64 / p.path_ns() as f64;
        if steady[n] {
            assert!(unattributed < 0.05, "{name}: {unattributed}");
        }
        let &(bs, be) = backward
            .iter()
            .find(|&&(s, _)| s >= range.0 && s < range.1)
            .unwrap();
        let busy_share = busy(bs, be) as f64 / (be - bs) as f64;
        eprintln!(
            "{name}: threads {threads:?}, unattributed {:.2} %, GPU busy {:.1} % of backward_pass",
            unattributed * 100.0,
            busy_share * 100.0
        );
        if threads.iter().any(|t| t.starts_with("pt_autograd")) {
            with_autograd += 1;
        } else {
            assert!(busy_share >= 0.95, "{name}: autograd missing, GPU idled");
        }
    }
    assert_eq!(paths.len(), 3);
    assert!(with_autograd >= 1);
    eprintln!(
        "checked {} steps of nsys_train ({with_autograd} with the autograd thread on the path)",
        paths.len()
    );
}

/// Both threads on every step (issue #44) on a CPU-bound nsys capture of PyTorch training with
/// OS-runtime calls (`tests/fixtures/nsys_train_cpu.sqlite`, made by
/// `tests/captures/run_nsys2025_device.sh`: the GPU is busy under 20 % of each step). While
/// `backward_pass` runs, the main thread waits in `pthread_cond_wait` (read with SQL) and
/// `pt_autograd_0` launches the backward's kernels: on every step the path holds the main thread
/// and the autograd thread, and the autograd thread's CPU on it covers at least 90 % of the main
/// thread's wait.
#[test]
fn cpu_bound_nsys_training_steps_hold_both_threads() {
    let file = PathBuf::from("tests/fixtures/nsys_train_cpu.sqlite");
    let trace = load::load_file(&file).unwrap();
    let (paths, steady) = paths_and_steady(&trace);
    let conn = common::open_ro(&file);
    // The main thread's condition waits inside each backward_pass, clipped to it.
    let waits: Vec<(i64, i64, i64)> = conn
        .prepare(
            "SELECT b.start, b.end, coalesce(sum(min(o.end, b.end) - max(o.start, b.start)), 0)
             FROM NVTX_EVENTS b LEFT JOIN OSRT_API o ON o.globalTid = b.globalTid
               AND o.start < b.end AND o.end > b.start
               AND o.nameId IN (SELECT id FROM StringIds WHERE value LIKE 'pthread_cond%wait%')
             WHERE b.text = 'backward_pass' GROUP BY b.start, b.end ORDER BY b.start",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let autograd: Vec<i64> = trace
        .threads
        .iter()
        .filter(|t| trace.str(t.name) == "pt_autograd_0")
        .map(|t| t.global_tid)
        .collect();
    assert_eq!(autograd.len(), 1);
    for (n, (range, p)) in paths.iter().enumerate() {
        let name = format!("nsys_train_cpu #{n}");
        check_shape(&name, *range, p);
        let threads = cpu_threads(&trace, p);
        assert!(
            threads.iter().any(|t| t == "python3"),
            "{name}: {threads:?}"
        );
        let on_autograd: i64 = p
            .cpu_by_thread
            .iter()
            .filter(|(t, _)| autograd.contains(t))
            .map(|&(_, ns)| ns)
            .sum();
        let &(_, _, wait) = waits
            .iter()
            .find(|&&(s, _, _)| s >= range.0 && s < range.1)
            .unwrap();
        let unattributed = p.part_ns(Part::Unattributed) as f64 / p.path_ns() as f64;
        eprintln!(
            "{name}: threads {threads:?}, autograd CPU on path {on_autograd} ns, main waits {wait} ns, unattributed {:.2} %",
            unattributed * 100.0
        );
        assert!(
            wait > 0,
            "{name}: the main thread never waits in backward_pass"
        );
        assert!(
            on_autograd as f64 >= 0.9 * wait as f64,
            "{name}: autograd {on_autograd} ns on the path, main waited {wait} ns"
        );
        if steady[n] {
            assert!(unattributed < 0.05, "{name}: {unattributed}");
        }
    }
    assert_eq!(paths.len(), 6);
    eprintln!("checked 6 steps of nsys_train_cpu: both threads on each");
}
