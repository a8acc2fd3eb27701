//! GPU metric counters: the loader (2022.x JSON rows in `GENERIC_EVENTS`, 2023.4+ `GPU_METRICS`)
//! and the `gpu_metrics_sum` report, checked against SQL run directly on the fixtures.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// One expected report row: device, metric, samples, avg (rounded to 0.1 by SQL), min, max.
type Row = (i64, String, i64, f64, i64, i64);

fn open(path: &Path) -> Connection {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open fixture")
}

fn rows(conn: &Connection, sql: &str, lo: i64, hi: i64) -> Vec<Row> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    stmt.query_map([lo, hi], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

/// The 2022.x form, straight from the JSON: every key of every `GENERIC_EVENTS` row whose type's
/// source is "GpuMetrics", on the GPU whose `id` is the typeId's low byte, at `rawTimestamp`
/// (the 2022.4 export leaves `timestamp` NULL).
const JSON_SQL: &str = "
    SELECT g.cuDevice, j.key, count(*), round(avg(CAST(j.value AS REAL)), 1),
           min(CAST(j.value AS INTEGER)), max(CAST(j.value AS INTEGER))
    FROM GENERIC_EVENTS e
    JOIN GENERIC_EVENT_TYPES t ON t.typeId = e.typeId
    JOIN GENERIC_EVENT_SOURCES s ON s.sourceId = t.sourceId
    JOIN TARGET_INFO_GPU g ON g.id = (e.typeId & 255), json_each(e.data) j
    WHERE json_extract(s.data, '$.Name') = 'GpuMetrics'
      AND coalesce(e.timestamp, e.rawTimestamp) >= ?1 AND coalesce(e.timestamp, e.rawTimestamp) < ?2
    GROUP BY 1, 2 ORDER BY 1, 2";

/// The 2023.4 form: `GPU_METRICS` named through `TARGET_INFO_GPU_METRICS`.
const TABLE_SQL: &str = "
    SELECT g.cuDevice, t.metricName, count(*), round(avg(m.value), 1), min(m.value), max(m.value)
    FROM GPU_METRICS m
    JOIN TARGET_INFO_GPU_METRICS t ON t.typeId = m.typeId AND t.metricId = m.metricId
    JOIN TARGET_INFO_GPU g ON g.id = (m.typeId & 255)
    WHERE m.timestamp >= ?1 AND m.timestamp < ?2
    GROUP BY 1, 2 ORDER BY 1, 2";

/// `sightline summary PATH --report gpu_metrics_sum --format csv [--range]`, parsed.
fn report(path: &Path, range: Option<&str>) -> Vec<Row> {
    let p = path.to_string_lossy();
    let mut args = vec![
        "summary",
        &p,
        "--report",
        "gpu_metrics_sum",
        "--format",
        "csv",
    ];
    if let Some(r) = range {
        args.extend(["--range", r]);
    }
    let text = common::sightline_stdout(&args);
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_string)
        .collect();
    assert_eq!(header, ["Device", "Metric", "Samples", "Avg", "Min", "Max"]);
    reader
        .records()
        .map(|r| {
            let r = r.expect("record");
            (
                r[0].parse().expect("device"),
                r[1].to_string(),
                r[2].parse().expect("samples"),
                r[3].parse().expect("avg"),
                r[4].parse().expect("min"),
                r[5].parse().expect("max"),
            )
        })
        .collect()
}

fn assert_same(got: &[Row], want: &[Row], what: &str) {
    assert!(
        !want.is_empty(),
        "{what}: the fixture has no metrics in range"
    );
    assert_eq!(got.len(), want.len(), "{what}: row count");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(
            (g.0, &g.1, g.2, g.4, g.5),
            (w.0, &w.1, w.2, w.4, w.5),
            "{what}"
        );
        assert!(
            (g.3 - w.3).abs() <= 1e-9 * w.3.abs().max(1.0),
            "{what}: {} avg {} vs SQL {}",
            w.1,
            g.3,
            w.3
        );
    }
}

#[test]
fn report_on_the_2022_json_form_matches_sql() {
    let path = common::fixture("gpu_metrics");
    let conn = open(&path);
    let want = rows(&conn, JSON_SQL, i64::MIN, i64::MAX);
    // 11 metrics of one H100, 9198 samples each (traces/README.md).
    assert_eq!(want.len(), 11);
    assert!(want.iter().all(|r| r.2 == 9198));
    assert_same(
        &report(&path, None),
        &want,
        "gpu_metrics.sqlite, whole trace",
    );
    // The kernels' stretch only: the range filter keeps samples whose time lies in it.
    let (lo, hi) = (550_000_000, 650_000_000);
    let want = rows(&conn, JSON_SQL, lo, hi);
    assert!(want.iter().all(|r| r.2 < 9198 && r.2 > 0));
    assert_same(
        &report(&path, Some("550ms:650ms")),
        &want,
        "gpu_metrics.sqlite, 550-650 ms",
    );
}

