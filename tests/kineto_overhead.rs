//! Kineto's own overhead events (`"cat": "overhead"`: CUPTI's `Activity Buffer Request` and
//! `Buffer Flush`, written with pid -1 and tid 0) in a real 100-iteration PyTorch 2.11 run
//! (`tests/fixtures/kineto_overhead/`, made by `tests/captures/kineto_overhead.py`): loaded with
//! their exact times onto the thread whose operators they interrupted, drawn in rows of their
//! own there, and counted by `summary --report torch_ops` as PyTorch's own `key_averages()`
//! (saved in the same run) counts them.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;

use serde_json::value::RawValue;
use sightline::trace::{GlobalTid, RangeKind, Trace};
use sightline::ui::timeline::event_facts;
use sightline::ui::timeline::{EventKind, EventRef, RowKind};

const TRACE: &str = "kt_many_i100";

fn trace_path() -> PathBuf {
    common::fixtures()
        .join("kineto_overhead")
        .join(format!("{TRACE}.pt.trace.json.gz"))
}

fn golden_dir() -> PathBuf {
    common::fixtures()
        .join("kineto_overhead/golden")
        .join(TRACE)
}

/// An event of the file, its numbers kept as written.
#[derive(serde::Deserialize)]
struct JsonEvent<'a> {
    cat: Option<&'a str>,
    name: Option<String>,
    #[serde(borrow)]
    pid: Option<&'a RawValue>,
    #[serde(borrow)]
    tid: Option<&'a RawValue>,
    #[serde(borrow)]
    ts: Option<&'a RawValue>,
    #[serde(borrow)]
    dur: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct JsonTrace<'a> {
    #[serde(rename = "traceEvents", borrow)]
    events: Vec<JsonEvent<'a>>,
}

/// Nanoseconds from the decimal text of a number of microseconds (3 decimals in Kineto's
/// files), read here independently of the loader.
fn ns(raw: Option<&RawValue>) -> i64 {
    let text = raw.expect("a time").get();
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let frac = format!("{frac:0<3}");
    int.parse::<i64>().unwrap() * 1000 + frac[..3].parse::<i64>().unwrap()
}

fn id(raw: Option<&RawValue>) -> i64 {
    raw.expect("an id").get().parse().unwrap()
}

/// An event's (name, start, end) in ns.
type Span = (String, i64, i64);

/// Every overhead event of the file, and the (pid, tid) of its operators.
fn overhead_in_json() -> (Vec<Span>, (i64, i64)) {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(trace_path()).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let json: JsonTrace = serde_json::from_str(&text).unwrap();
    let mut overhead = Vec::new();
    let mut op_threads = Vec::new();
    for e in &json.events {
        match e.cat {
            Some("overhead") => {
                assert_eq!((id(e.pid), id(e.tid)), (-1, 0));
                let start = ns(e.ts);
                let name = e.name.clone().unwrap_or_default();
                overhead.push((name, start, start + ns(e.dur)));
            }
            Some("cpu_op") => op_threads.push((id(e.pid), id(e.tid))),
            _ => {}
        }
    }
    op_threads.sort_unstable();
    op_threads.dedup();
    assert_eq!(op_threads.len(), 1, "one thread runs the operators");
    overhead.sort();
    (overhead, op_threads[0])
}

fn load() -> Trace {
    sightline::load::load_file(&trace_path()).expect("load the fixture")
}

#[test]
fn overhead_events_load_on_the_thread_whose_operators_they_interrupted() {
    let trace = load();
    let (expected, (pid, tid)) = overhead_in_json();
    assert_eq!(
        expected
            .iter()
            .filter(|e| e.0 == "Activity Buffer Request")
            .count(),
        4
    );
    assert_eq!(expected.iter().filter(|e| e.0 == "Buffer Flush").count(), 3);
    let n = &trace.nvtx;
    let rows: Vec<usize> = (0..n.spans.len())
        .filter(|&i| n.kind_of(i) == RangeKind::ProfilerOverhead)
        .collect();
    let mut loaded: Vec<Span> = rows
        .iter()
        .map(|&i| {
            let name = trace.str(n.spans.name[i]).to_string();
            (name, n.spans.start_ns[i], n.spans.end_ns[i])
        })
        .collect();
    loaded.sort();
    assert_eq!(
        loaded, expected,
        "names and exact times as the file writes them"
    );
    // On the operators' thread (the main thread: tid = pid), each beginning inside an operator
    // or annotation of it.
    for &i in &rows {
        let g = GlobalTid(n.global_tid[i]);
        assert_eq!((i64::from(g.pid()), i64::from(g.tid())), (pid, tid));
        let start = n.spans.start_ns[i];
        assert!(
            (0..n.spans.len()).any(|j| matches!(
                n.kind_of(j),
                RangeKind::Operator | RangeKind::Annotation
            ) && n.global_tid[j] == n.global_tid[i]
                && n.spans.start_ns[j] <= start
                && start < n.spans.end_ns[j]),
            "{} at {start} begins inside an operator or annotation",
            trace.str(n.spans.name[i])
        );
    }
    // Left out: nothing of theirs.
    for w in &trace.warnings.entries {
        assert!(!w.message().contains("overhead"), "{}", w.message());
    }
}

