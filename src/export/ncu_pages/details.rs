//! ncu's details page (`ncu --import R --csv --page details --print-details all`) in long
//! form: for each workload, each section in the workload's order, a row per metric of the
//! section's header (body item label empty) and of its tables and charts (labelled by the
//! item), then a row per message of the section's rules (rule name, type, description,
//! estimated speedup).
//!
//! Values print as on the details page: each in its own auto-scaled unit (`3.20` Ghz,
//! `196.38` us), whole numbers with separators, others with two decimals; an instanced metric
//! as its sum then its instances (`156,672 (59,392; 33,280)`).
//!
//! Sections lay items out side by side in containers (read flattened). Rows of a header or a
//! table print in the name order of the metrics shown; a throughput breakdown
//! (`breakdown:sm__throughput…`, whose value lists its metrics) prints a row per metric,
//! largest first; a labelled metric grid (the Workload Distribution) a row per counter and
//! rollup; an unlabelled one (the tensor roofline's operations by data type) a row per column
//! of each operation the workload has, labelled with the operation, operations in label
//! order. A section's rooflines and achieved values print together, rooflines first, each
//! group by operation ([`roofline_items`]), each item's work metrics, then traffic, each in
//! name order; a roofline's derived metrics take the unit of the counter they derive from
//! (`derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2`: inst). A section's own
//! metrics (field 6) print with the header's, with no item label. An entry a section limits
//! to some collection scopes prints for workloads profiled in one of them (a report's
//! workloads are kernel launches unless it says otherwise). An aggregate prints its instances
//! only where the section asks for them.
//!
//! A GPU with no NVLink connections gets ncu's note in place of the NVLink topology, one linked
//! to an NVSwitch another, one linked to other GPUs ncu's warning line; the NUMA
//! table prints as a table of its own (ncu's header, a row per GPU). ncu-ui's memory tables and
//! chart print a row per metric their metric group lists ([`groups`]), `n/a` for one the
//! workload lacks; the Source Counters' source metrics print with the header's, a group among
//! them a row per listed metric labelled `LABEL (METRIC)`. A header's metric meant for the
//! workload's architecture that the workload lacks prints `n/a`.
//!
//! Measured: every row of ncu's, byte for byte, for the four shared reports (`--metrics`,
//! `--set roofline`, `--set full` twice).

use std::io::{self, Write};

use super::format::{base_float, base_integer};
use super::raw::{fixed_cells, fixed_header};
use super::{UnitMode, write_row};
use crate::analysis::ncu::units::{entry_unit, named_unit, scaled};
use crate::analysis::ncu::{breakdown, groups, operation_rows, shown};
use crate::trace::ncu::{
    BodyItem, BodyItemKind, ItemOrder, MetricValue, NcuReport, NcuRule, NcuSection, NcuWorkload,
    ScalarValue, SectionMetric,
};

/// ncu's note in place of the NVLink topology of a GPU whose links go to an NVSwitch.
const NVSWITCH_NOTE: &str = "Not supported for NVSwitch.";

/// ncu's line in place of the NVLink topology of a GPU that has links to other GPUs.
const NVLINK_CSV_WARNING: &str =
    "==WARNING== NVLink body items support CSV format only if there are no metrics to print.";

const COLUMNS: [&str; 10] = [
    "Section Name",
    "Body Item Label",
    "Metric Name",
    "Metric Unit",
    "Metric Value",
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
];

/// A number in a unit chosen for it alone (auto) or its base unit.
fn number(x: f64, integer: Option<u64>, unit: &str, mode: UnitMode) -> (String, String) {
    if mode == UnitMode::Base || unit.is_empty() {
        let text = integer.map(base_integer).unwrap_or_else(|| base_float(x));
        return (unit.to_string(), text);
    }
    let (shown, factor) = scaled(unit, x.abs());
    let text = match integer {
        Some(i) if factor == 1.0 => base_integer(i),
        _ => base_float(x / factor),
    };
    (shown, text)
}

