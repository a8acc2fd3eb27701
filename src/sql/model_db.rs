//! The same tables as [`super::views`], filled from a loaded [`Trace`] into an in-memory
//! database: how a PyTorch profiler trace (which has no SQL of its own) gets the views.
//!
//! Times are the model's: nanoseconds as the trace stores them (a PyTorch trace's decimal
//! microseconds × 1000). Ranges keep the model's kind and nesting depth.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::views::{GRAPH_EXECUTIONS, ORIGIN, VIEWS};
use crate::trace::{GlobalTid, NO_GRAPH_NODE, NO_INDEX, RangeKind, StrId, Trace};

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
    for (name, columns) in VIEWS {
        tx.execute_batch(&format!("CREATE TABLE \"{name}\" ({})", quoted(columns)))?;
    }
    if !trace.graphs.spans.is_empty() {
        tx.execute_batch(&format!(
            "CREATE TABLE graph_executions ({})",
            quoted(GRAPH_EXECUTIONS)
        ))?;
    }
    let threads: HashMap<i64, (u32, u32)> = trace
        .threads
        .iter()
        .map(|t| (t.global_tid, (t.pid, t.tid)))
        .collect();
    let pid_tid = |g: i64| {
        threads
            .get(&g)
            .copied()
            .unwrap_or((GlobalTid(g).pid(), GlobalTid(g).tid()))
    };
    let s = |id: StrId| trace.str(id);
    let tid_of_call = |call: u32| {
        (call != NO_INDEX)
            .then(|| trace.api_calls.global_tid.get(call as usize))
            .flatten()
            .map(|&g| pid_tid(g).1)
    };
    {
        let mut k = tx.prepare(&insert("kernels", 13))?;
        let mut m = tx.prepare(&insert("memcpy", 9))?;
        let mut ms = tx.prepare(&insert("memset", 7))?;
        let mut g = match trace.graphs.spans.is_empty() {
            true => None,
            false => Some(tx.prepare(&insert("graph_executions", 9))?),
        };
        for stream in &trace.streams {
            let key = stream.key;
            let kn = &trace.kernels;
            for i in stream.kernels.range.clone() {
                let (start, end) = (kn.spans.start_ns[i], kn.spans.end_ns[i]);
                let grid = kn
                    .grid
                    .get(i)
                    .map(|d| format!("{}x{}x{}", d[0], d[1], d[2]));
                let block = kn
                    .block
                    .get(i)
                    .map(|d| format!("{}x{}x{}", d[0], d[1], d[2]));
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
                    grid,
                    block,
                    graph.map(|&n| n as i64),
                ])?;
            }
            let mc = &trace.memcpys;
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
            let me = &trace.memsets;
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
            if let Some(g) = g.as_mut() {
                let gr = &trace.graphs;
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
        }
        let mut a = tx.prepare(&insert("api", 7))?;
        let api = &trace.api_calls;
        for i in 0..api.spans.len() {
            let (start, end) = (api.spans.start_ns[i], api.spans.end_ns[i]);
            let (pid, tid) = pid_tid(api.global_tid.get(i).copied().unwrap_or(0));
            a.execute(params![
                start,
                end,
                end - start,
                s(api.spans.name[i]),
                pid,
                tid,
                api.correlation_id.get(i),
            ])?;
        }
        let mut r = tx.prepare(&insert("ranges", 9))?;
        let nv = &trace.nvtx;
        for i in 0..nv.spans.len() {
            let (start, end) = (nv.spans.start_ns[i], nv.spans.end_ns[i]);
            let (pid, tid) = pid_tid(nv.global_tid.get(i).copied().unwrap_or(0));
            let domain = nv.domain.get(i).map(|&d| s(d)).filter(|d| !d.is_empty());
            r.execute(params![
                start,
                end,
                end - start,
                s(nv.spans.name[i]),
                range_kind_name(nv.kind_of(i)),
                domain,
                nv.depth.get(i),
                pid,
                tid,
            ])?;
        }
        let mut t = tx.prepare(&insert("threads", 3))?;
        for th in &trace.threads {
            t.execute(params![th.pid, th.tid, s(th.name)])?;
        }
        let mut gp = tx.prepare(&insert("gpus", 2))?;
        for gpu in &trace.gpus {
            gp.execute(params![gpu.device, gpu.name])?;
        }
    }
    tx.execute_batch(&format!("CREATE TABLE origin ({})", quoted(ORIGIN)))?;
    tx.execute("INSERT INTO origin VALUES (?1)", [trace.time_origin_ns()])?;
    tx.commit()
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
