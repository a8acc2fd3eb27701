//! Metric groups ([`GROUP_PREFIX`]`…`): a metric whose value lists, comma-separated, the
//! metrics of a view that its section does not name — ncu-ui's memory tables and chart
//! (`group:memory__shared_table`, …, `group:memory__chart`: fixed lists in ncu, which it writes
//! into each report) and the Source Counters' sampled warp stall reasons
//! (`group:smsp__pcsamp_warp_stall_reasons`). ncu's details page prints a row per listed
//! metric, in the list's order, named by the metric (`LABEL (METRIC)` where the section's
//! entry has a label), its value `n/a` where the workload lacks it (a metric of another GPU:
//! `ctc__rx_bytes_data_user.sum` on an H200). The window shows the groups of body items (the
//! memory tables and chart, the warp stall chart) the same way.

use super::units::entry_unit;
use crate::trace::ncu::{GROUP_PREFIX, MetricValue, NcuReport, NcuWorkload};

/// What ncu prints for a listed metric the workload lacks.
pub const NOT_AVAILABLE: &str = "n/a";

/// One listed metric: the name its row shows, the metric's name, and its value and unit where
/// the workload has it (the unit the details page prints it in, [`entry_unit`]).
pub struct GroupRow<'r> {
    pub label: String,
    pub name: &'r str,
    pub value: Option<&'r MetricValue>,
    pub unit: String,
}

/// The rows of group `name` whose value is `list`, shown by an entry labelled `entry_label`, or
/// `None` when `name` is no group (or its value no list).
pub fn rows<'r>(
    report: &'r NcuReport,
    workload: &'r NcuWorkload,
    name: &str,
    value: &'r MetricValue,
    entry_label: &str,
) -> Option<Vec<GroupRow<'r>>> {
    let listed = super::listed(name, GROUP_PREFIX, value)?;
    Some(
        listed
            .map(|m| {
                let value = report.value(workload, m);
                GroupRow {
                    label: if entry_label.is_empty() || entry_label == name {
                        m.to_string()
                    } else {
                        format!("{entry_label} ({m})")
                    },
                    name: m,
                    value,
                    unit: value.map_or_else(String::new, |_| entry_unit(report, m, "", false)),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report_with(values: &[(&str, MetricValue)]) -> (NcuReport, NcuWorkload) {
        let mut report = NcuReport::default();
        let mut w = NcuWorkload::default();
        for (name, v) in values {
            let id = report.intern_metric(name);
            w.metrics.push((id, v.clone()));
        }
        w.metrics.sort_by_key(|(id, _)| *id);
        (report, w)
    }

    #[test]
    fn a_group_lists_its_metrics_in_order_with_na_for_missing_ones() {
        let list = MetricValue::Str("b.sum, a.sum,,missing.sum".into());
        let (report, w) = report_with(&[
            ("group:t", list.clone()),
            ("a.sum", MetricValue::U64(1)),
            ("b.sum", MetricValue::F64(2.5)),
        ]);
        let rows = rows(&report, &w, "group:t", &list, "").expect("a group");
        let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
        assert_eq!(names, ["b.sum", "a.sum", "missing.sum"]);
        assert_eq!(rows[0].value, Some(&MetricValue::F64(2.5)));
        assert!(rows[2].value.is_none());
        assert_eq!(rows[2].label, "missing.sum");
        let labelled = rows_labelled(&report, &w, &list);
        assert_eq!(labelled[1], "Stalls (a.sum)");
    }

    fn rows_labelled(report: &NcuReport, w: &NcuWorkload, list: &MetricValue) -> Vec<String> {
        rows(report, w, "group:t", list, "Stalls")
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.label)
            .collect()
    }

    #[test]
    fn a_group_that_is_no_list_or_no_group_gives_none() {
        let (report, w) = report_with(&[]);
        assert!(rows(&report, &w, "group:t", &MetricValue::U32(3), "").is_none());
        assert!(
            rows(
                &report,
                &w,
                "breakdown:x",
                &MetricValue::Str("a".into()),
                ""
            )
            .is_none()
        );
        let nothing = MetricValue::Str(String::new());
        let empty = rows(&report, &w, "group:t", &nothing, "");
        assert_eq!(empty.map(|r| r.len()), Some(0));
    }
}
