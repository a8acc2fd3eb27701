//! One kernel's details as ncu-ui's Details page shows them: each section the workload has,
//! in the section's order, collapsible, with its header metrics in two columns of label, value
//! and unit, its body items (tables and charts as tables of label and value), and the results
//! of the section's rules (a type badge, the title, the message and the estimated speedup).
//! With a baseline, every metric gets the baseline's value and the change in percent. Links lead
//! to the instructions behind a section or rule ([`DetailsControl::open_source`]): Warp State
//! Statistics to the Source view sorted by the largest stall reason, an uncoalesced access rule
//! to it sorted by the access's excessive sectors or wavefronts.
//!
//! [`workload_details`] is a widget of its own so that other views (the timeline's details of a
//! kernel joined to a report) can show the same page.

use egui::{Color32, RichText, Ui};

use super::source_model::{GLOBAL_EXCESS_LABEL, SHARED_EXCESS_LABEL, SortRequest};
use crate::analysis::ncu::{breakdown, groups, numa, operation_rows, rule_text, shown, units};
use crate::trace::ncu::{
    BodyItem, BodyItemKind, GROUP_PREFIX, NcuReport, NcuRule, NcuSection, NcuWorkload, RuleMessage,
    SectionMetric,
};

/// The kernel the details compare with.
#[derive(Clone, Copy)]
pub struct BaselineRef<'a> {
    pub report: &'a NcuReport,
    pub workload: &'a NcuWorkload,
    /// How the baseline is named in the column's tooltip (`ID 3 · report.ncu-rep`).
    pub label: &'a str,
}

/// What the details page is asked to do this frame, from outside it: the kernel table's top
/// rule cell, the page's "Collapse all" and "Expand all" ([`collapse_buttons`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DetailsControl {
    /// Open (true) or close (false) every section, once.
    pub set_all_open: Option<bool>,
    /// Open this section (by identifier) and scroll to it, once.
    pub focus: Option<String>,
    /// Asked from the page: the kernel's Source view, sorted as this says.
    pub open_source: Option<SortRequest>,
}

/// Draws the details of `workload` of `report`; with `baseline`, each metric's baseline value
/// and change beside it. Sections keep their open or closed state from kernel to kernel (by
/// section); a closed one's header still shows its rules' badges and best estimated speedup.
pub fn workload_details(
    ui: &mut Ui,
    report: &NcuReport,
    workload: &NcuWorkload,
    baseline: Option<BaselineRef<'_>>,
    control: &mut DetailsControl,
) {
    let sections = report.sections_in_order(workload);
    if sections.is_empty() {
        ui.weak("This report has no sections for the kernel (made with --metrics only): see Raw.");
    }
    let set_all = control.set_all_open.take();
    let focus = control.focus.take();
    for section in sections {
        let title = if section.display_name.is_empty() {
            &section.identifier
        } else {
            &section.display_name
        };
        let id = ui.make_persistent_id(("ncu_section", &section.identifier));
        let mut state =
            egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true);
        let focused = focus.as_deref() == Some(section.identifier.as_str());
        if let Some(open) = set_all {
            state.set_open(open);
        }
        if focused {
            state.set_open(true);
        }
        let header = state.show_header(ui, |ui| {
            let r = ui
                .add(egui::Label::new(RichText::new(title).strong()).sense(egui::Sense::click()))
                .on_hover_text(&section.description);
            rule_badges(ui, workload, section);
            r
        });
        let open_source = &mut control.open_source;
        let (toggle, header_inner, _) = header.body(|ui| {
            section_body(ui, report, workload, section, baseline, open_source);
        });
        // A click on the title toggles, as on a CollapsingHeader.
        if header_inner.inner.clicked() {
            let mut state = egui::collapsing_header::CollapsingState::load_with_default_open(
                ui.ctx(),
                id,
                true,
            );
            state.toggle(ui);
            state.store(ui.ctx());
        }
        if focused {
            toggle.scroll_to_me(Some(egui::Align::TOP));
        }
    }
}

/// "Collapse all" and "Expand all", for the row above the (scrolling) details.
pub fn collapse_buttons(ui: &mut Ui, control: &mut DetailsControl) {
    if ui.button("Collapse all").clicked() {
        control.set_all_open = Some(false);
    }
    if ui.button("Expand all").clicked() {
        control.set_all_open = Some(true);
    }
}

