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
//! - Rows: IDLE first, then by total time descending. XProf's Host rows (host TraceMe ops and
//!   host IDLE) are not made: the rules that pick them are not read yet.

use std::collections::HashMap;

use super::{ReportInput, StatsReport};
use crate::analysis::table::{Cell, Table};

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
        "XLA Framework Op Stats (XProf framework_op_stats, device)"
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
        table
    }
}