#[test]
fn report_on_the_2023_table_form_matches_sql() {
    let path = common::fixture("gpu_metrics_2023");
    let conn = open(&path);
    let want = rows(&conn, TABLE_SQL, i64::MIN, i64::MAX);
    assert_same(&report(&path, None), &want, "gpu_metrics_2023.sqlite");
    let devices: std::collections::BTreeSet<i64> = want.iter().map(|r| r.0).collect();
    assert_eq!(devices.len(), 2, "the capture has two GPUs");
    let (lo, hi) = (580_000_000, 700_000_000);
    assert_same(
        &report(&path, Some("580ms:700ms")),
        &rows(&conn, TABLE_SQL, lo, hi),
        "gpu_metrics_2023.sqlite, 580-700 ms",
    );
    // The same export repeats every sample as JSON in GENERIC_EVENTS; the loader reads the table
    // only, which is right only if the two agree.
    let json = rows(&conn, JSON_SQL, i64::MIN, i64::MAX);
    let counts = |r: &[Row]| -> Vec<(i64, String, i64, i64, i64)> {
        r.iter()
            .map(|x| (x.0, x.1.clone(), x.2, x.4, x.5))
            .collect()
    };
    assert_eq!(counts(&json), counts(&want));
}

#[test]
fn loader_places_each_sample_on_its_gpu_in_time_order() {
    let path = common::fixture("gpu_metrics_2023");
    let trace = sightline::load::load_file(&path).expect("load");
    let conn = open(&path);
    let series: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT DISTINCT typeId, metricId FROM GPU_METRICS)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(trace.gpu_metrics.series.len() as i64, series);
    for s in &trace.gpu_metrics.series {
        assert!(s.time_ns.is_sorted(), "{} not sorted", s.name);
        assert_eq!(s.time_ns.len(), s.value.len());
    }
    // The kernels ran on CUDA device 0: SM Active is busy there and idle on the other GPU.
    let kernel_device: i64 = conn
        .query_row(
            "SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [],
            |r| r.get(0),
        )
        .expect("device");
    for s in trace
        .gpu_metrics
        .series
        .iter()
        .filter(|s| s.title == "SM Active")
    {
        let busy = s.value.iter().any(|&v| v > 0.0);
        assert_eq!(
            busy,
            i64::from(s.device) == kernel_device,
            "GPU {}",
            s.device
        );
    }
    assert!(
        !trace
            .warnings
            .entries
            .iter()
            .any(|e| e.table == "GPU_METRICS" || e.table == "GENERIC_EVENTS"),
        "{:?}",
        trace.warnings.entries
    );
}

#[test]
fn traces_without_metrics_have_none() {
    let trace = sightline::load::load_file(&common::fixture("transformer")).expect("load");
    assert!(trace.gpu_metrics.series.is_empty());
    let out = common::sightline_stdout(&[
        "summary",
        &common::fixture("transformer").to_string_lossy(),
        "--report",
        "gpu_metrics_sum",
        "--format",
        "csv",
    ]);
    assert!(out.trim().is_empty(), "{out}");
}

#[test]
fn damaged_rows_are_counted_not_loaded() {
    let dir = common::scratch_dir("gpu-metrics-damaged");
    let copy = dir.join("damaged.sqlite");
    std::fs::copy(common::fixture("gpu_metrics_2023"), &copy).expect("copy");
    let conn = Connection::open(&copy).expect("open copy");
    // Five rows lose their time, three point at a metric id no type declares.
    let no_time = conn
        .execute(
            "UPDATE GPU_METRICS SET timestamp = NULL WHERE rowid IN (SELECT rowid FROM GPU_METRICS LIMIT 5)",
            [],
        )
        .expect("update");
    let no_name = conn
        .execute(
            "UPDATE GPU_METRICS SET metricId = 999 WHERE rowid IN (SELECT rowid FROM GPU_METRICS LIMIT 3 OFFSET 100)",
            [],
        )
        .expect("update");
    let total: i64 = conn
        .query_row("SELECT count(*) FROM GPU_METRICS", [], |r| r.get(0))
        .expect("count");
    drop(conn);
    let trace = sightline::load::load_file(&copy).expect("load");
    let warned = |what: &str| {
        trace
            .warnings
            .entries
            .iter()
            .find(|e| e.table == "GPU_METRICS" && e.message().contains(what))
            .map_or(0, |e| e.count)
    };
    assert_eq!(warned("no timestamp"), no_time as u64);
    assert_eq!(warned("not in TARGET_INFO_GPU_METRICS"), no_name as u64);
    assert_eq!(
        trace.gpu_metrics.sample_count() as i64,
        total - (no_time + no_name) as i64
    );
    let _ = std::fs::remove_dir_all(dir);
}
