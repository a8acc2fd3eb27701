//! CUDA graphs on real exports, against the test's own SQL over the export:
//! - n25_graphs (nsys 2025.3, graphs traced as a whole): the graph executions are the rows of
//!   `CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, each linked to its `cudaGraphLaunch`; `export --kinds
//!   graph` writes them; they are busy time for the gaps and the utilisation; nsys's kernel summary
//!   does not change;
//! - stress (nsys 2022.4, graph mode, no GPU rows for the graphs): the load warning counts the
//!   launches with no GPU work, and their gaps take the cause `graph-untraced`;
//! - n25_graphs_node (`--cuda-graph-trace=node`): graph kernels are kernels, linked to their
//!   `cudaGraphLaunch`, with no warning and no graph execution.
//!
//! The two n25 exports live in `../shared/traces`; without it those tests say so and pass.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use rusqlite::Connection;
use sightline::analysis::gap_causes::{self, GapCause};
use sightline::analysis::{self, Filter, GapOptions};
use sightline::load;
use sightline::trace::{NO_INDEX, Trace, pid_of};

const GRAPH_TABLE: &str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

/// `../shared/traces/<name>.sqlite`, or `None` after saying loudly that the test is skipped.
fn shared(name: &str) -> Option<PathBuf> {
    let path = common::shared_traces()
        .map(|d| d.join(format!("{name}.sqlite")))
        .filter(|p| p.is_file());
    if path.is_none() {
        eprintln!(
            "SKIPPED: ../shared/traces/{name}.sqlite is not beside the checkout; nothing checked"
        );
    }
    path
}

fn load(path: &std::path::Path) -> Trace {
    load::load_file(path).unwrap_or_else(|e| panic!("load {}: {e}", path.display()))
}

/// One graph execution as the export has it, with the runtime call of the same process and
/// correlationId (the first in (thread, start) order): its start, end, thread and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct GraphRow {
    start: i64,
    end: i64,
    device: i64,
    stream: i64,
    pid: i64,
    correlation: i64,
    graph_id: i64,
    graph_exec_id: i64,
    call: Option<(i64, i64, i64, String)>,
}

