//! Copy/compute overlap per GPU: how much of the time the GPU spends moving memory (memcpy and
//! memset, union over all streams) is hidden under kernel execution (union over all streams).
//! The weight-streaming guide asks for more than 60%.
//!
//! Definitions, for one device and inside its measured time (the active span
//! `[first start, last end)` of its operations starting in the filter's range, less excluded
//! time; see [`super::gaps`]):
//! - kernel time `K` = |union of kernels|, memory-op time `M` = |union of memcpys + memsets|;
//! - overlap = |K ∩ M| (intersection of the two unions, so two copies under one kernel count
//!   once); overlap % = overlap / M;
//! - busy % = |union of all operations| / measured time (= window length without exclusions).

use super::filter::Filter;
use super::gaps::{self, GpuOpKind};
use super::intervals::{self, Interval};
use crate::trace::{CopyKind, Needs, Trace};

/// Copy/compute overlap of one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyComputeOverlap {
    /// CUDA device id.
    pub device: u32,
    /// Active span within the range; `None` when nothing ran in the range.
    pub window: Option<Interval>,
    /// Window length less excluded time (see [`super::gaps`]).
    pub measured_ns: i64,
    /// Union of every operation.
    pub busy_ns: i64,
    /// Union of kernels.
    pub kernel_ns: i64,
    /// Union of memcpys and memsets.
    pub memory_ns: i64,
    /// Kernel union ∩ memory-op union.
    pub overlap_ns: i64,
}

impl CopyComputeOverlap {
    /// Busy time over measured time, in percent; `None` when nothing was measured.
    pub fn busy_percent(&self) -> Option<f64> {
        (self.measured_ns > 0).then(|| self.busy_ns as f64 * 100.0 / self.measured_ns as f64)
    }

    /// Overlap over memory-op time, in percent; `None` when no memory op ran.
    pub fn overlap_percent(&self) -> Option<f64> {
        (self.memory_ns > 0).then(|| self.overlap_ns as f64 * 100.0 / self.memory_ns as f64)
    }
}

/// Overlap of the memory operations of one direction with kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyKindOverlap {
    pub device: u32,
    /// The copy direction; `None` for memsets.
    pub copy_kind: Option<CopyKind>,
    /// Union of these operations.
    pub memory_ns: i64,
    /// That union ∩ the kernel union.
    pub overlap_ns: i64,
}

impl CopyKindOverlap {
    /// `Host-to-Device`, …, or `Memset`.
    pub fn label(&self) -> &'static str {
        self.copy_kind.map_or("Memset", CopyKind::label)
    }

    pub fn overlap_percent(&self) -> Option<f64> {
        (self.memory_ns > 0).then(|| self.overlap_ns as f64 * 100.0 / self.memory_ns as f64)
    }
}

/// Copy/compute overlap of every device that ran anything, ascending by device.
/// What the overlap of copies and compute reads: the GPU work.
pub const NEEDS: Needs = Needs::GPU_WORK;

pub fn copy_compute_overlap(trace: &Trace, filter: &Filter) -> Vec<CopyComputeOverlap> {
    trace
        .devices()
        .into_iter()
        .map(|device| {
            let measured =
                gaps::measured_time(trace, filter, device, None, gaps::MeasureOver::ActiveSpan);
            let kernels = measured.busy(is_compute);
            let memory = measured.busy(|k| !is_compute(k));
            CopyComputeOverlap {
                device,
                window: measured.window,
                measured_ns: measured.region_ns(),
                busy_ns: intervals::total_ns(&measured.busy(|_| true)),
                kernel_ns: intervals::total_ns(&kernels),
                memory_ns: intervals::total_ns(&memory),
                overlap_ns: intervals::total_ns(&intervals::intersect(&kernels, &memory)),
            }
        })
        .collect()
}

/// Overlap with kernels of each memory-op direction (Host-to-Device, …, memset) per device,
/// ordered by device then CUPTI copy kind, memsets last. Same measured time as
/// [`copy_compute_overlap`].
pub fn overlap_by_copy_kind(trace: &Trace, filter: &Filter) -> Vec<CopyKindOverlap> {
    let mut out = Vec::new();
    for device in trace.devices() {
        let measured =
            gaps::measured_time(trace, filter, device, None, gaps::MeasureOver::ActiveSpan);
        let kernels = measured.busy(is_compute);
        let direction = |o: &gaps::GpuOp| match o.op.kind {
            GpuOpKind::Kernel | GpuOpKind::Graph => None,
            GpuOpKind::Memcpy => trace.memcpys.copy_kind.get(o.op.index).map(|&k| Some(k)),
            GpuOpKind::Memset => Some(None),
        };
        let mut kinds: Vec<Option<CopyKind>> = measured.kept.iter().filter_map(direction).collect();
        // Memsets (None) after every copy direction.
        kinds.sort_unstable_by_key(|k| (k.is_none(), *k));
        kinds.dedup();
        for kind in kinds {
            let spans = measured
                .kept
                .iter()
                .filter(|o| direction(o) == Some(kind))
                .map(|o| (o.start_ns, o.end_ns))
                .collect();
            let memory = intervals::intersect(&intervals::union(spans), &measured.region);
            out.push(CopyKindOverlap {
                device,
                copy_kind: kind,
                memory_ns: intervals::total_ns(&memory),
                overlap_ns: intervals::total_ns(&intervals::intersect(&kernels, &memory)),
            });
        }
    }
    out
}

/// Kernels and CUDA graph executions (whose work is kernels) are compute; copies and memsets are
/// memory operations.
fn is_compute(kind: GpuOpKind) -> bool {
    matches!(kind, GpuOpKind::Kernel | GpuOpKind::Graph)
}
