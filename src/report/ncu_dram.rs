//! The report's *Memory bandwidth (DRAM)* row from an Nsight Compute report of the same program
//! (`sightline report TRACE --ncu REPORT`), where the trace has no GPU metrics to measure it: the
//! DRAM throughput ncu measured of each matched kernel (% of peak,
//! [`facts::DRAM_PCT`]), weighted by that kernel's duration on the timeline — the GPU's DRAM
//! use while its kernels ran, in the proportions the timeline ran them.

use super::RunReport;
use super::metrics::{self, GpuFigures};
use crate::analysis::ncu::NcuJoin;
use crate::analysis::ncu::facts;
use crate::analysis::ncu::join::stream_key_of_kernel;
use crate::trace::Trace;
use crate::trace::ncu::NcuReport;

/// The kernel-time-weighted DRAM % of the matched kernels that ran on `gpu`'s device and started
/// in its window.
pub fn weighted_dram_of_gpu(
    trace: &Trace,
    report: &NcuReport,
    join: &NcuJoin,
    gpu: &GpuFigures,
) -> Option<f64> {
    let window = (
        gpu.window_start_ns.unwrap_or(i64::MIN),
        gpu.window_end_ns.unwrap_or(i64::MAX),
    );
    let k = &trace.kernels.spans;
    let (mut weighted, mut weight) = (0.0f64, 0i64);
    for (kernel, workload) in join.pairs() {
        if kernel >= k.len() || !(window.0..window.1).contains(&k.start_ns[kernel]) {
            continue;
        }
        if stream_key_of_kernel(trace, kernel).map(|s| s.device) != Some(gpu.device) {
            continue;
        }
        let Some(pct) = report
            .workloads
            .get(workload)
            .and_then(|w| facts::dram_pct(report, w))
        else {
            continue;
        };
        let d = k.duration_ns(kernel).max(0);
        weighted += pct * d as f64;
        weight = weight.saturating_add(d);
    }
    (weight > 0).then(|| weighted / weight as f64)
}

/// Fills each GPU's DRAM row that the trace could not measure from the joined ncu report, and
/// judges it again against its target.
pub fn fill_dram_from_ncu(run: &mut RunReport, trace: &Trace, report: &NcuReport, join: &NcuJoin) {
    for gpu in &mut run.gpus {
        if gpu.dram_bandwidth_pct.is_some() {
            continue;
        }
        if let Some(pct) = weighted_dram_of_gpu(trace, report, join, gpu) {
            gpu.dram_bandwidth_pct = Some(pct);
            gpu.checks = metrics::checks_of(gpu);
        }
    }
}
