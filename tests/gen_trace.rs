//! The trace generator (`sightline gen-trace`): its schema is a real export's, its output loads,
//! and the statistics Sightline computes on it equal a brute-force SQL computation on the file.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use rusqlite::Connection;
use sightline::analysis::{self, Filter, Report};
use sightline::load::{self, LoadControl, LoadProgress};
use sightline::synth::{self, GenOptions};
use sightline::trace::{CopyKind, NO_INDEX, Trace};

fn options(events: u64) -> GenOptions {
    GenOptions {
        events,
        gpus: 2,
        streams: 3,
        threads: 3,
        seed: 7,
    }
}

/// A generated trace in a scratch directory that is removed when this is dropped.
struct Generated {
    path: PathBuf,
}

impl std::ops::Deref for Generated {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Generated {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn generate(tag: &str, options: &GenOptions) -> Generated {
    let path = common::scratch_dir(tag).join("gen.sqlite");
    let counts = synth::generate(&path, options, false).expect("generate");
    assert_eq!(counts.events(), options.events, "the event count is exact");
    Generated { path }
}

fn open(path: &Path) -> Connection {
    Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open")
}

/// (name, count, total) rows of an SQL query, keyed by name.
fn sql_groups(conn: &Connection, sql: &str) -> BTreeMap<String, (u64, i64)> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            (r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)?),
        ))
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

/// (name, count, total) of a report computed by Sightline over the whole trace.
fn report_groups(trace: &Trace, report: Report) -> BTreeMap<String, (u64, i64)> {
    analysis::compute(trace, report, &Filter::all())
        .rows
        .into_iter()
        .map(|r| (r.name, (r.stats.count, r.stats.total)))
        .collect()
}

fn count(conn: &Connection, table: &str) -> usize {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .expect("count") as usize
}

