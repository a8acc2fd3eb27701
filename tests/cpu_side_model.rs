//! The CPU side of a capture as loaded — samples with their stacks, running intervals from
//! `SCHED_EVENTS`, CUDA and OS-runtime backtraces — against the same facts computed with SQL
//! straight from each export (window functions for the sched pairing, joins for the frames).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rusqlite::Connection;
use sightline::trace::{StackId, Trace};

use common::{has_table, open_ro as open};

/// Frames of every callchain id of `table`, innermost first, as "function|module" text.
fn sql_stacks(conn: &Connection, table: &str) -> HashMap<i64, Vec<String>> {
    let mut out: HashMap<i64, Vec<String>> = HashMap::new();
    if !has_table(conn, table) {
        return out;
    }
    let sql = format!(
        "SELECT c.id, coalesce(s.value,''), coalesce(m.value,'') FROM {table} c \
         LEFT JOIN StringIds s ON s.id = c.symbol LEFT JOIN StringIds m ON m.id = c.module \
         ORDER BY c.id, c.stackDepth"
    );
    let mut st = conn.prepare(&sql).unwrap();
    let rows = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                format!("{}|{}", r.get::<_, String>(1)?, r.get::<_, String>(2)?),
            ))
        })
        .unwrap();
    for row in rows {
        let (id, f) = row.unwrap();
        out.entry(id).or_default().push(f);
    }
    out
}

fn trace_stack(trace: &Trace, id: StackId) -> Vec<String> {
    trace
        .stacks
        .frames(id)
        .iter()
        .map(|f| format!("{}|{}", trace.str(f.function), trace.str(f.module)))
        .collect()
}

