//! `sightline export TRACE --kinds page_fault`: one row per unified-memory page fault, checked
//! against SQL over the fault tables of the real cpu_side export (Nsight Systems 2023.4).

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use sightline::export::events_csv::COLUMNS;

/// The cpu_side exports to check: the fixture and, when present, the shared copy.
fn cpu_side_files() -> Vec<PathBuf> {
    let mut files = vec![common::fixture("cpu_side")];
    if let Some(shared) = common::shared_traces() {
        files.push(shared.join("cpu_side.sqlite"));
    }
    files
}

/// Runs `sightline export` and returns the header and the rows.
fn export(trace: &Path, extra: &[&str], tag: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let dir = common::scratch_dir(tag);
    let out = dir.join("events.csv");
    let mut args = vec![
        "export".to_string(),
        trace.to_string_lossy().into_owned(),
        "--out".to_string(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    common::sightline_stdout(&refs);
    let mut reader = csv::Reader::from_path(&out).expect("open csv");
    let header = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (header, rows)
}

fn col(name: &str, header: &[String]) -> usize {
    header.iter().position(|c| c == name).expect("column")
}

/// Rows of an SQL query, every value as text.
fn sql_rows(conn: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    let n = stmt.column_count();
    let mut rows: Vec<Vec<String>> = stmt
        .query_map([], |r| {
            (0..n)
                .map(|i| {
                    let v: rusqlite::types::Value = r.get(i)?;
                    Ok(match v {
                        rusqlite::types::Value::Integer(x) => x.to_string(),
                        rusqlite::types::Value::Text(t) => t,
                        rusqlite::types::Value::Null => String::new(),
                        other => format!("{other:?}"),
                    })
                })
                .collect()
        })
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    rows.sort();
    rows
}

fn count(conn: &Connection, sql: &str) -> usize {
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .expect("count") as usize
}

#[test]
fn page_faults_export_one_row_per_fault_with_the_address_in_hex() {
    for trace in cpu_side_files() {
        let conn = Connection::open(&trace).expect("sqlite");
        let cpu_n = count(&conn, "SELECT COUNT(*) FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS");
        let gpu_n = count(&conn, "SELECT COUNT(*) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS");
        assert!(
            cpu_n > 0 && gpu_n > 0,
            "{}: the capture has faults",
            trace.display()
        );

        let (header, rows) = export(&trace, &["--kinds", "page_fault"], "export-faults");
        let mut want_header: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
        want_header.push("address".into());
        assert_eq!(header, want_header);
        let c = |name: &str| col(name, &header);

        let mut by_name: HashMap<&str, usize> = HashMap::new();
        let mut last_start = i64::MIN;
        let (mut cpu, mut gpu) = (Vec::new(), Vec::new());
        for r in &rows {
            assert_eq!(r.len(), header.len());
            assert_eq!(r[c("kind")], "page_fault");
            let start: i64 = r[c("start_ns")].parse().expect("start");
            assert!(start >= last_start, "ordered by start");
            last_start = start;
            // Never a stream, thread, correlation, size, copy kind, grid, block, depth or domain.
            for empty in [
                "stream",
                "tid",
                "correlation_id",
                "bytes",
                "copy_kind",
                "grid",
                "block",
                "nvtx_depth",
                "domain",
            ] {
                assert_eq!(r[c(empty)], "", "{empty}");
            }
            let fields = |names: &[&str]| names.iter().map(|n| r[c(n)].clone()).collect::<Vec<_>>();
            match r[c("name")].as_str() {
                "CPU page fault" => {
                    *by_name.entry("CPU page fault").or_default() += 1;
                    assert_eq!(r[c("device")], "", "no device on a CPU fault");
                    cpu.push(fields(&[
                        "start_ns",
                        "end_ns",
                        "duration_ns",
                        "pid",
                        "address",
                    ]));
                }
                "GPU page fault" => {
                    *by_name.entry("GPU page fault").or_default() += 1;
                    gpu.push(fields(&[
                        "start_ns",
                        "end_ns",
                        "duration_ns",
                        "device",
                        "pid",
                        "address",
                    ]));
                }
                other => panic!("unexpected name {other}"),
            }
        }
        assert_eq!(by_name.get("CPU page fault").copied(), Some(cpu_n));
        assert_eq!(by_name.get("GPU page fault").copied(), Some(gpu_n));

        // Every field of every row, against SQL (pid = (globalPid >> 24) & 0xFFFFFF).
        cpu.sort();
        gpu.sort();
        assert_eq!(
            cpu,
            sql_rows(
                &conn,
                "SELECT start, start, 0, (globalPid >> 24) & 16777215, printf('0x%x', address) \
                 FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS"
            )
        );
        assert_eq!(
            gpu,
            sql_rows(
                &conn,
                "SELECT start, \"end\", \"end\" - start, deviceId, (globalPid >> 24) & 16777215, \
                 printf('0x%x', address) FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS"
            )
        );
    }
}

#[test]
fn page_faults_follow_the_range_and_mix_with_other_kinds() {
    let trace = common::fixture("cpu_side");
    let conn = Connection::open(&trace).expect("sqlite");
    // A range around the middle of the faults: [first + span/3, first + 2*span/3).
    let (lo, hi): (i64, i64) = conn
        .query_row(
            "SELECT MIN(start), MAX(start) FROM (SELECT start FROM CUDA_UM_CPU_PAGE_FAULT_EVENTS \
             UNION ALL SELECT start FROM CUDA_UM_GPU_PAGE_FAULT_EVENTS)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("span");
    let (a, b) = (lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3);
    let range = format!("{a}:{b}");
    let (header, rows) = export(
        &trace,
        &["--kinds", "kernel,page_fault", "--range", &range],
        "export-faults-range",
    );
    let c = |name: &str| col(name, &header);
    let in_range = |table: &str| {
        count(
            &conn,
            &format!("SELECT COUNT(*) FROM {table} WHERE start >= {a} AND start < {b}"),
        )
    };
    let n = |name: &str| rows.iter().filter(|r| r[c("name")] == name).count();
    assert_eq!(
        n("CPU page fault"),
        in_range("CUDA_UM_CPU_PAGE_FAULT_EVENTS")
    );
    assert_eq!(
        n("GPU page fault"),
        in_range("CUDA_UM_GPU_PAGE_FAULT_EVENTS")
    );
    let kernels: Vec<&Vec<String>> = rows.iter().filter(|r| r[c("kind")] == "kernel").collect();
    assert_eq!(kernels.len(), in_range("CUPTI_ACTIVITY_KIND_KERNEL"));
    assert!(
        kernels.iter().all(|r| r[c("address")].is_empty()),
        "address is empty on other kinds"
    );

    // Without page_fault among the kinds there is no address column.
    let (header, _) = export(&trace, &["--kinds", "kernel"], "export-no-faults");
    assert_eq!(header, COLUMNS);
}

#[test]
fn a_trace_without_unified_memory_exports_no_fault_rows() {
    let trace = common::fixture("moe");
    let conn = Connection::open(&trace).expect("sqlite");
    let has_fault_table = count(
        &conn,
        "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'CUDA_UM_%_PAGE_FAULT_EVENTS'",
    );
    assert_eq!(has_fault_table, 0);
    let (header, rows) = export(&trace, &["--kinds", "page_fault"], "export-faults-none");
    assert_eq!(header.last().map(String::as_str), Some("address"));
    assert!(rows.is_empty());
}