#[test]
fn schema_is_the_real_exports() {
    let path = generate("schema", &options(100));
    let tables = |conn: &Connection| -> Vec<(String, String)> {
        let mut stmt = conn
            .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
    };
    let real = open(&common::fixture("moe"));
    let generated = open(&path);
    assert_eq!(tables(&generated), tables(&real));
    // The ENUM tables are copied row for row.
    for (name, _) in tables(&real).iter().filter(|t| t.0.starts_with("ENUM_")) {
        let rows = |conn: &Connection| -> Vec<String> {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM {name} ORDER BY 1"))
                .expect("prepare");
            let n = stmt.column_count();
            stmt.query_map([], |r| {
                (0..n)
                    .map(|i| {
                        r.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|v| v.join("|"))
            })
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
        };
        assert_eq!(rows(&generated), rows(&real), "{name}");
    }
}

#[test]
fn statistics_equal_brute_force_sql() {
    let opts = options(30_000);
    let path = generate("stats", &opts);
    let trace = load::load_file(&path).expect("load");
    let conn = open(&path);
    assert_eq!(trace.event_count() as u64, opts.events);
    assert!(trace.warnings.entries.is_empty(), "{:?}", trace.warnings);
    assert_eq!(
        trace.kernels.spans.len(),
        count(&conn, "CUPTI_ACTIVITY_KIND_KERNEL")
    );
    assert_eq!(
        trace.api_calls.spans.len(),
        count(&conn, "CUPTI_ACTIVITY_KIND_RUNTIME")
    );
    assert_eq!(
        trace.memcpys.spans.len(),
        count(&conn, "CUPTI_ACTIVITY_KIND_MEMCPY")
    );
    assert_eq!(
        trace.memsets.spans.len(),
        count(&conn, "CUPTI_ACTIVITY_KIND_MEMSET")
    );
    assert_eq!(trace.nvtx.spans.len(), count(&conn, "NVTX_EVENTS"));

    // Kernels per demangled name: count and total duration.
    let sql = sql_groups(
        &conn,
        "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
         JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value",
    );
    assert!(sql.len() > 20, "Zipf names: many distinct kernels");
    assert_eq!(report_groups(&trace, Report::Kernels), sql);

    // API calls per name (the report strips `_vNNNN` suffixes, nameIds are distinct here).
    let sql: BTreeMap<String, (u64, i64)> = sql_groups(
        &conn,
        "SELECT s.value, count(*), sum(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
         JOIN StringIds s ON s.id = r.nameId GROUP BY s.value",
    )
    .into_iter()
    .map(|(name, v)| {
        let b = name.as_bytes();
        let stripped = if b.len() >= 6 && &b[b.len() - 6..b.len() - 4] == b"_v" {
            name[..name.len() - 6].to_string()
        } else {
            name
        };
        (stripped, v)
    })
    .collect();
    assert_eq!(report_groups(&trace, Report::CudaApi), sql);

    // Copies per direction and memsets: count, total time and total bytes.
    let mut by_time = BTreeMap::new();
    let mut by_size = BTreeMap::new();
    let mut stmt = conn
        .prepare(
            "SELECT copyKind, count(*), sum(end - start), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY \
             GROUP BY copyKind UNION ALL SELECT -1, count(*), sum(end - start), sum(bytes) \
             FROM CUPTI_ACTIVITY_KIND_MEMSET",
        )
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .expect("query");
    let mut kinds = Vec::new();
    for row in rows {
        let (kind, n, time, bytes) = row.expect("row");
        let name = if kind < 0 {
            "[CUDA memset]".to_string()
        } else {
            kinds.push(kind);
            format!("[CUDA memcpy {}]", CopyKind(kind as u8).label())
        };
        by_time.insert(name.clone(), (n, time));
        by_size.insert(name, (n, bytes));
    }
    assert_eq!(
        kinds,
        [1, 2, 8, 10],
        "every direction, peer copies with 2 GPUs"
    );
    assert_eq!(report_groups(&trace, Report::MemoryTime), by_time);
    assert_eq!(report_groups(&trace, Report::MemorySize), by_size);

    // NVTX push/pop ranges per text.
    let sql = sql_groups(
        &conn,
        "SELECT text, count(*), sum(end - start) FROM NVTX_EVENTS WHERE eventType = 59 GROUP BY text",
    );
    assert!(sql.contains_key("warmup") && sql.contains_key("step_0"));
    assert!(sql.contains_key("layer_7_backward") && sql.contains_key("optimizer_step"));
    assert_eq!(report_groups(&trace, Report::Nvtx), sql);
}

#[test]
fn gpu_work_links_to_its_launch_and_threads_decode() {
    let path = generate("links", &options(20_000));
    let trace = load::load_file(&path).expect("load");
    let launch = trace
        .strings
        .find("cudaLaunchKernel_v7000")
        .expect("launch name");
    for i in 0..trace.kernels.spans.len() {
        let a = trace.kernels.api_call[i];
        assert_ne!(a, NO_INDEX, "kernel {i} has its launch");
        let a = a as usize;
        assert_eq!(trace.api_calls.spans.name[a], launch);
        assert_eq!(
            trace.api_calls.correlation_id[a],
            trace.kernels.correlation_id[i]
        );
        assert!(trace.api_calls.spans.start_ns[a] < trace.kernels.spans.start_ns[i]);
    }
    assert!(trace.memcpys.api_call.iter().all(|&a| a != NO_INDEX));
    assert!(trace.memsets.api_call.iter().all(|&a| a != NO_INDEX));
    // globalTid: pid in bits 24..48, tid below.
    let tids: Vec<(u32, u32)> = trace.threads.iter().map(|t| (t.pid, t.tid)).collect();
    assert_eq!(tids, [(4242, 4242), (4242, 4243), (4242, 4244)]);
    // step_N > forward_pass > layer_K_forward: at least three NVTX depths per thread.
    assert!(trace.threads.iter().all(|t| t.nvtx_levels.len() >= 3));
    assert_eq!(trace.devices(), [0, 1]);
    assert_eq!(trace.streams.len(), 2 * 3);
    assert_eq!(trace.process_name(4242), "python3 train.py");
}

#[test]
fn deterministic_for_a_seed_and_exact_for_any_count() {
    let a = generate("det-a", &options(5_000));
    let b = generate("det-b", &options(5_000));
    let read = |p: &Path| std::fs::read(p).expect("read");
    assert!(read(&a) == read(&b), "same seed, same bytes");
    let mut other = options(5_000);
    other.seed = 8;
    let c = generate("det-c", &other);
    assert!(read(&a) != read(&c), "another seed, another trace");
    for events in [0, 1, 2, 3, 4, 5, 17, 101] {
        let path = generate("exact", &options(events));
        let trace = load::load_file(&path).expect("load");
        assert_eq!(trace.event_count() as u64, events);
    }
}

#[test]
fn refuses_to_overwrite_without_force() {
    let path = generate("force", &options(10));
    let err = synth::generate(&path, &options(10), false).expect_err("exists");
    assert!(err.to_string().contains("--force"), "{err}");
    synth::generate(&path, &options(12), true).expect("replace");
    let bad = GenOptions {
        gpus: 0,
        ..options(10)
    };
    assert!(synth::generate(&path, &bad, true).is_err());
}

#[test]
fn chunked_parallel_reads_equal_a_single_scan() {
    // 1.5M events: ~650k kernels and ~700k API calls, more than one chunk of rows each, so an
    // 8-thread pool reads them in rowid ranges and a 1-thread pool in one scan.
    let path = generate("chunks", &options(1_500_000));
    let load_with = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| load::load_file(&path).expect("load"))
    };
    let (one, many) = (load_with(1), load_with(8));
    assert_eq!(one.kernels.spans.start_ns, many.kernels.spans.start_ns);
    assert_eq!(one.kernels.spans.name, many.kernels.spans.name);
    assert_eq!(one.kernels.grid, many.kernels.grid);
    assert_eq!(one.kernels.api_call, many.kernels.api_call);
    assert_eq!(one.api_calls.spans.end_ns, many.api_calls.spans.end_ns);
    assert_eq!(one.api_calls.correlation_id, many.api_calls.correlation_id);
    assert_eq!(one.memcpys.bytes, many.memcpys.bytes);
    assert_eq!(one.nvtx.depth, many.nvtx.depth);
    for report in Report::ALL {
        assert_eq!(report_groups(&one, report), report_groups(&many, report));
    }
}