/// Every check of this file on one export; returns whether it had any CPU-side data.
fn check(path: &Path) -> bool {
    let conn = open(path);
    let trace = sightline::load::load_file(path).unwrap();
    let mut any = false;

    // Samples: (globalTid, time, stack) as a multiset.
    if has_table(&conn, "COMPOSITE_EVENTS") {
        any = true;
        let stacks = sql_stacks(&conn, "SAMPLING_CALLCHAINS");
        let mut want: BTreeMap<(i64, i64, Vec<String>), u32> = BTreeMap::new();
        let mut st = conn
            .prepare("SELECT id, start, globalTid FROM COMPOSITE_EVENTS")
            .unwrap();
        for row in st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .unwrap()
        {
            let (id, t, g) = row.unwrap();
            let s = stacks.get(&id).cloned().unwrap_or_default();
            *want.entry((g, t, s)).or_default() += 1;
        }
        let mut got: BTreeMap<(i64, i64, Vec<String>), u32> = BTreeMap::new();
        let s = &trace.cpu_samples;
        for i in 0..s.len() {
            let th = &trace.threads[s.thread[i] as usize];
            assert!(
                th.samples.contains(&i),
                "{}: sample {i} outside its thread's range",
                path.display()
            );
            *got.entry((th.global_tid, s.time_ns[i], trace_stack(&trace, s.stack[i])))
                .or_default() += 1;
        }
        assert_eq!(got, want, "{}: samples", path.display());
        for t in &trace.threads {
            let times = &s.time_ns[t.samples.clone()];
            assert!(
                times.is_sorted(),
                "{}: samples of a thread by time",
                path.display()
            );
        }
    }

    // Running intervals: a sched-in followed (by start, ties in table order) by a sched-out.
    if has_table(&conn, "SCHED_EVENTS") {
        any = true;
        let sql = "SELECT globalTid, start, next_start FROM (SELECT globalTid, start, isSchedIn, \
                   lead(start) OVER w AS next_start, lead(isSchedIn) OVER w AS next_in \
                   FROM SCHED_EVENTS WINDOW w AS (PARTITION BY globalTid ORDER BY start, rowid)) \
                   WHERE isSchedIn != 0 AND next_in = 0";
        let mut want: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
        let mut st = conn.prepare(sql).unwrap();
        for row in st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .unwrap()
        {
            let (g, a, b) = row.unwrap();
            want.entry(g).or_default().push((a, b));
        }
        for v in want.values_mut() {
            v.sort_unstable();
        }
        let mut got: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
        for t in &trace.threads {
            let r = t.running.range.clone();
            if r.is_empty() {
                continue;
            }
            let v: Vec<(i64, i64)> = trace.thread_states.start_ns[r.clone()]
                .iter()
                .zip(&trace.thread_states.end_ns[r])
                .map(|(&a, &b)| (a, b))
                .collect();
            got.insert(t.global_tid, v);
        }
        assert_eq!(got, want, "{}: running intervals", path.display());
        let spans: HashMap<i64, (i64, i64)> = conn
            .prepare(
                "SELECT globalTid, min(start), max(start) FROM SCHED_EVENTS GROUP BY globalTid",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for t in &trace.threads {
            assert_eq!(
                t.sched_span,
                spans.get(&t.global_tid).copied(),
                "{}",
                path.display()
            );
        }
    }

    // Backtraces of CUDA and OS-runtime calls, matched by (thread, start, end, name).
    for (table, calls_table, chains) in [
        (
            "CUDA_CALLCHAINS",
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            &trace.api_calls.callchain,
        ),
        ("OSRT_CALLCHAINS", "OSRT_API", &trace.osrt.callchain),
    ] {
        if !has_table(&conn, table) {
            continue;
        }
        any = true;
        let spans = if table == "CUDA_CALLCHAINS" {
            &trace.api_calls.spans
        } else {
            &trace.osrt.spans
        };
        let stacks = sql_stacks(&conn, table);
        let sql = format!(
            "SELECT c.start, c.end, coalesce(s.value, ''), c.callchainId FROM {calls_table} c \
             LEFT JOIN StringIds s ON s.id = c.nameId"
        );
        let mut want: BTreeMap<(i64, i64, String), Vec<Vec<String>>> = BTreeMap::new();
        let mut st = conn.prepare(&sql).unwrap();
        for row in st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            })
            .unwrap()
        {
            let (a, b, n, id) = row.unwrap();
            // A CUDA call's callchainId counts from 0, CUDA_CALLCHAINS.id from 1 (the call's own
            // API function is innermost at id + 1); OSRT ids are equal.
            let offset = i64::from(table == "CUDA_CALLCHAINS");
            let s = id
                .and_then(|id| stacks.get(&(id + offset)).cloned())
                .unwrap_or_default();
            want.entry((a, b, n)).or_default().push(s);
        }
        let mut got: BTreeMap<(i64, i64, String), Vec<Vec<String>>> = BTreeMap::new();
        for (i, &chain) in chains.iter().enumerate() {
            got.entry((
                spans.start_ns[i],
                spans.end_ns[i],
                trace.str(spans.name[i]).to_string(),
            ))
            .or_default()
            .push(trace_stack(&trace, chain));
        }
        for v in want.values_mut().chain(got.values_mut()) {
            v.sort();
        }
        // The API table of an old export may also hold DRIVER rows: compare the runtime rows.
        got.retain(|k, _| want.contains_key(k));
        assert_eq!(got, want, "{}: {table}", path.display());
        let with = want.values().flatten().filter(|s| !s.is_empty()).count();
        println!("{}: {table}: {with} calls with a backtrace", path.display());
    }
    any
}

#[test]
fn cpu_side_fixture_matches_sql() {
    let path = common::fixture("cpu_side");
    assert!(check(&path));
    let trace = sightline::load::load_file(&path).unwrap();
    assert!(!trace.cpu_samples.is_empty() && !trace.thread_states.is_empty());
    assert!(
        trace
            .api_calls
            .callchain
            .iter()
            .any(|&c| c != sightline::trace::NO_STACK)
    );
    // Interned: fewer stacks than samples and backtraces together.
    let users = trace.cpu_samples.len() + trace.api_calls.spans.len() + trace.osrt.spans.len();
    assert!(trace.stacks.len() < users);
}

#[test]
fn shared_exports_match_sql() {
    let files = common::shared_exports();
    if files.is_empty() {
        return;
    }
    let mut with_data = 0;
    for f in &files {
        if check(f) {
            with_data += 1;
        }
    }
    println!(
        "checked {} exports, {with_data} with CPU-side tables",
        files.len()
    );
    assert!(with_data >= 4);
}
