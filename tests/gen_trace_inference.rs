//! `gen-trace --shape inference`: the shape of a real 5.4 M-row LLM-inference export (one H100,
//! millions of tiny kernels on four streams, each launched through `cuKernelGetName` +
//! `cudaLaunchKernel`, NVTX push/pop ranges six levels deep, decode steps replaying CUDA graphs
//! traced as a whole), at a small size: the rows per table as SQL counts them, the proportions of
//! the real export, and graph executions linked to their `cudaGraphLaunch` once loaded.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use sightline::load;
use sightline::synth::{self, GenCounts, InferenceOptions};
use sightline::trace::NO_INDEX;

/// A generated trace in a scratch directory that is removed when this is dropped.
struct Generated {
    path: PathBuf,
    counts: GenCounts,
}

impl Drop for Generated {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn generate(tag: &str, events: u64, seed: u64) -> Generated {
    let path = common::scratch_dir(tag).join("inference.sqlite");
    let options = InferenceOptions {
        events,
        seed,
        ..InferenceOptions::default()
    };
    let counts = synth::generate_inference(&path, &options, false).expect("generate");
    assert_eq!(counts.events(), events, "the event count is exact");
    Generated { path, counts }
}

fn count(conn: &Connection, sql: &str) -> u64 {
    conn.query_row(sql, [], |r| r.get::<_, i64>(0)).expect(sql) as u64
}

fn table_sql(path: &Path, table: &str) -> String {
    common::open_ro(path)
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )
        .expect("table")
}

#[test]
fn rows_per_table_have_the_real_exports_proportions() {
    let g = generate("inference-rows", 60_000, 1);
    let c = g.counts;
    let conn = common::open_ro(&g.path);
    let rows = |table: &str| count(&conn, &format!("SELECT count(*) FROM {table}"));
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_KERNEL"), c.kernels);
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_RUNTIME"), c.api_calls);
    assert_eq!(rows("NVTX_EVENTS"), c.nvtx_ranges);
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_GRAPH_TRACE"), c.graphs);
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_MEMCPY"), c.memcpys);
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_MEMSET"), 0);
    assert_eq!(rows("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"), c.syncs);
    assert_eq!(rows("SCHED_EVENTS"), c.sched_events);
    assert_eq!(rows("COMPOSITE_EVENTS"), 0, "no CPU samples by default");
    assert_eq!(
        c.rows(),
        c.events() + c.syncs + c.sched_events,
        "rows are the events, syncs and scheduling events"
    );

    // The real export: 1.4 M kernels, 2.9 M CUDA API calls, 1 M NVTX ranges, graph launches.
    let per_kernel = |n: u64| n as f64 / c.kernels as f64;
    assert!((2.0..2.2).contains(&per_kernel(c.api_calls)), "{c:?}");
    assert!((0.6..0.8).contains(&per_kernel(c.nvtx_ranges)), "{c:?}");
    assert!(c.graphs > 0 && c.graphs < c.kernels / 50, "{c:?}");
    assert!(c.kernels as f64 > 0.25 * c.events() as f64, "{c:?}");
    // Every kernel launch is cuKernelGetName (driver) then cudaLaunchKernel (runtime), and each
    // graph replay a cudaGraphLaunch.
    let calls = |name: &str, class: i64| {
        count(
            &conn,
            &format!(
                "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s \
                 ON s.id = r.nameId WHERE s.value = '{name}' AND r.eventClass = {class}"
            ),
        )
    };
    assert_eq!(calls("cuKernelGetName", 1), c.kernels);
    assert_eq!(calls("cudaLaunchKernel_v7000", 0), c.kernels);
    assert_eq!(calls("cudaGraphLaunch_v10000", 0), c.graphs);
    // Tiny kernels (a few µs) on the four streams of one GPU.
    assert_eq!(
        count(
            &conn,
            "SELECT count(DISTINCT deviceId * 1000 + streamId) FROM CUPTI_ACTIVITY_KIND_KERNEL"
        ),
        4
    );
    let short = count(
        &conn,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE end - start < 10000",
    );
    assert!(
        short as f64 > 0.8 * c.kernels as f64,
        "{short} of {}",
        c.kernels
    );
    // The graph-trace table is the one Nsight Systems 2025.3.1 writes.
    if let Some(shared) = common::shared_traces() {
        let real = shared.join("n25_graphs.sqlite");
        let table = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
        assert_eq!(table_sql(&g.path, table), table_sql(&real, table));
    }
}

#[test]
fn graph_executions_link_to_their_launch_and_ranges_nest_deep() {
    let g = generate("inference-links", 30_000, 3);
    let trace = load::load_file(&g.path).expect("load");
    assert_eq!(trace.event_count() as u64, 30_000);
    assert_eq!(trace.graphs.spans.len() as u64, g.counts.graphs);
    let launch = trace
        .strings
        .find("cudaGraphLaunch_v10000")
        .expect("graph launch name");
    for i in 0..trace.graphs.spans.len() {
        let a = trace.graphs.api_call[i];
        assert_ne!(a, NO_INDEX, "graph execution {i} has its launch");
        let a = a as usize;
        assert_eq!(trace.api_calls.spans.name[a], launch);
        assert_eq!(
            trace.api_calls.correlation_id[a],
            trace.graphs.correlation_id[i]
        );
        assert!(trace.api_calls.spans.start_ns[a] < trace.graphs.spans.start_ns[i]);
    }
    assert!(trace.kernels.api_call.iter().all(|&a| a != NO_INDEX));
    assert!(trace.memcpys.api_call.iter().all(|&a| a != NO_INDEX));
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);
    assert_eq!(trace.devices(), [0]);
    assert_eq!(trace.streams.len(), 4);
    // step_N > execute_model > model_forward > layer_K > self_attn > qkv_proj.
    let main = trace
        .threads
        .iter()
        .find(|t| t.tid == 4242)
        .expect("main thread");
    assert_eq!(main.nvtx_levels.len(), 6);
}

#[test]
fn deterministic_for_a_seed_and_exact_for_any_count() {
    let a = generate("inference-det-a", 5_000, 1);
    let b = generate("inference-det-b", 5_000, 1);
    let c = generate("inference-det-c", 5_000, 2);
    let read = |p: &Path| std::fs::read(p).expect("read");
    assert!(read(&a.path) == read(&b.path), "same seed, same bytes");
    assert!(
        read(&a.path) != read(&c.path),
        "another seed, another trace"
    );
    for events in [0, 1, 2, 3, 4, 5, 17, 101, 1_001] {
        let g = generate("inference-exact", events, 1);
        let trace = load::load_file(&g.path).expect("load");
        assert_eq!(trace.event_count() as u64, events);
    }
}
