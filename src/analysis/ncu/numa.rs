//! ncu-ui's NUMA table (the NUMA Affinity section's "NUMA ID Table"): a row per GPU of the
//! system, read from the instances of the section's `numa__…` metrics (one per GPU, its ID the
//! instance's correlation): the GPU's name, its NUMA node by CPU affinity, its CPU affinity and
//! its NUMA node by memory affinity. ncu's details page prints it as a table of its own; the
//! window shows it the same way.

use std::borrow::Cow;

use crate::load::LoadError;
use crate::trace::ncu::{MetricInstance, MetricValue, NcuReport, NcuWorkload, ScalarValue};

/// The table's columns, as ncu prints them.
pub const HEADER: [&str; 5] = [
    "GPU ID",
    "GPU Name",
    "NUMA ID by CPU Affinity",
    "CPU Affinity",
    "NUMA ID by Memory Affinity",
];

/// The metrics of the columns after the GPU's ID.
const COLUMNS: [&str; 4] = [
    "numa__dev_display_name_all",
    "numa__id_cpu",
    "numa__cpu_affinity",
    "numa__id_memory",
];

/// The instances of metric `name` of the workload (none when it has no such metric).
fn instances<'r>(
    report: &'r NcuReport,
    w: &'r NcuWorkload,
    name: &str,
) -> Result<Cow<'r, [MetricInstance]>, LoadError> {
    let Some(id) = report.metric_id(name) else {
        return Ok(Cow::Borrowed(&[]));
    };
    if let Some(list) = w.instances_of(id) {
        return crate::load::ncu_rep::read_instances(report, list);
    }
    Ok(match report.value(w, name) {
        Some(MetricValue::List(items)) => Cow::Borrowed(items.as_slice()),
        _ => Cow::Borrowed(&[]),
    })
}

/// The table's rows: a row per GPU the workload's report names (none where it has no NUMA
/// metrics), each cell a value ([`ScalarValue::Unknown`] where a metric lacks the GPU).
pub fn rows(report: &NcuReport, w: &NcuWorkload) -> Result<Vec<[ScalarValue; 5]>, LoadError> {
    let columns = COLUMNS
        .iter()
        .map(|name| instances(report, w, name))
        .collect::<Result<Vec<_>, _>>()?;
    let cell = |c: usize, k: usize| {
        columns[c]
            .get(k)
            .map_or(ScalarValue::Unknown, |i| i.value.clone())
    };
    Ok((0..columns[0].len())
        .map(|k| {
            let id = columns[0][k]
                .correlation
                .clone()
                .unwrap_or(ScalarValue::U64(k as u64));
            [id, cell(0, k), cell(1, k), cell(2, k), cell(3, k)]
        })
        .collect())
}
