//! The FP32 and FP64 roofline of an Nsight Compute report, computed as ncu's
//! `SpeedOfLight_RooflineChart` section (2025.3) computes it:
//!
//! - peak work (FLOP/s) = 2 × `sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained`
//!   × `sm__cycles_elapsed.avg.per_second` (FP64: the `dfma` metric) — an FMA is two operations;
//! - peak traffic (byte/s) = `dram__bytes.sum.peak_sustained` × `dram__cycles_elapsed.avg.per_second`;
//! - achieved work = (`fadd` + `fmul` + 2 × `ffma`
//!   `smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed`) ×
//!   `smsp__cycles_elapsed.avg.per_second` (FP64: `dadd`, `dmul`, `dfma`);
//! - achieved traffic = `dram__bytes.sum.per_second`; arithmetic intensity = work / traffic.
//!
//! The section's labels in ncu's details page ("Theoretical Predicated-On FFMA Operations" =
//! 2 × the FFMA peak, "Predicated-On FFMA Operations Per Cycle" = 2 × the achieved FFMA rate,
//! "DRAM Bandwidth") and its rule `SOLFPRoofline` ("achieved 6% of this device's FP32 peak") are
//! what the tests check these against. Reports made without the section (`--metrics …`, or
//! `--set roofline` in 2025.3, which collects only the hierarchical charts) lack these metrics:
//! [`Roofline::missing`] names them.

use crate::trace::ncu::{NcuReport, NcuWorkload};

/// Floating-point precision of a roofline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    Fp32,
    Fp64,
}

impl Precision {
    pub const ALL: [Precision; 2] = [Precision::Fp32, Precision::Fp64];

    pub fn label(self) -> &'static str {
        match self {
            Precision::Fp32 => "FP32",
            Precision::Fp64 => "FP64",
        }
    }

    /// The peak FMA rate metric (thread instructions per cycle).
    fn peak_fma(self) -> &'static str {
        match self {
            Precision::Fp32 => "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
            Precision::Fp64 => "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
        }
    }

    /// The achieved add, multiply and FMA rate metrics (thread instructions per cycle).
    fn achieved(self) -> [&'static str; 3] {
        match self {
            Precision::Fp32 => [
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
                "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
            ],
            Precision::Fp64 => [
                "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
                "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
                "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed",
            ],
        }
    }
}

pub const SM_CLOCK: &str = "sm__cycles_elapsed.avg.per_second";
pub const SMSP_CLOCK: &str = "smsp__cycles_elapsed.avg.per_second";
pub const DRAM_PEAK_BYTES: &str = "dram__bytes.sum.peak_sustained";
pub const DRAM_CLOCK: &str = "dram__cycles_elapsed.avg.per_second";
pub const DRAM_BYTES_PER_SECOND: &str = "dram__bytes.sum.per_second";

/// A device's ceilings at one precision, as measured with one workload (the clocks ncu measured
/// while replaying it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    pub precision: Precision,
    /// FLOP/s.
    pub peak_work: f64,
    /// byte/s.
    pub peak_traffic: f64,
}

impl Ceiling {
    /// The arithmetic intensity (FLOP/byte) where the memory roof meets the compute roof.
    pub fn ridge_intensity(&self) -> f64 {
        self.peak_work / self.peak_traffic
    }

    /// The roof at `intensity`: the work the device can do at most.
    pub fn attainable(&self, intensity: f64) -> f64 {
        (self.peak_traffic * intensity).min(self.peak_work)
    }
}

/// What one workload achieved at one precision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Achieved {
    pub precision: Precision,
    /// Index in [`NcuReport::workloads`].
    pub workload: usize,
    /// FLOP/s.
    pub work: f64,
    /// byte/s.
    pub traffic: f64,
}

impl Achieved {
    /// FLOP/byte.
    pub fn intensity(&self) -> f64 {
        self.work / self.traffic
    }

    /// Whether the point can be drawn on log–log axes (work and traffic above zero).
    pub fn is_drawable(&self) -> bool {
        self.work > 0.0 && self.traffic > 0.0 && self.work.is_finite() && self.traffic.is_finite()
    }
}

