//! The Findings section drawn: every `nsys analyze` rule run over the selection (in the
//! background; the tab's badge counts the findings), each a collapsible group with nsys's advice
//! and its findings. The findings are lines of the panel's own page — no list scrolls inside the
//! scrolling panel, so the wheel always moves the page — and only the lines on screen are laid
//! out. Clicking a finding zooms the timeline to its event or gap and outlines it. `gpu_gaps`
//! says its threshold (nsys's 500 ms) and, finding nothing, points to the Gaps tab's shorter gaps.

use std::sync::Arc;

use egui::{Button, CollapsingHeader, RichText, Ui};

use super::{AnalysisPanel, AnalysisTab, ERROR_COLOR, Findings, PanelAction, row_events};
use crate::analysis::rules::GPU_GAPS_DEFAULT_MS;
use crate::analysis::{Cell, EventTable, Row, RowEvents, Table};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

/// At most this many findings of one rule are listed (the count says how many there are).
const MAX_LISTED: usize = 500;

impl AnalysisPanel {
    pub(super) fn findings_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        actions: &mut Vec<PanelAction>,
    ) {
        let Some(inputs) = self.inputs else {
            return;
        };
        let status = self.jobs.findings.status(&inputs);
        let stale = status.is_pending();
        let Some(findings) = status.latest().cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Running the rules…");
            });
            return;
        };
        let mut set_open = None;
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "{} findings of {} rules over the selection{}",
                findings.count(),
                findings.rules.len(),
                if stale { " (updating…)" } else { "" }
            ));
            if ui.small_button("Expand all").clicked() {
                set_open = Some(true);
            }
            if ui.small_button("Collapse all").clicked() {
                set_open = Some(false);
            }
        });
        let mut clicked: Option<(&'static str, usize)> = None;
        let shorter_gaps = self.shorter_gaps_note();
        let mut to_gaps_tab = false;
        for rf in &findings.rules {
            let n = rf.table.as_ref().map_or(0, |t| t.rows.len());
            let gpu_gaps = rf.rule.name() == "gpu_gaps";
            let title = if gpu_gaps {
                format!("{} over {GPU_GAPS_DEFAULT_MS} ms · {n}", rf.rule.title())
            } else {
                format!("{} · {n}", rf.rule.title())
            };
            CollapsingHeader::new(RichText::new(title).strong())
                .id_salt(("finding_rule", rf.rule.name()))
                .default_open(n > 0)
                .open(set_open)
                .show(ui, |ui| {
                    ui.label(RichText::new(rf.rule.name()).monospace().weak());
                    match &rf.table {
                        Err(e) => {
                            ui.colored_label(ERROR_COLOR, e);
                        }
                        Ok(t) if t.rows.is_empty() => {
                            ui.label(rf.rule.no_result());
                            if gpu_gaps {
                                ui.horizontal_wrapped(|ui| {
                                    ui.label(&shorter_gaps);
                                    to_gaps_tab |= ui.link("Open the Gaps tab").clicked();
                                });
                            }
                        }
                        Ok(t) => {
                            ui.label(rf.rule.advice());
                            if let Some(i) =
                                finding_list(ui, rf.rule.name(), t, self.chosen_finding)
                            {
                                clicked = Some((rf.rule.name(), i));
                            }
                        }
                    }
                });
        }
        if to_gaps_tab {
            self.tab = AnalysisTab::Gaps;
        }
        if let Some((rule, i)) = clicked {
            self.chosen_finding = Some((rule, i));
            self.chosen = None;
            self.highlighted = None;
            if let Some(row) = finding_row(&findings, rule, i) {
                act_on_finding(trace, row, actions);
            }
        }
    }
}

impl AnalysisPanel {
    /// What `gpu_gaps` leaves out: it looks only for idle time over nsys's 500 ms, where the
    /// Gaps tab lists every gap over its own (shorter) threshold.
    fn shorter_gaps_note(&self) -> String {
        let min = format_duration(self.gap_options().min_ns as f64);
        let gaps = self.gaps();
        let found = match gaps.iter().map(|g| g.duration_ns()).max() {
            Some(longest) => format!(
                "{} gap{} of {min} or more, the longest {}",
                gaps.len(),
                if gaps.len() == 1 { "" } else { "s" },
                format_duration(longest as f64)
            ),
            None => format!("no gap of {min} or more"),
        };
        format!(
            "This rule (nsys's) looks only for GPU idle time over {GPU_GAPS_DEFAULT_MS} ms. \
             The Gaps tab lists {found}."
        )
    }
}

