//! The views Sightline computes (issue 22): `samples` against the export's own sampling tables,
//! `gaps` against the GPU work in the export (each gap is idle on its GPU, closed by work at both
//! ends), and `threads` listing unnamed threads too.

// Helpers fail the test on a broken fixture, which is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use rusqlite::types::Value;
use sightline::sql::{QueryResult, SqlTrace};

fn ask(trace: &SqlTrace, sql: &str) -> QueryResult {
    trace
        .query(sql, None, Duration::from_secs(60), None)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

#[test]
fn samples_count_each_innermost_function_as_the_exports_callchains_do() {
    let path = common::fixture("cpu_side");
    let q = "SELECT function, count(*) FROM samples GROUP BY function";
    let trace = SqlTrace::open_for_query(&path, q).unwrap_or_else(|e| panic!("{e}"));
    assert!(trace.view_names().iter().any(|v| v == "samples"));
    let ours: BTreeMap<String, i64> = ask(&trace, q)
        .rows
        .iter()
        .filter_map(|r| match &r[0] {
            Value::Text(f) => Some((f.clone(), int(&r[1]))),
            _ => None,
        })
        .collect();
    let conn = common::open_ro(&path);
    let mut stmt = conn
        .prepare(
            "SELECT s.value, count(*) FROM COMPOSITE_EVENTS c \
             JOIN SAMPLING_CALLCHAINS k ON k.id = c.id AND k.stackDepth = 0 \
             JOIN StringIds s ON s.id = k.symbol GROUP BY 1",
        )
        .expect("prepare");
    let raw: BTreeMap<String, i64> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    assert!(raw.len() >= 3);
    assert_eq!(ours, raw);
    let total: i64 = conn
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .expect("count");
    assert_eq!(
        int(&ask(&trace, "SELECT count(*) FROM samples").rows[0][0]),
        total
    );
}

#[test]
fn every_gap_is_idle_on_its_gpu_and_bounded_by_gpu_work() {
    for name in ["cpu_side", "moe", "ws_baseline"] {
        let path = common::fixture(name);
        let q = "SELECT start, \"end\", dur, device FROM gaps ORDER BY start";
        let trace = SqlTrace::open_for_query(&path, q).unwrap_or_else(|e| panic!("{e}"));
        let gaps = ask(&trace, q).rows;
        assert!(!gaps.is_empty(), "{name}: no gap");
        let conn = common::open_ro(&path);
        let ops: Vec<String> = ["KERNEL", "MEMCPY", "MEMSET", "GRAPH_TRACE"]
            .iter()
            .map(|k| format!("CUPTI_ACTIVITY_KIND_{k}"))
            .filter(|t| common::has_table(&conn, t))
            .map(|t| format!("SELECT start, \"end\", deviceId FROM {t}"))
            .collect();
        let ops = ops.join(" UNION ALL ");
        for g in &gaps {
            let (start, end, dur, device) = (int(&g[0]), int(&g[1]), int(&g[2]), int(&g[3]));
            assert_eq!(dur, end - start);
            assert!(
                dur >= sightline::analysis::DEFAULT_MIN_GAP_NS,
                "{name}: {dur}"
            );
            let count = |sql: &str| -> i64 {
                conn.query_row(
                    &format!("SELECT count(*) FROM ({ops}) WHERE deviceId = ?1 AND {sql}"),
                    rusqlite::params![device, start, end],
                    |r| r.get(0),
                )
                .expect("count")
            };
            assert_eq!(
                count("start < ?3 AND \"end\" > ?2"),
                0,
                "{name}: busy in {start}..{end}"
            );
            assert!(
                count("\"end\" = ?2 AND ?3 = ?3") > 0,
                "{name}: nothing ends at {start}"
            );
            assert!(
                count("start = ?3 AND ?2 = ?2") > 0,
                "{name}: nothing starts at {end}"
            );
        }
    }
}

#[test]
fn threads_lists_unnamed_threads_too() {
    let path = common::fixture("cpu_side");
    let trace = SqlTrace::open(&path).unwrap_or_else(|e| panic!("{e}"));
    let r = ask(&trace, "SELECT count(*), count(name) FROM threads");
    let conn = common::open_ro(&path);
    let union = "SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME \
                 UNION SELECT globalTid FROM NVTX_EVENTS \
                 UNION SELECT globalTid FROM OSRT_API \
                 UNION SELECT globalTid FROM COMPOSITE_EVENTS \
                 UNION SELECT globalTid FROM SCHED_EVENTS \
                 UNION SELECT globalTid FROM ThreadNames";
    let all: i64 = conn
        .query_row(
            &format!("SELECT count(*) FROM ({union}) WHERE globalTid IS NOT NULL"),
            [],
            |r| r.get(0),
        )
        .expect("count");
    let named: i64 = conn
        .query_row(
            "SELECT count(DISTINCT globalTid) FROM ThreadNames",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert!(all > named, "cpu_side has a thread with no name");
    assert_eq!((int(&r.rows[0][0]), int(&r.rows[0][1])), (all, named));
}