/// A value's unit and text on the details page.
pub fn value_text(v: &MetricValue, unit: &str, mode: UnitMode) -> (String, String) {
    match v {
        MetricValue::Str(s) => (unit.to_string(), s.clone()),
        MetricValue::U32(i) => number(f64::from(*i), Some(u64::from(*i)), unit, mode),
        MetricValue::U64(i) => number(*i as f64, Some(*i), unit, mode),
        MetricValue::F32(x) => number(f64::from(*x), None, unit, mode),
        MetricValue::F64(x) => number(*x, None, unit, mode),
        MetricValue::List(items) if items.is_empty() => (unit.to_string(), "no data".into()),
        MetricValue::List(items) => {
            let values: Vec<f64> = items.iter().filter_map(|i| i.value.as_f64()).collect();
            let sum: f64 = values.iter().sum();
            let (shown, factor) = match mode {
                UnitMode::Auto if !unit.is_empty() => scaled(unit, sum.abs()),
                _ => (unit.to_string(), 1.0),
            };
            let f = |x: f64| base_float(x / factor);
            let parts: Vec<String> = values.iter().map(|&x| f(x)).collect();
            (shown, format!("{} ({})", f(sum), parts.join("; ")))
        }
        MetricValue::Unknown => (unit.to_string(), String::new()),
    }
}

/// A metric row's label, unit and value text, as the details page prints them.
pub type Entry = (String, String, String);

/// Turns a section's metrics into the rows the details page prints for them (a breakdown or a
/// metric group prints several).
pub struct Rows<'a> {
    pub report: &'a NcuReport,
    pub mode: UnitMode,
}

impl Rows<'_> {
    /// The rows of one metric of a section (`item`: the body item it is drawn in, if any).
    pub fn metric(
        &self,
        w: &NcuWorkload,
        item: Option<&BodyItem>,
        m: &SectionMetric,
        emit: &mut dyn FnMut(Entry) -> io::Result<()>,
    ) -> io::Result<()> {
        let Some((name, label, value)) = shown(self.report, w, m) else {
            return Ok(());
        };
        if let Some(rows) = breakdown::rows(self.report, w, name, value, &m.label) {
            for row in rows {
                let unit = named_unit(self.report, row.name);
                emit(self.entry(w, (row.name, row.label, row.value, false), unit)?)?;
            }
            return Ok(());
        }
        if let Some(rows) = groups::rows(self.report, w, name, value, &m.label) {
            let missing = MetricValue::Str(groups::NOT_AVAILABLE.into());
            for row in rows {
                let entry = (row.name, row.label, row.value.unwrap_or(&missing), false);
                emit(self.entry(w, entry, row.unit)?)?;
            }
            return Ok(());
        }
        let in_roofline = item.is_some_and(|i| i.kind == BodyItemKind::Roofline);
        let unit = entry_unit(self.report, name, &m.unit, in_roofline);
        emit(self.entry(w, (name, label, value, m.show_instances), unit)?)
    }

    /// One row: the label, the unit the value prints in and the value.
    fn entry(
        &self,
        w: &NcuWorkload,
        (name, label, value, show_instances): (&str, String, &MetricValue, bool),
        unit: String,
    ) -> io::Result<Entry> {
        let (unit, mut text) = value_text(value, &unit, self.mode);
        if let Some(list) = self
            .report
            .metric_id(name)
            .and_then(|id| w.instances_of(id))
            .filter(|_| show_instances)
        {
            let instances = crate::load::ncu_rep::read_instances(self.report, list)
                .map_err(|e| io::Error::other(e.to_string()))?;
            text = with_instances(value, &instances, &unit, self.mode, text);
        }
        Ok((label, unit, text))
    }
}

struct Writer<'a> {
    rows: Rows<'a>,
    fixed: Vec<String>,
    with_rules: bool,
}