fn finding_row<'f>(findings: &'f Findings, rule: &str, i: usize) -> Option<&'f Row> {
    findings
        .rules
        .iter()
        .find(|r| r.rule.name() == rule)?
        .table
        .as_ref()
        .ok()?
        .rows
        .get(i)
}

/// Zoom to what a finding is about and outline it.
fn act_on_finding(trace: &Trace, row: &Row, actions: &mut Vec<PanelAction>) {
    match &row.events {
        RowEvents::Span {
            start_ns, end_ns, ..
        } => {
            actions.push(PanelAction::Highlight(Vec::new()));
            actions.push(PanelAction::ZoomTo {
                start_ns: *start_ns,
                end_ns: *end_ns,
            });
            actions.push(PanelAction::SetSelection {
                start_ns: *start_ns,
                end_ns: *end_ns,
            });
        }
        RowEvents::Events(_) => {
            let events = row_events(row);
            let bounds = events
                .iter()
                .filter_map(|&e| super::event_bounds(trace, e))
                .fold(None, |acc: Option<(i64, i64)>, (s, e)| {
                    Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
                });
            actions.push(PanelAction::Highlight(events));
            if let Some((start_ns, end_ns)) = bounds {
                actions.push(PanelAction::ZoomTo { start_ns, end_ns });
            }
        }
        RowEvents::None => {}
    }
}

/// The findings of one rule, one line each (its cells, nsys's columns), laid out in the page
/// (lines off screen but the first only take their room); returns the clicked one.
fn finding_list(
    ui: &mut Ui,
    rule: &'static str,
    table: &Table,
    chosen: Option<(&'static str, usize)>,
) -> Option<usize> {
    let mut clicked = None;
    let height = ui.spacing().interact_size.y;
    let listed = table.rows.len().min(MAX_LISTED);
    for (i, row) in table.rows.iter().enumerate().take(listed) {
        let room =
            egui::Rect::from_min_size(ui.cursor().min, egui::vec2(ui.available_width(), height));
        // The first finding of a rule is always laid out (a screen reader reaches every group).
        if i > 0 && !ui.is_rect_visible(room) {
            ui.allocate_space(room.size());
            continue;
        }
        let on = chosen == Some((rule, i));
        let what = match &row.events {
            RowEvents::Span { .. } => "click to zoom to the gap and select it",
            RowEvents::Events(e) if e.iter().any(|e| e.table == EventTable::ApiCalls) => {
                "click to zoom to the call and outline it"
            }
            RowEvents::Events(_) => "click to zoom to it and outline it",
            RowEvents::None => "",
        };
        let full: Vec<String> = table
            .columns
            .iter()
            .zip(&row.cells)
            .map(|(c, v)| format!("{c}: {}", v.csv_text()))
            .collect();
        let line = ui
            .add(
                Button::selectable(on, finding_line(&table.columns, row))
                    .truncate()
                    .min_size(egui::vec2(0.0, height)),
            )
            .on_hover_text(format!("{}\n{what}", full.join("\n")));
        if line.clicked() {
            clicked = Some(i);
        }
    }
    if table.rows.len() > listed {
        ui.label(format!("… and {} more", table.rows.len() - listed));
    }
    clicked
}

/// A finding in words: durations and times in fitting units, sizes in MB, the GPU and stream,
/// the call's name; ids that mean little at a glance (row number, pid, tid, context) are left to
/// the tooltip.
fn finding_line(columns: &[String], row: &Row) -> String {
    let mut parts = Vec::new();
    for (column, cell) in columns.iter().zip(&row.cells) {
        if *cell == Cell::Null {
            continue;
        }
        let text = cell.csv_text();
        let part = match column.as_str() {
            "Row#" | "PID" | "TID" | "Context ID" | "Green Context ID" => continue,
            "Device ID" => format!("GPU {text}"),
            "Stream ID" => format!("stream {text}"),
            c if c.starts_with("Start") && c.ends_with("(ns)") => {
                format!("at {}", format_duration(cell.number().unwrap_or(0.0)))
            }
            c if c.ends_with("(ns)") => format_duration(cell.number().unwrap_or(0.0)),
            c if c.ends_with("(MB)") => format!("{text} MB"),
            c if c.ends_with("(%)") => format!("{text} %"),
            // The default proportional font has no arrows.
            "Src Kind" => format!("{text} to"),
            _ => text,
        };
        parts.push(part);
    }
    parts.join(" · ").replace(" to · ", " to ")
}
