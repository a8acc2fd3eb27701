//! The GPU work `gpu_gaps` and `gpu_time_util` look at, gathered as Nsight Systems 2023.4.4's
//! `gpustats.GPUOperation` does: the CUDA kernels, memcpys and memsets that start after 0, grouped
//! by (process, device), plus the CUDA profiling overhead of each process laid over every one of
//! its GPUs where it falls strictly inside the span of that GPU's work (the user cannot remove it,
//! so it counts as busy).

use std::collections::BTreeMap;

use super::RuleInput;
use super::scope::RuleScope;
use crate::analysis::filter::EventTable;
use crate::trace::{GlobalTid, ProfilerOverhead, Slice, Spans};

/// One operation of a device, or one overhead span laid over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuOp {
    pub start_ns: i64,
    pub end_ns: i64,
    pub context: u32,
    /// The order SQLite reads the rows in (overhead, then kernels, memcpys and memsets, each in
    /// file order); it decides which row a tie or a bare column picks.
    pub scan: u64,
}

/// The work of one device in one process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceOps {
    pub pid: u32,
    pub device: u32,
    /// In scan order.
    pub ops: Vec<GpuOp>,
    /// First start and last end of the operations (the overhead lies inside).
    pub start_ns: i64,
    pub end_ns: i64,
    /// The context nsys reports for the device: SQLite's bare column beside `min(start)` and
    /// `max(end)` comes from the first row (in scan order) that reached the maximum end.
    pub context: u32,
}

const SCAN_OVERHEAD: u64 = 0;
const SCAN_KERNEL: u64 = 1 << 32;
const SCAN_MEMCPY: u64 = 2 << 32;
const SCAN_MEMSET: u64 = 3 << 32;

/// The GPU work of every (process, device) the scope and filter keep, ordered by (pid, device).
pub fn device_ops(input: &RuleInput, scope: &RuleScope) -> Vec<DeviceOps> {
    let trace = input.trace;
    let mut by_device: BTreeMap<(u32, u32), Vec<GpuOp>> = BTreeMap::new();
    for stream in &trace.streams {
        let key = stream.key;
        let tables: [(&Slice, &Spans, &[u32], EventTable, u64); 3] = [
            (
                &stream.kernels,
                &trace.kernels.spans,
                &trace.kernels.file_order,
                EventTable::Kernels,
                SCAN_KERNEL,
            ),
            (
                &stream.memcpys,
                &trace.memcpys.spans,
                &trace.memcpys.file_order,
                EventTable::Memcpys,
                SCAN_MEMCPY,
            ),
            (
                &stream.memsets,
                &trace.memsets.spans,
                &trace.memsets.file_order,
                EventTable::Memsets,
                SCAN_MEMSET,
            ),
        ];
        for (slice, spans, file_order, table, rank) in tables {
            for i in slice.range.clone() {
                let (start_ns, end_ns) = (spans.start_ns[i], spans.end_ns[i]);
                if start_ns <= 0
                    || !input.filter.keeps(table, i, start_ns)
                    || !scope.keeps_process_event(key.pid, start_ns, end_ns)
                {
                    continue;
                }
                let order = file_order.get(i).copied().unwrap_or(i as u32);
                by_device
                    .entry((key.pid, key.device))
                    .or_default()
                    .push(GpuOp {
                        start_ns,
                        end_ns,
                        context: key.context,
                        scan: rank | u64::from(order),
                    });
            }
        }
    }
    let mut devices: Vec<DeviceOps> = by_device
        .into_iter()
        .filter_map(|((pid, device), mut ops)| {
            ops.sort_unstable_by_key(|op| op.scan);
            let start_ns = ops.iter().map(|op| op.start_ns).min()?;
            let end_ns = ops.iter().map(|op| op.end_ns).max()?;
            let context = ops.iter().find(|op| op.end_ns == end_ns)?.context;
            Some(DeviceOps {
                pid,
                device,
                ops,
                start_ns,
                end_ns,
                context,
            })
        })
        .collect();
    add_cuda_overhead(input, scope, &mut devices);
    devices
}

/// Lays each CUDA profiling overhead span over every device of its process whose work it lies
/// strictly inside, with that device's context.
fn add_cuda_overhead(input: &RuleInput, scope: &RuleScope, devices: &mut [DeviceOps]) {
    let trace = input.trace;
    let overhead = &trace.profiler_overhead;
    let names: Vec<_> = ProfilerOverhead::CUDA_NAMES
        .iter()
        .filter_map(|n| trace.strings.find(n))
        .collect();
    if names.is_empty() {
        return;
    }
    for j in 0..overhead.spans.len() {
        let (start_ns, end_ns) = (overhead.spans.start_ns[j], overhead.spans.end_ns[j]);
        let global_tid = overhead.global_tid[j];
        if !names.contains(&overhead.spans.name[j])
            || !input.filter.range.contains(start_ns)
            || !scope.keeps_thread_event(global_tid, start_ns, end_ns)
        {
            continue;
        }
        let pid = GlobalTid(global_tid).pid();
        for device in devices.iter_mut().filter(|d| d.pid == pid) {
            if start_ns > device.start_ns && end_ns < device.end_ns {
                device.ops.push(GpuOp {
                    start_ns,
                    end_ns,
                    context: device.context,
                    scan: SCAN_OVERHEAD | j as u64,
                });
            }
        }
    }
    for device in devices {
        device.ops.sort_by_key(|op| op.scan);
    }
}
