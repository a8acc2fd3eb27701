//! The report's key metrics per GPU and the guides' targets they are checked against. Every
//! figure comes from an analysis the panel and the command line already use — busy time from
//! [`analysis::gpu_activity`], copy/compute overlap from [`analysis::copy_compute_overlap`],
//! exposed communication from [`comm_overlap::comm_compute_overlap`], sync wait from
//! [`sync_wait`], idle gaps from [`analysis::gpu_idle_gaps`], GPU-metric averages from
//! [`crate::trace::GpuMetricSeries::stats`] — nothing is recomputed here.

use serde::Serialize;

use crate::analysis::comm_overlap::{comm_compute_overlap, default_comm_regex};
use crate::analysis::sync_wait::{self, ThreadSyncWait};
use crate::analysis::{self, Filter, IdleGap};
use crate::trace::Trace;

/// How a figure stands against its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Met,
    NotMet,
    /// The capture has nothing to measure it from (no copies, no GPU metrics, …).
    NotMeasurable,
    /// Shown for context; the guides set no target.
    NoTarget,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "not met",
            Verdict::NotMeasurable => "not measurable",
            Verdict::NoTarget => "no target",
        }
    }
}

/// One GPU's figures over the report's range (the JSON block's `gpus` entries).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuFigures {
    pub device: u32,
    pub name: String,
    /// The GPU's active span: first start to last end of its operations in range.
    pub window_start_ns: Option<i64>,
    pub window_end_ns: Option<i64>,
    /// The window less excluded time.
    pub measured_ns: i64,
    pub busy_ns: i64,
    pub idle_ns: i64,
    /// busy ÷ measured.
    pub utilization_pct: Option<f64>,
    pub kernel_ns: i64,
    pub memory_ns: i64,
    pub overlap_ns: i64,
    /// overlap ÷ memory-op time.
    pub copy_compute_overlap_pct: Option<f64>,
    /// Sync wait of the threads that launched work on this GPU.
    pub sync_wait_pct: Option<f64>,
    pub comm_ns: i64,
    pub exposed_comm_ns: i64,
    /// Exposed ÷ measured time.
    pub exposed_comm_pct: Option<f64>,
    /// Gaps of at least [`analysis::DEFAULT_MIN_GAP_NS`] and their total.
    pub gaps: usize,
    pub idle_in_gaps_ns: i64,
    /// GPU-metric averages over the window, where the capture has them.
    pub sm_active_pct: Option<f64>,
    /// DRAM read + write throughput.
    pub dram_bandwidth_pct: Option<f64>,
    pub pcie_rx_pct: Option<f64>,
    pub pcie_tx_pct: Option<f64>,
    /// Each key metric with its target and verdict.
    pub checks: Vec<Check>,
}

/// One key metric against its target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Anchor of its definition in the page (`utilization`, …).
    pub id: &'static str,
    pub metric: &'static str,
    pub value_pct: Option<f64>,
    pub target: &'static str,
    pub verdict: Verdict,
}

