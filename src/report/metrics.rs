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
    /// The target does not apply to this run ([`Check::note`] says why): copies are too small a
    /// part of it for their overlap or the bus to matter ([`COPY_TARGETS_APPLY_FROM_PCT`]).
    NotApplicable,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "not met",
            Verdict::NotMeasurable => "not measurable",
            Verdict::NoTarget => "no target",
            Verdict::NotApplicable => "n/a",
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
    /// Why the target does not apply (with [`Verdict::NotApplicable`]), else `None`.
    pub note: Option<String>,
}

/// The copy targets (copy/compute overlap, PCIe throughput) apply to a GPU whose copies and
/// memsets (their union, `memory_ns`) take at least this share of its active span. Below it,
/// hiding every copy under kernels, or moving them faster, would shorten the run by less than 1 %
/// — within run-to-run noise — so a low overlap is no finding: kt_train's 0.9 ms of copies in a
/// 267 ms span (0.3 %) say "n/a", not "not met".
pub const COPY_TARGETS_APPLY_FROM_PCT: f64 = 1.0;

/// Why the copy targets do not apply to `g`, or `None` where they do.
fn copies_too_small(g: &GpuFigures) -> Option<String> {
    if g.measured_ns <= 0 {
        return None;
    }
    let share = g.memory_ns as f64 * 100.0 / g.measured_ns as f64;
    (share < COPY_TARGETS_APPLY_FROM_PCT).then(|| {
        if g.memory_ns == 0 {
            "no copies or memsets".to_string()
        } else {
            format!("copies are {share:.1} % of the active span")
        }
    })
}

impl Check {
    /// This check, marked as not applying for `reason` (when there is one).
    fn unless_inapplicable(self, reason: Option<&String>) -> Check {
        match reason {
            Some(r) if self.verdict != Verdict::NoTarget => Check {
                verdict: Verdict::NotApplicable,
                note: Some(r.clone()),
                ..self
            },
            _ => self,
        }
    }
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
        note: None,
    }
}

/// The checks of one GPU's figures, in the order the page lists them; the copy targets say "n/a"
/// where copies are too small a part of the GPU's time ([`COPY_TARGETS_APPLY_FROM_PCT`]).
pub fn checks_of(g: &GpuFigures) -> Vec<Check> {
    let copies_minor = copies_too_small(g);
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
        )
        .unless_inapplicable(copies_minor.as_ref()),
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
        )
        .unless_inapplicable(copies_minor.as_ref()),
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

    fn figures(measured_ns: i64, memory_ns: i64, overlap_pct: Option<f64>) -> GpuFigures {
        GpuFigures {
            device: 0,
            name: String::new(),
            window_start_ns: Some(0),
            window_end_ns: Some(measured_ns),
            measured_ns,
            busy_ns: measured_ns / 2,
            idle_ns: measured_ns - measured_ns / 2,
            utilization_pct: Some(50.0),
            kernel_ns: measured_ns / 2,
            memory_ns,
            overlap_ns: 0,
            copy_compute_overlap_pct: overlap_pct,
            sync_wait_pct: None,
            comm_ns: 0,
            exposed_comm_ns: 0,
            exposed_comm_pct: None,
            gaps: 0,
            idle_in_gaps_ns: 0,
            sm_active_pct: None,
            dram_bandwidth_pct: None,
            pcie_rx_pct: Some(2.0),
            pcie_tx_pct: None,
            checks: Vec::new(),
        }
    }

    fn verdict(checks: &[Check], id: &str) -> (Verdict, Option<String>) {
        let c = checks.iter().find(|c| c.id == id);
        (
            c.map_or(Verdict::NoTarget, |c| c.verdict),
            c.and_then(|c| c.note.clone()),
        )
    }

    #[test]
    fn copy_targets_do_not_apply_below_one_percent_of_the_span() {
        // 0.9 ms of copies in 267 ms, none hidden: kt_train.
        let small = checks_of(&figures(267_000_000, 900_000, Some(0.0)));
        assert_eq!(
            verdict(&small, "overlap"),
            (
                Verdict::NotApplicable,
                Some("copies are 0.3 % of the active span".to_string())
            )
        );
        assert_eq!(verdict(&small, "pcie").0, Verdict::NotApplicable);
        assert_eq!(verdict(&small, "utilization").0, Verdict::NotMet);
        // 1 % and more: judged.
        let big = checks_of(&figures(100_000_000, 1_000_000, Some(0.0)));
        assert_eq!(verdict(&big, "overlap"), (Verdict::NotMet, None));
        assert_eq!(verdict(&big, "pcie").0, Verdict::NotMet);
        // No copies at all: nothing to overlap, so n/a rather than "not measurable".
        let none = checks_of(&figures(100_000_000, 0, None));
        assert_eq!(
            verdict(&none, "overlap"),
            (
                Verdict::NotApplicable,
                Some("no copies or memsets".to_string())
            )
        );
    }
}
