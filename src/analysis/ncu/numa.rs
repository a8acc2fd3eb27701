//! ncu-ui's NUMA table (the NUMA Affinity section's "NUMA ID Table"): a row per GPU of the
//! system, read from the instances of the section's `numa__…` metrics (one per GPU, its ID the
//! instance's correlation): the GPU's name, its NUMA node by CPU affinity, its CPU affinity and
//! its NUMA node by memory affinity. ncu's details page prints it as a table of its own; the
//! window shows it the same way.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::load::LoadError;
use crate::trace::ncu::ScalarValue::Unknown;
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

/// The table's rows: a row per GPU any of the metrics names (by the instances' correlation,
/// else their place in the list), in the order the GPUs first appear; none where the workload
/// has no NUMA metrics. A cell a metric lacks the GPU of is [`ScalarValue::Unknown`].
pub fn rows(report: &NcuReport, w: &NcuWorkload) -> Result<Vec<[ScalarValue; 5]>, LoadError> {
    let columns = COLUMNS
        .iter()
        .map(|name| instances(report, w, name))
        .collect::<Result<Vec<_>, _>>()?;
    // A GPU's key: its instances' correlation, else their place in the list; compared by its
    // text (correlations are numbers or names), each list read once.
    let key =
        |k: usize, i: &MetricInstance| i.correlation.clone().unwrap_or(ScalarValue::U64(k as u64));
    let mut row_of: HashMap<String, usize> = HashMap::new();
    let mut table: Vec<[ScalarValue; 5]> = Vec::new();
    for (c, column) in columns.iter().enumerate() {
        for (k, i) in column.iter().enumerate() {
            let id = key(k, i);
            let r = *row_of.entry(format!("{id:?}")).or_insert_with(|| {
                table.push([id, Unknown, Unknown, Unknown, Unknown]);
                table.len() - 1
            });
            if table[r][c + 1] == Unknown {
                table[r][c + 1] = i.value.clone();
            }
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(gpu: u64, value: ScalarValue) -> MetricInstance {
        MetricInstance {
            correlation: Some(ScalarValue::U64(gpu)),
            value,
        }
    }

    #[test]
    fn cells_follow_their_gpu_whatever_order_or_gaps_the_lists_have() {
        let mut report = NcuReport::default();
        let mut w = NcuWorkload::default();
        let list = |items: Vec<MetricInstance>| MetricValue::List(items);
        let text = |s: &str| ScalarValue::Str(s.into());
        let values = [
            (
                "numa__dev_display_name_all",
                list(vec![instance(1, text("B")), instance(0, text("A"))]),
            ),
            ("numa__id_cpu", list(vec![instance(0, ScalarValue::U32(0))])),
            (
                "numa__cpu_affinity",
                list(vec![instance(0, text("0-15")), instance(2, text("32-47"))]),
            ),
        ];
        for (name, v) in values {
            let id = report.intern_metric(name);
            w.metrics.push((id, v));
        }
        w.metrics.sort_by_key(|(id, _)| *id);
        let rows = rows(&report, &w).unwrap_or_default();
        let gpus: Vec<&ScalarValue> = rows.iter().map(|r| &r[0]).collect();
        assert_eq!(
            gpus,
            [
                &ScalarValue::U64(1),
                &ScalarValue::U64(0),
                &ScalarValue::U64(2)
            ]
        );
        assert_eq!(rows[1][1], text("A"));
        assert_eq!(rows[1][2], ScalarValue::U32(0));
        assert_eq!(rows[1][3], text("0-15"));
        assert_eq!(rows[0][2], ScalarValue::Unknown);
        assert_eq!(rows[2][1], ScalarValue::Unknown);
        assert_eq!(rows[2][3], text("32-47"));
        assert_eq!(rows[0][4], ScalarValue::Unknown);
    }

    #[test]
    fn no_numa_metrics_no_rows() {
        let report = NcuReport::default();
        let w = NcuWorkload::default();
        assert!(rows(&report, &w).is_ok_and(|r| r.is_empty()));
    }
}
