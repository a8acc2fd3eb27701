//! CUDA graphs traced node by node (`nsys profile --cuda-graph-trace=node`) on real exports,
//! against the test's own SQL over each export:
//! - every kernel, memcpy and memset row with a `graphNodeId` is a node; the nodes of one stream
//!   and one correlationId (the `cudaGraphLaunch` that ran them) make one graph launch, from the
//!   first node's start to the last node's end, linked to that call;
//! - the nodes stay kernels (and memsets): their counts do not change, and the GPU's busy time is
//!   still the union of its operations: a launch's span, which also covers the idle time between
//!   its nodes, adds nothing, and the gaps between nodes are still gaps;
//! - exports without node ids (graphs traced as a whole, or no graphs) have no launches.
//!
//! Every shared export whose kernel, memcpy or memset table has a non-NULL `graphNodeId` is
//! checked (today: n25_graphs_node); without `../shared/traces` the tests say so and pass.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use sightline::analysis::{self, Filter, GapOptions};
use sightline::load;
use sightline::trace::{NO_GRAPH_NODE, NO_INDEX, Trace, graph_launches};

const NODE_TABLES: [&str; 3] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
];

fn load(path: &Path) -> Trace {
    load::load_file(path).unwrap_or_else(|e| panic!("load {}: {e}", path.display()))
}

fn has_column(conn: &Connection, table: &str, column: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
        [table, column],
        |r| r.get::<_, i64>(0),
    )
    .unwrap()
        > 0
}

/// The tables of the node kinds that have a `graphNodeId` column, with their kind number.
fn node_tables(conn: &Connection) -> Vec<(usize, &'static str)> {
    NODE_TABLES
        .iter()
        .enumerate()
        .filter(|(_, t)| common::has_table(conn, t) && has_column(conn, t, "graphNodeId"))
        .map(|(k, t)| (k, *t))
        .collect()
}

/// Rows with a non-NULL `graphNodeId`, per node kind.
fn node_rows(conn: &Connection) -> [i64; 3] {
    let mut out = [0; 3];
    for (k, t) in node_tables(conn) {
        out[k] = conn
            .query_row(
                &format!("SELECT count(*) FROM {t} WHERE graphNodeId IS NOT NULL"),
                [],
                |r| r.get(0),
            )
            .unwrap();
    }
    out
}

/// The shared exports with graph nodes in them; `None` (said loudly) without the folder.
fn exports_with_nodes() -> Option<Vec<PathBuf>> {
    let all = common::shared_exports();
    if all.is_empty() {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout; nothing checked");
        return None;
    }
    let with: Vec<PathBuf> = all
        .iter()
        .filter(|p| node_rows(&common::open_ro(p)).iter().sum::<i64>() > 0)
        .cloned()
        .collect();
    println!(
        "{} of {} shared exports have graph nodes: {:?}",
        with.len(),
        all.len(),
        with.iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    );
    assert!(
        with.iter().any(|p| p.ends_with("n25_graphs_node.sqlite")),
        "n25_graphs_node.sqlite is among the shared exports and has graph nodes"
    );
    Some(with)
}

/// A stream as the export names it: device, context, stream, pid.
type StreamId = (i64, i64, i64, i64);

/// One graph launch: stream (device, context, stream, pid), correlationId, span, node counts
/// (kernels, memcpys, memsets), first and last node id, and the name of the launching call.
type Launch = (
    StreamId,
    i64,
    (i64, i64),
    [i64; 3],
    (i64, i64),
    Option<String>,
);

