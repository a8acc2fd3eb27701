//! The trace generator (`sightline gen-trace`): its schema is a real export's, its output loads,
//! and the statistics Sightline computes on it equal a brute-force SQL computation on the file.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::io::Read;
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
        sampling_period_ns: synth::DEFAULT_SAMPLING_PERIOD_NS,
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
    // moe's tables, plus the CPU side that moe was captured without, as a real export with
    // CPU sampling and scheduling (cpu_side, Nsight Systems 2023.4.4) writes them.
    const CPU_SIDE: [&str; 3] = ["COMPOSITE_EVENTS", "SAMPLING_CALLCHAINS", "SCHED_EVENTS"];
    let mut expected: Vec<(String, String)> = tables(&real);
    assert!(expected.iter().all(|t| !CPU_SIDE.contains(&t.0.as_str())));
    expected.extend(
        tables(&open(&common::fixture("cpu_side")))
            .into_iter()
            .filter(|t| CPU_SIDE.contains(&t.0.as_str())),
    );
    expected.sort();
    assert_eq!(tables(&generated), expected);
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
        needs: sightline::trace::Needs::ALL,
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
        needs: sightline::trace::Needs::ALL,
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

/// `SELECT` rows of one column each, as `T`.
fn column<T: rusqlite::types::FromSql>(conn: &Connection, sql: &str) -> Vec<T> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    stmt.query_map([], |r| r.get::<_, T>(0))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

/// Every sample's frames by SQL, innermost first, as (function, module) text, by sample id.
fn sql_stacks(conn: &Connection) -> BTreeMap<i64, Vec<(String, String)>> {
    let mut stmt = conn
        .prepare(
            "SELECT c.id, f.value, m.value FROM SAMPLING_CALLCHAINS c \
             JOIN StringIds f ON f.id = c.symbol JOIN StringIds m ON m.id = c.module \
             ORDER BY c.id, c.stackDepth",
        )
        .expect("prepare");
    let mut out: BTreeMap<i64, Vec<(String, String)>> = BTreeMap::new();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))
        .expect("query");
    for row in rows {
        let (id, f, m) = row.expect("row");
        out.entry(id).or_default().push((f, m));
    }
    out
}

#[test]
fn cpu_samples_and_their_stacks_equal_sql() {
    let path = generate("samples", &options(60_000));
    let trace = load::load_file(&path).expect("load");
    let conn = open(&path);
    assert!(trace.warnings.entries.is_empty(), "{:?}", trace.warnings);
    let n = count(&conn, "COMPOSITE_EVENTS");
    assert!(n > 1_000, "{n} samples");
    assert_eq!(trace.cpu_samples.len(), n);

    // Per thread, in time order: the sample times and each sample's stack, by SQL.
    let stacks = sql_stacks(&conn);
    assert_eq!(stacks.len(), n, "every sample has a call stack");
    for thread in &trace.threads {
        let rows: Vec<(i64, i64)> = {
            let mut stmt = conn
                .prepare(
                    "SELECT id, start FROM COMPOSITE_EVENTS WHERE globalTid = ?1 ORDER BY start, id",
                )
                .expect("prepare");
            stmt.query_map([thread.global_tid], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .map(|r| r.expect("row"))
                .collect()
        };
        assert!(!rows.is_empty(), "thread {} is sampled", thread.tid);
        let range = thread.samples.clone();
        assert_eq!(range.len(), rows.len(), "thread {}", thread.tid);
        for (i, (id, start)) in range.zip(&rows) {
            assert_eq!(trace.cpu_samples.time_ns[i], *start);
            let frames: Vec<(String, String)> = trace
                .stacks
                .frames(trace.cpu_samples.stack[i])
                .iter()
                .map(|f| {
                    (
                        trace.str(f.function).to_string(),
                        trace.str(f.module).to_string(),
                    )
                })
                .collect();
            assert_eq!(&frames, &stacks[id], "sample {id}");
        }
    }

    // Stacks as the brief of the generator asks: a few hundred distinct ones, 5 to 40 deep,
    // interned once each.
    let distinct: std::collections::HashSet<&Vec<(String, String)>> = stacks.values().collect();
    assert!(
        (100..=1_000).contains(&distinct.len()),
        "{}",
        distinct.len()
    );
    assert_eq!(trace.stacks.len(), distinct.len());
    let depths: Vec<i64> = column(
        &conn,
        "SELECT count(*) FROM SAMPLING_CALLCHAINS GROUP BY id",
    );
    let (lo, hi) = (depths.iter().min(), depths.iter().max());
    assert!(lo >= Some(&5) && lo <= Some(&10), "{lo:?}");
    assert!(hi <= Some(&40) && hi >= Some(&30), "{hi:?}");

    // Bottom-up table of every sample: self samples per (function, module) are the innermost
    // frames, total samples the samples with the function anywhere, by SQL.
    let all = analysis::cpu_samples::samples_in(&trace, i64::MIN, i64::MAX, None);
    let profile = analysis::cpu_samples::profile(&trace, &all);
    assert_eq!(profile.samples as usize, n);
    let ours: BTreeMap<(String, String), (u64, u64)> = profile
        .bottom_up
        .iter()
        .map(|f| {
            (
                (
                    trace.str(f.frame.function).to_string(),
                    trace.str(f.frame.module).to_string(),
                ),
                (f.self_samples, f.total_samples),
            )
        })
        .collect();
    let mut stmt = conn
        .prepare(
            "SELECT f.value, m.value, sum(c.stackDepth = 0), count(DISTINCT c.id) \
             FROM SAMPLING_CALLCHAINS c JOIN StringIds f ON f.id = c.symbol \
             JOIN StringIds m ON m.id = c.module GROUP BY f.value, m.value",
        )
        .expect("prepare");
    let sql: BTreeMap<(String, String), (u64, u64)> = stmt
        .query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?),
                (r.get::<_, i64>(2)? as u64, r.get::<_, i64>(3)? as u64),
            ))
        })
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(ours, sql);
    // Unresolved libcuda frames keep the address as their name, as nsys exports them.
    let unresolved: Vec<String> = column(
        &conn,
        "SELECT DISTINCT f.value FROM SAMPLING_CALLCHAINS c JOIN StringIds f ON f.id = c.symbol \
         WHERE c.unresolved = 1",
    );
    assert!(!unresolved.is_empty());
    assert!(
        unresolved.iter().all(|f| f.starts_with("0x")),
        "{unresolved:?}"
    );
}

