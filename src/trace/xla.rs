//! What a JAX / XLA profile (an XPlane) holds beyond the events every format shares: XLA's facts
//! about each GPU operation (the HLO op and module that ran it, the framework op, its exact
//! picosecond times), the capture's hosts and metadata. Kernels, copies and memsets find their
//! row here through their `external_id` (row + 1; 0 for none).

use super::strings::StrId;

/// XLA's facts about one GPU operation (kernel, copy or memset) of an XPlane.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XlaGpuOp {
    /// Start, in picoseconds from the session start, and duration, exactly as the file has them
    /// (the event tables hold nanoseconds, rounded down).
    pub start_ps: i64,
    pub duration_ps: i64,
    /// `hlo_op`: the HLO instruction (a command buffer's, for kernels run inside one).
    pub hlo_op: StrId,
    /// `hlo_module`: the XLA module (`jit_step`).
    pub hlo_module: StrId,
    /// `tf_op`: the framework op as XLA names it (`XlaModule:` for JAX programs).
    pub tf_op: StrId,
    /// `program_id` of the module, when written.
    pub program_id: Option<u64>,
    /// `kernel_details` as written (`regs:… static_shared:… occ_pct:…`), empty for other work.
    pub kernel_details: StrId,
    /// `theoretical_occupancy_pct`, when written.
    pub occupancy_pct: Option<f64>,
    /// `cuda_graph_id`: set on work run inside a CUDA graph (an XLA command buffer).
    pub cuda_graph_id: Option<u64>,
    /// The framework op of its HLO instruction (the `op_name` of the instruction named `hlo_op`
    /// in the program's `HloProto`), `None` when the profile has no such instruction (a command
    /// buffer's kernels: the buffer is no instruction of the module XLA recorded).
    pub framework_op: Option<StrId>,
}

/// The XLA side of an XPlane trace.
#[derive(Debug, Clone, Default)]
pub struct XlaInfo {
    /// One per GPU operation of the trace, in file order (see the module comment).
    pub gpu_ops: Vec<XlaGpuOp>,
    /// `XSpace.hostnames`.
    pub hostnames: Vec<String>,
    /// The `/host:metadata` plane's stats (`jax_version`, `cuda_version`, …) as text.
    pub metadata: Vec<(String, String)>,
    /// `XSpace.errors` and `warnings` as the profiler wrote them.
    pub profiler_messages: Vec<String>,
}

impl XlaInfo {
    /// XLA's facts of the operation whose `external_id` is `external_id`.
    pub fn gpu_op(&self, external_id: u64) -> Option<&XlaGpuOp> {
        let row = usize::try_from(external_id.checked_sub(1)?).ok()?;
        self.gpu_ops.get(row)
    }
}

/// A value of a details text XLA's CUPTI collector writes (`kernel_details`: `regs:18
/// static_shared:0 grid:4096,1,1 …`; `memcpy_details`, `Memset_details`) by its key (`regs:18 static_shared:0 grid:4096,1,1 ...`).
pub fn detail<'t>(details: &'t str, key: &str) -> Option<&'t str> {
    details.split_ascii_whitespace().find_map(|kv| {
        kv.split_once(':')
            .and_then(|(k, v)| (k == key).then_some(v))
    })
}

/// A details value as an unsigned number.
pub fn detail_u64(details: &str, key: &str) -> Option<u64> {
    detail(details, key)?.parse().ok()
}

/// A `x,y,z` details value (`grid:64,2,1`).
pub fn detail_dims(details: &str, key: &str) -> [u32; 3] {
    let mut out = [0u32; 3];
    if let Some(v) = detail(details, key) {
        for (slot, part) in out.iter_mut().zip(v.split(',')) {
            *slot = part.trim().parse().unwrap_or(0);
        }
    }
    out
}

/// XProf's grouping of GPU work into steps (`StepDetails`): work whose launching call lies in a
/// step's range is that step's (`claims[i] = Some(step)`); work no step claims (a `device_put`'s
/// copy, dispatched from another thread) joins the step before it — the last whose first
/// claimed work started no later. `ops[i]`: (start, claim); steps are `0..steps`.
pub fn group_into_steps(ops: &[(i64, Option<usize>)], steps: usize) -> Vec<Option<usize>> {
    let mut first: Vec<Option<i64>> = vec![None; steps];
    for &(begin, claim) in ops {
        if let Some(slot) = claim.and_then(|s| first.get_mut(s)) {
            *slot = Some(slot.map_or(begin, |f: i64| f.min(begin)));
        }
    }
    let mut firsts: Vec<(i64, usize)> = first
        .iter()
        .enumerate()
        .filter_map(|(s, f)| f.map(|f| (f, s)))
        .collect();
    firsts.sort_unstable();
    ops.iter()
        .map(|&(begin, claim)| {
            claim.or_else(|| {
                let before = firsts.partition_point(|&(f, _)| f <= begin);
                before.checked_sub(1).map(|i| firsts[i].1)
            })
        })
        .collect()
}
