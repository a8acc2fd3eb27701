//! The SQL views answer as raw SQL on the export itself does, on exports of every schema
//! generation (2021.2, 2022.4, 2023.4, 2025.3), and as an independent reading of a PyTorch
//! trace's JSON does.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use sightline::sql::{SqlTrace, cell_text};
use sightline::trace::CopyKind;

type Groups = BTreeMap<String, (i64, i64)>;

fn exports() -> Vec<PathBuf> {
    let mut out = vec![common::fixture("stress"), common::fixture("moe_export2023")];
    if let Some(dir) = common::shared_traces() {
        out.push(dir.join("bwyogatama_Mordred-Deprecated__report1_2021.sqlite"));
        for entry in std::fs::read_dir(&dir).expect("shared traces") {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("n25_") && name.ends_with(".sqlite") {
                out.push(path);
            }
        }
    }
    out.retain(|p| p.exists());
    out.sort();
    out
}

fn raw(path: &Path) -> Connection {
    let uri = format!("file:{}?immutable=1", path.display());
    Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .expect("open raw")
}

fn has_table(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .unwrap_or(0)
        > 0
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Integer(i) => *i,
        Value::Real(f) => *f as i64,
        _ => 0,
    }
}

/// `key → (count, total)` from a query returning (key, count, total).
fn groups_of_view(trace: &SqlTrace, sql: &str) -> Groups {
    let r = trace
        .query(sql, None, Duration::from_secs(60), None)
        .expect(sql);
    r.rows
        .iter()
        .map(|row| (cell_text(&row[0]), (int(&row[1]), int(&row[2]))))
        .collect()
}

fn groups_of_raw(conn: &Connection, sql: &str, label: impl Fn(&Value) -> String) -> Groups {
    let mut out = Groups::new();
    let mut stmt = conn.prepare(sql).expect(sql);
    let mut rows = stmt.query([]).expect(sql);
    while let Some(row) = rows.next().expect("row") {
        let key = label(&row.get::<_, Value>(0).expect("key"));
        let e = out.entry(key).or_default();
        e.0 += row.get::<_, i64>(1).expect("count");
        e.1 += row.get::<_, Option<i64>>(2).expect("total").unwrap_or(0);
    }
    out
}

fn text(v: &Value) -> String {
    cell_text(v)
}

/// cuda_api_sum's naming rule, as the shared traces' README states it.
fn api_name(v: &Value) -> String {
    let name = cell_text(v);
    let b = name.as_bytes();
    if b.len() >= 6 && &b[b.len() - 6..b.len() - 4] == b"_v" {
        name[..name.len() - 6].to_string()
    } else {
        name
    }
}

#[test]
fn views_match_raw_sql_on_every_schema_generation() {
    let files = exports();
    assert!(!files.is_empty());
    for path in &files {
        let conn = raw(path);
        let trace = SqlTrace::open(path).expect("open");
        assert!(trace.over_file);
        let k = "CUPTI_ACTIVITY_KIND_KERNEL";
        if has_table(&conn, k) {
            let raw = groups_of_raw(
                &conn,
                &format!(
                    "SELECT s.value, count(*), sum(k.\"end\" - k.start) FROM {k} k \
                     JOIN StringIds s ON s.id = k.demangledName GROUP BY k.demangledName"
                ),
                text,
            );
            let view = groups_of_view(
                &trace,
                "SELECT name, count(*), sum(dur) FROM kernels GROUP BY name",
            );
            assert_eq!(raw, view, "{}: kernels per name", path.display());
            // Every kernel launched by a runtime call of its process gets that call's thread.
            let launched: i64 = conn
                .query_row(
                    &format!(
                        "SELECT count(*) FROM {k} k JOIN (SELECT DISTINCT correlationId c, \
                         (globalTid >> 24) & 16777215 p, globalTid & 16777215 t \
                         FROM CUPTI_ACTIVITY_KIND_RUNTIME) r ON r.c = k.correlationId \
                         AND r.p = (k.globalPid >> 24) & 16777215"
                    ),
                    [],
                    |r| r.get(0),
                )
                .expect("launched");
            let with_tid =
                groups_of_view(&trace, "SELECT 'all', count(tid), count(*) FROM kernels");
            assert_eq!(
                with_tid["all"].0,
                launched,
                "{}: kernels with a thread",
                path.display()
            );
        }
        let m = "CUPTI_ACTIVITY_KIND_MEMCPY";
        if has_table(&conn, m) {
            let raw = groups_of_raw(
                &conn,
                &format!("SELECT copyKind, count(*), sum(bytes) FROM {m} GROUP BY copyKind"),
                |v| CopyKind(int(v) as u8).label().to_string(),
            );
            let view = groups_of_view(
                &trace,
                "SELECT kind, count(*), sum(bytes) FROM memcpy GROUP BY kind",
            );
            assert_eq!(raw, view, "{}: memcpy per kind", path.display());
        }
        let s = "CUPTI_ACTIVITY_KIND_MEMSET";
        if has_table(&conn, s) {
            let raw = groups_of_raw(
                &conn,
                &format!("SELECT deviceId, count(*), sum(bytes) FROM {s} GROUP BY deviceId"),
                text,
            );
            let view = groups_of_view(
                &trace,
                "SELECT device, count(*), sum(bytes) FROM memset GROUP BY device",
            );
            assert_eq!(raw, view, "{}: memset per device", path.display());
        }
        let mut raw_api = Groups::new();
        for t in ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"] {
            if has_table(&conn, t) {
                let g = groups_of_raw(
                    &conn,
                    &format!(
                        "SELECT s.value, count(*), sum(a.\"end\" - a.start) FROM {t} a \
                         JOIN StringIds s ON s.id = a.nameId GROUP BY a.nameId"
                    ),
                    api_name,
                );
                for (name, (n, total)) in g {
                    let e = raw_api.entry(name).or_default();
                    e.0 += n;
                    e.1 += total;
                }
            }
        }
        let view = groups_of_view(
            &trace,
            "SELECT name, count(*), sum(dur) FROM api GROUP BY name",
        );
        assert_eq!(raw_api, view, "{}: api per name", path.display());
        if has_table(&conn, "NVTX_EVENTS") {
            let raw = groups_of_raw(
                &conn,
                "SELECT COALESCE(n.text, s.value), count(*), sum(n.start) FROM NVTX_EVENTS n \
                 LEFT JOIN StringIds s ON s.id = n.textId \
                 WHERE n.eventType IN (59, 60, 70, 71) GROUP BY 1",
                text,
            );
            let view = groups_of_view(
                &trace,
                "SELECT name, count(*), sum(start) FROM ranges GROUP BY name",
            );
            assert_eq!(raw, view, "{}: ranges per name", path.display());
            // Every range has a depth, 0 outermost; some thread nests when any range does.
            let depth =
                groups_of_view(&trace, "SELECT 'all', count(depth), min(depth) FROM ranges");
            let total = raw.values().map(|g| g.0).sum::<i64>();
            assert_eq!(
                depth.get("all").map(|d| d.0),
                Some(total),
                "{}: depths",
                path.display()
            );
            if total > 0 {
                assert_eq!(depth["all"].1, 0, "{}: no outermost range", path.display());
            }
        }
        if has_table(&conn, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE") {
            let raw = groups_of_raw(
                &conn,
                "SELECT graphId, count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE GROUP BY graphId",
                text,
            );
            let view = groups_of_view(
                &trace,
                "SELECT graph_id, count(*), sum(dur) FROM graph_executions GROUP BY graph_id",
            );
            assert_eq!(raw, view, "{}: graph executions", path.display());
        }
        let gpus = trace
            .query(
                "SELECT device, name FROM gpus",
                None,
                Duration::from_secs(5),
                None,
            )
            .expect("gpus");
        assert!(!gpus.rows.is_empty(), "{}: no GPU", path.display());
    }
    println!("{} nsys exports checked", files.len());
}

