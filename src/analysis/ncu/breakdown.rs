//! Throughput breakdowns (`breakdown:sm__throughput…`, a metric whose value is the list of the
//! metrics it is made of): each listed metric the workload has, labelled from the section's
//! template (`{UNIT}: {COMPOUND_NAME}`), largest first as ncu prints them. The details page and
//! the window's details panel both show them so.

use crate::trace::ncu::{MetricValue, NcuReport, NcuWorkload};

/// The prefix of a throughput breakdown's name.
pub const BREAKDOWN: &str = "breakdown:";

/// One metric of a breakdown: its label, name and value.
pub struct BreakdownRow<'r> {
    pub label: String,
    pub name: &'r str,
    pub value: &'r MetricValue,
}

/// The rows of breakdown `name` whose value is `list`, or `None` when `name` is no breakdown:
/// largest value first (by the value shown, two decimals, then by metric name). A metric of a
/// hardware unit whose ncu name is not known here is left out.
pub fn rows<'r>(
    report: &'r NcuReport,
    workload: &'r NcuWorkload,
    name: &str,
    value: &'r MetricValue,
    template: &str,
) -> Option<Vec<BreakdownRow<'r>>> {
    let mut rows: Vec<(i64, BreakdownRow)> = super::listed(name, BREAKDOWN, value)?
        .filter_map(|metric| {
            let value = report.value(workload, metric)?;
            let x = value.as_f64()?;
            let label = label(template, metric)?;
            let metric = report.metric_name(report.metric_id(metric)?);
            Some((
                (x * 100.0).round() as i64,
                BreakdownRow {
                    label,
                    name: metric,
                    value,
                },
            ))
        })
        .collect();
    rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(b.1.name)));
    Some(rows.into_iter().map(|(_, r)| r).collect())
}

/// A breakdown metric's label: `{UNIT}` is ncu's name of the metric's hardware unit,
/// `{COMPOUND_NAME}` its counter's words capitalised (`sm__pipe_fma_cycles_active.avg…` →
/// `SM: Pipe Fma Cycles Active`). `None` for a unit not named here.
pub fn label(template: &str, metric: &str) -> Option<String> {
    let counter = metric.split('.').next().unwrap_or(metric);
    let (unit, words) = counter.split_once("__")?;
    // ncu's names of the hardware units that appear in the throughput breakdowns.
    let unit = match unit {
        "sm" => "SM",
        "l1tex" => "L1",
        "lts" => "L2",
        "dram" | "fbpa" => "DRAM",
        "gpu" => "GPU",
        "idc" => "IDC",
        _ => return None,
    };
    let compound: Vec<String> = words
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        })
        .collect();
    Some(
        template
            .replace("{UNIT}", unit)
            .replace("{COMPOUND_NAME}", &compound.join(" ")),
    )
}
