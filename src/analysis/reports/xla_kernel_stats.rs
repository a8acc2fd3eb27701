//! `xla_kernel_stats` (Sightline's own report): XProf's GPU "Kernel Stats" tool for a JAX / XLA
//! profile (XPlane), its columns, rows, order and values as XProf's `kernel_stats` tool data
//! has them (xprof `xplane_to_kernel_stats_db.cc`, `kernel_stats_utils.cc`,
//! `xplane_to_op_stats.cc`):
//!
//! - **Kernels**: GPU work with `kernel_details` whose duration, in whole ns (picoseconds / 1000,
//!   rounded down, as XProf's `DurationNs`), is not 0.
//! - **A row** per (name, grid, block, registers, static and dynamic shared memory, uses
//!   TensorCore, op is TensorCore eligible, op name); occupancy is the first kernel's `occ_pct`.
//! - **Op name**: the `tf_op`'s name (`XlaModule:` → `XlaModule`); for an XLA op whose HLO
//!   instruction the profile's `HloProto` holds, that instruction's framework op
//!   (`jit(step)/jvp()/dot_general`).
//! - **TensorCore**: a kernel uses it when its name holds one of XProf's patterns (`xmma_gemm`,
//!   `s1688`, …); its op is eligible when the op name is one of XProf's (`…/MatMul`, `…Conv2D`,
//!   JAX's `…/dot_general`, …) or the kernel uses TensorCores.
//! - **Values**: µs = ns / 1000 (the average of floor(total ns / occurrences)); rows by total
//!   duration descending, then by the row's key ascending; at most 1000 rows.

use std::collections::HashMap;

use super::{ReportInput, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::xla::{detail, detail_dims, detail_u64};

pub struct XlaKernelStats;

pub const COLUMNS: [&str; 15] = [
    "Rank",
    "Kernel Name",
    "Registers per thread",
    "Shared Mem bytes",
    "Block dim",
    "Grid dim",
    "Theoretical Occupancy %",
    "Op is TensorCore eligible",
    "Kernel uses TensorCore",
    "Op Name",
    "Occurrences",
    "Total Duration (μs)",
    "Avg Duration (μs)",
    "Min Duration (μs)",
    "Max Duration (μs)",
];

/// XProf keeps the 1000 longest.
const MAX_ROWS: usize = 1000;

/// XProf's `kTensorCoreKernelNamePatterns`.
const TENSOR_CORE_KERNEL_PATTERNS: [&str; 19] = [
    "16816",
    "c1688",
    "conv1x1",
    "conv2d_c1_k1",
    "dgrad_1x1_stride_2x2",
    "direct_group",
    "first_layer_wgrad_kernel",
    "h1688",
    "h884",
    "hmma",
    "i16832",
    "i8816",
    "s884",
    "s1688",
    "xmma_gemm",
    "xmma_implicit_gemm",
    "xmma_sparse_conv",
    "xmma_sparse_gemm",
    "xmma_warp_specialized_implicit_gemm",
];

pub fn is_kernel_using_tensor_core(name: &str) -> bool {
    TENSOR_CORE_KERNEL_PATTERNS.iter().any(|p| name.contains(p))
}

/// XProf's `IsOpTensorCoreEligible`. `dot_general` (JAX's name for a matrix product) is not in
/// the list of XProf's sources read here, but XProf 2.24.2 (which holds the literal) marks every
/// op named `…/dot_general` eligible: on `jax_train_nocb` 10 such ops run by kernels without a
/// TensorCore name (`gemm_fusion_dot_31`) are eligible, `…/transpose` ops by the same kind of
/// kernel are not.
pub fn is_op_tensor_core_eligible(op: &str) -> bool {
    [
        "dot_general",
        "Conv2D",
        "Conv2DBackpropFilter",
        "Conv2DBackpropInput",
        "Conv3D",
        "DepthwiseConv2dNative",
        "DepthwiseConv2dNativeBackpropFilter",
        "DepthwiseConv2dNativeBackpropInput",
        "/MatMul",
        "FusedMatMul",
        "/CudnnRNN",
        "XlaDot",
        "XlaDotV2",
    ]
    .iter()
    .any(|s| op.ends_with(s))
        || [
            "BatchMatMul",
            "CudnnRNNV",
            "CudnnRNNForward",
            "CudnnRNNBackprop",
        ]
        .iter()
        .any(|s| op.contains(s))
}

/// The key XProf groups kernels by, in its comparator's order.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    name: String,
    grid: [u32; 3],
    block: [u32; 3],
    registers: u64,
    static_shared: u64,
    dynamic_shared: u64,
    uses_tensor_core: bool,
    eligible: bool,
    op_name: String,
}