impl Writer<'_> {
    fn metric_row(
        &self,
        out: &mut dyn Write,
        w: &NcuWorkload,
        section: &NcuSection,
        item: Option<&BodyItem>,
        m: &SectionMetric,
    ) -> io::Result<()> {
        let item_label = item.map_or("", |i| i.label.as_str());
        let mut emit = |(label, unit, text): Entry| {
            let mut row = self.fixed.clone();
            row.extend([
                section.display_name.clone(),
                item_label.to_string(),
                label,
                unit,
                text,
            ]);
            if !self.with_rules {
                return write_row(out, &row);
            }
            // With rule columns, ncu ends a metric row with one more, unquoted, empty field.
            let mut line = Vec::new();
            write_row(&mut line, &row)?;
            line.pop();
            line.extend_from_slice(b",\n");
            out.write_all(&line)
        };
        if shown(self.rows.report, w, m).is_none() {
            // Only a header's metric the workload lacks gets here (`header_metrics`).
            let label = if m.label.is_empty() {
                &m.name
            } else {
                &m.label
            };
            let na = crate::analysis::ncu::groups::NOT_AVAILABLE;
            return emit((label.clone(), String::new(), na.to_string()));
        }
        self.rows.metric(w, item, m, &mut emit)
    }

    fn rule_rows(&self, out: &mut dyn Write, rule: &NcuRule) -> io::Result<()> {
        for m in &rule.messages {
            let mut row = self.fixed.clone();
            let (kind, percent) = match m.speedup {
                Some(s) => (s.kind_label().to_string(), significant(s.percent, 4)),
                None => (String::new(), String::new()),
            };
            row.extend([
                rule.section.clone(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                rule.identifier.clone(),
                // A message of no type (the file's 0: ncu 2022's HighPipeUtilization) has an
                // empty type on the CSV page.
                if m.kind == 0 { "" } else { rule_type(m.kind) }.to_string(),
                plain_text(&m.text),
                kind,
                percent,
            ]);
            write_row(out, &row)?;
        }
        Ok(())
    }
}

/// A rule message's type as the details page prints it (the file's 1, "ok", prints as INF).
pub fn rule_type(kind: u32) -> &'static str {
    match kind {
        2 => "WRN",
        3 => "ERR",
        4 => "OPT",
        _ => "INF",
    }
}

/// A rule message without ncu-ui's link markup: `@section:ID:TEXT@` → `TEXT`,
/// `@url:TEXT:URL@` → `TEXT (URL)`; any other `@kind:…@` keeps its last part.
pub fn plain_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('@') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('@') else { break };
        let inner = &after[..end];
        let Some((kind, body)) = inner.split_once(':') else {
            out.push_str(&rest[..start + 1]);
            rest = after;
            continue;
        };
        if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_alphabetic()) {
            out.push_str(&rest[..start + 1]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        match kind {
            "url" => match body.split_once(':') {
                Some((label, url)) => out.push_str(&format!("{label} ({url})")),
                None => out.push_str(body),
            },
            _ => out.push_str(body.rsplit_once(':').map(|(_, t)| t).unwrap_or(body)),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// An aggregate printed with its instances: `SUM (I1; I2; …)`, in the aggregate's unit.
fn with_instances(
    value: &MetricValue,
    instances: &[crate::trace::ncu::MetricInstance],
    unit: &str,
    mode: UnitMode,
    text: String,
) -> String {
    let Some(total) = value.as_f64() else {
        return text;
    };
    let factor = match mode {
        UnitMode::Auto if !unit.is_empty() => scaled(unit, total.abs()).1,
        _ => 1.0,
    };
    let parts: Vec<String> = instances
        .iter()
        .filter_map(|i| match &i.value {
            ScalarValue::Str(s) => Some(s.clone()),
            v => v.as_f64().map(|x| base_float(x / factor)),
        })
        .collect();
    format!("{text} ({})", parts.join("; "))
}

/// A cell of a table of its own (the NUMA table): text as it is, a number as the details page
/// writes it in its base unit.
fn cell_text(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Str(s) => s.clone(),
        ScalarValue::U32(i) => base_integer(u64::from(*i)),
        ScalarValue::U64(i) => base_integer(*i),
        v => v.as_f64().map(base_float).unwrap_or_default(),
    }
}

/// A section's rooflines and achieved values as ncu prints them: each label once (the tensor
/// roofline section draws the same rooflines in several charts), none the workload lacks a
/// metric of (one for another architecture's operations: `Op:utchmma` on an H200); the
/// rooflines before the achieved values, each group by the operation its label names in
/// parentheses (`DRAM Roofline (Src:fp16)`), in the charts' order within an operation.
fn roofline_items<'a>(
    report: &NcuReport,
    w: &NcuWorkload,
    section: &'a NcuSection,
) -> Vec<&'a BodyItem> {
    let mut items: Vec<&BodyItem> = Vec::new();
    let all = section.items_for(report.sm_version(w));
    for item in all.filter(|i| i.kind == BodyItemKind::Roofline) {
        if !items.iter().any(|i| i.label == item.label)
            && item.metrics.iter().all(|m| shown(report, w, m).is_some())
        {
            items.push(item);
        }
    }
    let operation = |label: &'a str| {
        label
            .rsplit_once('(')
            .and_then(|(_, op)| op.strip_suffix(')'))
            .unwrap_or("")
    };
    items.sort_by(|a, b| (a.achieved, operation(&a.label)).cmp(&(b.achieved, operation(&b.label))));
    items
}

