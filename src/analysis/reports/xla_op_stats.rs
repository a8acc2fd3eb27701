//! `xla_op_stats` (Sightline's own report): the first nine columns of the first table of XProf's
//! `framework_op_stats` tool data for a JAX / XLA profile, its device rows — XProf's rules
//! (xprof `op_stats_to_tf_stats.cc`, `xplane_to_op_metrics_db.cc`) as its tool data shows them:
//!
//! - **An op** is a framework op (`jit(step)/jvp()/dot_general`, from the program's `HloProto`):
//!   the GPU work (kernels, memsets) of every HLO instruction whose metadata names it; an
//!   instruction with no framework op is an op of its own, type `Unknown`, named by the
//!   instruction. Work of an instruction the profile's `HloProto` lacks (a command buffer's) and
//!   copies count as no op.
//! - **Type**: the op name's last `/` part (`dot_general`). **#Occurrences**: the most executions
//!   of any of its instructions (each kernel one). **Total time** is the sum of its work's
//!   durations (picoseconds, as µs); self time is the same (device ops do not nest); averages
//!   are total µs / occurrences.
//! - **IDLE**: the device's span (first start to last end of any GPU work) less the ops' time.
//! - Rows: IDLE first, then by total time descending.
//! - **Host rows** (xprof `xplane_to_op_metrics_db.cc`, tsl `ParseTfOpFullname`): the host
//!   ranges whose name parses as a TensorFlow op (`name:Type`, `Type` CamelCase and `name` a
//!   node name) or a JAX op (`name:type`, `type` lower case: `HLO Transforms:jit_add`); per
//!   thread, self time is an op's time less that of the ops nested in it, and IDLE the span from
//!   the thread's first op to its last less the ops' self time, summed over threads; rows by
//!   total self time descending, IDLE first.

use std::collections::HashMap;

use super::{ReportInput, StatsReport};
use crate::analysis::table::{Cell, Table};
use crate::trace::Trace;

pub struct XlaOpStats;

pub const COLUMNS: [&str; 9] = [
    "Rank",
    "Host/device",
    "Operation Type",
    "Operation Name",
    "#Occurrences",
    "Total time (us)",
    "Avg. time (us)",
    "Total self-time (us)",
    "Avg. self-time (us)",
];

#[derive(Default)]
struct Op {
    total_ps: i64,
    /// Executions (GPU ops) of each of its instructions.
    per_instruction: HashMap<String, u64>,
}

impl StatsReport for XlaOpStats {
    fn name(&self) -> &'static str {
        "xla_op_stats"
    }

    fn title(&self) -> &'static str {
        "XLA Framework Op Stats (XProf framework_op_stats)"
    }

    fn missing_data(&self) -> &'static str {
        "XLA op data (a JAX / XLA profile, .xplane.pb)"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let mut table = Table::new(&COLUMNS).limited(input.row_limit);
        let Some(xla) = &trace.xla else {
            return table;
        };
        if xla.gpu_ops.is_empty() {
            return table;
        }
        let first = xla.gpu_ops.iter().map(|o| o.start_ps).min().unwrap_or(0);
        let last = xla
            .gpu_ops
            .iter()
            .map(|o| o.start_ps + o.duration_ps)
            .max()
            .unwrap_or(0);
        // (name, type) → op.
        let mut ops: HashMap<(String, String), Op> = HashMap::new();
        let with_ops = trace
            .kernels
            .external_id
            .iter()
            .chain(&trace.memsets.external_id);
        for &external in with_ops {
            let Some(op) = xla.gpu_op(external) else {
                continue;
            };
            let Some(framework) = op.framework_op else {
                continue;
            };
            let hlo = trace.str(op.hlo_op);
            let framework = trace.str(framework);
            let key = if framework.is_empty() {
                (hlo.to_string(), "Unknown".to_string())
            } else {
                let kind = framework.rsplit('/').next().unwrap_or(framework);
                (framework.to_string(), kind.to_string())
            };
            let entry = ops.entry(key).or_default();
            entry.total_ps += op.duration_ps;
            *entry.per_instruction.entry(hlo.to_string()).or_default() += 1;
        }
        let busy_ps: i64 = ops.values().map(|o| o.total_ps).sum();
        let mut rows: Vec<((String, String), Op)> = ops.into_iter().collect();
        rows.sort_by(|(ka, a), (kb, b)| b.total_ps.cmp(&a.total_ps).then_with(|| ka.cmp(kb)));
        let us = |ps: i64| ps as f64 / 1e6;
        let idle = us((last - first - busy_ps).max(0));
        table.push(
            vec![
                Cell::Int(1),
                Cell::text("Device"),
                Cell::text("IDLE"),
                Cell::text("IDLE"),
                Cell::Int(0),
                Cell::Float(idle),
                Cell::Float(0.0),
                Cell::Float(idle),
                Cell::Float(0.0),
            ],
            Default::default(),
        );
        for (rank, ((name, kind), op)) in rows.into_iter().enumerate() {
            let occurrences = op.per_instruction.values().copied().max().unwrap_or(0);
            let total = us(op.total_ps);
            let avg = total / occurrences.max(1) as f64;
            table.push(
                vec![
                    Cell::Int(rank as i64 + 2),
                    Cell::text("Device"),
                    Cell::text(kind),
                    Cell::text(name),
                    Cell::Int(i64::try_from(occurrences).unwrap_or(i64::MAX)),
                    Cell::Float(total),
                    Cell::Float(avg),
                    Cell::Float(total),
                    Cell::Float(avg),
                ],
                Default::default(),
            );
        }
        let device_rows = table.rows.len() as i64;
        let (host_idle_ps, host_ops) = host_ops(trace);
        let push_host = |table: &mut Table,
                         rank: i64,
                         kind: &str,
                         name: &str,
                         n: u64,
                         total_ps: i64,
                         self_ps: i64| {
            let (total, own) = (us(total_ps), us(self_ps));
            let per = |v: f64| if n == 0 { 0.0 } else { v / n as f64 };
            table.push(
                vec![
                    Cell::Int(rank),
                    Cell::text("Host"),
                    Cell::text(kind.to_string()),
                    Cell::text(name.to_string()),
                    Cell::Int(i64::try_from(n).unwrap_or(i64::MAX)),
                    Cell::Float(total),
                    Cell::Float(per(total)),
                    Cell::Float(own),
                    Cell::Float(per(own)),
                ],
                Default::default(),
            );
        };
        if !host_ops.is_empty() {
            push_host(
                &mut table,
                device_rows + 1,
                "IDLE",
                "IDLE",
                0,
                host_idle_ps,
                host_idle_ps,
            );
            for (i, ((name, kind), op)) in host_ops.into_iter().enumerate() {
                push_host(
                    &mut table,
                    device_rows + 2 + i as i64,
                    &kind,
                    &name,
                    op.occurrences,
                    op.total_ps,
                    op.self_ps,
                );
            }
        }
        table
    }
}