struct Value {
    occupancy_pct: f64,
    occurrences: u64,
    total_ns: u64,
    min_ns: u64,
    max_ns: u64,
    events: Vec<usize>,
}

impl StatsReport for XlaKernelStats {
    fn name(&self) -> &'static str {
        "xla_kernel_stats"
    }

    fn title(&self) -> &'static str {
        "XLA Kernel Stats (XProf kernel_stats)"
    }

    fn missing_data(&self) -> &'static str {
        "XLA kernel data (a JAX / XLA profile, .xplane.pb)"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let mut table = Table::new(&COLUMNS).limited(input.row_limit);
        let Some(xla) = &trace.xla else {
            return table;
        };
        let k = &trace.kernels;
        // In file order: a row's occupancy is its first kernel's.
        let mut kernels: Vec<usize> = input.filter.indices(trace, EventTable::Kernels);
        kernels.sort_by_key(|&i| k.external_id.get(i).copied().unwrap_or(0));
        let mut rows: HashMap<Key, Value> = HashMap::new();
        for i in kernels {
            let Some(op) = k.external_id.get(i).and_then(|&e| xla.gpu_op(e)) else {
                continue;
            };
            let details = trace.str(op.kernel_details);
            let duration_ns = u64::try_from(op.duration_ps / 1000).unwrap_or(0);
            if details.is_empty() || duration_ns == 0 {
                continue;
            }
            let name = trace.str(k.spans.name[i]);
            let uses_tensor_core = is_kernel_using_tensor_core(name);
            let tf_op = trace.str(op.tf_op);
            let mut op_name = tf_op.split_once(':').map_or(tf_op, |(n, _)| n).to_string();
            let mut eligible =
                !tf_op.is_empty() && (is_op_tensor_core_eligible(&op_name) || uses_tensor_core);
            if let Some(framework) = op.framework_op {
                op_name = trace.str(framework).to_string();
                eligible = is_op_tensor_core_eligible(&op_name) || eligible;
            }
            let num = |key: &str| detail_u64(details, key).unwrap_or(0);
            let dims = |key: &str| match detail_dims(details, key) {
                [0, 0, 0] => [1, 1, 1],
                d => d,
            };
            let key = Key {
                name: name.to_string(),
                grid: dims("grid"),
                block: dims("block"),
                registers: num("regs"),
                static_shared: num("static_shared"),
                dynamic_shared: num("dynamic_shared"),
                uses_tensor_core,
                eligible,
                op_name,
            };
            let v = rows.entry(key).or_insert_with(|| Value {
                occupancy_pct: detail(details, "occ_pct")
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0.0),
                occurrences: 0,
                total_ns: 0,
                min_ns: u64::MAX,
                max_ns: 0,
                events: Vec::new(),
            });
            v.occurrences += 1;
            v.total_ns += duration_ns;
            v.min_ns = v.min_ns.min(duration_ns);
            v.max_ns = v.max_ns.max(duration_ns);
            if input.with_events {
                v.events.push(i);
            }
        }
        let mut rows: Vec<(Key, Value)> = rows.into_iter().collect();
        rows.sort_by(|(ka, va), (kb, vb)| vb.total_ns.cmp(&va.total_ns).then_with(|| ka.cmp(kb)));
        rows.truncate(MAX_ROWS);
        let us = |ns: u64| Cell::Float(ns as f64 / 1000.0);
        let dims = |d: [u32; 3]| Cell::text(format!("{},{},{}", d[0], d[1], d[2]));
        let int = |v: u64| Cell::Int(i64::try_from(v).unwrap_or(i64::MAX));
        let flag = |b: bool| Cell::text(if b { "true" } else { "false" });
        for (rank, (key, v)) in rows.into_iter().enumerate() {
            let cells = vec![
                int(rank as u64 + 1),
                Cell::text(key.name),
                int(key.registers),
                int(key.static_shared + key.dynamic_shared),
                dims(key.block),
                dims(key.grid),
                Cell::Float(v.occupancy_pct),
                flag(key.eligible),
                flag(key.uses_tensor_core),
                Cell::text(key.op_name),
                int(v.occurrences),
                us(v.total_ns),
                us(v.total_ns / v.occurrences.max(1)),
                us(v.min_ns),
                us(v.max_ns),
            ];
            let events = if v.events.is_empty() {
                RowEvents::None
            } else {
                RowEvents::Events(
                    v.events
                        .into_iter()
                        .map(|i| EventRef::new(EventTable::Kernels, i))
                        .collect(),
                )
            };
            table.push(cells, events);
        }
        table
    }
}
