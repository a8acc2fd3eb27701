//! Damaged and odd PyTorch profiler traces: a real trace cut short (as JSON and as gzip), gzip
//! holding text, text named `.json`, a trace with no events, events with missing or odd fields,
//! the top-level array form and an empty file. Each load runs on its own thread with a time
//! limit, must not panic, must leave the file as it was, and either loads with its warnings
//! counted or fails with an error that names the file.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use sightline::load::LoadError;
use sightline::trace::{LoadWarning, Trace};

const LIMIT: Duration = Duration::from_secs(20);

/// The real trace the damage is done to (6 MB of JSON: more than one of the loader's blocks).
const REAL: &str = "kt_moe.pt.trace.json.gz";

fn real_trace() -> Option<PathBuf> {
    let path = common::shared_traces()?.join("pytorch").join(REAL);
    path.is_file().then_some(path)
}

/// Loads `path` on its own thread: fails the test on a panic or when it takes over 20 s, and
/// when the file's bytes are not the same afterwards.
fn load(path: &Path) -> Result<Trace, LoadError> {
    let before = std::fs::read(path).expect("read the input");
    let (send, receive) = std::sync::mpsc::channel();
    let owned = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = send.send(sightline::load::load_file(&owned));
    });
    let result = match receive.recv_timeout(LIMIT) {
        Ok(r) => r,
        Err(RecvTimeoutError::Timeout) => panic!("{}: the load hung (> 20 s)", path.display()),
        Err(RecvTimeoutError::Disconnected) => panic!("{}: the load panicked", path.display()),
    };
    assert!(
        std::fs::read(path).expect("read the input again") == before,
        "{}: loading changed the file",
        path.display()
    );
    result
}

/// Loads `path` and expects an error whose message names the file and contains `says`.
fn load_err(path: &Path, says: &str) -> String {
    let message = match load(path) {
        Ok(t) => panic!(
            "{}: loaded {} events, expected an error",
            path.display(),
            t.event_count()
        ),
        Err(e) => e.to_string(),
    };
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(message.contains(name.as_ref()), "names the file: {message}");
    assert!(message.contains(says), "`{says}` in: {message}");
    message
}

fn warning<'a>(trace: &'a Trace, says: &str) -> Option<&'a LoadWarning> {
    trace
        .warnings
        .entries
        .iter()
        .find(|w| w.message().contains(says))
}

fn messages(trace: &Trace) -> Vec<String> {
    trace.warnings.entries.iter().map(|w| w.message()).collect()
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("open"))
        .read_to_end(&mut out)
        .expect("gunzip");
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).expect("gzip");
    enc.finish().expect("gzip")
}