#[test]
fn overhead_has_rows_of_its_own_in_its_thread_and_says_what_it_is() {
    let mut h = common::ui::harness(Some(trace_path()));
    common::ui::wait_for_load(&mut h);
    let app = h.state();
    let trace = app.trace().expect("the fixture is open");
    let model = &app.tab().document.as_ref().expect("document").model;
    let n = &trace.nvtx;
    let first = (0..n.spans.len())
        .find(|&i| n.kind_of(i) == RangeKind::ProfilerOverhead)
        .expect("an overhead event");
    let event = EventRef::new(EventKind::Nvtx, first);
    let row = &model.rows[model.row_of_event(trace, event).expect("a row for it")];
    assert_eq!(row.title, "Profiler overhead · depth 0");
    let RowKind::Nvtx { thread, .. } = row.kind else {
        panic!("{:?}", row.kind)
    };
    assert_eq!(trace.threads[thread].global_tid, n.global_tid[first]);
    // The thread's operators are drawn beside it.
    assert!(model.rows.iter().any(|r| r.title == "Operators · depth 0"
        && matches!(r.kind, RowKind::Nvtx { thread: t, .. } if t == thread)));
    let facts = event_facts::describe(trace, model, event);
    let kind = facts.iter().find(|(k, _)| *k == "Kind").expect("a kind");
    assert_eq!(kind.1, "Profiler overhead (Kineto / CUPTI)");
}

/// One golden row: count, the four times in ns (from PyTorch's µs), the four memory figures.
type Figures = (i64, [f64; 4], [i64; 4]);

fn golden_rows() -> HashMap<String, Vec<Figures>> {
    let mut reader = csv::Reader::from_path(golden_dir().join("key_averages.csv")).unwrap();
    let mut out: HashMap<String, Vec<Figures>> = HashMap::new();
    for r in reader.records() {
        let r = r.unwrap();
        let f = |k: usize| r[k].parse::<f64>().unwrap();
        let b = |k: usize| r[k].parse::<i64>().unwrap();
        out.entry(r[0].to_string()).or_default().push((
            b(1),
            [f(2) * 1e3, f(3) * 1e3, f(4) * 1e3, f(5) * 1e3],
            [b(6), b(7), b(8), b(9)],
        ));
    }
    out
}

#[test]
fn summary_torch_ops_equals_key_averages_to_the_nanosecond() {
    let path = trace_path();
    let out = common::sightline_stdout(&[
        "summary",
        path.to_str().unwrap(),
        "--report",
        "torch_ops",
        "--format",
        "csv",
    ]);
    let mut golden = golden_rows();
    let mut ours = csv::Reader::from_reader(out.as_bytes());
    let mut checked = 0;
    let mut failures = Vec::new();
    for r in ours.records() {
        let r = r.unwrap();
        let int = |k: usize| r[k].parse::<i64>().unwrap();
        let times = [int(3), int(4), int(5), int(6)];
        let bytes = [int(7), int(8), int(9), int(10)];
        let Some(candidates) = golden.get_mut(&r[0]) else {
            failures.push(format!("{} is not in key_averages()", &r[0]));
            continue;
        };
        // Equal to the nanosecond, but a GPU annotation's 2 ns (Kineto writes it 2 ns longer
        // than the time PyTorch counts: src/analysis/key_averages/mod.rs).
        let tolerance = if &r[1] == "CUDA" { 2.5 } else { 0.5 };
        let matching = candidates.iter().position(|(count, t, b)| {
            *count == int(2)
                && *b == bytes
                && t.iter()
                    .zip(times)
                    .all(|(want, got)| (want - got as f64).abs() <= tolerance)
        });
        match matching {
            Some(k) => {
                candidates.remove(k);
                checked += 1;
            }
            None => failures.push(format!(
                "{} {}: ours {times:?} {bytes:?}, key_averages() {candidates:?}",
                &r[0], &r[1]
            )),
        }
    }
    let left: Vec<&String> = golden
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, _)| k)
        .collect();
    assert!(left.is_empty(), "rows of key_averages() we lack: {left:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // 100 iterations (98 recorded): per iteration its CPU and GPU rows, and the ops.
    assert_eq!(checked, 216);
    for name in ["Activity Buffer Request", "Buffer Flush"] {
        assert!(
            out.contains(&format!("\n{name},CPU,")),
            "{name} has its row"
        );
    }
}
