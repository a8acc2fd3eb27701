//! CUDA graph launches traced node by node (`nsys profile --cuda-graph-trace=node`).
//!
//! In such an export every node of a graph is an ordinary kernel, memcpy or memset row with a
//! non-NULL `graphNodeId`, carrying the correlationId of the `cudaGraphLaunch` that ran it. The
//! nodes stay in their own tables (they are GPU work like any other, counted once); this table
//! only groups them: one row per launch and stream, from its first node's start to its last
//! node's end. No analysis counts these rows, so nothing is counted twice: they exist for the
//! timeline's bracket, its details and its link to the launching call.
//!
//! A graph traced as a whole (`--cuda-graph-trace=graph`) is [`super::GraphExecutions`] instead:
//! there the execution is the only GPU row, and it is busy time.

use std::collections::HashMap;

use super::Trace;
use super::events::{NO_INDEX, Spans};
use super::strings::{StrId, StringTable};
use super::tracks::{Slice, StreamTrack};

/// `graphNodeId` of an operation that no graph ran (the column is NULL).
pub const NO_GRAPH_NODE: u64 = u64::MAX;

/// One row per (stream, launching correlationId) of the operations with a `graphNodeId`, sorted
/// by (stream, start): each stream's rows are its [`StreamTrack::graph_launches`] slice.
/// `spans.name` is `CUDA graph · N nodes`.
#[derive(Debug, Default, Clone)]
pub struct GraphLaunches {
    pub spans: Spans,
    /// The correlationId its nodes share: that of the `cudaGraphLaunch` call.
    pub correlation_id: Vec<u32>,
    /// Index into [`super::ApiCalls`] of the `cudaGraphLaunch` that ran it, or [`NO_INDEX`].
    pub api_call: Vec<u32>,
    /// How many of its nodes are kernels, memcpys and memsets.
    pub kernels: Vec<u32>,
    pub memcpys: Vec<u32>,
    pub memsets: Vec<u32>,
    /// The smallest and largest `graphNodeId` among its nodes.
    pub first_node_id: Vec<u64>,
    pub last_node_id: Vec<u64>,
}

impl GraphLaunches {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Number of nodes (kernels, memcpys and memsets) of launch `i`.
    pub fn nodes(&self, i: usize) -> u32 {
        self.kernels[i] + self.memcpys[i] + self.memsets[i]
    }

    /// The launch on `stream` whose nodes carry `correlation_id` and which spans `time_ns`: the
    /// launch a graph node (kernel, memcpy or memset starting at `time_ns`) belongs to.
    pub fn launch_of(
        &self,
        stream: &StreamTrack,
        correlation_id: u32,
        time_ns: i64,
    ) -> Option<usize> {
        let slice = &stream.graph_launches;
        if slice.is_empty() {
            return None;
        }
        slice
            .overlapping(
                &self.spans.start_ns,
                &self.spans.end_ns,
                time_ns,
                time_ns + 1,
            )
            .into_iter()
            .find(|&i| self.correlation_id[i] == correlation_id)
    }
}

/// One table of GPU operations as the grouping reads it, in the table's sorted order.
#[derive(Debug, Clone, Copy)]
pub struct GraphNodeOps<'a> {
    pub spans: &'a Spans,
    pub correlation_id: &'a [u32],
    pub api_call: &'a [u32],
    /// `graphNodeId` of each row, [`NO_GRAPH_NODE`] where none; empty when no row has one.
    pub graph_node: &'a [u64],
}

/// A launch being gathered: span, launching call, node counts per table, node id range.
struct Gathered {
    start_ns: i64,
    end_ns: i64,
    correlation_id: u32,
    api_call: u32,
    counts: [u32; 3],
    first_node_id: u64,
    last_node_id: u64,
}