#[test]
fn progress_moves_while_the_big_tables_are_read() {
    let path = generate("progress", &options(600_000));
    let seen: Mutex<Vec<(&'static str, f32)>> = Mutex::new(Vec::new());
    let cancel = AtomicBool::new(false);
    let progress = |p: &LoadProgress| seen.lock().expect("lock").push((p.phase, p.fraction));
    let control = LoadControl {
        progress: &progress,
        cancel: &cancel,
    };
    load::load_file_with(&path, &control).expect("load");
    let seen = seen.into_inner().expect("lock");
    assert!(seen.iter().all(|&(_, f)| (0.0..=1.0).contains(&f)));
    let rows: Vec<f32> = seen
        .iter()
        .filter(|(phase, _)| *phase == "reading tables")
        .map(|&(_, f)| f)
        .collect();
    // ~260k kernels, ~280k API calls and ~43k NVTX rows: a report every 65,536 rows read.
    assert!(rows.len() >= 8, "{seen:?}");
    assert!(rows.last() > rows.first(), "{rows:?}");
    assert_eq!(seen.last(), Some(&("done", 1.0)));
}

#[test]
fn cancelling_stops_a_load_midway() {
    let path = generate("cancel", &options(600_000));
    let cancel = AtomicBool::new(false);
    let reports = Mutex::new(0usize);
    // Cancel as soon as the first batch of rows has been read, as the window's Cancel does.
    let progress = |p: &LoadProgress| {
        if p.phase == "reading tables" {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        *reports.lock().expect("lock") += 1;
    };
    let control = LoadControl {
        progress: &progress,
        cancel: &cancel,
    };
    let started = std::time::Instant::now();
    let result = load::load_file_with(&path, &control);
    assert!(
        matches!(result, Err(load::LoadError::Cancelled)),
        "expected a cancelled load, got {:?}",
        result.map(|t| t.event_count())
    );
    println!("cancelled after {:?}", started.elapsed());
    // A later load of the same file is unaffected.
    assert!(load::load_file(&path).is_ok());
}