/// An op's (name, type).
type OpKey = (String, String);

/// A host op's range: start and end (ps) and its op.
type HostRange = (i64, i64, OpKey);

/// A host op's totals.
#[derive(Default)]
struct HostOp {
    occurrences: u64,
    total_ps: i64,
    self_ps: i64,
}

/// XProf's `IsTfOpName`.
fn is_tf_op_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.')
        && b.all(|c| c.is_ascii_alphanumeric() || b"_./>-".contains(&c))
}

/// XProf's `IsTfOpType`: CamelCase.
fn is_tf_op_type(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// XProf's `IsJaxOpType`: lower case, with an optional `[…]` suffix.
fn jax_op_type(s: &str) -> Option<&str> {
    let base = match s.find('[') {
        Some(i) if s.ends_with(']') => &s[..i],
        Some(_) => return None,
        None => s,
    };
    let mut b = base.bytes();
    let ok = b
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == b'_')
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    ok.then_some(base)
}

/// (name, type) of a host range that is a TensorFlow or JAX op (tsl `ParseTfOpFullname`).
fn parse_op(full: &str) -> Option<(&str, &str)> {
    let (name, kind) = full.split_once(':')?;
    if name == "Iterator" {
        return Some((name, "Dataset"));
    }
    if is_tf_op_type(kind) && is_tf_op_name(name) {
        return Some((name, kind));
    }
    // An empty type is derived from the name in XProf; no JAX TraceMe writes one.
    jax_op_type(kind).map(|k| (name, k))
}

/// The host ops, by total self time descending, and the host's idle time (ps).
fn host_ops(trace: &Trace) -> (i64, Vec<(OpKey, HostOp)>) {
    let nvtx = &trace.nvtx;
    let mut by_thread: HashMap<i64, Vec<HostRange>> = HashMap::new();
    for i in 0..nvtx.spans.len() {
        if let Some((name, kind)) = parse_op(trace.str(nvtx.spans.name[i])) {
            by_thread.entry(nvtx.global_tid[i]).or_default().push((
                nvtx.spans.start_ns[i] * 1000,
                nvtx.spans.end_ns[i] * 1000,
                (name.to_string(), kind.to_string()),
            ));
        }
    }
    let mut ops: HashMap<OpKey, HostOp> = HashMap::new();
    let mut idle_ps = 0;
    for (_, mut events) in by_thread {
        events.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
        let first = events.iter().map(|e| e.0).min().unwrap_or(0);
        let last = events.iter().map(|e| e.1).max().unwrap_or(0);
        // (end, index, children's time) of the open ops.
        let mut stack: Vec<(i64, usize, i64)> = Vec::new();
        let mut self_sum = 0;
        let mut close = |stack: &mut Vec<(i64, usize, i64)>, events: &[HostRange]| {
            if let Some((end, i, children)) = stack.pop() {
                let duration = end - events[i].0;
                let own = duration - children;
                self_sum += own;
                let op = ops.entry(events[i].2.clone()).or_default();
                op.occurrences += 1;
                op.total_ps += duration;
                op.self_ps += own;
                if let Some(parent) = stack.last_mut() {
                    parent.2 += duration;
                }
            }
        };
        for i in 0..events.len() {
            while stack.last().is_some_and(|&(end, _, _)| end <= events[i].0) {
                close(&mut stack, &events);
            }
            stack.push((events[i].1, i, 0));
        }
        while !stack.is_empty() {
            close(&mut stack, &events);
        }
        idle_ps += (last - first - self_sum).max(0);
    }
    let mut rows: Vec<(OpKey, HostOp)> = ops.into_iter().collect();
    rows.sort_by(|(ka, a), (kb, b)| b.self_ps.cmp(&a.self_ps).then_with(|| ka.cmp(kb)));
    (idle_ps, rows)
}
