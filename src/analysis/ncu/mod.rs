//! Pure computations over an Nsight Compute report ([`crate::trace::ncu::NcuReport`]): the
//! kernel table's rows with their filters and sort ([`kernels`]), the FP32/FP64 roofline as
//! ncu's `SpeedOfLight_RooflineChart` section computes it ([`roofline`]), the hierarchical
//! rooflines (L1, L2, DRAM) as each roofline section defines them ([`hierarchical`]), throughput
//! breakdowns ([`breakdown`]), line charts ([`line_chart`]), metric groups ([`groups`]), the NUMA table ([`numa`]), which
//! metric a section entry shows for a kernel ([`shown`]) and which operations of a grid
//! ([`operation_rows`]), metric values with the units ncu-ui
//! prints them in ([`units`]); and, read beside a timeline of the same program, which timeline
//! kernel each profiled workload measured ([`join`]) and what that adds to the timeline's
//! numbers ([`facts`]: per-kernel metrics, per-name averages, what is worth optimising, DRAM
//! throughput weighted by timeline time); and two reports kernel by kernel ([`diff`]). Nothing
//! here knows about drawing.

pub mod breakdown;
pub mod diff;
pub mod facts;
pub mod groups;
pub mod hierarchical;
pub mod join;
pub mod kernels;
pub mod line_chart;
pub mod numa;
mod pairing;
pub mod roofline;
pub mod rule_text;
pub mod source;
pub mod units;

pub use join::{MatchOutcome, NcuJoin, WorkloadMatch, join};

use crate::trace::ncu::{
    BodyItemKind, MetricValue, NcuReport, NcuSection, NcuWorkload, SectionMetric,
};

/// The metrics a list-valued metric names (a throughput breakdown's `breakdown:…`, a metric
/// group's `group:…`: its value lists them, comma-separated), when `name` has `prefix` and
/// its value is text.
fn listed<'v>(
    name: &str,
    prefix: &str,
    value: &'v MetricValue,
) -> Option<impl Iterator<Item = &'v str>> {
    let (Some(_), MetricValue::Str(list)) = (name.strip_prefix(prefix), value) else {
        return None;
    };
    Some(list.split(',').map(str::trim).filter(|m| !m.is_empty()))
}

/// What ncu shows in place of the NVLink topology of a GPU with no NVLink connections.
pub const NO_NVLINK: &str = "The system does not have any NVLink connections.";

/// Whether the report says the workload's GPU has no NVLink connections (no logical links).
pub fn has_no_nvlink(report: &NcuReport, w: &NcuWorkload) -> bool {
    report.number(w, "nvlink__count_logical") == Some(0.0)
}

/// The metric a section entry shows for a workload, with the label to print: the first of its
/// options meant for the workload's architecture that the workload has (ncu 2025.3 shows
/// `lrc__average_ilc_output_sector_compression_achieved_rate.pct`, an option for SM 9.0–10.0,
/// as "L2 Compression Ratio" on an H200 though the entry's own metric was collected too), else
/// itself when meant for the architecture, else the first of its other options the workload
/// has. The one choice for the details page, the summary page and the window.
pub fn shown<'a>(
    report: &NcuReport,
    w: &'a NcuWorkload,
    m: &'a SectionMetric,
) -> Option<(&'a str, String, &'a MetricValue)> {
    let label = |l: &str, n: &str| if l.is_empty() && !m.blank_label { n } else { l }.to_string();
    let arch = report.sm_version(w);
    if let Some(arch) = arch
        && let Some(found) = m.options_for(arch).find_map(|(name, l)| {
            let v = report.value(w, name)?;
            let l = if l.is_empty() { &m.label } else { l };
            Some((name.as_str(), label(l, name), v))
        })
    {
        return Some(found);
    }
    if !m.name.is_empty()
        && arch.is_none_or(|a| m.is_for(a))
        && let Some(v) = report.value(w, &m.name)
    {
        return Some((&m.name, label(&m.label, &m.name), v));
    }
    m.options.iter().find_map(|(name, l)| {
        let v = report.value(w, name)?;
        let l = if l.is_empty() { &m.label } else { l };
        Some((name.as_str(), label(l, name), v))
    })
}

/// The rows of a section's unlabelled metric grids (an operation each, its metrics labelled
/// with it: the tensor roofline's operations by data type) that the workload has every metric
/// of, each operation once (several grids share some), in label order. A row of another
/// architecture's operations (`Op:utchmma` on an H200) is left out, as ncu's details page leaves
/// it out. The one choice for the details page and the window.
pub fn operation_rows<'a>(
    report: &NcuReport,
    w: &NcuWorkload,
    section: &'a NcuSection,
) -> Vec<Vec<&'a SectionMetric>> {
    let mut rows: Vec<Vec<&SectionMetric>> = Vec::new();
    let items = section.items_for(report.sm_version(w));
    for item in items.filter(|i| i.kind == BodyItemKind::OperationGrid) {
        for row in item.metrics.chunk_by(|a, b| a.label == b.label) {
            let seen = rows.iter().any(|r| r[0].label == row[0].label);
            if !seen && row.iter().all(|m| shown(report, w, m).is_some()) {
                rows.push(row.iter().collect());
            }
        }
    }
    rows.sort_by(|a, b| a[0].label.cmp(&b[0].label));
    rows
}