/// The ceilings of the device measured with `workload`, or the metrics it lacks.
pub fn ceiling(
    report: &NcuReport,
    workload: &NcuWorkload,
    precision: Precision,
) -> Result<Ceiling, Vec<&'static str>> {
    let [fma, sm_clock, dram_peak, dram_clock] = values(
        report,
        workload,
        [precision.peak_fma(), SM_CLOCK, DRAM_PEAK_BYTES, DRAM_CLOCK],
    )?;
    Ok(Ceiling {
        precision,
        peak_work: 2.0 * fma * sm_clock,
        peak_traffic: dram_peak * dram_clock,
    })
}

/// What `workload` achieved, or the metrics it lacks.
pub fn achieved(
    report: &NcuReport,
    index: usize,
    workload: &NcuWorkload,
    precision: Precision,
) -> Result<Achieved, Vec<&'static str>> {
    let [add, mul, fma] = precision.achieved();
    let [add, mul, fma, clock, traffic] = values(
        report,
        workload,
        [add, mul, fma, SMSP_CLOCK, DRAM_BYTES_PER_SECOND],
    )?;
    Ok(Achieved {
        precision,
        workload: index,
        work: (add + mul + 2.0 * fma) * clock,
        traffic,
    })
}

/// The values of `names`, or the names missing.
fn values<const N: usize>(
    report: &NcuReport,
    workload: &NcuWorkload,
    names: [&'static str; N],
) -> Result<[f64; N], Vec<&'static str>> {
    let mut out = [0.0; N];
    let mut missing = Vec::new();
    for (slot, name) in out.iter_mut().zip(names) {
        match report.number(workload, name) {
            Some(v) => *slot = v,
            None => missing.push(name),
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// The roofline of a whole report: every workload's achieved points at both precisions.
#[derive(Debug, Clone, Default)]
pub struct Roofline {
    /// Achieved FP32 work of each workload that has the metrics, in report order.
    pub fp32: Vec<Achieved>,
    /// Achieved FP64 work of each workload that has the metrics.
    pub fp64: Vec<Achieved>,
    /// The metrics no workload has for a point or a ceiling (empty when every metric the chart
    /// needs is somewhere in the report).
    pub missing: Vec<&'static str>,
}

impl Roofline {
    pub fn of(report: &NcuReport) -> Roofline {
        let mut out = Roofline::default();
        let mut missing: Vec<&'static str> = Vec::new();
        for precision in Precision::ALL {
            let mut any_ceiling = false;
            let mut ceiling_missing = Vec::new();
            for (i, w) in report.workloads.iter().enumerate() {
                match achieved(report, i, w, precision) {
                    Ok(a) => match precision {
                        Precision::Fp32 => out.fp32.push(a),
                        Precision::Fp64 => out.fp64.push(a),
                    },
                    Err(m) => missing.extend(m),
                }
                match ceiling(report, w, precision) {
                    Ok(_) => any_ceiling = true,
                    Err(m) => ceiling_missing = m,
                }
            }
            if !any_ceiling {
                missing.extend(ceiling_missing);
            }
        }
        let have = |name: &str| {
            report
                .metric_id(name)
                .is_some_and(|id| report.workloads.iter().any(|w| w.metric(id).is_some()))
        };
        missing.sort_unstable();
        missing.dedup();
        missing.retain(|m| !have(m));
        out.missing = missing;
        out
    }

    /// The achieved points at `precision`.
    pub fn points(&self, precision: Precision) -> &[Achieved] {
        match precision {
            Precision::Fp32 => &self.fp32,
            Precision::Fp64 => &self.fp64,
        }
    }

    /// Whether there is anything to draw.
    pub fn is_empty(&self) -> bool {
        self.fp32.is_empty() && self.fp64.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ncu::MetricValue;

    fn report(values: &[(&str, f64)]) -> NcuReport {
        let mut r = NcuReport::default();
        let mut w = NcuWorkload::default();
        for (name, v) in values {
            let id = r.intern_metric(name);
            w.metrics.push((id, MetricValue::F64(*v)));
        }
        w.metrics.sort_by_key(|(id, _)| *id);
        r.workloads.push(w);
        r
    }

    /// Kernel 0 of `ncu_moe_full` (H200): ncu's details page prints "Theoretical Predicated-On
    /// FFMA Operations 33,792", "SM Frequency 1.53 Ghz", "Theoretical DRAM Bytes Accessible
    /// 1.50 Kbyte/cycle", "DRAM Frequency 3.19 Ghz", "Predicated-On FFMA Operations Per Cycle
    /// 2,185.20", "DRAM Bandwidth 210.26 Gbyte/s", and its rule: "The workload achieved 6% of
    /// this device's FP32 peak performance and 0% of its FP64 peak performance".
    #[test]
    fn moe_full_kernel_0_as_ncu_computes_it() {
        let r = report(&[
            (Precision::Fp32.peak_fma(), 16896.0),
            (Precision::Fp64.peak_fma(), 8448.0),
            (SM_CLOCK, 1_526_318_241.943),
            (SMSP_CLOCK, 1_526_318_241.943),
            (DRAM_PEAK_BYTES, 1504.0),
            (DRAM_CLOCK, 3_193_386_243.386),
            (DRAM_BYTES_PER_SECOND, 210_260_317_460.317),
            (Precision::Fp32.achieved()[0], 0.0),
            (Precision::Fp32.achieved()[1], 0.0),
            (Precision::Fp32.achieved()[2], 1092.6012),
            (Precision::Fp64.achieved()[0], 0.0),
            (Precision::Fp64.achieved()[1], 0.0),
            (Precision::Fp64.achieved()[2], 0.0),
        ]);
        let w = &r.workloads[0];
        let fp32 = ceiling(&r, w, Precision::Fp32).unwrap_or_else(|m| panic!("{m:?}"));
        // 2 × 16,896 × 1.526 GHz ≈ 51.6 TFLOP/s; 1,504 B × 3.19 GHz ≈ 4.80 TB/s (H200 HBM3e).
        assert!((fp32.peak_work / 1e12 - 51.577).abs() < 0.01, "{fp32:?}");
        assert!(
            (fp32.peak_traffic / 1e12 - 4.8029).abs() < 0.001,
            "{fp32:?}"
        );
        let fp64 = ceiling(&r, w, Precision::Fp64).unwrap_or_else(|m| panic!("{m:?}"));
        assert!(
            (fp32.peak_work / fp64.peak_work - 2.0).abs() < 1e-9,
            "ratio 2:1"
        );
        let a = achieved(&r, 0, w, Precision::Fp32).unwrap_or_else(|m| panic!("{m:?}"));
        let pct = a.work / fp32.peak_work * 100.0;
        assert_eq!(pct.round(), 6.0, "{pct}");
        assert!((a.intensity() - 3.3351e12 / 210.26e9).abs() < 0.05, "{a:?}");
        assert!(a.is_drawable());
        let d = achieved(&r, 0, w, Precision::Fp64).unwrap_or_else(|m| panic!("{m:?}"));
        assert!(!d.is_drawable(), "no FP64 work: no point on log axes");
        let roof = Roofline::of(&r);
        assert!(roof.missing.is_empty(), "{:?}", roof.missing);
        assert_eq!(roof.fp32.len(), 1);
    }

    #[test]
    fn the_roof_bends_at_the_ridge() {
        let c = Ceiling {
            precision: Precision::Fp32,
            peak_work: 100.0,
            peak_traffic: 10.0,
        };
        assert_eq!(c.ridge_intensity(), 10.0);
        assert_eq!(c.attainable(1.0), 10.0);
        assert_eq!(c.attainable(100.0), 100.0);
    }

    #[test]
    fn a_report_with_two_metrics_names_the_missing_ones() {
        let r = report(&[
            (DRAM_BYTES_PER_SECOND, 1e9),
            ("gpu__time_duration.sum", 10.0),
        ]);
        let roof = Roofline::of(&r);
        assert!(roof.is_empty());
        assert!(roof.missing.contains(&SMSP_CLOCK), "{:?}", roof.missing);
        assert!(
            roof.missing.contains(&DRAM_PEAK_BYTES),
            "{:?}",
            roof.missing
        );
        assert!(!roof.missing.contains(&DRAM_BYTES_PER_SECOND));
    }
}