/// Groups the graph nodes of each stream by launching correlationId into [`GraphLaunches`]
/// and sets every stream's `graph_launches` slice. `ops` are the kernels, memcpys and memsets,
/// which the streams slice. Costs one pass over the rows of tables that have node ids.
pub fn group_graph_launches(
    streams: &mut [StreamTrack],
    ops: [GraphNodeOps; 3],
    strings: &mut StringTable,
) -> GraphLaunches {
    let mut out = GraphLaunches::default();
    if ops.iter().all(|o| o.graph_node.is_empty()) {
        return out;
    }
    let mut names: HashMap<u32, StrId> = HashMap::new();
    let mut ranges = Vec::with_capacity(streams.len());
    for s in streams.iter() {
        let from = out.len();
        let mut gathered: Vec<Gathered> = Vec::new();
        let mut by_correlation: HashMap<u32, usize> = HashMap::new();
        for (table, (o, slice)) in ops
            .iter()
            .zip([&s.kernels, &s.memcpys, &s.memsets])
            .enumerate()
        {
            for i in slice.range.clone() {
                let Some(&node) = o.graph_node.get(i).filter(|&&n| n != NO_GRAPH_NODE) else {
                    continue;
                };
                let (start, end) = (o.spans.start_ns[i], o.spans.end_ns[i]);
                let correlation = o.correlation_id[i];
                let g = *by_correlation.entry(correlation).or_insert_with(|| {
                    gathered.push(Gathered {
                        start_ns: start,
                        end_ns: end,
                        correlation_id: correlation,
                        api_call: o.api_call.get(i).copied().unwrap_or(NO_INDEX),
                        counts: [0; 3],
                        first_node_id: node,
                        last_node_id: node,
                    });
                    gathered.len() - 1
                });
                let g = &mut gathered[g];
                g.start_ns = g.start_ns.min(start);
                g.end_ns = g.end_ns.max(end);
                g.counts[table] += 1;
                g.first_node_id = g.first_node_id.min(node);
                g.last_node_id = g.last_node_id.max(node);
                if g.api_call == NO_INDEX {
                    g.api_call = o.api_call.get(i).copied().unwrap_or(NO_INDEX);
                }
            }
        }
        gathered.sort_unstable_by_key(|g| (g.start_ns, g.end_ns, g.correlation_id));
        for g in gathered {
            let nodes = g.counts.iter().sum::<u32>();
            let name = *names
                .entry(nodes)
                .or_insert_with(|| strings.intern(&launch_name(nodes)));
            out.spans.push(g.start_ns, g.end_ns, name);
            out.correlation_id.push(g.correlation_id);
            out.api_call.push(g.api_call);
            out.kernels.push(g.counts[0]);
            out.memcpys.push(g.counts[1]);
            out.memsets.push(g.counts[2]);
            out.first_node_id.push(g.first_node_id);
            out.last_node_id.push(g.last_node_id);
        }
        ranges.push(from..out.len());
    }
    for (s, r) in streams.iter_mut().zip(ranges) {
        s.graph_launches = Slice::new(r, &out.spans.start_ns, &out.spans.end_ns);
    }
    out
}

/// The time in which at least one node of launch `launch` (on `stream`) ran: the union of its
/// nodes' spans. The rest of its span the stream waited between nodes.
pub fn nodes_busy_ns(trace: &Trace, stream: &StreamTrack, launch: usize) -> i64 {
    let g = &trace.graph_launches;
    let (start, end, correlation) = (
        g.spans.start_ns[launch],
        g.spans.end_ns[launch],
        g.correlation_id[launch],
    );
    let tables = [
        (
            &stream.kernels,
            &trace.kernels.spans,
            &trace.kernels.graph_node,
            &trace.kernels.correlation_id,
        ),
        (
            &stream.memcpys,
            &trace.memcpys.spans,
            &trace.memcpys.graph_node,
            &trace.memcpys.correlation_id,
        ),
        (
            &stream.memsets,
            &trace.memsets.spans,
            &trace.memsets.graph_node,
            &trace.memsets.correlation_id,
        ),
    ];
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for (slice, table, nodes, correlations) in tables {
        if nodes.is_empty() || slice.is_empty() {
            continue;
        }
        for n in slice.overlapping(&table.start_ns, &table.end_ns, start, end + 1) {
            if nodes.get(n).is_some_and(|&id| id != NO_GRAPH_NODE) && correlations[n] == correlation
            {
                spans.push((table.start_ns[n], table.end_ns[n]));
            }
        }
    }
    spans.sort_unstable();
    let (mut busy, mut reach) = (0i64, i64::MIN);
    for (s, e) in spans {
        let from = s.max(reach);
        if e > from {
            busy += e - from;
        }
        reach = reach.max(e);
    }
    busy
}

