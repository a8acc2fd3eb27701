//! The CPU side on the command line — the `thread_states` and `cpu_samples_sum` reports, folded
//! stacks and the SVG flame graph, `sample` CSV rows and `--backtraces` — against the same facts
//! computed with SQL straight from each export (a LEAD window for the sched pairing, joins over
//! `SAMPLING_CALLCHAINS` / `CUDA_CALLCHAINS` / `OSRT_CALLCHAINS` for the frames), on
//! tests/fixtures/cpu_side.sqlite and every export of ../shared/traces that has the tables, over
//! the whole trace and over a range.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use sightline::analysis::{Filter, NsysFormat, ReportInput, TimeRange, reports};
use sightline::trace::Trace;

use common::{has_table, open_ro as open};

fn has_column(conn: &Connection, table: &str, column: &str) -> bool {
    let sql = format!("SELECT count(*) FROM pragma_table_info('{table}') WHERE name = ?1");
    conn.query_row(&sql, [column], |r| r.get::<_, i64>(0))
        .unwrap()
        > 0
}

/// The fixture and every shared export holding all of `tables`.
fn traces_with(tables: &[&str]) -> Vec<PathBuf> {
    let mut paths = vec![common::fixture("cpu_side")];
    paths.extend(common::shared_exports());
    paths
        .into_iter()
        .filter(|p| {
            let conn = open(p);
            tables.iter().all(|t| has_table(&conn, t))
        })
        .collect()
}

/// Fails with the first differences (not two whole maps) when `got` and `want` differ.
fn assert_same<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    got: &BTreeMap<K, V>,
    want: &BTreeMap<K, V>,
    what: &str,
) {
    let diffs: Vec<String> = want
        .iter()
        .filter(|(k, v)| got.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k:?}: want {v:?}, got {:?}", got.get(k)))
        .chain(
            got.iter()
                .filter(|(k, _)| !want.contains_key(*k))
                .map(|(k, v)| format!("{k:?}: not wanted, got {v:?}")),
        )
        .collect();
    assert!(
        diffs.is_empty(),
        "{what}: {} differences, first:\n{}",
        diffs.len(),
        diffs[..diffs.len().min(10)].join("\n")
    );
}

/// SQLite's `round(100.0 * n / d, 1)` as text with one decimal.
fn sql_percent(conn: &Connection, n: i64, d: i64) -> String {
    let v: f64 = conn
        .query_row("SELECT round(100.0 * ?1 / ?2, 1)", [n, d], |r| r.get(0))
        .unwrap();
    format!("{v:.1}")
}

/// A report's rows as CSV cell texts.
fn report_rows(trace: &Trace, name: &str, range: TimeRange) -> (Vec<String>, Vec<Vec<String>>) {
    let report = reports::find(name).expect("registered");
    let table = report.compute(&ReportInput {
        trace,
        filter: &Filter::range(range),
        options: &Default::default(),
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::of_trace(trace),
        sink: None,
    });
    let rows = table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| c.csv_text()).collect())
        .collect();
    (table.columns.clone(), rows)
}

/// The middle third of `[lo, hi]`.
fn middle_third(lo: i64, hi: i64) -> TimeRange {
    let third = (hi - lo) / 3;
    TimeRange::new(lo + third, lo + 2 * third)
}

fn bounds(range: TimeRange) -> (i64, i64) {
    (
        range.start_ns.unwrap_or(i64::MIN),
        range.end_ns.unwrap_or(i64::MAX),
    )
}

fn range_arg(range: TimeRange) -> String {
    let (a, b) = bounds(range);
    format!("{a}:{b}")
}

// ---------------------------------------------------------------- thread_states