/// Reads a gzipped Chrome-trace JSON with serde_json: `cat → (count, total dur in ns)`.
fn json_groups(path: &Path) -> Groups {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("open json"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut out = Groups::new();
    for e in doc["traceEvents"].as_array().expect("traceEvents") {
        if e["ph"] != "X" {
            continue;
        }
        let cat = e["cat"].as_str().unwrap_or("").to_ascii_lowercase();
        let dur_ns = (e["dur"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
        let g = out.entry(cat).or_default();
        g.0 += 1;
        g.1 += dur_ns;
    }
    out
}

#[test]
fn a_pytorch_trace_has_the_same_views_as_its_json() {
    let Some(dir) = common::shared_traces() else {
        println!("../shared/traces absent: no PyTorch trace checked");
        return;
    };
    let mut checked = 0;
    for name in [
        "kt_moe.pt.trace.json.gz",
        "torch_transformer.pt.trace.json.gz",
    ] {
        let path = dir.join("pytorch").join(name);
        if !path.exists() {
            continue;
        }
        let json = json_groups(&path);
        let trace = SqlTrace::open(&path).expect("open");
        assert!(!trace.over_file);
        let count = |sql: &str| -> (i64, i64) {
            let r = trace
                .query(sql, None, Duration::from_secs(60), None)
                .expect(sql);
            (int(&r.rows[0][0]), int(&r.rows[0][1]))
        };
        for (cat, sql) in [
            ("kernel", "SELECT count(*), sum(dur) FROM kernels"),
            ("gpu_memcpy", "SELECT count(*), sum(dur) FROM memcpy"),
            ("gpu_memset", "SELECT count(*), sum(dur) FROM memset"),
            (
                "cpu_op",
                "SELECT count(*), sum(dur) FROM ranges WHERE kind = 'operator'",
            ),
            (
                "gpu_user_annotation",
                "SELECT count(*), sum(dur) FROM ranges WHERE kind = 'gpu_annotation'",
            ),
        ] {
            let (n_json, dur_json) = json.get(cat).copied().unwrap_or((0, 0));
            let (n, dur) = count(sql);
            assert_eq!(n, n_json, "{name}: {cat} count");
            // Times are read exactly from the text; the JSON's floats round each to a ns.
            assert!(
                (dur - dur_json).abs() <= n_json,
                "{name}: {cat} total {dur} vs {dur_json}"
            );
        }
        let (n_api, _) = count("SELECT count(*), 0 FROM api");
        let json_api = ["cuda_runtime", "cuda_driver"]
            .iter()
            .map(|c| json.get(*c).map_or(0, |g| g.0))
            .sum::<i64>();
        assert_eq!(n_api, json_api, "{name}: CUDA runtime and driver calls");
        checked += 1;
    }
    println!("{checked} PyTorch traces checked");
}
