//! The NVTX reports on the cases the real traces lack, against Nsight Systems 2023.4.4 itself.
//!
//! `fixtures/nvtx_edge/edits.sql` turns a copy of `ws_streaming_export2023.sqlite` into an export
//! with a start/end range that overlaps push/pop ranges without nesting, an unclosed push/pop
//! range, ranges without text (one in a named domain), a start/end range ended on another thread
//! (`endGlobalTid`), a payload start/end range (eventType 71) and a late mark and start/end range
//! (so the largest NVTX, range and push/pop timestamps all differ: each report ends an unclosed
//! range at its own one). The CSVs beside it are what `nsys stats --report NAME --format csv`
//! of 2023.4.4 printed for that export (made with the same SQL through Python's sqlite3);
//! `nvtx_sum.csv` by nsys 2023.4.4 itself (`nsys stats --report nvtx_sum --format csv
//! --force-export=false` on the edited copy, which has the greenContextId column it needs).
//!
//! Also: the panel's path (`with_events`) gives the same cells and points at the right events,
//! and a time range keeps only what starts in it.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::filter::EventTable;
use sightline::analysis::range::TimeRange;
use sightline::analysis::table::{RowEvents, Table};
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

fn compute(trace: &Trace, name: &str, filter: &Filter, with_events: bool) -> Table {
    let (report, options) = reports::parse_spec(name).expect("known report");
    report.compute(&ReportInput {
        trace,
        filter,
        options: &options,
        with_events,
        row_limit: None,
        nsys_format: NsysFormat::V2023_4,
        sink: None,
    })
}

fn csv(table: &Table) -> String {
    if table.is_empty() {
        return String::new();
    }
    let mut buf = Vec::new();
    nsys_csv::write_table_csv(table, &mut buf).expect("write csv");
    String::from_utf8(buf).expect("utf-8").replace("\r\n", "\n")
}

fn edge_trace() -> Trace {
    let dir = common::scratch_dir("nvtx-edge");
    let path = dir.join("edge.sqlite");
    std::fs::copy(common::fixture("ws_streaming_export2023"), &path).expect("copy fixture");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("make writable");
    let edits = std::fs::read_to_string(common::fixtures().join("nvtx_edge/edits.sql"))
        .expect("read edits.sql");
    rusqlite::Connection::open(&path)
        .expect("open copy")
        .execute_batch(&edits)
        .expect("apply edits");
    let trace = load::load_file(&path).expect("load edited export");
    let _ = std::fs::remove_dir_all(&dir);
    trace
}

#[test]
fn edge_cases_match_nsys() {
    let trace = edge_trace();
    let mut failures = Vec::new();
    for name in REPORTS {
        let expected =
            std::fs::read_to_string(common::fixtures().join(format!("nvtx_edge/{name}.csv")))
                .expect("read expected csv")
                .replace("\r\n", "\n");
        let ours = csv(&compute(&trace, name, &Filter::all(), false));
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
}

#[test]
fn events_point_at_the_rows_ranges_and_kernels() {
    let trace = load::load_file(&common::fixture("moe")).expect("load moe");
    let all = Filter::all();
    for name in REPORTS {
        let plain = compute(&trace, name, &all, false);
        let with = compute(&trace, name, &all, true);
        assert_eq!(plain.rows.len(), with.rows.len(), "{name}");
        for (a, b) in plain.rows.iter().zip(&with.rows) {
            assert_eq!(a.cells, b.cells, "{name}");
        }
    }
    // A trace row is its range.
    let trace_rows = compute(&trace, "nvtx_pushpop_trace", &all, true);
    let id_col = trace_rows.column("RangeId").unwrap();
    for row in &trace_rows.rows {
        let RowEvents::Events(ev) = &row.events else {
            panic!("trace row without its range");
        };
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].table, EventTable::Nvtx);
        let id = trace.nvtx.row_id[ev[0].index as usize];
        assert_eq!(row.cells[id_col].csv_text(), id.to_string());
    }
    // A kernel-summary row holds its ranges and kernels, as many as it counts.
    let kern = compute(&trace, "nvtx_kern_sum", &all, true);
    let (nvtx_inst, kern_inst) = (
        kern.column("NVTX Inst").unwrap(),
        kern.column("Kern Inst").unwrap(),
    );
    for row in &kern.rows {
        let RowEvents::Events(ev) = &row.events else {
            panic!("summary row without events");
        };
        let count = |t: EventTable| ev.iter().filter(|e| e.table == t).count().to_string();
        assert_eq!(count(EventTable::Nvtx), row.cells[nvtx_inst].csv_text());
        assert_eq!(count(EventTable::Kernels), row.cells[kern_inst].csv_text());
    }
}

#[test]
fn a_time_range_keeps_the_ranges_starting_in_it() {
    let trace = load::load_file(&common::fixture("moe")).expect("load moe");
    let (t0, t1) = (590_000_000, 600_000_000);
    let filter = Filter::range(TimeRange::new(t0, t1));
    let table = compute(&trace, "nvtx_pushpop_trace", &filter, false);
    assert!(!table.is_empty());
    let start = table.column("Start (ns)").unwrap();
    let lvl = table.column("Lvl").unwrap();
    for row in &table.rows {
        let s: i64 = row.cells[start].csv_text().parse().unwrap();
        assert!((t0..t1).contains(&s), "{s} outside the range");
    }
    // Range 5 (Expert_Selection) sits in range 3, which starts before the window: it becomes a
    // root.
    let (id, parent) = (
        table.column("RangeId").unwrap(),
        table.column("ParentId").unwrap(),
    );
    let five = table
        .rows
        .iter()
        .find(|r| r.cells[id].csv_text() == "5")
        .expect("range 5 kept");
    assert_eq!(five.cells[lvl].csv_text(), "0");
    assert_eq!(five.cells[parent].csv_text(), "");
    for name in REPORTS {
        let all = compute(&trace, name, &Filter::all(), false);
        let some = compute(&trace, name, &filter, false);
        assert!(some.rows.len() <= all.rows.len(), "{name}");
    }
}