#[test]
fn a_trace_cut_short_loads_the_events_before_the_cut_with_a_warning() {
    let Some(real) = real_trace() else {
        println!("SKIPPED: ../shared/traces/pytorch/{REAL} not present; 0 files checked");
        return;
    };
    let full = load(&real).expect("the real trace loads");
    assert!(full.warnings.is_empty(), "{:?}", messages(&full));
    let json = gunzip(&real);
    let dir = common::scratch_dir("kineto-cut");
    let mut checked = 0;
    for percent in [10, 50, 99] {
        let path = dir.join(format!("cut{percent}.pt.trace.json"));
        std::fs::write(&path, &json[..json.len() * percent / 100]).expect("write");
        let trace = load(&path).unwrap_or_else(|e| panic!("{percent} %: {e}"));
        let cut = warning(&trace, "truncated").or(warning(&trace, "cut"));
        assert!(cut.is_some(), "{percent} %: {:?}", messages(&trace));
        assert!(
            trace.event_count() < full.event_count() && trace.event_count() > 0,
            "{percent} %: {} of {} events",
            trace.event_count(),
            full.event_count()
        );
        println!(
            "  cut at {percent} %: {} of {} events; {:?}",
            trace.event_count(),
            full.event_count(),
            messages(&trace)
        );
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("checked {checked} truncated copies of {REAL}");
}

#[test]
fn a_gzip_cut_short_loads_partially_with_a_warning_or_fails_naming_the_file() {
    let Some(real) = real_trace() else {
        println!("SKIPPED: ../shared/traces/pytorch/{REAL} not present; 0 files checked");
        return;
    };
    let full = load(&real).expect("the real trace loads").event_count();
    let gz = std::fs::read(&real).expect("read");
    let dir = common::scratch_dir("kineto-gzcut");
    let n = gz.len();
    let mut loaded = 0;
    let mut refused = 0;
    for at in [1, 2, 10, 30, n / 10, n / 2, n - 9, n - 4, n - 1] {
        let path = dir.join(format!("gzcut{at}.pt.trace.json.gz"));
        std::fs::write(&path, &gz[..at]).expect("write");
        match load(&path) {
            Ok(trace) => {
                let damaged = warning(&trace, "damaged").or(warning(&trace, "truncated"));
                assert!(damaged.is_some(), "cut at {at}: {:?}", messages(&trace));
                assert!(trace.event_count() <= full, "cut at {at}");
                println!(
                    "  gzip cut at {at} of {n} bytes: {} of {full} events; {:?}",
                    trace.event_count(),
                    messages(&trace)
                );
                loaded += 1;
            }
            Err(e) => {
                let message = e.to_string();
                assert!(
                    message.contains(&format!("gzcut{at}.pt.trace.json.gz")),
                    "cut at {at}: {message}"
                );
                println!("  gzip cut at {at} of {n} bytes: {message}");
                refused += 1;
            }
        }
    }
    // The stream decodes far enough for events from 10 % on.
    assert!(loaded >= 4, "{loaded} loaded, {refused} refused");
    let _ = std::fs::remove_dir_all(&dir);
    println!("checked {} gzip cuts of {REAL}", loaded + refused);
}

#[test]
fn inputs_that_are_not_traces_are_refused_with_a_clear_message() {
    let dir = common::scratch_dir("kineto-not");
    let mut checked = 0;
    let mut case = |name: &str, bytes: &[u8], says: &str| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        let message = load_err(&path, says);
        println!("  {name}: {message}");
        checked += 1;
    };
    // Gzip holding prose.
    case(
        "prose.pt.trace.json.gz",
        &gzip(b"Dear diary, today the GPU was idle.\n"),
        "not JSON",
    );
    // Text that merely has a trace's name.
    case(
        "notes.json",
        b"These are my notes about the run, not a trace.\n",
        "not a trace",
    );
    // JSON without a single event.
    case(
        "empty_events.json",
        br#"{"traceEvents": []}"#,
        "holds no events",
    );
    case(
        "empty_events.json.gz",
        &gzip(br#"{"schemaVersion": 1, "traceEvents": []}"#),
        "holds no events",
    );
    // An empty file.
    case("zero.pt.trace.json", b"", "not a trace");
    let _ = std::fs::remove_dir_all(&dir);
    println!("checked {checked} files that are not traces");
}

/// One of each odd event, and two well-formed ones (a kernel and the call that launched it).
const ODD_EVENTS: &str = r#"
  {"ph": "X", "cat": "kernel", "name": "k_ok", "pid": 0, "tid": 7, "ts": 100.5, "dur": 2.25,
   "args": {"device": 0, "stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
   "ts": 99, "dur": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "k_no_ts", "pid": 0, "tid": 7, "dur": 1,
   "args": {"device": 0, "stream": 7}},
  {"ph": "X", "cat": "cpu_op", "name": "op_no_dur", "pid": 10, "tid": 10, "ts": 101},
  {"ph": "X", "cat": "cpu_op", "name": "op_negative_dur", "pid": 10, "tid": 10, "ts": 102,
   "dur": -3},
  {"ph": "X", "cat": "user_annotation", "name": "string_ids", "pid": "10", "tid": "11",
   "ts": "103", "dur": 1},
  {"ph": "X", "cat": "cpu_op", "name": "text_pid", "pid": "Spans", "tid": "x", "ts": 103,
   "dur": 1},
  {"ph": "X", "cat": "mystery_category", "name": "m", "pid": 10, "tid": 10, "ts": 104, "dur": 1},
  {"ph": "s", "id": 1, "cat": "ac2g", "name": "ac2g", "pid": 10, "tid": 10, "ts": 99},
  {"ph": "f", "id": 1, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 7, "ts": 100.5, "bp": "e"},
  {"ph": "X", "cat": "cpu_op", "name": "unreadable", "ts": 1, "dur": 1,, "pid": 10},
  42, "text", [1, 2], null, true
"#;

#[test]
fn odd_events_load_with_their_warnings_counted() {
    let dir = common::scratch_dir("kineto-odd");
    let mut checked = 0;
    for (name, doc) in [
        ("odd.json", format!(r#"{{"traceEvents": [{ODD_EVENTS}]}}"#)),
        ("odd_array.json", format!("[{ODD_EVENTS}]")),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &doc).expect("write");
        let trace = load(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        println!("  {name}: {:?}", messages(&trace));
        let count = |says: &str| warning(&trace, says).map_or(0, |w| w.count);
        assert_eq!(count("no readable `ts`"), 1, "{name}");
        assert_eq!(count("no `dur` (kept as instants)"), 1, "{name}");
        assert_eq!(count("negative `dur` (kept as instants)"), 1, "{name}");
        assert_eq!(count("not a readable JSON event"), 1, "{name}");
        assert_eq!(count("not a JSON object"), 5, "{name}");
        // Flows and categories Sightline does not show are normal: no warning.
        assert!(
            trace
                .warnings
                .entries
                .iter()
                .all(|w| !w.message().contains("ac2g") && !w.message().contains("mystery")),
            "{name}"
        );
        let events = trace.warnings.table("traceEvents").expect("rows read");
        assert_eq!(events.read, 11, "{name}: objects in traceEvents");
        assert_eq!(events.skipped, 2, "{name}: no ts, unreadable");

        // What was kept: the kernel, linked to its call, and the ranges.
        assert_eq!(trace.kernels.spans.len(), 1, "{name}");
        assert_eq!(
            (
                trace.kernels.spans.start_ns[0],
                trace.kernels.spans.end_ns[0]
            ),
            (100_500, 102_750)
        );
        let call = trace.kernels.api_call[0] as usize;
        assert_eq!(
            trace.str(trace.api_calls.spans.name[call]),
            "cudaLaunchKernel"
        );
        let range = |n: &str| {
            (0..trace.nvtx.spans.len())
                .find(|&i| trace.str(trace.nvtx.spans.name[i]) == n)
                .unwrap_or_else(|| panic!("{name}: range {n} kept"))
        };
        for instant in ["op_no_dur", "op_negative_dur"] {
            let i = range(instant);
            assert_eq!(
                trace.nvtx.spans.start_ns[i], trace.nvtx.spans.end_ns[i],
                "{instant}"
            );
        }
        let i = range("string_ids");
        let g = sightline::trace::GlobalTid(trace.nvtx.global_tid[i]);
        assert_eq!(
            (g.pid(), g.tid()),
            (10, 11),
            "string pid and tid read as numbers"
        );
        assert_eq!(
            trace.nvtx.spans.start_ns[i], 103_000,
            "a string ts read as a number"
        );
        range("text_pid");
        assert_eq!(trace.nvtx.spans.len(), 4, "{name}");
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("checked {checked} files of odd events");
}

#[test]
fn non_objects_across_the_loaders_block_boundary_are_counted_once() {
    // The loader reads 4 MiB at a time: put a run of numbers around that offset, so that one of
    // them is split between two reads whatever the exact offset.
    let event =
        r#"{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 1}"#;
    let mut doc = String::from(r#"{"traceEvents": ["#);
    let mut events = 0;
    while doc.len() < (4 << 20) - 4096 {
        doc.push_str(event);
        doc.push_str(", ");
        events += 1;
    }
    let numbers = 1000;
    for _ in 0..numbers {
        doc.push_str("123456789, ");
    }
    doc.push_str(event);
    doc.push_str("]}");
    events += 1;
    let dir = common::scratch_dir("kineto-boundary");
    let path = dir.join("boundary.json");
    std::fs::write(&path, &doc).expect("write");
    let trace = load(&path).expect("loads");
    assert_eq!(trace.nvtx.spans.len(), events);
    let count = warning(&trace, "not a JSON object").map_or(0, |w| w.count);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(count, numbers, "{:?}", messages(&trace));
}

#[test]
fn a_gzip_damaged_at_its_start_is_not_called_an_sqlite_file() {
    let dir = common::scratch_dir("kineto-gzhead");
    let gz = gzip(br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 1}]}"#);
    let path = dir.join("head.pt.trace.json.gz");
    std::fs::write(&path, &gz[..12]).expect("write");
    let message = load_err(&path, "gzip");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!message.contains("SQLite"), "{message}");
}
