//! The hierarchical rooflines of a kernel (ncu's "GPU Speed Of Light Hierarchical Roofline
//! Chart (Single Precision)", "… (Double Precision)", "… (Half Precision)", "… (Tensor Core)"):
//! a ceiling per memory level (DRAM, L2, L1) and the kernel's achieved point at each level, the
//! same work over that level's traffic. Each quantity is computed as the section defines it
//! ([`RooflineSpec`]: a metric's value, or metrics counted per cycle summed and multiplied by a
//! frequency), from the metrics the report holds for the kernel: no metric name is known here.

use super::shown;
use crate::trace::ncu::{
    BodyItemKind, NcuReport, NcuSection, NcuWorkload, RooflineQuantity, RooflineSpec,
};

/// A ceiling of one level: the peak work, and the peak traffic of the level.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelCeiling {
    /// "DRAM Roofline", "L2 Roofline", "L1 Roofline (Global/Local)" …
    pub label: String,
    /// Operations per second.
    pub peak_work: f64,
    /// Bytes per second.
    pub peak_traffic: f64,
}

impl LevelCeiling {
    /// The roof at `intensity` (operations per byte).
    pub fn attainable(&self, intensity: f64) -> f64 {
        (self.peak_traffic * intensity).min(self.peak_work)
    }

    /// Where the memory roof meets the compute roof (operations per byte).
    pub fn ridge(&self) -> f64 {
        self.peak_work / self.peak_traffic
    }
}

/// The kernel's achieved point at one level.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelPoint {
    /// "DRAM Achieved Value", "L2 Achieved Value" …
    pub label: String,
    /// Operations per second.
    pub work: f64,
    /// Bytes per second moved at the level.
    pub traffic: f64,
}

impl LevelPoint {
    /// Operations per byte.
    pub fn intensity(&self) -> f64 {
        self.work / self.traffic
    }

    /// Whether the point has a place on log–log axes.
    pub fn is_drawable(&self) -> bool {
        self.work > 0.0 && self.traffic > 0.0 && self.work.is_finite() && self.traffic.is_finite()
    }
}

/// One hierarchical roofline chart of a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct HierarchicalRoofline {
    /// The section's name.
    pub title: String,
    pub ceilings: Vec<LevelCeiling>,
    pub points: Vec<LevelPoint>,
}

impl HierarchicalRoofline {
    /// The ceiling of the level a point is at: the ceiling whose label starts with the same
    /// level name as the point's ("L2 Achieved Value" → "L2 Roofline").
    pub fn ceiling_of(&self, point: &LevelPoint) -> Option<&LevelCeiling> {
        let level = |label: &str| {
            label
                .split(" Roofline")
                .next()
                .and_then(|l| l.split(" Achieved Value").next())
                .unwrap_or(label)
                .to_string()
        };
        let want = level(&point.label);
        self.ceilings.iter().find(|c| level(&c.label) == want)
    }
}

/// The roofline chart `section` draws for `w`: its ceilings and achieved values that the
/// kernel has every metric of (another architecture's tensor operations are left out), each
/// label once; `None` when the section has no roofline or the kernel none of its metrics.
pub fn of_section(
    report: &NcuReport,
    w: &NcuWorkload,
    section: &NcuSection,
) -> Option<HierarchicalRoofline> {
    let mut chart = HierarchicalRoofline {
        title: section.display_name.clone(),
        ceilings: Vec::new(),
        points: Vec::new(),
    };
    for item in section.items_for(report.sm_version(w)) {
        let (BodyItemKind::Roofline, Some(spec)) = (item.kind, &item.roofline) else {
            continue;
        };
        let Some((work, traffic)) = spec_values(report, w, spec) else {
            continue;
        };
        if item.achieved {
            if !chart.points.iter().any(|p| p.label == item.label) {
                chart.points.push(LevelPoint {
                    label: item.label.clone(),
                    work,
                    traffic,
                });
            }
        } else if !chart.ceilings.iter().any(|c| c.label == item.label) {
            chart.ceilings.push(LevelCeiling {
                label: item.label.clone(),
                peak_work: work,
                peak_traffic: traffic,
            });
        }
    }
    (!chart.ceilings.is_empty() || !chart.points.is_empty()).then_some(chart)
}

/// Every roofline chart of the kernel, in the order its sections show.
pub fn of_workload(report: &NcuReport, w: &NcuWorkload) -> Vec<HierarchicalRoofline> {
    report
        .sections_in_order(w)
        .into_iter()
        .filter_map(|s| of_section(report, w, s))
        .collect()
}

/// `(work, traffic)` of a roofline item, or `None` when the kernel lacks one of its metrics.
pub fn spec_values(report: &NcuReport, w: &NcuWorkload, spec: &RooflineSpec) -> Option<(f64, f64)> {
    Some((
        quantity(report, w, &spec.work)?,
        quantity(report, w, &spec.traffic)?,
    ))
}

fn quantity(report: &NcuReport, w: &NcuWorkload, q: &RooflineQuantity) -> Option<f64> {
    if q.metrics.is_empty() {
        return None;
    }
    let mut sum = 0.0;
    for m in &q.metrics {
        sum += shown(report, w, m)?.2.as_f64()?;
    }
    match &q.frequency {
        Some(f) => Some(sum * shown(report, w, f)?.2.as_f64()?),
        None => Some(sum),
    }
}