/// The badges of a section's rules on its header: each message type once, and the best
/// estimated speedup (ncu-ui shows them on a collapsed section).
fn rule_badges(ui: &mut Ui, workload: &NcuWorkload, section: &NcuSection) {
    let mut kinds: Vec<&RuleMessage> = Vec::new();
    let mut best: Option<f64> = None;
    for rule in workload
        .rules
        .iter()
        .filter(|r| r.section == section.identifier)
    {
        for m in &rule.messages {
            if !kinds.iter().any(|k| k.kind == m.kind) {
                kinds.push(m);
            }
        }
        if let Some(s) = rule.speedup {
            best = Some(best.map_or(s.percent, |b: f64| b.max(s.percent)));
        }
    }
    for m in kinds {
        ui.label(
            RichText::new(m.kind_label())
                .monospace()
                .small()
                .color(Color32::WHITE)
                .background_color(badge_colour(m)),
        );
    }
    if let Some(b) = best {
        ui.weak(format!("est. speedup {b:.2}%"));
    }
}

fn section_body(
    ui: &mut Ui,
    report: &NcuReport,
    workload: &NcuWorkload,
    section: &NcuSection,
    baseline: Option<BaselineRef<'_>>,
    open_source: &mut Option<SortRequest>,
) {
    if section.identifier == "WarpStateStats"
        && ui
            .link("Source: the instructions behind the largest stall reason")
            .on_hover_text(
                "Open the Source view sorted by the sampled stall reason with the most samples",
            )
            .clicked()
    {
        *open_source = Some(SortRequest::LargestStall);
    }
    if !section.header.is_empty() {
        metric_table(
            ui,
            ("header", &section.identifier),
            report,
            workload,
            section.header.iter().collect(),
            baseline,
            (true, false),
        );
    }
    if section.has_item(BodyItemKind::NvlinkTopology)
        && crate::analysis::ncu::has_no_nvlink(report, workload)
    {
        ui.weak(crate::analysis::ncu::NO_NVLINK);
    }
    if section.has_item(BodyItemKind::NumaTable) {
        numa_table(ui, report, workload);
    }
    if let Some(chart) = crate::analysis::ncu::hierarchical::of_section(report, workload, section) {
        super::hierarchical::show(ui, &section.identifier, &chart);
    }
    let mut rooflines_shown = std::collections::HashSet::new();
    let arch = report.sm_version(workload);
    for body in &section.bodies {
        // A roofline the kernel lacks a metric of (another architecture's operations: the
        // tensor roofline's `Op:utchmma` on an H200) is left out, and one drawn in several
        // charts shows once, as on ncu's details page.
        let items: Vec<(&BodyItem, Vec<&SectionMetric>)> = body
            .items
            .iter()
            .filter(|i| i.kind != BodyItemKind::OperationGrid && i.is_for(arch))
            .map(|i| (i, item_metrics(report, workload, i)))
            .filter(|(_, metrics)| !metrics.is_empty())
            .filter(|(i, _)| {
                i.kind != BodyItemKind::Roofline
                    || (rooflines_shown.insert(i.label.as_str())
                        && i.metrics
                            .iter()
                            .all(|m| shown(report, workload, m).is_some()))
            })
            .collect();
        if items.is_empty() {
            continue;
        }
        if !body.display_name.is_empty() {
            ui.label(RichText::new(&body.display_name).italics());
        }
        for (k, (item, metrics)) in items.into_iter().enumerate() {
            let kind = match item.kind {
                BodyItemKind::Table => "table",
                BodyItemKind::BarChart => "bar chart",
                BodyItemKind::HistogramChart => "histogram",
                BodyItemKind::LineChart => "line chart",
                BodyItemKind::Roofline => "roofline",
                BodyItemKind::MemoryTable => "memory table",
                BodyItemKind::MemoryChart => "memory chart",
                BodyItemKind::OperationGrid => "operations",
                BodyItemKind::NvlinkTopology => "NVLink topology",
                BodyItemKind::NumaTable => "NUMA table",
                BodyItemKind::Other => "chart",
            };
            let label = if item.label.is_empty() {
                kind.to_string()
            } else {
                format!("{} ({kind})", item.label)
            };
            ui.indent(
                ("ncu_item", &section.identifier, &body.display_name, k),
                |ui| {
                    ui.weak(label);
                    // A line chart is drawn as one (the table would print its lines' sums).
                    if let Some(chart) =
                        crate::analysis::ncu::line_chart::line_chart(report, workload, item)
                    {
                        super::line_chart::show(
                            ui,
                            (&section.identifier, &body.display_name, k),
                            &chart,
                        );
                        return;
                    }
                    metric_table(
                        ui,
                        (
                            "item",
                            &format!("{}/{}/{k}", section.identifier, body.display_name),
                        ),
                        report,
                        workload,
                        metrics,
                        baseline,
                        (false, item.kind == BodyItemKind::Roofline),
                    );
                },
            );
        }
    }
    // The operation grids' rows, each operation once, as on ncu's details page.
    let operations: Vec<&SectionMetric> = operation_rows(report, workload, section)
        .into_iter()
        .flatten()
        .collect();
    if !operations.is_empty() {
        ui.indent(("ncu_operations", &section.identifier), |ui| {
            ui.weak("operations");
            metric_table(
                ui,
                ("operations", &section.identifier),
                report,
                workload,
                operations,
                baseline,
                (false, false),
            );
        });
    }
    let rules: Vec<&NcuRule> = workload
        .rules
        .iter()
        .filter(|r| r.section == section.identifier && !r.messages.is_empty())
        .collect();
    for rule in rules {
        rule_result(ui, rule, open_source);
    }
}

