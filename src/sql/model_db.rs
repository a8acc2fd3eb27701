//! The same tables as [`super::views`], filled from a loaded [`Trace`] into an in-memory
//! database: how a PyTorch profiler trace (which has no SQL of its own) gets the views.
//!
//! Times are the model's: nanoseconds as the trace stores them (a PyTorch trace's decimal
//! microseconds × 1000). Ranges keep the model's kind and nesting depth.
//!
//! [`create`] makes every table and fills the small ones; the event tables ([`EVENT_TABLES`])
//! are filled one at a time by [`fill_table`], so that a database made for one query holds only
//! what that query reads ([`super::SqlTrace::for_shared`]). [`fill`] does both at once.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::views::{GRAPH_EXECUTIONS, ORIGIN, VIEWS};
use crate::trace::{GlobalTid, NO_GRAPH_NODE, NO_INDEX, RangeKind, StrId, Trace};

/// The tables [`create`] leaves empty and [`fill_table`] fills (`graph_executions` only where
/// the trace has CUDA graphs).
pub const EVENT_TABLES: &[&str] = &[
    "kernels",
    "memcpy",
    "memset",
    "api",
    "ranges",
    "graph_executions",
];

/// The name a query uses for a range's kind.
pub fn range_kind_name(kind: RangeKind) -> &'static str {
    match kind {
        RangeKind::Nvtx => "nvtx",
        RangeKind::Operator => "operator",
        RangeKind::ProfilerOverhead => "profiler_overhead",
        RangeKind::Annotation => "annotation",
        RangeKind::GpuAnnotation => "gpu_annotation",
        RangeKind::Python => "python",
    }
}

/// Creates the tables in `conn` (a fresh in-memory database) and fills them from `trace`.
pub fn fill(conn: &mut Connection, trace: &Trace) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for name in create(&tx, trace)? {
        fill_table(&tx, trace, name)?;
    }
    tx.commit()
}

/// Creates every table in `conn`, fills the small ones (`threads`, `gpus`, `origin`) and returns
/// the event tables made, still empty.
pub fn create(conn: &Connection, trace: &Trace) -> rusqlite::Result<Vec<&'static str>> {
    // Before the first table: large pages hold a kernel's long name with its row, which makes
    // filling and reading the tables faster (measured in BENCHMARKS.md, "Python package").
    conn.execute_batch("PRAGMA page_size = 65536")?;
    for (name, columns) in VIEWS {
        conn.execute_batch(&format!("CREATE TABLE \"{name}\" ({})", quoted(columns)))?;
    }
    let mut events: Vec<&'static str> = EVENT_TABLES.to_vec();
    if trace.graphs.spans.is_empty() {
        events.retain(|&t| t != "graph_executions");
    } else {
        conn.execute_batch(&format!(
            "CREATE TABLE graph_executions ({})",
            quoted(GRAPH_EXECUTIONS)
        ))?;
    }
    let mut t = conn.prepare(&insert("threads", 3))?;
    for th in &trace.threads {
        t.execute(params![th.pid, th.tid, trace.str(th.name)])?;
    }
    let mut gp = conn.prepare(&insert("gpus", 2))?;
    for gpu in &trace.gpus {
        gp.execute(params![gpu.device, gpu.name])?;
    }
    conn.execute_batch(&format!("CREATE TABLE origin ({})", quoted(ORIGIN)))?;
    conn.execute("INSERT INTO origin VALUES (?1)", [trace.time_origin_ns()])?;
    Ok(events)
}

/// The `(pid, tid)` of a global thread id: the trace's own thread list first.
fn pid_tid_of(trace: &Trace) -> impl Fn(i64) -> (u32, u32) + '_ {
    let threads: HashMap<i64, (u32, u32)> = trace
        .threads
        .iter()
        .map(|t| (t.global_tid, (t.pid, t.tid)))
        .collect();
    move |g: i64| {
        threads
            .get(&g)
            .copied()
            .unwrap_or((GlobalTid(g).pid(), GlobalTid(g).tid()))
    }
}

/// Fills the event table `name` (one of [`EVENT_TABLES`], made by [`create`]) from `trace`.
pub fn fill_table(conn: &Connection, trace: &Trace, name: &str) -> rusqlite::Result<()> {
    match name {
        "kernels" => fill_kernels(conn, trace),
        "memcpy" => fill_memcpy(conn, trace),
        "memset" => fill_memset(conn, trace),
        "graph_executions" => fill_graph_executions(conn, trace),
        "api" => fill_api(conn, trace),
        "ranges" => fill_ranges(conn, trace),
        _ => Ok(()),
    }
}