/// An item's metrics in the order ncu prints them: by name, then, where the item sorts by
/// value, by the value as printed (`0.01` and `0.014` tie, and keep name order).
fn in_order<'a>(
    report: &NcuReport,
    w: &NcuWorkload,
    item: &'a BodyItem,
    mode: UnitMode,
) -> Vec<&'a SectionMetric> {
    let metrics = by_name(report, w, item.metrics.iter());
    if item.order == ItemOrder::ByName {
        return metrics;
    }
    let printed = |m: &SectionMetric| {
        let (name, _, v) = shown(report, w, m)?;
        let (_, text) = value_text(v, &entry_unit(report, name, &m.unit, false), mode);
        text.replace(',', "").parse::<f64>().ok().or(v.as_f64())
    };
    let mut keyed: Vec<(f64, &SectionMetric)> = metrics
        .into_iter()
        .map(|m| (printed(m).unwrap_or(f64::NEG_INFINITY), m))
        .collect();
    // Stable sorts: ties keep name order.
    if item.order == ItemOrder::ValueDescending {
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    } else {
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// A section's header metrics for a workload, in the order ncu prints them. The section's own
/// metrics (field 6: collected, not drawn) print like the header's, with no item label, when
/// meant for the workload's collection scope (SpeedOfLight's "Waves Per SM" is for kernel
/// launches, not a graph-profiling session's workloads). A metric the header shows (the command
/// line's metrics are both) prints once.
fn header_metrics<'a>(
    report: &NcuReport,
    w: &NcuWorkload,
    section: &'a NcuSection,
) -> Vec<&'a SectionMetric> {
    let extra = section
        .extra_metrics
        .iter()
        .filter(|m| m.is_for_scope(w.scope) && !section.header.iter().any(|h| h.name == m.name));
    let header = section.header.iter().filter(|m| m.is_for_scope(w.scope));
    let mut named: Vec<(&str, &SectionMetric)> = header
        .chain(extra)
        .filter_map(|m| match shown(report, w, m) {
            Some((name, _, _)) => Some((name, m)),
            None => missing_metric(report, w, m).then_some((m.name.as_str(), m)),
        })
        .collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, m)| m).collect()
}

/// Whether `m`, a header's metric meant for the workload's architecture, is one the workload has
/// no value of: ncu's details page prints it with the value `n/a` (`Derivative Avg.
/// Predicated-On Threads Executed` of a `--set detailed` report, which does not collect it; the
/// `mcc__` cycles of ncu 2025.1's Workload Distribution, [`crate::load::ncu_rep`]'s filters),
/// where it leaves out a table's metric a workload lacks.
fn missing_metric(report: &NcuReport, w: &NcuWorkload, m: &SectionMetric) -> bool {
    !m.name.is_empty()
        && report.sm_version(w).is_none_or(|arch| m.is_for(arch))
        && shown(report, w, m).is_none()
}

/// Metrics in the order ncu prints a table's or a header's: by the name of the metric shown
/// (the alternative chosen for the workload).
pub fn by_name<'a>(
    report: &NcuReport,
    w: &NcuWorkload,
    metrics: impl Iterator<Item = &'a SectionMetric>,
) -> Vec<&'a SectionMetric> {
    let mut named: Vec<(&str, &SectionMetric)> = metrics
        .filter_map(|m| shown(report, w, m).map(|(name, _, _)| (name, m)))
        .collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, m)| m).collect()
}