/// A target as written ("> 85 %") and the test a value must pass.
type Target = (&'static str, fn(f64) -> bool);

/// The guides' targets (performance-analysis templates): GPU utilisation > 85 %, memory
/// bandwidth > 80 %, PCIe 50–70 %, copy/compute overlap > 60 %, synchronisation wait < 10 %.
fn check(
    id: &'static str,
    metric: &'static str,
    value_pct: Option<f64>,
    target: Option<Target>,
) -> Check {
    let (target_text, verdict) = match (target, value_pct) {
        (None, _) => ("", Verdict::NoTarget),
        (Some((t, _)), None) => (t, Verdict::NotMeasurable),
        (Some((t, ok)), Some(v)) => (t, if ok(v) { Verdict::Met } else { Verdict::NotMet }),
    };
    Check {
        id,
        metric,
        value_pct,
        target: target_text,
        verdict,
    }
}

/// The checks of one GPU's figures, in the order the page lists them.
pub fn checks_of(g: &GpuFigures) -> Vec<Check> {
    let pcie = match (g.pcie_rx_pct, g.pcie_tx_pct) {
        (Some(r), Some(t)) => Some(r.max(t)),
        (r, t) => r.or(t),
    };
    vec![
        check(
            "utilization",
            "GPU utilisation",
            g.utilization_pct,
            Some(("> 85 %", |v| v > 85.0)),
        ),
        check(
            "overlap",
            "Copy/compute overlap",
            g.copy_compute_overlap_pct,
            Some(("> 60 %", |v| v > 60.0)),
        ),
        check(
            "sync-wait",
            "Synchronisation wait",
            g.sync_wait_pct,
            Some(("< 10 %", |v| v < 10.0)),
        ),
        check(
            "exposed-comm",
            "Exposed communication",
            g.exposed_comm_pct,
            None,
        ),
        check(
            "dram",
            "Memory bandwidth (DRAM)",
            g.dram_bandwidth_pct,
            Some(("> 80 %", |v| v > 80.0)),
        ),
        check(
            "pcie",
            "PCIe throughput",
            pcie,
            Some(("50–70 %", |v| (50.0..=70.0).contains(&v))),
        ),
        check("sm-active", "SM active", g.sm_active_pct, None),
    ]
}

/// Average of the GPU metric of `device` whose title starts with `prefix` and whose unit is
/// percent, over `[start, end)`.
fn metric_average(trace: &Trace, device: u32, prefix: &str, window: (i64, i64)) -> Option<f64> {
    trace
        .gpu_metrics
        .of_device(device)
        .find(|(_, s)| s.title.starts_with(prefix) && s.unit.as_deref() == Some("%"))
        .and_then(|(_, s)| s.stats(window.0, window.1))
        .map(|st| st.average())
}

/// The figures of every GPU that ran something in the filter's range, ascending by device.
/// `gaps` are the report's idle gaps (default options), `threads` its sync waits.
pub fn gpu_figures(
    trace: &Trace,
    filter: &Filter,
    gaps: &[IdleGap],
    threads: &[ThreadSyncWait],
) -> Vec<GpuFigures> {
    let overlap = analysis::copy_compute_overlap(trace, filter);
    let comm = comm_compute_overlap(trace, filter, &default_comm_regex());
    let mut out = Vec::new();
    for a in analysis::gpu_activity(trace, filter) {
        let Some(window) = a.window else {
            continue;
        };
        let o = overlap.iter().find(|o| o.device == a.device);
        let c = comm.iter().find(|c| c.device == a.device);
        let exposed_comm_ns = c.map_or(0, |c| c.exposed_ns());
        let comm_ns = c.map_or(0, |c| c.comm_ns);
        let of_device: Vec<&IdleGap> = gaps.iter().filter(|g| g.device == a.device).collect();
        let dram = match (
            metric_average(trace, a.device, "DRAM Read", window),
            metric_average(trace, a.device, "DRAM Write", window),
        ) {
            (Some(r), Some(w)) => Some(r + w),
            (r, w) => r.or(w),
        };
        let mut g = GpuFigures {
            device: a.device,
            name: trace
                .gpu(a.device)
                .map_or(String::new(), |g| g.name.clone()),
            window_start_ns: Some(window.0),
            window_end_ns: Some(window.1),
            measured_ns: a.measured_ns,
            busy_ns: a.busy_ns,
            idle_ns: a.idle_ns,
            utilization_pct: a.busy_percent(),
            kernel_ns: o.map_or(0, |o| o.kernel_ns),
            memory_ns: o.map_or(0, |o| o.memory_ns),
            overlap_ns: o.map_or(0, |o| o.overlap_ns),
            copy_compute_overlap_pct: o.and_then(|o| o.overlap_percent()),
            sync_wait_pct: sync_wait::device_sync_percent(threads, a.device),
            comm_ns,
            exposed_comm_ns,
            exposed_comm_pct: (comm_ns > 0 && a.measured_ns > 0)
                .then(|| exposed_comm_ns as f64 * 100.0 / a.measured_ns as f64),
            gaps: of_device.len(),
            idle_in_gaps_ns: of_device.iter().map(|g| g.duration_ns()).sum(),
            sm_active_pct: metric_average(trace, a.device, "SM Active", window),
            dram_bandwidth_pct: dram,
            pcie_rx_pct: metric_average(trace, a.device, "PCIe RX", window),
            pcie_tx_pct: metric_average(trace, a.device, "PCIe TX", window),
            checks: Vec::new(),
        };
        g.checks = checks_of(&g);
        out.push(g);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_guides_targets() {
        let pcie = |v| {
            check(
                "pcie",
                "PCIe",
                Some(v),
                Some(("50–70 %", |v| (50.0..=70.0).contains(&v))),
            )
        };
        assert_eq!(pcie(49.9).verdict, Verdict::NotMet);
        assert_eq!(pcie(60.0).verdict, Verdict::Met);
        assert_eq!(pcie(70.1).verdict, Verdict::NotMet);
        let util = |v| check("u", "U", v, Some(("> 85 %", |v| v > 85.0)));
        assert_eq!(util(Some(85.0)).verdict, Verdict::NotMet);
        assert_eq!(util(Some(85.1)).verdict, Verdict::Met);
        assert_eq!(util(None).verdict, Verdict::NotMeasurable);
        assert_eq!(check("s", "S", Some(3.0), None).verdict, Verdict::NoTarget);
    }
}