#[test]
fn running_intervals_equal_the_sql_pairing() {
    let path = generate("sched", &options(60_000));
    let trace = load::load_file(&path).expect("load");
    let conn = open(&path);
    // A sched-in paired with the next event of its thread (by start, ties in table order) when
    // that is a sched-out.
    let mut stmt = conn
        .prepare(
            "SELECT globalTid, start, next_start FROM (SELECT globalTid, start, isSchedIn, \
             LEAD(start) OVER w AS next_start, LEAD(isSchedIn) OVER w AS next_in \
             FROM SCHED_EVENTS WINDOW w AS (PARTITION BY globalTid ORDER BY start, rowid)) \
             WHERE isSchedIn != 0 AND next_in = 0 ORDER BY globalTid, start, next_start",
        )
        .expect("prepare");
    let mut sql: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for row in stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
    {
        let (tid, a, b): (i64, i64, i64) = row.expect("row");
        sql.entry(tid).or_default().push((a, b));
    }
    assert_eq!(sql.len(), 3, "every thread is scheduled");
    let mut ours: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for thread in &trace.threads {
        let r = thread.running.range.clone();
        let states = &trace.thread_states;
        ours.insert(
            thread.global_tid,
            states.start_ns[r.clone()]
                .iter()
                .zip(&states.end_ns[r])
                .map(|(&a, &b)| (a, b))
                .collect(),
        );
    }
    assert_eq!(ours, sql);

    // The file has what makes pairing matter: events left unpaired (at the edges, a lost
    // sched-out) and a sched-in and sched-out at the same timestamp, which only file order puts
    // right.
    let paired: usize = sql.values().map(Vec::len).sum();
    let events = count(&conn, "SCHED_EVENTS");
    assert!(events > 2 * paired, "{events} events, {paired} pairs");
    let zero_length = sql.values().flatten().filter(|(a, b)| a == b).count();
    assert!(zero_length > 0);

    // Samples are taken while their thread runs: the thread's last scheduling event before a
    // sample is a sched-in (a lost sched-out leaves the next event a sched-in, so this is read
    // from the events, not the pairs), or, before its first event, the thread was already
    // running (that first event is a sched-out). One sample per period of running time (1 ms,
    // jittered by 10%).
    for thread in &trace.threads {
        let events: Vec<(i64, bool)> = {
            let mut stmt = conn
                .prepare(
                    "SELECT start, isSchedIn != 0 FROM SCHED_EVENTS WHERE globalTid = ?1 \
                     ORDER BY start, rowid",
                )
                .expect("prepare");
            stmt.query_map([thread.global_tid], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .map(|r| r.expect("row"))
                .collect()
        };
        let times = &trace.cpu_samples.time_ns[thread.samples.clone()];
        for &t in times {
            let i = events.partition_point(|&(start, _)| start <= t);
            let running = if i == 0 {
                !events[0].1
            } else {
                events[i - 1].1
            };
            assert!(
                running,
                "thread {}: a sample at {t} while off the CPU",
                thread.tid
            );
        }
        let (mut running_ns, mut sampled) = (0i64, 0usize);
        for pair in events.windows(2) {
            let ((a, is_in), (b, _)) = (pair[0], pair[1]);
            if is_in {
                running_ns += b - a;
                sampled += times.iter().filter(|&&t| a <= t && t < b).count();
            }
        }
        let expected = running_ns as f64 / synth::DEFAULT_SAMPLING_PERIOD_NS as f64;
        let ratio = sampled as f64 / expected;
        assert!(
            (0.95..1.05).contains(&ratio),
            "thread {}: {sampled} samples, {expected:.0} expected",
            thread.tid
        );
    }
}

#[test]
fn sampling_period_sets_the_rate_and_leaves_the_gpu_side_alone() {
    let every_ms = generate("period-1ms", &options(20_000));
    let every_quarter_ms = generate(
        "period-250us",
        &GenOptions {
            sampling_period_ns: 250_000,
            ..options(20_000)
        },
    );
    let none = generate(
        "period-none",
        &GenOptions {
            sampling_period_ns: 0,
            ..options(20_000)
        },
    );
    let samples = |p: &Path| count(&open(p), "COMPOSITE_EVENTS");
    let ratio = samples(&every_quarter_ms) as f64 / samples(&every_ms) as f64;
    assert!((3.8..4.2).contains(&ratio), "{ratio}");
    assert_eq!(samples(&none), 0);
    assert_eq!(count(&open(&none), "SAMPLING_CALLCHAINS"), 0);
    // Scheduling is recorded without sampling, as nsys does with --sample=none.
    assert!(count(&open(&none), "SCHED_EVENTS") > 0);
    let gpu_side = |p: &Path| -> Vec<i64> {
        column(
            &open(p),
            "SELECT sum(start) + sum(end) + count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL \
             SELECT sum(start) + sum(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME UNION ALL \
             SELECT sum(start) + sum(end) FROM NVTX_EVENTS",
        )
    };
    assert_eq!(gpu_side(&none), gpu_side(&every_ms));
    assert_eq!(gpu_side(&every_quarter_ms), gpu_side(&every_ms));
    // The sampling period does not move the scheduling either.
    let sched = |p: &Path| -> Vec<(i64, i64, i64)> {
        let conn = open(p);
        let mut stmt = conn
            .prepare("SELECT start, cpu, isSchedIn FROM SCHED_EVENTS ORDER BY rowid")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
    };
    assert_eq!(sched(&none), sched(&every_ms));
    let bad = GenOptions {
        sampling_period_ns: 10,
        ..options(10)
    };
    let dir = common::scratch_dir("period-bad");
    let err =
        synth::generate(&dir.join("x.sqlite"), &bad, false).expect_err("a 10 ns period is refused");
    let _ = std::fs::remove_dir_all(dir);
    assert!(err.to_string().contains("--sampling-period"), "{err}");
}

/// Counts of `(ph, cat)` in a Kineto trace's `traceEvents` ("-" for no cat).
fn kineto_categories(events: &[serde_json::Value]) -> BTreeMap<(String, String), usize> {
    let mut counts = BTreeMap::new();
    for e in events {
        let field = |k: &str| e[k].as_str().unwrap_or("-").to_string();
        *counts.entry((field("ph"), field("cat"))).or_insert(0) += 1;
    }
    counts
}

#[test]
fn kineto_trace_has_the_real_captures_shapes_and_same_seed_same_bytes() {
    let dir = common::scratch_dir("gen-kineto");
    let paths = ["a", "b", "c", "d"].map(|sub| {
        std::fs::create_dir(dir.join(sub)).expect("mkdir");
        dir.join(sub).join("kt_many.pt.trace.json")
    });
    let counts = synth::generate_kineto(&paths[0], 3_000, 7, false).expect("generate");
    let (steps, i) = (counts.steps as usize, counts.iterations_per_step as usize);
    let shape = synth::kineto::shape(3_000);
    assert_eq!((steps, i), (shape.0 as usize, shape.1 as usize));
    assert_eq!(steps, 1, "one short step");
    assert!((2_700..3_300).contains(&counts.events), "{counts:?}");

    let text = std::fs::read_to_string(&paths[0]).expect("read");
    let trace: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    for key in [
        "schemaVersion",
        "deviceProperties",
        "cuda_driver_version",
        "record_shapes",
    ] {
        assert!(trace.get(key).is_some(), "{key}");
    }
    assert_eq!(trace["displayTimeUnit"], "ms");
    assert_eq!(trace["baseTimeNanoseconds"], 1_790_857_026_000_000_000u64);
    assert_eq!(trace["traceName"], "kt_many.pt.trace.json");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(events.len() as u64, counts.events);
    let expected: BTreeMap<(String, String), usize> = [
        ("X", "user_annotation", 2),
        ("X", "cpu_op", 4 * i + 5),
        ("i", "cpu_instant_event", 10 * i + 2),
        ("X", "python_function", i + 128),
        // 3i + 1 launches, the copy, its synchronisation and the profiler's last one.
        ("X", "cuda_runtime", 3 * i + 4),
        ("s", "ac2g", 3 * i + 4),
        ("X", "kernel", 3 * i + 1),
        ("X", "gpu_memcpy", 1),
        ("f", "ac2g", 3 * i + 2),
        ("X", "gpu_user_annotation", 1),
        ("M", "-", 58),
        ("X", "Trace", 1),
        ("i", "-", 2),
    ]
    .into_iter()
    .map(|(ph, cat, n)| ((ph.to_string(), cat.to_string()), n))
    .collect();
    assert_eq!(kineto_categories(events), expected);

    // Kineto's own formats: ts and dur in µs with three decimals, epoch-like magnitude.
    let times = regex::Regex::new(r#""(ts|dur)": (\d+)\.(\d+)"#).expect("regex");
    let mut ts = 0;
    for c in times.captures_iter(&text) {
        assert_eq!(c[3].len(), 3, "{}", &c[0]);
        if &c[1] == "ts" {
            assert_eq!(c[2].len(), 13, "{}", &c[0]);
            ts += 1;
        }
    }
    assert_eq!(ts, events.len(), "every event has a ts so written");

    // Every kernel comes from a cudaLaunchKernel with its correlation and External id, and
    // a flow pair links the two.
    let of = |cat: &'static str| events.iter().filter(move |e| e["cat"] == cat);
    let launches: BTreeMap<u64, &serde_json::Value> = of("cuda_runtime")
        .filter_map(|e| Some((e["args"]["correlation"].as_u64()?, e)))
        .collect();
    let flows: Vec<(&str, u64)> = of("ac2g")
        .filter_map(|e| Some((e["ph"].as_str()?, e["id"].as_u64()?)))
        .collect();
    for k in of("kernel") {
        let correlation = k["args"]["correlation"].as_u64().expect("correlation");
        let launch = launches[&correlation];
        assert_eq!(launch["name"], "cudaLaunchKernel");
        assert_eq!(launch["args"]["External id"], k["args"]["External id"]);
        assert_eq!(k["pid"], 0);
        assert_eq!(k["tid"], k["args"]["stream"]);
        assert!(k["ts"].as_f64() >= launch["ts"].as_f64());
        assert!(flows.contains(&("s", correlation)) && flows.contains(&("f", correlation)));
    }
    let names: Vec<&str> = of("user_annotation")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(names, ["ProfilerStep#2", "iteration_2"]);
    let memory = of("cpu_instant_event").next().expect("[memory]");
    let args: Vec<&String> = memory["args"].as_object().expect("args").keys().collect();
    for key in [
        "Total Reserved",
        "Total Allocated",
        "Bytes",
        "Device Id",
        "Device Type",
        "Addr",
    ] {
        assert!(args.contains(&&key.to_string()), "{key}");
    }

    // The same seed gives the same bytes, gzipped or not; another seed another trace.
    synth::generate_kineto(&paths[1], 3_000, 7, false).expect("generate");
    let read = |p: &Path| std::fs::read(p).expect("read");
    assert!(read(&paths[0]) == read(&paths[1]), "same seed, same bytes");
    synth::generate_kineto(&paths[2], 3_000, 8, false).expect("generate");
    assert!(
        read(&paths[0]) != read(&paths[2]),
        "another seed, another trace"
    );
    let gz = paths[3].with_extension("json.gz");
    synth::generate_kineto(&gz, 3_000, 7, false).expect("generate");
    let mut unzipped = Vec::new();
    flate2::read::GzDecoder::new(read(&gz).as_slice())
        .read_to_end(&mut unzipped)
        .expect("gunzip");
    assert!(unzipped == read(&paths[0]), "the .gz holds the same trace");
    let err = synth::generate_kineto(&gz, 3_000, 7, false).expect_err("exists");
    assert!(err.to_string().contains("--force"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
