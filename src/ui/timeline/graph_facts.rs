//! The facts of CUDA graphs traced node by node (`trace.graph_launches`) for an event's details:
//! those of a launch (its nodes, their ids, how much of its span they ran) and what a node says
//! about its launch.

use super::{EventKind, EventRef, format_duration};
use crate::timeline::graph_brackets;
use crate::timeline::rows::stream_of;
use crate::trace::{Trace, graph_launches};

/// The facts of node-level graph launch `i`: how many nodes of each kind, their id range, how
/// much of the launch's span they kept the stream busy, and its correlation ID.
pub fn launch_facts(trace: &Trace, i: usize, facts: &mut Vec<(&'static str, String)>) {
    let g = &trace.graph_launches;
    let mut kinds = Vec::new();
    for (n, one, many) in [
        (g.kernels[i], "kernel", "kernels"),
        (g.memcpys[i], "memcpy", "memcpys"),
        (g.memsets[i], "memset", "memsets"),
    ] {
        match n {
            0 => {}
            1 => kinds.push(format!("1 {one}")),
            n => kinds.push(format!("{n} {many}")),
        }
    }
    facts.push(("Nodes", format!("{} ({})", g.nodes(i), kinds.join(", "))));
    facts.push((
        "Graph node IDs",
        if g.first_node_id[i] == g.last_node_id[i] {
            g.first_node_id[i].to_string()
        } else {
            format!("{} – {}", g.first_node_id[i], g.last_node_id[i])
        },
    ));
    let span = g.spans.duration_ns(i);
    let stream = stream_of(trace, EventRef::new(EventKind::GraphLaunch, i))
        .and_then(|s| trace.streams.get(s));
    if let Some(s) = stream
        && span > 0
    {
        let busy = graph_launches::nodes_busy_ns(trace, s, i);
        facts.push((
            "Nodes busy",
            format!(
                "{} of the span ({:.1} %)",
                format_duration(busy as f64),
                busy as f64 * 100.0 / span as f64
            ),
        ));
    }
    facts.push((
        "Note",
        "traced node by node (nsys --cuda-graph-trace=node): its nodes are the kernels, copies \
         and memsets on this stream with its correlation ID, each counted once as GPU work"
            .to_string(),
    ));
    facts.push(("Correlation ID", g.correlation_id[i].to_string()));
}

/// For a GPU operation run as a graph node: its node id and the launch it belongs to.
pub fn node_facts(trace: &Trace, event: EventRef, facts: &mut Vec<(&'static str, String)>) {
    let Some(node) = graph_brackets::graph_node_id(trace, event) else {
        return;
    };
    facts.push(("Graph node ID", node.to_string()));
    if let Some(l) = graph_brackets::launch_of_node(trace, event) {
        facts.push((
            "CUDA graph launch",
            format!(
                "{} (correlation ID {})",
                trace.str(trace.graph_launches.spans.name[l]),
                trace.graph_launches.correlation_id[l]
            ),
        ));
    }
}