/// `thread_states` rows from SQL: running intervals by LEAD over each thread's scheduling events,
/// clipped to `range`; the % over the thread's first..last scheduling event clipped to it.
fn sql_thread_states(conn: &Connection, range: TimeRange) -> Vec<Vec<String>> {
    let (t0, t1) = bounds(range);
    let sql = "WITH w AS (SELECT globalTid AS g, start, isSchedIn, \
                 lead(start) OVER win AS next_start, lead(isSchedIn) OVER win AS next_in \
                 FROM SCHED_EVENTS WINDOW win AS (PARTITION BY globalTid ORDER BY start, rowid)), \
               iv AS (SELECT g, start AS s, next_start AS e FROM w \
                 WHERE isSchedIn != 0 AND next_in = 0), \
               span AS (SELECT globalTid AS g, min(start) AS f, max(start) AS l \
                 FROM SCHED_EVENTS GROUP BY globalTid) \
               SELECT iv.g, sum(max(0, min(e, ?2) - max(s, ?1))), count(*), \
                 min(span.l, ?2) - max(span.f, ?1) \
               FROM iv JOIN span ON span.g = iv.g \
               WHERE min(e, ?2) > max(s, ?1) OR (s = e AND s >= ?1 AND s < ?2) \
               GROUP BY iv.g";
    let mut st = conn.prepare(sql).unwrap();
    let mut rows: Vec<(i64, i64, i64, i64)> = st
        .query_map([t0, t1], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let tid = |g: i64| g & 0xFF_FFFF;
    let pid = |g: i64| (g >> 24) & 0xFF_FFFF;
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(tid(a.0).cmp(&tid(b.0)))
            .then(pid(a.0).cmp(&pid(b.0)))
    });
    rows.iter()
        .map(|&(g, running, switches, span)| {
            vec![
                pid(g).to_string(),
                tid(g).to_string(),
                String::new(), // the name is checked apart
                running.to_string(),
                if span > 0 {
                    sql_percent(conn, running, span)
                } else {
                    String::new()
                },
                switches.to_string(),
            ]
        })
        .collect()
}

/// Thread names the export's ThreadNames table gives, by (pid, tid), when it gives one name.
fn thread_names(conn: &Connection) -> BTreeMap<(i64, i64), String> {
    if !has_table(conn, "ThreadNames") {
        return BTreeMap::new();
    }
    let mut st = conn
        .prepare(
            "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId \
             WHERE t.globalTid IN (SELECT globalTid FROM ThreadNames GROUP BY globalTid \
             HAVING count(DISTINCT nameId) = 1)",
        )
        .unwrap();
    st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .map(|(g, n)| (((g >> 24) & 0xFF_FFFF, g & 0xFF_FFFF), n))
        .collect()
}

fn check_thread_states(path: &Path, trace: &Trace, range: TimeRange) -> usize {
    let conn = open(path);
    let (columns, mut got) = report_rows(trace, "thread_states", range);
    assert_eq!(
        columns,
        [
            "PID",
            "TID",
            "Thread",
            "Running (ns)",
            "Running (%)",
            "Switches"
        ]
    );
    let names = thread_names(&conn);
    let mut named = 0;
    for row in &mut got {
        let key: (i64, i64) = (row[0].parse().unwrap(), row[1].parse().unwrap());
        if let Some(n) = names.get(&key) {
            assert_eq!(&row[2], n, "{}: name of thread {key:?}", path.display());
            named += 1;
        }
        row[2].clear();
    }
    let want = sql_thread_states(&conn, range);
    assert_eq!(got, want, "{} thread_states {range:?}", path.display());
    println!(
        "{}: thread_states {range:?}: {} threads ({named} names checked)",
        path.display(),
        want.len()
    );
    want.len()
}