/// An item's entries to show: all but a metric group the kernel's report lacks (a report of
/// another ncu version: nothing to list).
fn item_metrics<'a>(
    report: &NcuReport,
    workload: &NcuWorkload,
    item: &'a BodyItem,
) -> Vec<&'a SectionMetric> {
    item.metrics
        .iter()
        .filter(|m| !m.name.starts_with(GROUP_PREFIX) || shown(report, workload, m).is_some())
        .collect()
}

/// The NUMA table: a row per GPU, as ncu prints it.
fn numa_table(ui: &mut Ui, report: &NcuReport, workload: &NcuWorkload) {
    let rows = match numa::rows(report, workload) {
        Ok(rows) => rows,
        Err(e) => {
            ui.colored_label(Color32::LIGHT_RED, format!("NUMA table: {e}"));
            return;
        }
    };
    if rows.is_empty() {
        return;
    }
    egui::Grid::new(("ncu_numa", workload.id))
        .striped(true)
        .spacing([16.0, 2.0])
        .show(ui, |ui| {
            for h in numa::HEADER {
                ui.weak(h);
            }
            ui.end_row();
            for row in &rows {
                for v in row {
                    ui.label(units::scalar_text(v));
                }
                ui.end_row();
            }
        });
}

/// One line of a metric table.
struct Line {
    label: String,
    metric: String,
    value: String,
    unit: String,
    number: Option<f64>,
}

/// The lines of one section entry: its metric's (the option meant for the kernel's
/// architecture), or a line per metric of a throughput breakdown, largest first.
fn lines_of(
    report: &NcuReport,
    workload: &NcuWorkload,
    m: &SectionMetric,
    in_roofline: bool,
) -> Vec<Line> {
    let Some((name, label, value)) = shown(report, workload, m) else {
        return vec![Line {
            label: if m.label.is_empty() {
                m.name.clone()
            } else {
                m.label.clone()
            },
            metric: m.name.clone(),
            value: String::new(),
            unit: String::new(),
            number: None,
        }];
    };
    if let Some(rows) = breakdown::rows(report, workload, name, value, &m.label) {
        return rows
            .into_iter()
            .map(|row| {
                let unit = units::named_unit(report, row.name);
                let (value, unit) = units::display(&unit, row.value);
                Line {
                    label: row.label,
                    metric: row.name.to_string(),
                    value,
                    unit,
                    number: row.value.as_f64(),
                }
            })
            .collect();
    }
    if let Some(rows) = groups::rows(report, workload, name, value, &m.label) {
        return rows
            .into_iter()
            .map(|row| {
                let (value, unit) = match row.value {
                    Some(v) => units::display(&row.unit, v),
                    None => (groups::NOT_AVAILABLE.to_string(), String::new()),
                };
                Line {
                    label: row.label,
                    metric: row.name.to_string(),
                    value,
                    unit,
                    number: row.value.and_then(|v| v.as_f64()),
                }
            })
            .collect();
    }
    let unit = units::entry_unit(report, name, &m.unit, in_roofline);
    let (text, unit) = units::display(&unit, value);
    vec![Line {
        label,
        metric: name.to_string(),
        value: text,
        unit,
        number: value.as_f64(),
    }]
}

