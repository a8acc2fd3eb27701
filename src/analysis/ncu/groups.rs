//! Metric groups ([`GROUP_PREFIX`]`…`): a metric whose value lists, comma-separated, the
//! metrics of a view that its section does not name — ncu-ui's memory tables and chart
//! (`group:memory__shared_table`, …, `group:memory__chart`: fixed lists in ncu, which it writes
//! into each report) and the Source Counters' sampled warp stall reasons
//! (`group:smsp__pcsamp_warp_stall_reasons`). ncu's details page prints a row per listed
//! metric, in the list's order, its value `n/a` where the workload lacks it (a metric of
//! another GPU: `ctc__rx_bytes_data_user.sum` on an H200). The details page and the window
//! both show them so.

use crate::trace::ncu::{GROUP_PREFIX, MetricValue, NcuReport, NcuWorkload};

/// What ncu prints for a listed metric the workload lacks.
pub const NOT_AVAILABLE: &str = "n/a";

/// One listed metric: its name, and its value where the workload has it.
pub struct GroupRow<'r> {
    pub name: &'r str,
    pub value: Option<&'r MetricValue>,
}

/// The rows of group `name` whose value is `list`, or `None` when `name` is no group.
pub fn rows<'r>(
    report: &'r NcuReport,
    workload: &'r NcuWorkload,
    name: &str,
    value: &'r MetricValue,
) -> Option<Vec<GroupRow<'r>>> {
    let (Some(_), MetricValue::Str(list)) = (name.strip_prefix(GROUP_PREFIX), value) else {
        return None;
    };
    Some(
        list.split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(|m| GroupRow {
                name: m,
                value: report.value(workload, m),
            })
            .collect(),
    )
}