fn graph_rows_by_sql(conn: &Connection) -> Vec<GraphRow> {
    let sql = format!(
        "SELECT g.start, g.end, g.deviceId, g.streamId, g.globalPid, g.correlationId, g.graphId, \
                g.graphExecId, \
                (SELECT r.rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
                  WHERE r.correlationId = g.correlationId \
                    AND ((r.globalTid >> 24) & 16777215) = ((g.globalPid >> 24) & 16777215) \
                  ORDER BY r.globalTid, r.start, r.rowid LIMIT 1) \
         FROM {GRAPH_TABLE} g"
    );
    let mut stmt = conn.prepare(&sql).unwrap();
    let rows: Vec<(GraphRow, Option<i64>)> = stmt
        .query_map([], |r| {
            Ok((
                GraphRow {
                    start: r.get(0)?,
                    end: r.get(1)?,
                    device: r.get(2)?,
                    stream: r.get(3)?,
                    pid: (r.get::<_, i64>(4)? >> 24) & 0xFF_FFFF,
                    correlation: r.get(5)?,
                    graph_id: r.get(6)?,
                    graph_exec_id: r.get(7)?,
                    call: None,
                },
                r.get(8)?,
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out: Vec<GraphRow> = rows
        .into_iter()
        .map(|(mut row, call)| {
            row.call = call.map(|rowid| {
                conn.query_row(
                    "SELECT r.start, r.end, r.globalTid, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
                     JOIN StringIds s ON s.id = r.nameId WHERE r.rowid = ?1",
                    [rowid],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .unwrap()
            });
            row
        })
        .collect();
    out.sort();
    out
}

/// The trace's graph executions in the same form.
fn graph_rows_of(trace: &Trace) -> Vec<GraphRow> {
    let g = &trace.graphs;
    let mut placed = vec![None; g.spans.len()];
    for s in &trace.streams {
        for i in s.graphs.range.clone() {
            placed[i] = Some(s.key);
        }
    }
    let api = &trace.api_calls;
    let mut out: Vec<GraphRow> = (0..g.spans.len())
        .map(|i| {
            let key = placed[i].expect("every graph execution is on a stream");
            let c = g.api_call[i];
            GraphRow {
                start: g.spans.start_ns[i],
                end: g.spans.end_ns[i],
                device: i64::from(key.device),
                stream: i64::from(key.stream),
                pid: i64::from(key.pid),
                correlation: i64::from(g.correlation_id[i]),
                graph_id: i64::from(g.graph_id[i]),
                graph_exec_id: i64::from(g.graph_exec_id[i]),
                call: (c != NO_INDEX).then(|| {
                    let c = c as usize;
                    (
                        api.spans.start_ns[c],
                        api.spans.end_ns[c],
                        api.global_tid[c],
                        trace.str(api.spans.name[c]).to_string(),
                    )
                }),
            }
        })
        .collect();
    out.sort();
    out
}

#[test]
fn graph_executions_are_the_graph_trace_rows_each_linked_to_its_cuda_graph_launch() {
    let Some(path) = shared("n25_graphs") else {
        return;
    };
    let trace = load(&path);
    let conn = common::open_ro(&path);
    let expected = graph_rows_by_sql(&conn);
    let ours = graph_rows_of(&trace);
    assert_eq!(expected.len(), 120, "the guide's count (docs/window.md)");
    assert_eq!(
        expected.iter().map(|r| r.end - r.start).sum::<i64>(),
        29_109_915,
        "the guide's GPU time"
    );
    assert_eq!(ours.len(), expected.len());
    for (o, e) in ours.iter().zip(&expected) {
        assert_eq!(o, e);
        let (_, _, _, name) = e.call.as_ref().expect("a launching call");
        assert!(name.starts_with("cudaGraphLaunch"), "{name}");
    }
    // Named by their graph.
    for i in 0..trace.graphs.spans.len() {
        assert_eq!(
            trace.str(trace.graphs.spans.name[i]),
            format!("CUDA graph {}", trace.graphs.graph_id[i])
        );
    }
    // Every launch launched exactly one graph execution, so none is warned about.
    assert!(
        !trace
            .warnings
            .entries
            .iter()
            .any(|w| w.subject.contains("cudaGraphLaunch")),
        "{:?}",
        trace.warnings.messages()
    );
}

#[test]
fn export_kinds_graph_writes_one_row_per_execution_with_its_ids() {
    let Some(path) = shared("n25_graphs") else {
        return;
    };
    let conn = common::open_ro(&path);
    let expected = graph_rows_by_sql(&conn);
    let dir = common::scratch_dir("graphs-export");
    let file = dir.join("graphs.csv");
    common::sightline_stdout(&[
        "export",
        path.to_str().unwrap(),
        "--kinds",
        "graph",
        "--out",
        file.to_str().unwrap(),
    ]);
    let mut reader = csv::Reader::from_path(&file).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let [
        kind,
        name,
        start,
        end,
        device,
        stream,
        pid,
        correlation,
        graph_id,
        exec_id,
    ] = [
        "kind",
        "name",
        "start_ns",
        "end_ns",
        "device",
        "stream",
        "pid",
        "correlation_id",
        "graph_id",
        "graph_exec_id",
    ]
    .map(col);
    let mut rows: Vec<[i64; 8]> = Vec::new();
    for record in reader.records() {
        let r = record.unwrap();
        assert_eq!(&r[kind], "graph");
        assert_eq!(&r[name], format!("CUDA graph {}", &r[graph_id]));
        let num = |i: usize| r[i].parse::<i64>().unwrap();
        rows.push([
            num(start),
            num(end),
            num(device),
            num(stream),
            num(pid),
            num(correlation),
            num(graph_id),
            num(exec_id),
        ]);
    }
    rows.sort_unstable();
    let want: Vec<[i64; 8]> = expected
        .iter()
        .map(|e| {
            [
                e.start,
                e.end,
                e.device,
                e.stream,
                e.pid,
                e.correlation,
                e.graph_id,
                e.graph_exec_id,
            ]
        })
        .collect();
    assert_eq!(rows, want);
    std::fs::remove_dir_all(&dir).ok();
}

/// Sorted disjoint union of `spans`.
fn union(mut spans: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    spans.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(l) if s <= l.1 => l.1 = l.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn total(spans: &[(i64, i64)]) -> i64 {
    spans.iter().map(|(s, e)| e - s).sum()
}

/// Per device, the (start, end) of every row of `tables` the export has.
fn spans_by_device(conn: &Connection, tables: &[&str]) -> BTreeMap<i64, Vec<(i64, i64)>> {
    let mut out: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for table in tables {
        if !common::has_table(conn, table) {
            continue;
        }
        let mut stmt = conn
            .prepare(&format!("SELECT deviceId, start, end FROM {table}"))
            .unwrap();
        for row in stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
        {
            let (device, s, e) = row.unwrap();
            out.entry(device).or_default().push((s, e));
        }
    }
    out
}

const OPS: [&str; 3] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
];

#[test]
fn graph_time_is_busy_no_gap_lies_inside_a_graph_and_kernel_reports_are_unchanged() {
    let Some(path) = shared("n25_graphs") else {
        return;
    };
    let trace = load(&path);
    let conn = common::open_ro(&path);
    let graphs = graph_rows_by_sql(&conn);

    // No idle gap, of a GPU or of a stream, however short, overlaps a graph execution there.
    for per_stream in [false, true] {
        let options = GapOptions {
            min_ns: 0,
            per_stream,
            ..GapOptions::default()
        };
        let gaps = analysis::gpu_idle_gaps(&trace, &Filter::all(), &options);
        assert!(!gaps.is_empty());
        for gap in &gaps {
            for g in &graphs {
                let same_place = i64::from(gap.device) == g.device
                    && gap.stream.is_none_or(|k| i64::from(k.stream) == g.stream);
                assert!(
                    !(same_place && gap.start_ns < g.end && g.start < gap.end_ns),
                    "gap {gap:?} inside graph execution {g:?}"
                );
            }
        }
    }

    // Busy time is the union of kernels, copies, memsets and graph executions, over the span from
    // the first start to the last end; without the graphs it would be less by their own time.
    let mut all_tables = OPS.to_vec();
    all_tables.push(GRAPH_TABLE);
    let with = spans_by_device(&conn, &all_tables);
    let without = spans_by_device(&conn, &OPS);
    let activity = analysis::gpu_activity(&trace, &Filter::all());
    assert_eq!(activity.len(), with.len());
    for a in &activity {
        let spans = &with[&i64::from(a.device)];
        let lo = spans.iter().map(|s| s.0).min().unwrap();
        let hi = spans.iter().map(|s| s.1).max().unwrap();
        let busy = total(&union(spans.clone()));
        assert_eq!(a.window, Some((lo, hi)), "GPU {}", a.device);
        assert_eq!(a.measured_ns, hi - lo, "GPU {}", a.device);
        assert_eq!(a.busy_ns, busy, "GPU {}", a.device);
        assert_eq!(a.idle_ns, hi - lo - busy, "GPU {}", a.device);
        let eager = total(&union(
            without
                .get(&i64::from(a.device))
                .cloned()
                .unwrap_or_default(),
        ));
        println!(
            "GPU {}: busy {busy} ns with graph executions, {eager} ns without, over {} ns",
            a.device,
            hi - lo
        );
        assert!(
            busy > eager,
            "graph executions add busy time on GPU {}",
            a.device
        );
    }

    // nsys's kernel summary leaves graph executions out: equal to what nsys 2025.3.1 printed.
    let ours = common::sightline_stdout(&[
        "summary",
        path.to_str().unwrap(),
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    let golden = path
        .parent()
        .unwrap()
        .join("golden-2025.3/n25_graphs/cuda_gpu_kern_sum.csv");
    match std::fs::read_to_string(&golden) {
        Ok(text) => assert_eq!(ours, text.replace("\r\n", "\n")),
        Err(_) => eprintln!("SKIPPED: no {}", golden.display()),
    }
    let kernels: i64 = conn
        .query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(trace.kernels.spans.len() as i64, kernels);
    let instances: i64 = csv::Reader::from_reader(ours.as_bytes())
        .records()
        .map(|r| r.unwrap()[2].parse::<i64>().unwrap())
        .sum();
    assert_eq!(instances, kernels, "kernel instances in cuda_gpu_kern_sum");
}

/// The `cudaGraphLaunch*` calls whose process has no kernel, memcpy or memset row with their
/// correlationId.
fn graph_launches_without_work_by_sql(conn: &Connection) -> i64 {
    let no_row_in = |table: &str| {
        if common::has_table(conn, table) {
            format!(
                " AND NOT EXISTS (SELECT 1 FROM {table} o WHERE o.correlationId = r.correlationId \
                 AND ((o.globalPid >> 24) & 16777215) = ((r.globalTid >> 24) & 16777215))"
            )
        } else {
            String::new()
        }
    };
    let mut sql = "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s \
                   ON s.id = r.nameId WHERE s.value LIKE 'cudaGraphLaunch%'"
        .to_string();
    for table in OPS.iter().copied().chain([GRAPH_TABLE]) {
        sql.push_str(&no_row_in(table));
    }
    conn.query_row(&sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn an_old_graph_mode_export_warns_about_launches_without_work_and_explains_their_gaps() {
    let path = common::fixture("stress");
    let trace = load(&path);
    let conn = common::open_ro(&path);
    let expected = graph_launches_without_work_by_sql(&conn);
    assert_eq!(expected, 50, "stress's graph_replay launches");
    let warning = trace
        .warnings
        .entries
        .iter()
        .find(|w| w.subject.contains("cudaGraphLaunch"))
        .unwrap_or_else(|| panic!("no graph warning in {:?}", trace.warnings.messages()));
    assert_eq!(warning.count as i64, expected);
    assert!(
        warning.message().starts_with(&format!(
            "{expected} cudaGraphLaunch calls have no GPU work in this export"
        )),
        "{}",
        warning.message()
    );
    assert!(trace.graphs.spans.is_empty());

    // Every gap, however short, in which such a launch started or was in flight is graph-untraced,
    // and names that launch.
    let launches: HashSet<usize> = {
        let api = &trace.api_calls;
        let mut linked = HashSet::new();
        for links in [
            &trace.kernels.api_call,
            &trace.memcpys.api_call,
            &trace.memsets.api_call,
        ] {
            linked.extend(
                links
                    .iter()
                    .filter(|&&c| c != NO_INDEX)
                    .map(|&c| c as usize),
            );
        }
        (0..api.spans.len())
            .filter(|i| !linked.contains(i))
            .filter(|&i| trace.str(api.spans.name[i]).starts_with("cudaGraphLaunch"))
            .collect()
    };
    assert_eq!(launches.len() as i64, expected);
    let gaps = analysis::gpu_idle_gaps(
        &trace,
        &Filter::all(),
        &GapOptions {
            min_ns: 0,
            per_stream: false,
            ..GapOptions::default()
        },
    );
    let causes = gap_causes::gap_causes(&trace, &gaps);
    let api = &trace.api_calls.spans;
    let mut untraced = 0;
    for (gap, cause) in gaps.iter().zip(&causes) {
        let hit = launches
            .iter()
            .copied()
            .find(|&c| api.start_ns[c] < gap.end_ns && api.end_ns[c] >= gap.start_ns);
        assert_eq!(
            cause.cause == GapCause::UntracedGraph,
            hit.is_some(),
            "{gap:?}: {cause:?}"
        );
        if cause.cause == GapCause::UntracedGraph {
            untraced += 1;
            let c = cause.graph_launch.expect("the launch is named");
            assert!(launches.contains(&c));
            assert!(api.start_ns[c] < gap.end_ns && api.end_ns[c] >= gap.start_ns);
            assert!(cause.host.is_none());
        } else {
            assert_eq!(cause.graph_launch, None);
        }
    }
    let listed: usize = causes
        .iter()
        .filter(|c| c.cause == GapCause::UntracedGraph)
        .count();
    println!(
        "stress: {untraced} of {} gaps (any length) are graph-untraced",
        gaps.len()
    );
    assert_eq!(listed, untraced);
    assert!(untraced > 0);
    assert_eq!(
        GapCause::UntracedGraph.label(),
        "graph-untraced",
        "the label the CLI and the panel print"
    );
}

#[test]
fn node_level_graph_kernels_are_kernels_linked_to_their_launch() {
    let Some(path) = shared("n25_graphs_node") else {
        return;
    };
    let trace = load(&path);
    let conn = common::open_ro(&path);
    assert!(!common::has_table(&conn, GRAPH_TABLE));
    assert!(trace.graphs.spans.is_empty());
    assert_eq!(graph_launches_without_work_by_sql(&conn), 0);
    assert!(
        !trace
            .warnings
            .entries
            .iter()
            .any(|w| w.subject.contains("cudaGraphLaunch")),
        "{:?}",
        trace.warnings.messages()
    );
    // The kernels with a graphNodeId, by SQL, and their launching call's name.
    let mut stmt = conn
        .prepare(
            "SELECT k.start, k.end, k.correlationId, \
                (SELECT s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s \
                   ON s.id = r.nameId WHERE r.correlationId = k.correlationId \
                   AND ((r.globalTid >> 24) & 16777215) = ((k.globalPid >> 24) & 16777215) \
                   ORDER BY r.globalTid, r.start, r.rowid LIMIT 1) \
             FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE k.graphNodeId IS NOT NULL",
        )
        .unwrap();
    let mut expected: Vec<(i64, i64, i64)> = Vec::new();
    for row in stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .unwrap()
    {
        let (s, e, c, name) = row.unwrap();
        let name = name.expect("a graph kernel has a launching call");
        assert!(name.starts_with("cudaGraphLaunch"), "{name}");
        expected.push((s, e, c));
    }
    expected.sort_unstable();
    assert_eq!(expected.len(), 3840, "the guide's count (docs/window.md)");
    // In the trace: the kernels whose launching call is a cudaGraphLaunch are exactly those.
    let api = &trace.api_calls;
    let k = &trace.kernels;
    let mut ours: Vec<(i64, i64, i64)> = Vec::new();
    let mut per_launch: BTreeMap<u32, usize> = BTreeMap::new();
    for i in 0..k.spans.len() {
        let c = k.api_call[i];
        if c == NO_INDEX
            || !trace
                .str(api.spans.name[c as usize])
                .starts_with("cudaGraphLaunch")
        {
            continue;
        }
        // Same process, same correlationId.
        assert_eq!(api.correlation_id[c as usize], k.correlation_id[i]);
        let stream = trace
            .streams
            .iter()
            .find(|s| s.kernels.range.contains(&i))
            .unwrap();
        assert_eq!(pid_of(api.global_tid[c as usize]), stream.key.pid);
        ours.push((
            k.spans.start_ns[i],
            k.spans.end_ns[i],
            i64::from(k.correlation_id[i]),
        ));
        *per_launch.entry(c).or_default() += 1;
    }
    ours.sort_unstable();
    assert_eq!(ours, expected);
    let launches = (0..api.spans.len())
        .filter(|&i| trace.str(api.spans.name[i]).starts_with("cudaGraphLaunch"))
        .count();
    assert_eq!(per_launch.len(), launches, "every launch has its kernels");

    // No gap of either n25 export is graph-untraced: every launch has its GPU work.
    let mut traces = vec![trace];
    if let Some(p) = shared("n25_graphs") {
        traces.push(load(&p));
    }
    for trace in &traces {
        let gaps = analysis::gpu_idle_gaps(
            trace,
            &Filter::all(),
            &GapOptions {
                min_ns: 0,
                per_stream: false,
                ..GapOptions::default()
            },
        );
        let causes = gap_causes::gap_causes(trace, &gaps);
        assert!(
            causes
                .iter()
                .all(|c| c.cause != GapCause::UntracedGraph && c.graph_launch.is_none())
        );
    }
}