/// A table of `metrics` (a roofline's when `in_roofline`): label, value and unit, in two
/// columns of metrics (ncu's header layout) when `two_columns` and there is no baseline; one column with the baseline's value and
/// the change otherwise.
fn metric_table(
    ui: &mut Ui,
    id: (&str, &str),
    report: &NcuReport,
    workload: &NcuWorkload,
    metrics: Vec<&SectionMetric>,
    baseline: Option<BaselineRef<'_>>,
    (two_columns, in_roofline): (bool, bool),
) {
    let lines: Vec<Line> = metrics
        .into_iter()
        .flat_map(|m| lines_of(report, workload, m, in_roofline))
        .collect();
    let columns = if two_columns && baseline.is_none() && lines.len() > 1 {
        2
    } else {
        1
    };
    let per_column = lines.len().div_ceil(columns);
    egui::Grid::new(("ncu_metrics", id.0, id.1, workload.id))
        .striped(true)
        .num_columns(if baseline.is_some() { 5 } else { 3 * columns })
        .spacing([16.0, 2.0])
        .show(ui, |ui| {
            if let Some(b) = baseline {
                ui.weak("Metric");
                ui.weak("Value");
                ui.weak("Unit");
                ui.weak("Baseline").on_hover_text(b.label);
                ui.weak("Change");
                ui.end_row();
            }
            for r in 0..per_column {
                for c in 0..columns {
                    let Some(line) = lines.get(c * per_column + r) else {
                        continue;
                    };
                    ui.label(&line.label).on_hover_text(&line.metric);
                    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                        ui.label(&line.value);
                    });
                    ui.weak(&line.unit);
                    if let Some(b) = baseline {
                        baseline_cells(ui, b, &line.metric, line.number);
                    }
                }
                ui.end_row();
            }
        });
}

/// The baseline's value of `metric` and the change from it to `value`.
pub fn baseline_cells(ui: &mut Ui, b: BaselineRef<'_>, metric: &str, value: Option<f64>) {
    let base = b.report.value(b.workload, metric);
    let (text, unit) = base
        .map(|v| units::display(&units::named_unit(b.report, metric), v))
        .unwrap_or_default();
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        ui.label(format!("{text} {unit}").trim().to_string());
    });
    let change = match (value, base.and_then(|v| v.as_f64())) {
        (Some(v), Some(b)) => units::delta_pct(v, b),
        _ => None,
    };
    match change {
        Some(d) if d.abs() < 0.005 => ui.weak("0%"),
        Some(d) => {
            let colour = if d > 0.0 {
                Color32::from_rgb(0x3c, 0x9a, 0x5f)
            } else {
                Color32::from_rgb(0xd0, 0x55, 0x45)
            };
            ui.colored_label(colour, format!("{d:+.2}%"))
        }
        None => ui.weak(""),
    };
}

/// The colour of a rule message's type badge, as ncu-ui colours them.
fn badge_colour(message: &RuleMessage) -> Color32 {
    match message.kind {
        4 => Color32::from_rgb(0xe0, 0x8a, 0x1e),
        2 => Color32::from_rgb(0xd8, 0xb4, 0x1a),
        3 => Color32::from_rgb(0xd0, 0x40, 0x40),
        1 => Color32::from_rgb(0x3c, 0x9a, 0x5f),
        _ => Color32::from_rgb(0x3a, 0x7c, 0xc8),
    }
}

/// A rule's messages: type badge, title, estimated speedup and text.
fn rule_result(ui: &mut Ui, rule: &NcuRule, open_source: &mut Option<SortRequest>) {
    for (k, m) in rule.messages.iter().enumerate() {
        ui.add_space(4.0);
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                ui.label(
                    RichText::new(m.kind_label())
                        .monospace()
                        .strong()
                        .color(Color32::WHITE)
                        .background_color(badge_colour(m)),
                );
                let title = if m.title.is_empty() {
                    rule.display_name.as_str()
                } else {
                    m.title.as_str()
                };
                if !title.is_empty() {
                    ui.label(RichText::new(title).strong())
                        .on_hover_text(&rule.identifier);
                }
                if k == 0
                    && let Some(s) = rule.speedup
                {
                    let kind = match s.kind_label() {
                        "local" => "Est. Local Speedup",
                        _ => "Est. Speedup",
                    };
                    ui.label(format!("{kind}: {:.2}%", s.percent));
                }
            });
            ui.label(rule_text::plain(&m.text));
            if k == 0
                && let Some(label) = excess_column(&rule.identifier)
                && ui
                    .link(format!("Source: the instructions by {label}"))
                    .clicked()
            {
                *open_source = Some(SortRequest::Column(label.to_string()));
            }
        });
    }
}

/// The Source column that shows where an uncoalesced access rule's excess comes from (ncu's
/// `UncoalescedGlobalAccess`, `UncoalescedSharedAccess` rules of the Source Counters section).
fn excess_column(rule: &str) -> Option<&'static str> {
    match rule {
        "UncoalescedGlobalAccess" => Some(GLOBAL_EXCESS_LABEL),
        "UncoalescedSharedAccess" => Some(SHARED_EXCESS_LABEL),
        _ => None,
    }
}
