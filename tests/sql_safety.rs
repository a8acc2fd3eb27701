//! `sightline sql` only reads: every kind of write is refused by the authorizer with a message,
//! the export's bytes never change and no journal appears beside it, and a runaway query stops at
//! the time limit or on cancel and hands control back.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use sightline::sql::{SqlError, SqlTrace};

const WRITES: &[&str] = &[
    "INSERT INTO kernels (start) VALUES (1)",
    "INSERT INTO StringIds (id, value) VALUES (999999, 'x')",
    "UPDATE StringIds SET value = 'x'",
    "DELETE FROM StringIds",
    "WITH a AS (SELECT 1) DELETE FROM StringIds",
    "CREATE TABLE t (x)",
    "CREATE TEMP TABLE t (x)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE INDEX i ON StringIds (value)",
    "DROP VIEW kernels",
    "DROP TABLE StringIds",
    "ALTER TABLE StringIds ADD COLUMN y",
    "ATTACH DATABASE ':memory:' AS other",
    "DETACH DATABASE temp",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 7",
    "PRAGMA writable_schema = ON",
    "PRAGMA query_only = OFF",
    "SELECT load_extension('/nonexistent/ext')",
    "BEGIN",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
];

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/moe.sqlite")
}

fn sha256(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_default();
    Sha256::digest(&bytes).to_vec()
}

fn assert_refused(trace: &SqlTrace, sql: &str) {
    match trace.query(sql, None, Duration::from_secs(5), None) {
        Err(SqlError::Refused(message)) => {
            assert!(message.contains("refused"), "{sql}: {message}")
        }
        // VACUUM / a few statements are refused by SQLite's read-only open before the
        // authorizer sees them; still an error, never a write.
        Err(SqlError::Sql(message)) => assert!(
            sql == "VACUUM" || message.contains("not authorized") || message.contains("readonly"),
            "{sql}: unexpected error {message}"
        ),
        Err(other) => panic!("{sql}: unexpected error {other}"),
        Ok(r) => panic!("{sql}: ran and returned {} rows", r.rows.len()),
    }
}

#[test]
fn every_write_is_refused_and_the_file_stays_byte_identical() {
    let dir = std::env::temp_dir().join(format!("sightline_sql_safety_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let copy = dir.join("moe.sqlite");
    std::fs::copy(fixture(), &copy).expect("copy fixture");
    let before = sha256(&copy);
    {
        let trace = SqlTrace::open(&copy).expect("open");
        assert!(trace.over_file);
        for sql in WRITES {
            assert_refused(&trace, sql);
            // A refusal leaves the connection usable.
            let n = trace
                .query(
                    "SELECT count(*) FROM kernels",
                    None,
                    Duration::from_secs(5),
                    None,
                )
                .expect("read after refusal");
            assert_eq!(n.rows.len(), 1);
        }
        // Reading PRAGMAs are allowed.
        let info = trace
            .query(
                "PRAGMA table_info(kernels)",
                None,
                Duration::from_secs(5),
                None,
            )
            .expect("table_info");
        assert_eq!(info.rows.len(), 13, "kernels has 13 columns");
    }
    assert_eq!(before, sha256(&copy), "the export's bytes changed");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["moe.sqlite"],
        "no -journal, -wal or -shm beside the file"
    );
    let _ = std::fs::remove_dir_all(&dir);
    println!("{} kinds of write refused", WRITES.len());
}

#[test]
fn the_in_memory_copy_of_a_pytorch_trace_is_read_only_too() {
    let path = Path::new("/work/shared/traces/pytorch/torch_transformer.pt.trace.json.gz");
    if !path.exists() {
        eprintln!("skipped: {} absent", path.display());
        return;
    }
    let trace = SqlTrace::open(path).expect("open");
    assert!(!trace.over_file);
    for sql in [
        "DELETE FROM kernels",
        "UPDATE api SET name = 'x'",
        "INSERT INTO ranges (start) VALUES (1)",
        "DROP TABLE kernels",
        "CREATE TABLE t (x)",
        "ATTACH DATABASE ':memory:' AS other",
        "PRAGMA user_version = 7",
        "SELECT load_extension('/nonexistent/ext')",
    ] {
        assert_refused(&trace, sql);
    }
}

const FOREVER: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

#[test]
fn a_query_that_runs_forever_stops_at_the_time_limit() {
    let trace = SqlTrace::open(&fixture()).expect("open");
    let started = Instant::now();
    let result = trace.query(FOREVER, None, Duration::from_secs(1), None);
    let took = started.elapsed();
    assert!(matches!(result, Err(SqlError::TimedOut(_))), "{result:?}");
    assert!(took >= Duration::from_secs(1), "stopped early: {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "control came back after {took:?}"
    );
    // The connection answers the next query.
    let n = trace
        .query(
            "SELECT count(*) FROM memcpy",
            None,
            Duration::from_secs(5),
            None,
        )
        .expect("read after timeout");
    assert_eq!(n.rows.len(), 1);
}

#[test]
fn a_query_cancelled_after_one_second_returns_control() {
    let trace = SqlTrace::open(&fixture()).expect("open");
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        flag.store(true, Ordering::Relaxed);
    });
    let started = Instant::now();
    let result = trace.query(FOREVER, None, Duration::from_secs(600), Some(cancel));
    let took = started.elapsed();
    let _ = canceller.join();
    assert!(matches!(result, Err(SqlError::Cancelled)), "{result:?}");
    assert!(
        took < Duration::from_secs(10),
        "control came back after {took:?}"
    );
}