#[test]
fn thread_states_match_sql() {
    let paths = traces_with(&["SCHED_EVENTS"]);
    let mut rows = 0;
    for path in &paths {
        let trace = sightline::load::load_file(path).unwrap();
        let conn = open(path);
        rows += check_thread_states(path, &trace, TimeRange::ALL);
        let (lo, hi): (i64, i64) = conn
            .query_row("SELECT min(start), max(start) FROM SCHED_EVENTS", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let range = middle_third(lo, hi);
        let in_range = check_thread_states(path, &trace, range);
        assert!(
            in_range > 0,
            "{}: no thread runs in {range:?}",
            path.display()
        );
        // An open-ended range, and a range before everything: no row.
        check_thread_states(
            path,
            &trace,
            TimeRange {
                start_ns: Some(lo + (hi - lo) / 2),
                end_ns: None,
            },
        );
        let (_, none) = report_rows(&trace, "thread_states", TimeRange::new(lo - 10, lo - 5));
        assert!(none.is_empty());
    }
    println!("thread_states: {} files checked, {rows} rows", paths.len());
    assert!(!paths.is_empty() && rows > 0);
}

// ---------------------------------------------------------------- cpu_samples_sum

/// `cpu_samples_sum` rows from SQL: self = samples whose depth-0 frame is (symbol, module), total
/// = distinct samples with the frame at any depth; % of the samples that have a call stack.
fn sql_cpu_samples_sum(conn: &Connection, range: TimeRange) -> Vec<Vec<String>> {
    let (t0, t1) = bounds(range);
    let frames = "FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id \
                  LEFT JOIN StringIds f ON f.id = c.symbol LEFT JOIN StringIds m ON m.id = c.module \
                  WHERE e.start >= ?1 AND e.start < ?2";
    let with_stack: i64 = conn
        .query_row(
            &format!("SELECT count(DISTINCT e.rowid) {frames}"),
            [t0, t1],
            |r| r.get(0),
        )
        .unwrap();
    let sql = format!(
        "SELECT coalesce(f.value, ''), coalesce(m.value, ''), \
         count(DISTINCT CASE WHEN c.stackDepth = 0 THEN e.rowid END), count(DISTINCT e.rowid) \
         {frames} GROUP BY 1, 2"
    );
    let mut st = conn.prepare(&sql).unwrap();
    let mut rows: Vec<(String, String, i64, i64)> = st
        .query_map([t0, t1], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.sort_by(|a, b| {
        b.2.cmp(&a.2)
            .then(b.3.cmp(&a.3))
            .then_with(|| a.0.cmp(&b.0))
            .then_with(|| a.1.cmp(&b.1))
    });
    rows.into_iter()
        .map(|(f, m, s, t)| {
            vec![
                s.to_string(),
                sql_percent(conn, s, with_stack),
                t.to_string(),
                sql_percent(conn, t, with_stack),
                f,
                m,
            ]
        })
        .collect()
}

fn check_cpu_samples_sum(path: &Path, trace: &Trace, range: TimeRange) -> usize {
    let conn = open(path);
    let (columns, got) = report_rows(trace, "cpu_samples_sum", range);
    assert_eq!(
        columns,
        [
            "Self Samples",
            "Self (%)",
            "Total Samples",
            "Total (%)",
            "Function",
            "Module"
        ]
    );
    let want = sql_cpu_samples_sum(&conn, range);
    assert_eq!(got, want, "{} cpu_samples_sum {range:?}", path.display());
    println!(
        "{}: cpu_samples_sum {range:?}: {} functions",
        path.display(),
        want.len()
    );
    want.len()
}

/// From the first to the third quartile of the sample times: samples lie inside whatever their
/// spread (some exports sample in bursts).
fn sample_quartiles(conn: &Connection) -> TimeRange {
    let n: i64 = conn
        .query_row("SELECT count(*) FROM COMPOSITE_EVENTS", [], |r| r.get(0))
        .unwrap();
    let at = |k: i64| -> i64 {
        conn.query_row(
            "SELECT start FROM COMPOSITE_EVENTS ORDER BY start LIMIT 1 OFFSET ?1",
            [k],
            |r| r.get(0),
        )
        .unwrap()
    };
    TimeRange::new(at(n / 4), at(3 * n / 4))
}

fn sample_span(conn: &Connection) -> (i64, i64) {
    conn.query_row(
        "SELECT min(start), max(start) FROM COMPOSITE_EVENTS",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

#[test]
fn cpu_samples_sum_matches_sql() {
    let paths = traces_with(&["COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS"]);
    let mut rows = 0;
    for path in &paths {
        let trace = sightline::load::load_file(path).unwrap();
        rows += check_cpu_samples_sum(path, &trace, TimeRange::ALL);
        let (lo, hi) = sample_span(&open(path));
        let range = sample_quartiles(&open(path));
        assert!(
            check_cpu_samples_sum(path, &trace, range) > 0,
            "{}",
            path.display()
        );
        check_cpu_samples_sum(
            path,
            &trace,
            TimeRange {
                start_ns: None,
                end_ns: Some(lo + (hi - lo) / 4),
            },
        );
    }
    println!(
        "cpu_samples_sum: {} files checked, {rows} rows",
        paths.len()
    );
    assert!(!paths.is_empty() && rows > 0);
}

/// The command line prints what the report computes, and `--range` reaches it.
#[test]
fn summary_prints_both_reports_with_a_range() {
    let path = common::fixture("cpu_side");
    let trace = sightline::load::load_file(&path).unwrap();
    let range = sample_quartiles(&open(&path));
    for name in ["thread_states", "cpu_samples_sum"] {
        let out = common::sightline_stdout(&[
            "summary",
            path.to_str().unwrap(),
            "--report",
            name,
            "--format",
            "csv",
            "--range",
            &range_arg(range),
        ]);
        let (columns, rows) = report_rows(&trace, name, range);
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(out.as_bytes());
        let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(header, columns, "{name}");
        let printed: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect();
        assert!(!printed.is_empty(), "{name}");
        assert_eq!(printed, rows, "{name}");
        // `all` lists both on a trace that has samples and scheduling.
        assert!(reports::has_data(reports::find(name).unwrap(), &trace));
    }
}

// ---------------------------------------------------------------- folded stacks and SVG

/// A function name as a folded field (`;` → `:`, line breaks → space, empty → `[unknown]`), in SQL.
const FOLDED_NAME: &str = "CASE WHEN coalesce(f.value, '') = '' THEN '[unknown]' ELSE \
     replace(replace(replace(f.value, ';', ':'), char(10), ' '), char(13), ' ') END";

/// Folded stacks from SQL: per sample, its frames outermost first joined by `;`, counted.
fn sql_folded(conn: &Connection, range: TimeRange) -> BTreeMap<String, u64> {
    let (t0, t1) = bounds(range);
    let sql = format!(
        "SELECT stack, count(*) FROM (SELECT e.rowid, \
           group_concat({FOLDED_NAME}, ';' ORDER BY c.stackDepth DESC) AS stack \
           FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id \
           LEFT JOIN StringIds f ON f.id = c.symbol \
           WHERE e.start >= ?1 AND e.start < ?2 GROUP BY e.rowid) GROUP BY stack"
    );
    let mut st = conn.prepare(&sql).unwrap();
    st.query_map([t0, t1], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Samples per innermost function (as a folded name), from SQL.
fn sql_leaf_counts(conn: &Connection, range: TimeRange) -> BTreeMap<String, u64> {
    let (t0, t1) = bounds(range);
    let sql = format!(
        "SELECT {FOLDED_NAME}, count(*) FROM COMPOSITE_EVENTS e \
         JOIN SAMPLING_CALLCHAINS c ON c.id = e.id AND c.stackDepth = 0 \
         LEFT JOIN StringIds f ON f.id = c.symbol \
         WHERE e.start >= ?1 AND e.start < ?2 GROUP BY 1"
    );
    let mut st = conn.prepare(&sql).unwrap();
    st.query_map([t0, t1], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn run_export(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("export")
        .args(args)
        .output()
        .unwrap()
}

fn export_ok(args: &[&str]) {
    let out = run_export(args);
    assert!(
        out.status.success(),
        "export {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Parses `stack count` lines.
fn parse_folded(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').expect("`stack count`");
        let n: u64 = n.parse().expect("a count");
        assert!(n > 0 && !stack.is_empty(), "{line}");
        assert!(out.insert(stack.to_string(), n).is_none(), "{stack} twice");
    }
    out
}

#[test]
fn folded_stacks_match_sql() {
    let paths = traces_with(&["COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS"]);
    let dir = common::scratch_dir("folded");
    for path in &paths {
        let conn = open(path);
        for range in [TimeRange::ALL, sample_quartiles(&conn)] {
            let out = dir.join("stacks.folded");
            let mut args = vec![
                path.to_str().unwrap(),
                "--kinds",
                "sample",
                "--folded",
                "--out",
                out.to_str().unwrap(),
            ];
            let r = range_arg(range);
            if range != TimeRange::ALL {
                args.extend(["--range", r.as_str()]);
            }
            export_ok(&args);
            let got = parse_folded(&std::fs::read_to_string(&out).unwrap());
            let want = sql_folded(&conn, range);
            // The sum is the samples that have a stack.
            let (t0, t1) = bounds(range);
            let with_stack: i64 = conn
                .query_row(
                    "SELECT count(*) FROM COMPOSITE_EVENTS e WHERE e.start >= ?1 AND e.start < ?2 \
                     AND EXISTS (SELECT 1 FROM SAMPLING_CALLCHAINS c WHERE c.id = e.id)",
                    [t0, t1],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(
                got.values().sum::<u64>(),
                with_stack as u64,
                "{}",
                path.display()
            );
            // Each line's leaf, summed, is the samples whose innermost frame it is.
            let mut leaves: BTreeMap<String, u64> = BTreeMap::new();
            for (stack, n) in &got {
                let leaf = stack.rsplit(';').next().unwrap_or_default();
                *leaves.entry(leaf.to_string()).or_default() += n;
            }
            assert_eq!(leaves, sql_leaf_counts(&conn, range), "{}", path.display());
            assert_eq!(got, want, "{} {range:?}", path.display());
            println!(
                "{}: {range:?}: {} folded stacks, {with_stack} samples",
                path.display(),
                got.len()
            );
        }
    }
    println!("folded: {} files checked", paths.len());
    assert!(!paths.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parses the whole SVG (tags balanced, names matched); returns the texts of its `<title>`s.
fn parse_svg(svg: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut depth = 0i64;
    let mut roots = 0;
    let mut titles = Vec::new();
    let mut in_title = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                if depth == 0 {
                    assert_eq!(e.name().as_ref(), b"svg");
                    roots += 1;
                }
                in_title = e.name().as_ref() == b"title";
                if in_title {
                    titles.push(String::new());
                }
                depth += 1;
            }
            Ok(Event::End(_)) => {
                depth -= 1;
                in_title = false;
            }
            Ok(Event::Text(t)) if in_title => {
                let raw = String::from_utf8_lossy(&t.into_inner()).into_owned();
                if let Some(last) = titles.last_mut() {
                    last.push_str(&raw);
                }
            }
            Ok(Event::GeneralRef(r)) if in_title => {
                let name = String::from_utf8_lossy(&r.into_inner()).into_owned();
                let c = match name.as_str() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    _ => "?",
                };
                if let Some(last) = titles.last_mut() {
                    last.push_str(c);
                }
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("SVG not well-formed at {}: {e}", reader.buffer_position()),
        }
    }
    assert_eq!((depth, roots), (0, 1));
    titles
}

#[test]
fn flame_graph_svg_is_well_formed_and_names_the_top_function() {
    let path = common::fixture("cpu_side");
    let conn = open(&path);
    let dir = common::scratch_dir("flame");
    let out = dir.join("flame.svg");
    export_ok(&[
        path.to_str().unwrap(),
        "--kinds",
        "sample",
        "--folded",
        "--out",
        out.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    let titles = parse_svg(&svg);
    // The frames' titles read `NAME (N samples, P%)`: the top function by self samples is drawn,
    // its boxes add up to the samples it is in (it never recurses), and the root holds them all.
    let leaves = sql_leaf_counts(&conn, TimeRange::ALL);
    let (top, _) = leaves.iter().max_by_key(|(_, n)| **n).unwrap();
    let drawn = |name: &str| -> u64 {
        let prefix = format!("{name} (");
        titles
            .iter()
            .filter_map(|t| t.strip_prefix(prefix.as_str()))
            .filter_map(|rest| rest.split_once(" samples"))
            .map(|(n, _)| n.replace(',', "").parse::<u64>().unwrap())
            .sum()
    };
    let (in_stacks, recursive): (i64, i64) = conn
        .query_row(
            "SELECT count(DISTINCT e.rowid), count(*) - count(DISTINCT e.rowid) \
             FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c ON c.id = e.id \
             JOIN StringIds f ON f.id = c.symbol WHERE f.value = ?1",
            [top],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(recursive, 0, "{top} recurses: pick another check");
    assert_eq!(drawn(top), in_stacks as u64, "{top}");
    let all: i64 = conn
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS e \
             WHERE EXISTS (SELECT 1 FROM SAMPLING_CALLCHAINS c WHERE c.id = e.id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(drawn("all"), all as u64);
    // A range with no sample: nothing to draw is an error, not an empty picture.
    let (lo, _) = sample_span(&conn);
    let before = format!("{}:{}", lo - 10, lo);
    let failed = run_export(&[
        path.to_str().unwrap(),
        "--kinds",
        "sample",
        "--folded",
        "--range",
        &before,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("no CPU samples"));
    // --folded is for samples only.
    let refused = run_export(&[
        path.to_str().unwrap(),
        "--kinds",
        "api",
        "--folded",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- sample rows and backtraces

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[test]
fn sample_rows_match_sql() {
    let paths = traces_with(&["COMPOSITE_EVENTS"]);
    let dir = common::scratch_dir("samples");
    for path in &paths {
        let conn = open(path);
        let range = sample_quartiles(&conn);
        let out = dir.join("samples.csv");
        let r = range_arg(range);
        export_ok(&[
            path.to_str().unwrap(),
            "--kinds",
            "sample",
            "--range",
            &r,
            "--out",
            out.to_str().unwrap(),
        ]);
        let (header, rows) = read_csv(&out);
        assert_eq!(header.last().map(String::as_str), Some("domain"));
        let mut got: BTreeMap<(i64, String, String, String), u32> = BTreeMap::new();
        for row in &rows {
            assert_eq!(
                (row[0].as_str(), row[3] == row[2], row[4].as_str()),
                ("sample", true, "0")
            );
            *got.entry((
                row[2].parse().unwrap(),
                row[7].clone(),
                row[8].clone(),
                row[1].clone(),
            ))
            .or_default() += 1;
        }
        let (t0, t1) = bounds(range);
        let sql = "SELECT e.start, (e.globalTid >> 24) & 16777215, e.globalTid & 16777215, \
                   coalesce((SELECT coalesce(f.value, '') FROM SAMPLING_CALLCHAINS c \
                     LEFT JOIN StringIds f ON f.id = c.symbol \
                     WHERE c.id = e.id AND c.stackDepth = 0), '') \
                   FROM COMPOSITE_EVENTS e WHERE e.start >= ?1 AND e.start < ?2";
        let mut want: BTreeMap<(i64, String, String, String), u32> = BTreeMap::new();
        let mut st = conn.prepare(sql).unwrap();
        for row in st
            .query_map([t0, t1], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .unwrap()
        {
            let (t, pid, tid, name) = row.unwrap();
            *want
                .entry((t, pid.to_string(), tid.to_string(), name))
                .or_default() += 1;
        }
        assert!(!want.is_empty(), "{}", path.display());
        assert_same(&got, &want, &path.display().to_string());
        // Ordered by time.
        let times: Vec<i64> = rows.iter().map(|r| r[2].parse().unwrap()).collect();
        assert!(times.is_sorted());
        println!(
            "{}: {} sample rows in {range:?}",
            path.display(),
            rows.len()
        );
    }
    println!("sample rows: {} files checked", paths.len());
    let _ = std::fs::remove_dir_all(&dir);
}

/// (kind, start, end, name) → backtraces, from SQL over the call tables and their callchains.
fn sql_backtraces(conn: &Connection) -> BTreeMap<(String, i64, i64, String), Vec<String>> {
    let mut want: BTreeMap<(String, i64, i64, String), Vec<String>> = BTreeMap::new();
    for (kind, calls, chains) in [
        ("api", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA_CALLCHAINS"),
        ("api", "CUPTI_ACTIVITY_KIND_DRIVER", "CUDA_CALLCHAINS"),
        ("osrt", "OSRT_API", "OSRT_CALLCHAINS"),
    ] {
        if !has_table(conn, calls) {
            continue;
        }
        // A CUDA call's callchainId counts from 0, CUDA_CALLCHAINS.id from 1; OSRT ids are equal.
        let offset = i32::from(chains == "CUDA_CALLCHAINS");
        let backtrace = if has_table(conn, chains) && has_column(conn, calls, "callchainId") {
            format!(
                "coalesce((SELECT group_concat(coalesce(f.value, ''), ' <- ' ORDER BY c.stackDepth) \
                 FROM {chains} c LEFT JOIN StringIds f ON f.id = c.symbol \
                 WHERE c.id = k.callchainId + {offset}), '')"
            )
        } else {
            "''".to_string()
        };
        let sql = format!(
            "SELECT k.start, k.end, coalesce(s.value, ''), {backtrace} FROM {calls} k \
             LEFT JOIN StringIds s ON s.id = k.nameId"
        );
        let mut st = conn.prepare(&sql).unwrap();
        for row in st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .unwrap()
        {
            let (a, b, name, bt) = row.unwrap();
            want.entry((kind.to_string(), a, b, name))
                .or_default()
                .push(bt);
        }
    }
    for v in want.values_mut() {
        v.sort();
    }
    want
}

#[test]
fn backtrace_column_matches_sql() {
    let paths = traces_with(&[]);
    let dir = common::scratch_dir("backtraces");
    let (mut files, mut calls, mut with_trace) = (0, 0, 0);
    for path in &paths {
        let conn = open(path);
        if !["CUDA_CALLCHAINS", "OSRT_CALLCHAINS"]
            .iter()
            .any(|t| has_table(&conn, t))
        {
            continue;
        }
        files += 1;
        let out = dir.join("calls.csv");
        export_ok(&[
            path.to_str().unwrap(),
            "--kinds",
            "api,osrt,page_fault",
            "--backtraces",
            "--out",
            out.to_str().unwrap(),
        ]);
        let (header, rows) = read_csv(&out);
        // Both added columns: address, then backtrace last.
        assert_eq!(&header[header.len() - 2..], ["address", "backtrace"]);
        let bt = header.len() - 1;
        let mut got: BTreeMap<(String, i64, i64, String), Vec<String>> = BTreeMap::new();
        for row in &rows {
            if row[0] == "page_fault" {
                assert!(row[bt].is_empty());
                continue;
            }
            got.entry((
                row[0].clone(),
                row[2].parse().unwrap(),
                row[3].parse().unwrap(),
                row[1].clone(),
            ))
            .or_default()
            .push(row[bt].clone());
        }
        for v in got.values_mut() {
            v.sort();
        }
        let want = sql_backtraces(&conn);
        let n: usize = want.values().map(Vec::len).sum();
        let non_empty = want.values().flatten().filter(|b| !b.is_empty()).count();
        assert_same(&got, &want, &path.display().to_string());
        assert!(non_empty > 0, "{}: no call has a backtrace", path.display());
        calls += n;
        with_trace += non_empty;
        println!(
            "{}: {n} calls, {non_empty} with a backtrace",
            path.display()
        );
    }
    println!("backtraces: {files} files checked, {calls} calls, {with_trace} with a backtrace");
    assert!(files > 0 && with_trace > 0);

    // Without --backtraces the column is absent.
    let path = common::fixture("cpu_side");
    let out = dir.join("plain.csv");
    export_ok(&[
        path.to_str().unwrap(),
        "--kinds",
        "api",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (header, _) = read_csv(&out);
    assert!(!header.iter().any(|c| c == "backtrace"));
    let _ = std::fs::remove_dir_all(&dir);
}