/// The name of a launch of `nodes` nodes, as the timeline labels it.
pub fn launch_name(nodes: u32) -> String {
    match nodes {
        1 => "CUDA graph · 1 node".to_string(),
        n => format!("CUDA graph · {n} nodes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::StreamKey;

    fn spans(rows: &[(i64, i64)]) -> Spans {
        let mut s = Spans::default();
        for &(a, b) in rows {
            s.push(a, b, 0);
        }
        s
    }

    #[test]
    fn nodes_of_one_launch_on_one_stream_make_one_span_and_eager_work_none() {
        // Stream 0: kernels 0..5, of which 1, 2, 4 are nodes of launch 7 and 3 of launch 9;
        // stream 1: kernel 5, a node of launch 7 too (another stream: another row).
        let k = spans(&[(0, 5), (10, 20), (22, 30), (31, 35), (40, 50), (12, 18)]);
        let corr = [1, 7, 7, 9, 7, 7];
        let calls = [0, 3, 3, 4, 3, 3];
        let nodes = [NO_GRAPH_NODE, 11, 12, 20, 13, 14];
        // One memset node of launch 9 on stream 0.
        let m = spans(&[(36, 38)]);
        let empty = Spans::default();
        let mut streams = vec![
            StreamTrack {
                key: StreamKey::default(),
                kernels: Slice::new(0..5, &k.start_ns, &k.end_ns),
                memsets: Slice::new(0..1, &m.start_ns, &m.end_ns),
                ..Default::default()
            },
            StreamTrack {
                key: StreamKey {
                    stream: 1,
                    ..StreamKey::default()
                },
                kernels: Slice::new(5..6, &k.start_ns, &k.end_ns),
                ..Default::default()
            },
        ];
        let mut strings = StringTable::new();
        let ops = [
            GraphNodeOps {
                spans: &k,
                correlation_id: &corr,
                api_call: &calls,
                graph_node: &nodes,
            },
            GraphNodeOps {
                spans: &empty,
                correlation_id: &[],
                api_call: &[],
                graph_node: &[],
            },
            GraphNodeOps {
                spans: &m,
                correlation_id: &[9],
                api_call: &[4],
                graph_node: &[21],
            },
        ];
        let g = group_graph_launches(&mut streams, ops, &mut strings);
        assert_eq!(g.len(), 3);
        assert_eq!(streams[0].graph_launches.range, 0..2);
        assert_eq!(streams[1].graph_launches.range, 2..3);
        // Launch 7 on stream 0: kernels 1, 2, 4 (10..50), not stream 1's kernel.
        assert_eq!((g.spans.start_ns[0], g.spans.end_ns[0]), (10, 50));
        assert_eq!((g.correlation_id[0], g.api_call[0], g.nodes(0)), (7, 3, 3));
        assert_eq!((g.first_node_id[0], g.last_node_id[0]), (11, 13));
        // Launch 9: one kernel and one memset.
        assert_eq!((g.spans.start_ns[1], g.spans.end_ns[1]), (31, 38));
        assert_eq!((g.kernels[1], g.memsets[1], g.nodes(1)), (1, 1, 2));
        assert_eq!(strings.get(g.spans.name[1]), "CUDA graph · 2 nodes");
        assert_eq!((g.spans.start_ns[2], g.spans.end_ns[2]), (12, 18));
        // The launch a node belongs to; the eager kernel belongs to none.
        assert_eq!(g.launch_of(&streams[0], 7, 40), Some(0));
        assert_eq!(g.launch_of(&streams[0], 9, 36), Some(1));
        assert_eq!(g.launch_of(&streams[0], 1, 0), None);
        assert_eq!(g.launch_of(&streams[1], 7, 12), Some(2));
    }

    #[test]
    fn no_node_ids_no_launches() {
        let k = spans(&[(0, 5)]);
        let mut streams = vec![StreamTrack {
            kernels: Slice::new(0..1, &k.start_ns, &k.end_ns),
            ..Default::default()
        }];
        let none = GraphNodeOps {
            spans: &k,
            correlation_id: &[1],
            api_call: &[0],
            graph_node: &[],
        };
        let g = group_graph_launches(&mut streams, [none; 3], &mut StringTable::new());
        assert!(g.is_empty());
        assert!(streams[0].graph_launches.is_empty());
    }
}
