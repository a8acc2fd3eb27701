//! The dependency graph of one range and its longest path (see the module comment of
//! [`super`] for the edges). Nodes are event boundaries with their times clipped to the range;
//! every edge goes forward in time, so the path's segments follow one another.

use std::collections::HashMap;
use std::sync::Arc;

use super::prepare::{CallKind, OpTable, Prepared, SyncKind};
use super::threads::{CpuItem, ThreadChain, cpu_chain, follow_waits, is_blocking_os_call};
use super::{CriticalPath, Part, PathRow, Scope, Segment};
use crate::trace::{NO_INDEX, RangeKind, Trace, TraceFormat};

/// What an edge's time is attributed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ev {
    Call(u32),
    Range(u32),
    Osrt(u32),
    Op(u32),
    /// A thread's time between its events, or a wait followed to another thread.
    Untraced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Row {
    Stream(u32),
    Thread(i64),
}

/// How an edge weighs in the longest path. Weights are twice the time for work, so that a
/// thread's untraced time can weigh half as much.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Weigh {
    /// Work, or a dependency wait the trace names (launch latency, GPU idle): its part.
    Work(Part),
    /// A thread's time between two of its top-level events: its CPU, at half the weight of work
    /// (see [`super::threads`]).
    Untraced,
    /// A dependency that carries no time of its own (a host wait, a wait followed to another
    /// thread): on the path its time is [`Part::Unattributed`].
    Free,
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    from: u32,
    to: u32,
    weight: i64,
    part: Part,
    row: Row,
    ev: Ev,
}

#[derive(Default)]
pub(super) struct Graph {
    pub time: Vec<i64>,
    edges: Vec<Edge>,
}

impl Graph {
    pub fn node(&mut self, t: i64) -> u32 {
        self.time.push(t);
        (self.time.len() - 1) as u32
    }

    /// Adds an edge forward in time, weighed by `weigh` (see [`Weigh`]).
    pub fn edge(&mut self, from: u32, to: u32, weigh: Weigh, row: Row, ev: Ev) {
        let dt = self.time[to as usize] - self.time[from as usize];
        if dt < 0 || from == to {
            return;
        }
        let (weight, part) = match weigh {
            Weigh::Work(part) => (2 * dt, part),
            Weigh::Untraced => (dt, Part::Cpu),
            Weigh::Free => (0, Part::Unattributed),
        };
        self.edges.push(Edge {
            from,
            to,
            weight,
            part,
            row,
            ev,
        });
    }
}