/// `x` with `digits` significant digits, trailing zeros dropped (C's `%.4g` for the
/// magnitudes of a speedup).
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// Writes the details page for the workloads `ids` names (all when `None`).
pub fn write(
    report: &NcuReport,
    mode: UnitMode,
    ids: Option<&[u32]>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let with_nvtx = report.workloads.iter().any(|w| w.nvtx.has_ranges());
    // ncu leaves the rule columns out of a report with no rule results.
    let with_rules = report.workloads.iter().any(|w| !w.rules.is_empty());
    let columns = if with_rules {
        &COLUMNS[..]
    } else {
        &COLUMNS[..5]
    };
    let mut header = fixed_header(with_nvtx);
    header.extend(columns.iter().map(|c| c.to_string()));
    write_row(out, &header)?;
    let names = super::names::KernelNames::of(report);
    for w in &report.workloads {
        if ids.is_some_and(|ids| !ids.contains(&w.id)) {
            continue;
        }
        let writer = Writer {
            rows: Rows { report, mode },
            fixed: fixed_cells(report, &names, w, with_nvtx),
            with_rules,
        };
        let mut rules_done = vec![false; w.rules.len()];
        let arch = report.sm_version(w);
        for section in report.sections_in_order(w) {
            for m in header_metrics(report, w, section) {
                writer.metric_row(out, w, section, None, m)?;
            }
            let mut rooflines = Some(roofline_items(report, w, section));
            for body in &section.bodies {
                for item in body.items.iter().filter(|i| i.is_for(arch)) {
                    match item.kind {
                        BodyItemKind::Other | BodyItemKind::OperationGrid => {}
                        // With no NVLink connections, the topology is a note on its own line
                        // and a blank one.
                        BodyItemKind::NvlinkTopology => {
                            if crate::analysis::ncu::has_no_nvlink(report, w) {
                                writeln!(out, "    {}\n", crate::analysis::ncu::NO_NVLINK)?;
                            } else if report.number(w, "nvlink__is_nvswitch_connected") == Some(1.0)
                            {
                                writeln!(out, "    {NVSWITCH_NOTE}\n")?;
                            } else if report
                                .number(w, "nvlink__count_logical")
                                .is_some_and(|n| n > 0.0)
                            {
                                // A GPU with links: ncu cannot draw them in CSV and says so in
                                // its output, on a line of its own.
                                writeln!(out, "{NVLINK_CSV_WARNING}")?;
                            }
                        }
                        // A table of its own: ncu's header, then a row per GPU.
                        BodyItemKind::NumaTable => {
                            let rows = crate::analysis::ncu::numa::rows(report, w)
                                .map_err(|e| io::Error::other(e.to_string()))?;
                            if !rows.is_empty() {
                                write_row(out, &crate::analysis::ncu::numa::HEADER)?;
                            }
                            for row in rows {
                                write_row(out, &row.map(|v| cell_text(&v)))?;
                            }
                        }
                        // The section's rooflines print together where the first is.
                        BodyItemKind::Roofline => {
                            for item in rooflines.take().into_iter().flatten() {
                                for m in &item.metrics {
                                    writer.metric_row(out, w, section, Some(item), m)?;
                                }
                            }
                        }
                        _ => {
                            for m in in_order(report, w, item, mode) {
                                writer.metric_row(out, w, section, Some(item), m)?;
                            }
                        }
                    }
                }
            }
            for row in operation_rows(report, w, section) {
                for m in row {
                    writer.metric_row(out, w, section, None, m)?;
                }
            }
            for (i, rule) in w.rules.iter().enumerate() {
                if rule.section == section.identifier && !rules_done[i] {
                    rules_done[i] = true;
                    writer.rule_rows(out, rule)?;
                }
            }
        }
        for (i, rule) in w.rules.iter().enumerate() {
            if !rules_done[i] {
                writer.rule_rows(out, rule)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speedups_keep_four_significant_digits() {
        assert_eq!(significant(97.058_82, 4), "97.06");
        assert_eq!(significant(0.488_12, 4), "0.4881");
        assert_eq!(significant(16.2, 4), "16.2");
        assert_eq!(significant(100.0, 4), "100");
    }

    #[test]
    fn rule_markup_becomes_text() {
        assert_eq!(
            plain_text(
                "Check the @section:LaunchStats:Launch Statistics@ and @url:Guide:https://x.y/a#b@."
            ),
            "Check the Launch Statistics and Guide (https://x.y/a#b)."
        );
        assert_eq!(plain_text("50% @ 3 GHz"), "50% @ 3 GHz");
    }
}