fn fill_kernels(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let pid_tid = pid_tid_of(trace);
    let tid_of_call = |call: u32| {
        (call != NO_INDEX)
            .then(|| trace.api_calls.global_tid.get(call as usize))
            .flatten()
            .map(|&g| pid_tid(g).1)
    };
    let s = |id: StrId| trace.str(id);
    let mut k = conn.prepare(&insert("kernels", 13))?;
    let kn = &trace.kernels;
    for stream in &trace.streams {
        let key = stream.key;
        for i in stream.kernels.range.clone() {
            let (start, end) = (kn.spans.start_ns[i], kn.spans.end_ns[i]);
            let graph = kn.graph_node.get(i).filter(|&&n| n != NO_GRAPH_NODE);
            k.execute(params![
                start,
                end,
                end - start,
                s(kn.spans.name[i]),
                kn.short_name.get(i).map(|&n| s(n)),
                key.device,
                key.stream,
                key.pid,
                kn.api_call.get(i).and_then(|&c| tid_of_call(c)),
                kn.correlation_id.get(i),
                kn.grid
                    .get(i)
                    .map(|d| format!("{}x{}x{}", d[0], d[1], d[2])),
                kn.block
                    .get(i)
                    .map(|d| format!("{}x{}x{}", d[0], d[1], d[2])),
                graph.map(|&n| n as i64),
            ])?;
        }
    }
    Ok(())
}

fn fill_memcpy(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let mut m = conn.prepare(&insert("memcpy", 9))?;
    let mc = &trace.memcpys;
    for stream in &trace.streams {
        let key = stream.key;
        for i in stream.memcpys.range.clone() {
            let (start, end) = (mc.spans.start_ns[i], mc.spans.end_ns[i]);
            m.execute(params![
                start,
                end,
                end - start,
                mc.copy_kind.get(i).map(|c| c.label()),
                mc.bytes.get(i).map(|&b| b as i64),
                key.device,
                key.stream,
                key.pid,
                mc.correlation_id.get(i),
            ])?;
        }
    }
    Ok(())
}

fn fill_memset(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let mut ms = conn.prepare(&insert("memset", 7))?;
    let me = &trace.memsets;
    for stream in &trace.streams {
        let key = stream.key;
        for i in stream.memsets.range.clone() {
            let (start, end) = (me.spans.start_ns[i], me.spans.end_ns[i]);
            ms.execute(params![
                start,
                end,
                end - start,
                me.bytes.get(i).map(|&b| b as i64),
                key.device,
                key.stream,
                me.correlation_id.get(i),
            ])?;
        }
    }
    Ok(())
}

fn fill_graph_executions(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let mut g = conn.prepare(&insert("graph_executions", 9))?;
    let gr = &trace.graphs;
    for stream in &trace.streams {
        let key = stream.key;
        for i in stream.graphs.range.clone() {
            let (start, end) = (gr.spans.start_ns[i], gr.spans.end_ns[i]);
            g.execute(params![
                start,
                end,
                end - start,
                key.device,
                key.stream,
                key.pid,
                gr.correlation_id.get(i),
                gr.graph_id.get(i),
                gr.graph_exec_id.get(i),
            ])?;
        }
    }
    Ok(())
}

fn fill_api(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let pid_tid = pid_tid_of(trace);
    let mut a = conn.prepare(&insert("api", 7))?;
    let api = &trace.api_calls;
    for i in 0..api.spans.len() {
        let (start, end) = (api.spans.start_ns[i], api.spans.end_ns[i]);
        let (pid, tid) = pid_tid(api.global_tid.get(i).copied().unwrap_or(0));
        a.execute(params![
            start,
            end,
            end - start,
            trace.str(api.spans.name[i]),
            pid,
            tid,
            api.correlation_id.get(i),
        ])?;
    }
    Ok(())
}

fn fill_ranges(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let pid_tid = pid_tid_of(trace);
    let mut r = conn.prepare(&insert("ranges", 9))?;
    let nv = &trace.nvtx;
    for i in 0..nv.spans.len() {
        let (start, end) = (nv.spans.start_ns[i], nv.spans.end_ns[i]);
        let (pid, tid) = pid_tid(nv.global_tid.get(i).copied().unwrap_or(0));
        let domain = nv
            .domain
            .get(i)
            .map(|&d| trace.str(d))
            .filter(|d| !d.is_empty());
        r.execute(params![
            start,
            end,
            end - start,
            trace.str(nv.spans.name[i]),
            range_kind_name(nv.kind_of(i)),
            domain,
            nv.depth.get(i),
            pid,
            tid,
        ])?;
    }
    Ok(())
}

fn quoted(columns: &str) -> String {
    columns
        .split(", ")
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn insert(table: &str, n: usize) -> String {
    let marks = vec!["?"; n].join(", ");
    format!("INSERT INTO \"{table}\" VALUES ({marks})")
}
