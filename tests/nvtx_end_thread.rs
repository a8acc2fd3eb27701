//! NVTX start/end ranges that end on another thread than the one that started them
//! (`endGlobalTid` set), against Nsight Systems 2023.4.4 itself.
//!
//! No shared trace has such a row, so `fixtures/golden_endtid/make.sql` makes them: it keeps
//! 453–457 ms of a copy of `stress.sqlite` and adds start/end ranges begun on the loader thread
//! and ended on the main thread and the other way round, around kernels and copies launched from
//! either thread, one whose `endGlobalTid` is its own thread, an ordinary one beside them, a
//! cross-thread range ending after every other NVTX timestamp and an unclosed range. The CSVs
//! beside it are what `nsys stats --report NAME --format csv` of 2023.4.4 printed for that file
//! (`capture.sh`).
//!
//! nsys's rules, which Sightline follows: the GPU projection (`nvtx_gpu_proj_trace`, `_sum`) and
//! `nvtx_kern_sum` use only ranges with `endGlobalTid IS NULL` (so a range whose `endGlobalTid`
//! is its own thread is left out too), while their timestamp extent (`NVTX_EVENTS_MINMAXTS`),
//! which ends an unclosed range, still counts every range; `nvtx_sum` and `nvtx_startend_sum`
//! count every range.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::{Filter, NsysFormat, ReportInput, reports};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::Trace;

const REPORTS: [&str; 7] = [
    "nvtx_sum",
    "nvtx_pushpop_sum",
    "nvtx_startend_sum",
    "nvtx_pushpop_trace",
    "nvtx_kern_sum",
    "nvtx_gpu_proj_sum",
    "nvtx_gpu_proj_trace",
];

/// What `sightline summary --report NAME --format csv --nsys-format 2023.4` prints.
fn csv(trace: &Trace, name: &str) -> String {
    let (report, options) = reports::parse_spec(name).expect("known report");
    let table = report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &options,
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::V2023_4,
        sink: None,
    });
    if table.is_empty() {
        return String::new();
    }
    let mut buf = Vec::new();
    nsys_csv::write_table_csv(&table, &mut buf).expect("write csv");
    String::from_utf8(buf).expect("utf-8").replace("\r\n", "\n")
}

/// stress.sqlite edited by `make.sql`, loaded.
fn end_thread_trace() -> Trace {
    let dir = common::scratch_dir("nvtx-end-thread");
    let path = dir.join("endtid.sqlite");
    std::fs::copy(common::fixture("stress"), &path).expect("copy fixture");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("make writable");
    let edits = std::fs::read_to_string(common::fixtures().join("golden_endtid/make.sql"))
        .expect("read make.sql");
    let conn = rusqlite::Connection::open(&path).expect("open copy");
    conn.execute_batch(&edits).expect("apply make.sql");
    let crossing: i64 = conn
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS \
             WHERE endGlobalTid IS NOT NULL AND endGlobalTid != globalTid",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(crossing, 3, "ranges ended on another thread");
    drop(conn);
    let trace = load::load_file(&path).expect("load edited export");
    let _ = std::fs::remove_dir_all(&dir);
    trace
}

#[test]
fn ranges_ended_on_another_thread_match_nsys() {
    let trace = end_thread_trace();
    let mut failures = Vec::new();
    for name in REPORTS {
        let expected =
            std::fs::read_to_string(common::fixtures().join(format!("golden_endtid/{name}.csv")))
                .expect("read expected csv")
                .replace("\r\n", "\n");
        let ours = csv(&trace, name);
        if ours.trim_end() != expected.trim_end() {
            let line = expected
                .lines()
                .zip(ours.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || "line counts differ".to_string(),
                    |l| format!("line {}", l + 1),
                );
            failures.push(format!("{name}: {line}"));
        }
    }
    assert!(failures.is_empty(), "differ from nsys: {failures:?}");
    // The oracle itself shows the rules: no projection row for a range with an endGlobalTid,
    // every range in nvtx_startend_sum, and the unclosed range ending at the cross-thread
    // range's end (457.5 ms), the largest NVTX timestamp.
    let dir = common::fixtures().join("golden_endtid");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("read");
    let projection = read("nvtx_gpu_proj_trace.csv");
    for crossing in [
        "handoff_loader_to_main",
        "handoff_main_to_loader",
        "end_tid_same_thread",
        "late_handoff",
    ] {
        assert!(!projection.contains(crossing), "{crossing} projected");
    }
    assert!(projection.contains("\nsame_thread,"));
    assert!(projection.contains("\nunclosed,456710058,298500,456700000,800000,"));
    let startend = read("nvtx_startend_sum.csv");
    assert_eq!(
        startend.lines().count(),
        7,
        "a header and the six start/end ranges"
    );
}