fn launches_by_sql(conn: &Connection) -> Vec<Launch> {
    let nodes: Vec<String> = node_tables(conn)
        .iter()
        .map(|(k, t)| {
            format!(
                "SELECT {k} AS kind, start, end, deviceId, contextId, streamId, globalPid, \
                        correlationId, graphNodeId FROM {t} \
                 WHERE graphNodeId IS NOT NULL AND end >= start"
            )
        })
        .collect();
    let sql = format!(
        "WITH nodes AS ({}) \
         SELECT deviceId, contextId, streamId, (globalPid >> 24) & 16777215 AS pid, correlationId, \
                min(start), max(end), sum(kind = 0), sum(kind = 1), sum(kind = 2), \
                min(graphNodeId), max(graphNodeId), \
                (SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s \
                   ON s.id = r.nameId WHERE r.correlationId = n.correlationId \
                   AND ((r.globalTid >> 24) & 16777215) = ((n.globalPid >> 24) & 16777215) \
                   ORDER BY r.globalTid, r.start, r.rowid LIMIT 1) \
         FROM nodes n GROUP BY 1, 2, 3, 4, 5",
        nodes.join(" UNION ALL ")
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    let mut out: Vec<Launch> = stmt
        .query_map([], |r| {
            Ok((
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
                r.get(4)?,
                (r.get(5)?, r.get(6)?),
                [r.get(7)?, r.get(8)?, r.get(9)?],
                (r.get(10)?, r.get(11)?),
                r.get(12)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    out.sort();
    out
}

fn launches_of(trace: &Trace) -> Vec<Launch> {
    let g = &trace.graph_launches;
    let mut out = Vec::new();
    for s in &trace.streams {
        for i in s.graph_launches.range.clone() {
            let k = s.key;
            let call = g.api_call[i];
            out.push((
                (
                    i64::from(k.device),
                    i64::from(k.context),
                    i64::from(k.stream),
                    i64::from(k.pid),
                ),
                i64::from(g.correlation_id[i]),
                (g.spans.start_ns[i], g.spans.end_ns[i]),
                [g.kernels[i], g.memcpys[i], g.memsets[i]].map(i64::from),
                (g.first_node_id[i] as i64, g.last_node_id[i] as i64),
                (call != NO_INDEX).then(|| {
                    trace
                        .str(trace.api_calls.spans.name[call as usize])
                        .to_string()
                }),
            ));
        }
    }
    assert_eq!(out.len(), g.len(), "every launch is on a stream");
    out.sort();
    out
}

#[test]
fn each_launch_is_its_nodes_span_linked_to_its_cuda_graph_launch() {
    let Some(exports) = exports_with_nodes() else {
        return;
    };
    for path in &exports {
        let conn = common::open_ro(path);
        let trace = load(path);
        let expected = launches_by_sql(&conn);
        let ours = launches_of(&trace);
        assert_eq!(ours.len(), expected.len(), "{}", path.display());
        assert_eq!(ours, expected, "{}", path.display());
        // As many launches as distinct cudaGraphLaunch correlations with graph-node kernels
        // (each runs on one stream here).
        let launch_correlations: i64 = conn
            .query_row(
                "SELECT count(DISTINCT k.correlationId) FROM CUPTI_ACTIVITY_KIND_KERNEL k \
                 WHERE k.graphNodeId IS NOT NULL AND EXISTS (SELECT 1 FROM \
                   CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId \
                   WHERE r.correlationId = k.correlationId AND s.value LIKE 'cudaGraphLaunch%' \
                   AND ((r.globalTid >> 24) & 16777215) = ((k.globalPid >> 24) & 16777215))",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(trace.graph_launches.len() as i64, launch_correlations);
        for l in &ours {
            let name = l.5.as_deref().expect("every launch has its launching call");
            assert!(name.starts_with("cudaGraphLaunch"), "{name}");
        }
        // How long each launch's nodes kept its stream busy: the union of their spans, by SQL.
        let mut node_spans: BTreeMap<(StreamId, i64), Vec<(i64, i64)>> = BTreeMap::new();
        for (_, t) in node_tables(&conn) {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT deviceId, contextId, streamId, (globalPid >> 24) & 16777215, \
                            correlationId, start, end FROM {t} \
                     WHERE graphNodeId IS NOT NULL AND end >= start"
                ))
                .unwrap();
            for row in stmt
                .query_map([], |r| {
                    Ok((
                        (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?),
                        r.get(4)?,
                        (r.get(5)?, r.get(6)?),
                    ))
                })
                .unwrap()
            {
                let (stream, correlation, span) = row.unwrap();
                node_spans
                    .entry((stream, correlation))
                    .or_default()
                    .push(span);
            }
        }
        let (mut busy_total, mut span_total) = (0, 0);
        for s in &trace.streams {
            for i in s.graph_launches.range.clone() {
                let key = (
                    (
                        i64::from(s.key.device),
                        i64::from(s.key.context),
                        i64::from(s.key.stream),
                        i64::from(s.key.pid),
                    ),
                    i64::from(trace.graph_launches.correlation_id[i]),
                );
                let busy = graph_launches::nodes_busy_ns(&trace, s, i);
                assert_eq!(busy, union_ns(node_spans[&key].clone()), "launch {i}");
                busy_total += busy;
                span_total += trace.graph_launches.spans.duration_ns(i);
            }
        }
        println!(
            "nodes busy {busy_total} ns of {span_total} ns of launch spans ({:.1} %)",
            busy_total as f64 * 100.0 / span_total.max(1) as f64
        );
        let nodes: i64 = ours.iter().map(|l| l.3.iter().sum::<i64>()).sum();
        println!(
            "{}: {} graph launches of {} nodes ({} kernels, {} memcpys, {} memsets), spans {} \
             to {} ns",
            path.file_name().unwrap().to_string_lossy(),
            ours.len(),
            nodes,
            ours.iter().map(|l| l.3[0]).sum::<i64>(),
            ours.iter().map(|l| l.3[1]).sum::<i64>(),
            ours.iter().map(|l| l.3[2]).sum::<i64>(),
            ours.iter().map(|l| l.2.1 - l.2.0).min().unwrap_or(0),
            ours.iter().map(|l| l.2.1 - l.2.0).max().unwrap_or(0),
        );
    }
}

#[test]
fn nodes_stay_kernels_and_launch_spans_add_no_busy_time() {
    let Some(exports) = exports_with_nodes() else {
        return;
    };
    for path in &exports {
        let conn = common::open_ro(path);
        let trace = load(path);
        // The node counts per table, and the rows themselves.
        let nodes = node_rows(&conn);
        for (k, (column, rows)) in [
            (&trace.kernels.graph_node, trace.kernels.spans.len()),
            (&trace.memcpys.graph_node, trace.memcpys.spans.len()),
            (&trace.memsets.graph_node, trace.memsets.spans.len()),
        ]
        .into_iter()
        .enumerate()
        {
            let table = NODE_TABLES[k];
            let in_file: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
                .unwrap();
            assert_eq!(rows as i64, in_file, "{table}: every row is still there");
            let ours = column.iter().filter(|&&n| n != NO_GRAPH_NODE).count() as i64;
            assert_eq!(ours, nodes[k], "{table}: graph nodes");
            assert!(column.is_empty() || column.len() == rows);
        }

        // Busy time per device: the union of every kernel, memcpy and memset row, by SQL.
        let mut ops: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
        for t in NODE_TABLES.iter().filter(|t| common::has_table(&conn, t)) {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT deviceId, start, end FROM {t} WHERE end >= start"
                ))
                .unwrap();
            for row in stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
            {
                let (d, s, e): (i64, i64, i64) = row.unwrap();
                ops.entry(d).or_default().push((s, e));
            }
        }
        let launches = launches_by_sql(&conn);
        let activity = analysis::gpu_activity(&trace, &Filter::all());
        let mut between_nodes = 0;
        for (device, spans) in &ops {
            let a = activity
                .iter()
                .find(|a| i64::from(a.device) == *device)
                .expect("device");
            let busy = union_ns(spans.clone());
            assert_eq!(
                a.busy_ns, busy,
                "GPU {device}: busy is the union of its operations"
            );
            // Were the launches' spans busy time, the GPU would look this much busier.
            let with_spans = union_ns(
                spans
                    .iter()
                    .copied()
                    .chain(launches.iter().filter(|l| l.0.0 == *device).map(|l| l.2))
                    .collect(),
            );
            between_nodes += with_spans - busy;
            println!(
                "GPU {device}: busy {busy} ns ({:.2} %); counting launch spans would add {} ns",
                a.busy_percent().unwrap_or(0.0),
                with_spans - busy
            );
        }
        assert!(
            between_nodes > 0,
            "the launches have idle time between their nodes, so this test can tell"
        );
        // That idle time is still found: per-stream gaps lie inside launches.
        let gaps = analysis::gpu_idle_gaps(
            &trace,
            &Filter::all(),
            &GapOptions {
                min_ns: 0,
                per_stream: true,
                ..GapOptions::default()
            },
        );
        let inside = gaps
            .iter()
            .filter(|gap| {
                launches.iter().any(|l| {
                    let k = gap.stream.unwrap();
                    l.0 == (
                        i64::from(k.device),
                        i64::from(k.context),
                        i64::from(k.stream),
                        i64::from(k.pid),
                    ) && l.2.0 < gap.start_ns
                        && gap.end_ns < l.2.1
                })
            })
            .count();
        println!("{inside} per-stream gaps lie between the nodes of a launch");
        assert!(inside > 0);
    }
}

#[test]
fn exports_without_node_ids_have_no_graph_launches() {
    let mut paths = vec![common::fixture("moe")];
    if let Some(p) = common::shared_traces().map(|d| d.join("n25_graphs.sqlite"))
        && p.is_file()
    {
        paths.push(p);
    } else {
        eprintln!("../shared/traces/n25_graphs.sqlite absent: only the fixture is checked");
    }
    for path in &paths {
        let conn = common::open_ro(path);
        assert_eq!(node_rows(&conn), [0; 3]);
        let trace = load(path);
        assert!(trace.graph_launches.is_empty(), "{}", path.display());
        assert!(trace.kernels.graph_node.is_empty());
        assert!(trace.memcpys.graph_node.is_empty());
        assert!(trace.memsets.graph_node.is_empty());
        assert!(trace.streams.iter().all(|s| s.graph_launches.is_empty()));
    }
    println!("{} exports without graph nodes checked", paths.len());
}

/// The length of the union of `spans`.
fn union_ns(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let (mut total, mut reach) = (0i64, i64::MIN);
    for (s, e) in spans {
        let from = s.max(reach);
        if e > from {
            total += e - from;
        }
        reach = reach.max(e);
    }
    total
}