/// The longest path through the dependency graph of `[r0, r1]` over the threads `scope` allows.
pub fn longest_path(
    trace: &Trace,
    prep: &Prepared,
    r0: i64,
    r1: i64,
    scope: &Scope,
) -> CriticalPath {
    let clip = |t: i64| t.clamp(r0, r1);
    let mut g = Graph::default();
    let api = &trace.api_calls;

    // CPU events per thread, and the calls' nodes. A thread with only OS-runtime calls (the
    // profiler's, the CUDA driver's, a communication library's helper threads) launches none of
    // the step's work; a thread that runs instances of its own is another step.
    let mut threads: Vec<(i64, Vec<CpuItem>)> = Vec::new();
    let mut waits_by_thread: HashMap<i64, Vec<(i64, u32)>> = HashMap::new();
    let in_scope = |t: &&crate::trace::ThreadTrack| {
        t.gpu_lane.is_none()
            && scope.includes(t.pid, t.global_tid)
            && (!t.api_calls.is_empty() || t.nvtx_levels.iter().any(|l| !l.is_empty()))
    };
    for t in trace.threads.iter().filter(in_scope) {
        let mut items = Vec::new();
        for i in t.api_calls.overlapping(
            &api.spans.start_ns,
            &api.spans.end_ns,
            r0,
            r1.saturating_add(1),
        ) {
            let (s, e) = (api.spans.start_ns[i], api.spans.end_ns[i]);
            if s < r0 || s >= r1 || e <= s {
                continue;
            }
            if prep.kind_of_call(trace, i) == CallKind::StreamWait {
                waits_by_thread
                    .entry(t.global_tid)
                    .or_default()
                    .push((s, i as u32));
            }
            items.push(CpuItem {
                start: s,
                end: e,
                ev: Ev::Call(i as u32),
                wait: false,
            });
        }
        let osrt = &trace.osrt;
        for i in t
            .osrt
            .overlapping(&osrt.spans.start_ns, &osrt.spans.end_ns, r0, r1)
        {
            // A wait that began before the range (a thread idle since the last step) counts
            // from the range's start: its end is where the thread took up the step's work.
            let (s, e) = (osrt.spans.start_ns[i].max(r0), osrt.spans.end_ns[i]);
            if s <= r1 && e > s {
                items.push(CpuItem {
                    start: s,
                    end: e,
                    ev: Ev::Osrt(i as u32),
                    wait: is_blocking_os_call(trace.str(osrt.spans.name[i])),
                });
            }
        }
        let nvtx = &trace.nvtx;
        for (level, slice) in t.nvtx_levels.iter().enumerate() {
            let kind = t.level_kind(level);
            let wanted = match trace.format {
                TraceFormat::Kineto => kind == RangeKind::Operator,
                _ => kind == RangeKind::Nvtx,
            };
            if !wanted {
                continue;
            }
            for i in slice.overlapping(&nvtx.spans.start_ns, &nvtx.spans.end_ns, r0, r1) {
                let (s, e) = (nvtx.spans.start_ns[i], nvtx.spans.end_ns[i]);
                let inside = match trace.format {
                    TraceFormat::Kineto => s >= r0 && s <= r1,
                    // NVTX ranges inside the range, the iteration's own included: an nsys
                    // export has no operators, and its thread runs between the CUDA calls.
                    // Ranges around the range are not its work.
                    _ => s >= r0 && e <= r1,
                };
                if inside && e > s {
                    items.push(CpuItem {
                        start: s,
                        end: e,
                        ev: Ev::Range(i as u32),
                        wait: false,
                    });
                }
            }
        }
        if !items.is_empty() {
            // Outer first at equal starts; a range before a call, a call before an OS-runtime
            // call of the same span.
            items.sort_by_key(|it| {
                let inner = match it.ev {
                    Ev::Range(_) => 0,
                    Ev::Call(_) => 1,
                    _ => 2,
                };
                (it.start, std::cmp::Reverse(it.end), inner)
            });
            threads.push((t.global_tid, items));
        }
    }

    // Nodes of calls (start, end) and of GPU operations.
    let mut call_nodes: HashMap<u32, (u32, u32, i64)> = HashMap::new();
    for (tid, items) in &threads {
        for it in items {
            if let Ev::Call(c) = it.ev {
                let s = g.node(clip(it.start));
                let e = g.node(clip(it.end));
                call_nodes.insert(c, (s, e, *tid));
            }
        }
    }
    let mut op_nodes: HashMap<u32, (u32, u32)> = HashMap::new();
    let add_op = |g: &mut Graph, op: u32, op_nodes: &mut HashMap<u32, (u32, u32)>| {
        if let Some(&n) = op_nodes.get(&op) {
            return n;
        }
        let o = &prep.ops[op as usize];
        let n = (g.node(clip(o.start_ns)), g.node(clip(o.end_ns)));
        op_nodes.insert(op, n);
        n
    };
    let mut calls: Vec<u32> = call_nodes.keys().copied().collect();
    calls.sort_unstable();
    for &c in &calls {
        for op in prep.ops_of_call(c) {
            add_op(&mut g, op, &mut op_nodes);
        }
    }
    // Work launched before the range and still running in it: a stream busy from the range's
    // start (a GPU-bound step begins behind the previous one's work).
    let streams: Vec<u32> = match scope.pid {
        Some(pid) => prep.streams_of_pid.get(&pid).cloned().unwrap_or_default(),
        None => (0..prep.stream_ops.len() as u32).collect(),
    };
    for st in streams {
        for op in prep.queued_before(trace, st, r0, r1) {
            add_op(&mut g, op, &mut op_nodes);
        }
    }

    // Host waits: the operations each blocking call waited for.
    let mut waited: HashMap<u32, Vec<u32>> = HashMap::new();
    for &c in &calls {
        let (s, e) = (api.spans.start_ns[c as usize], api.spans.end_ns[c as usize]);
        let ops: Vec<u32> = match prep.kind_of_call(trace, c as usize) {
            CallKind::Copy => prep
                .ops_of_call(c)
                .filter(|&o| prep.ops[o as usize].end_ns <= e)
                .collect(),
            CallKind::DeviceSync | CallKind::StreamSync => {
                let pid = crate::trace::pid_of(api.global_tid[c as usize]);
                let all = || prep.streams_of_pid.get(&pid).cloned().unwrap_or_default();
                let streams: Vec<u32> = match prep.syncs_of_call.get(&c) {
                    Some(rows) => rows
                        .iter()
                        .flat_map(|&(kind, stream)| match (kind, stream) {
                            (SyncKind::Stream, Some(st)) => vec![st],
                            _ => all(),
                        })
                        .collect(),
                    None => all(),
                };
                let mut v: Vec<u32> = streams
                    .into_iter()
                    .filter_map(|st| prep.last_end_on_stream(st, s, e))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            _ => Vec::new(),
        };
        if !ops.is_empty() {
            for &o in &ops {
                add_op(&mut g, o, &mut op_nodes);
            }
            waited.insert(c, ops);
        }
    }

    // Cross-stream dependencies, inferred (module comment).
    let launched: Vec<u32> = {
        let mut v: Vec<u32> = op_nodes.keys().copied().collect();
        v.sort_unstable();
        v
    };
    let mut cross: HashMap<u32, u32> = HashMap::new();
    for &op in &launched {
        let o = &prep.ops[op as usize];
        let Some(&(_, _, tid)) = call_nodes.get(&o.call) else {
            continue;
        };
        let call_start = api.spans.start_ns[o.call as usize];
        let prev = prep.prev_on_stream(op);
        let prev_end = prev.map_or(i64::MIN, |p| prep.ops[p as usize].end_ns);
        let since = prev
            .map(|p| prep.ops[p as usize].call)
            .filter(|&c| c != NO_INDEX)
            .map_or(r0, |c| api.spans.start_ns[c as usize]);
        let waits: Vec<(i64, u32)> = waits_by_thread.get(&tid).map_or_else(Vec::new, |w| {
            w.iter()
                .copied()
                .filter(|&(t, _)| t >= since && t <= call_start)
                .collect()
        });
        if waits.is_empty() {
            continue;
        }
        // The event each wait names, where the trace says (nsys synchronization rows and CUDA
        // event records): the work launched before its record on the recorded stream.
        let exact = waits
            .iter()
            .filter_map(|&(t, w)| {
                let event = *prep.wait_event.get(&w)?;
                prep.recorded_op(trace, event, t)
            })
            .filter(|&d| prep.ops[d as usize].stream != o.stream)
            .max_by_key(|&d| prep.ops[d as usize].end_ns);
        let named = waits.iter().any(|(_, w)| prep.wait_event.contains_key(w));
        let dep = if named {
            exact
        } else {
            prep.other_stream_before(trace, op, prev_end.max(call_start))
        };
        if let Some(d) = dep.filter(|&d| prep.ops[d as usize].end_ns <= o.start_ns) {
            cross.insert(op, d);
        }
    }
    for &d in cross.values() {
        add_op(&mut g, d, &mut op_nodes);
    }

    // CPU chains, and the waits by which the path follows one thread's work through another's
    // wait; the home thread's own time before its first and after its last event.
    let chains: Vec<ThreadChain> = threads
        .iter()
        .map(|(tid, items)| cpu_chain(&mut g, *tid, items, &call_nodes, &waited, clip))
        .collect();
    follow_waits(&mut g, &chains);
    if let Some(home) = chains.iter().find(|c| Some(c.tid) == scope.home) {
        let row = Row::Thread(home.tid);
        if let (Some(first), Some(last)) = (home.first_node(), home.last_node()) {
            let (start, end) = (g.node(r0), g.node(r1));
            g.edge(start, first, Weigh::Untraced, row, Ev::Untraced);
            g.edge(last, end, Weigh::Untraced, row, Ev::Untraced);
        }
    }

    // GPU operations: their own time, launch, stream order, cross-stream.
    let mut ops: Vec<u32> = op_nodes.keys().copied().collect();
    ops.sort_unstable();
    for &op in &ops {
        let o = &prep.ops[op as usize];
        let (s, e) = op_nodes[&op];
        let row = Row::Stream(o.stream);
        g.edge(s, e, Weigh::Work(o.part), row, Ev::Op(op));
        let call = call_nodes.get(&o.call).copied();
        let call_start = (o.call != NO_INDEX).then(|| api.spans.start_ns[o.call as usize]);
        let prev = prep.prev_on_stream(op);
        let prev_end = prev.map(|p| prep.ops[p as usize].end_ns);
        let dep = cross.get(&op).copied();
        let dep_end = dep.map(|d| prep.ops[d as usize].end_ns);
        let launch_ok = call.is_some()
            && call_start.is_some_and(|cs| {
                prev_end.is_none_or(|pe| pe <= cs) && dep_end.is_none_or(|de| de <= cs)
            });
        if let (true, Some((cs, _, _))) = (launch_ok, call) {
            g.edge(cs, s, Weigh::Work(Part::LaunchLatency), row, Ev::Op(op));
        } else if let Some(p) = prev.filter(|p| op_nodes.contains_key(p))
            && dep_end.is_none_or(|de| prev_end.is_some_and(|pe| de < pe))
        {
            g.edge(
                op_nodes[&p].1,
                s,
                Weigh::Work(Part::GpuIdle),
                row,
                Ev::Op(op),
            );
        }
        if let Some(d) = dep.and_then(|d| op_nodes.get(&d)) {
            g.edge(d.1, s, Weigh::Work(Part::GpuIdle), row, Ev::Op(op));
        }
    }
    // Host waits: the call returns after the work it waited for.
    for (c, ops) in &waited {
        let Some(&(_, ce, tid)) = call_nodes.get(c) else {
            continue;
        };
        for o in ops {
            if let Some(&(_, oe)) = op_nodes.get(o) {
                // The call returns after the work it waited for: its own time, on its thread.
                g.edge(
                    oe,
                    ce,
                    Weigh::Work(Part::Cpu),
                    Row::Thread(tid),
                    Ev::Call(*c),
                );
            }
        }
    }

    let mut path = walk(trace, prep, &g, (r0, r1), scope.home);
    path.start_ns = r0;
    path.end_ns = r1;
    path
}

/// The longest path (Kahn's order), as segments and a breakdown.
fn walk(
    trace: &Trace,
    prep: &Prepared,
    g: &Graph,
    (r0, r1): (i64, i64),
    home: Option<i64>,
) -> CriticalPath {
    let n = g.time.len();
    let mut out_start = vec![0u32; n + 1];
    for e in &g.edges {
        out_start[e.from as usize + 1] += 1;
    }
    for i in 0..n {
        out_start[i + 1] += out_start[i];
    }
    let mut order: Vec<u32> = vec![0; g.edges.len()];
    let mut fill = out_start.clone();
    let mut indegree = vec![0u32; n];
    for (k, e) in g.edges.iter().enumerate() {
        order[fill[e.from as usize] as usize] = k as u32;
        fill[e.from as usize] += 1;
        indegree[e.to as usize] += 1;
    }
    let mut dist = vec![0i64; n];
    let mut pred: Vec<u32> = vec![u32::MAX; n];
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&v| indegree[v as usize] == 0)
        .collect();
    while let Some(v) = queue.pop() {
        let v = v as usize;
        for &k in &order[out_start[v] as usize..out_start[v + 1] as usize] {
            let e = &g.edges[k as usize];
            let to = e.to as usize;
            let d = dist[v] + e.weight;
            if d > dist[to] || pred[to] == u32::MAX && d >= dist[to] {
                dist[to] = d;
                pred[to] = k;
            }
            indegree[to] -= 1;
            if indegree[to] == 0 {
                queue.push(to as u32);
            }
        }
    }
    let mut path = CriticalPath::default();
    let mut edges = Vec::new();
    if let Some(end) = (0..n).max_by_key(|&v| (dist[v], g.time[v])) {
        let mut v = end;
        while pred[v] != u32::MAX && edges.len() <= g.edges.len() {
            let e = g.edges[pred[v] as usize];
            edges.push(e);
            v = e.from as usize;
        }
        edges.reverse();
    }
    // The range's time before the path's first node and after its last is unattributed, on
    // the row the path starts or ends on.
    let first = edges.first().map_or(r1, |e| g.time[e.from as usize]);
    let last = edges.last().map_or(r1, |e| g.time[e.to as usize]);
    let mut stretches: Vec<(Part, Row, i64, i64, Option<Ev>)> = Vec::new();
    match edges.first() {
        Some(e) => stretches.push((Part::Unattributed, e.row, r0, first, None)),
        // Nothing in the range: all of it unattributed, on the range's own thread.
        None => {
            if let Some(t) = home {
                stretches.push((Part::Unattributed, Row::Thread(t), r0, r1, None));
            }
        }
    }
    stretches.extend(edges.iter().map(|e| {
        (
            e.part,
            e.row,
            g.time[e.from as usize],
            g.time[e.to as usize],
            Some(e.ev),
        )
    }));
    if let Some(e) = edges.last() {
        stretches.push((Part::Unattributed, e.row, last, r1, None));
    }
    let mut cpu: HashMap<i64, i64> = HashMap::new();
    let unattributed: Arc<str> = Arc::from("(unattributed)");
    let untraced: Arc<str> = Arc::from("(untraced)");
    for (part, row, start_ns, end_ns, ev) in stretches {
        let dt = end_ns - start_ns;
        if dt <= 0 {
            continue;
        }
        let i = Part::ALL.iter().position(|&p| p == part).unwrap_or(0);
        path.parts_ns[i] += dt;
        if let (Row::Thread(t), Part::Cpu) = (row, part) {
            *cpu.entry(t).or_default() += dt;
        }
        // An unattributed stretch inside a call keeps the call's name (the `pthread_cond_wait`
        // a thread waited in); a hand-over between threads and the range's ends are just that.
        let event = match ev {
            None | Some(Ev::Untraced) if part == Part::Unattributed => Arc::clone(&unattributed),
            None | Some(Ev::Untraced) => Arc::clone(&untraced),
            Some(ev) => event_name(trace, prep, ev),
        };
        let row = path_row(trace, row);
        if let Some(last) = path.segments.last_mut()
            && last.part == part
            && last.end_ns == start_ns
            && last.row == row
            && last.event == event
        {
            last.end_ns = end_ns;
            continue;
        }
        path.segments.push(Segment {
            part,
            row,
            start_ns,
            end_ns,
            event,
        });
    }
    if edges.is_empty() && home.is_none() && r1 > r0 {
        path.parts_ns[Part::ALL.len() - 1] += r1 - r0;
    }
    path.cpu_by_thread = cpu.into_iter().collect();
    path.cpu_by_thread
        .sort_by_key(|&(t, ns)| (std::cmp::Reverse(ns), t));
    path
}

fn path_row(trace: &Trace, row: Row) -> PathRow {
    match row {
        Row::Stream(s) => PathRow::Stream(trace.streams[s as usize].key),
        Row::Thread(t) => PathRow::Thread(t),
    }
}

fn event_name(trace: &Trace, prep: &Prepared, ev: Ev) -> Arc<str> {
    match ev {
        Ev::Call(c) => trace.shared_str(trace.api_calls.spans.name[c as usize]),
        Ev::Range(r) => trace.shared_str(trace.nvtx.spans.name[r as usize]),
        Ev::Osrt(r) => trace.shared_str(trace.osrt.spans.name[r as usize]),
        Ev::Untraced => Arc::from("(untraced)"),
        Ev::Op(o) => {
            let op = &prep.ops[o as usize];
            let i = op.index as usize;
            let name = match op.table {
                OpTable::Kernel => trace.kernels.spans.name[i],
                OpTable::Memcpy => trace.memcpys.spans.name[i],
                OpTable::Memset => trace.memsets.spans.name[i],
                OpTable::Graph => trace.graphs.spans.name[i],
            };
            trace.shared_str(name)
        }
    }
}
