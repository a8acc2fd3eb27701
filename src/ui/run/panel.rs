//! The run's side panel: the clock and each rank's offset (with a hand shift), the per-rank table
//! (the columns of `sightline ranks`), the rank × step heatmap, and the collective instances
//! (click one to select it on every rank); or, on its SQL page, SQL over the run ([`super::sql`]).

use egui::Ui;

use super::RunTab;
use super::sql::RunPage;
use super::view::{LATE, select_instance};
use crate::analysis::ranks::ClockChoice;
use crate::analysis::table::Cell;
use crate::ui::columns::compact_duration;
use crate::ui::timeline::format_duration;

/// Draws the panel: a choice of page, then the page.
pub fn show(ui: &mut Ui, run: &mut RunTab) {
    ui.horizontal(|ui| {
        ui.selectable_value(&mut run.page, RunPage::Ranks, "Ranks");
        ui.selectable_value(&mut run.page, RunPage::Sql, "SQL")
            .on_hover_text("SQL over the run: every rank's rows, a `rank` column, one clock");
    });
    ui.separator();
    match run.page {
        RunPage::Ranks => show_ranks(ui, run),
        RunPage::Sql => super::sql::show(ui, run),
    }
}

/// The choice of clock: the one the traces record, or the end of a collective every rank takes
/// part in.
fn clock_choice(ui: &mut Ui, run: &mut RunTab) {
    let mut choice = run.clock;
    ui.horizontal(|ui| {
        ui.label("Align:");
        ui.radio_value(&mut choice, ClockChoice::Recorded, "Recorded clock")
            .on_hover_text("The clock the traces record (nsys session start, PyTorch's epoch-based ts), where every trace has one");
        ui.radio_value(&mut choice, ClockChoice::Collective, "On a collective")
            .on_hover_text("The end of the first collective every rank takes part in");
    });
    if choice != run.clock {
        run.set_clock(choice, Some(ui.ctx()));
    }
}

/// The ranks' page: clock, per-rank table, heatmap, collectives.
/// Runs of more ranks than this show their offsets folded.
const FOLD_OFFSETS_ABOVE: usize = 16;
/// Runs of more ranks than this show their per-rank table folded.
const FOLD_TABLE_ABOVE: usize = 64;

fn show_ranks(ui: &mut Ui, run: &mut RunTab) {
    if !run.is_loading() {
        clock_choice(ui, run);
    }
    if let Some(e) = run.analysis_error.as_ref().filter(|_| !run.analysing()) {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    let Some(a) = &run.analysis else {
        if run.busy() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading the ranks and matching their collectives…");
            });
        }
        return;
    };
    ui.heading("Run");
    ui.label(format!("clock: {}", a.alignment.describe()));
    ui.label(a.verdict.as_str());
    let mut shift_to = None;
    // A large run's offsets and per-rank rows start folded, so that the heatmap and the
    // collectives are in reach (1,024 ranks are 1,024 rows each).
    let n = a.ranks.len();
    egui::CollapsingHeader::new(format!("Clock offsets and shifts ({n} ranks)"))
        .id_salt("run_offsets")
        .default_open(n <= FOLD_OFFSETS_ABOVE)
        .show(ui, |ui| {
    egui::Grid::new("run_ranks_clock")
        .num_columns(5)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("Rank");
            ui.strong("Rank from");
            ui.strong("Collectives from");
            ui.strong("Offset");
            ui.strong("Shift (µs)");
            ui.end_row();
            for (k, info) in a.ranks.iter().enumerate() {
                ui.label(info.rank.to_string());
                ui.label(info.source.label());
                ui.label(info.collectives_from.map_or("none found", |s| s.label()));
                ui.label(format_duration(info.offset_ns as f64));
                let mut us = run.ranks.get(k).map_or(0, |r| r.shift_ns) as f64 / 1000.0;
                let r = ui
                    .add(egui::DragValue::new(&mut us).speed(10.0).suffix(" µs"))
                    .on_hover_text("Moves this rank on the run's clock by hand (collectives are matched again)");
                if r.drag_stopped() || (r.changed() && !r.dragged()) {
                    shift_to = Some((k, (us * 1000.0).round() as i64));
                }
                ui.end_row();
            }
        });
        });
    ui.separator();
    egui::CollapsingHeader::new(format!("Per rank ({n})"))
        .id_salt("run_per_rank")
        .default_open(n <= FOLD_TABLE_ABOVE)
        .show(ui, |ui| {
            // Short titles and compact times (the whole title and value on hover), the trace on the
            // rank's hover (its row on the left names it), so that the columns fit the panel's default
            // width; a bar shows when a wider run still scrolls.
            egui::ScrollArea::horizontal()
                .id_salt("run_rank_table")
                .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::VisibleWhenNeeded)
                .show(ui, |ui| {
                    egui::Grid::new("run_rank_table_grid")
                        .num_columns(a.table.columns.len() - 1)
                        .spacing([6.0, 4.0])
                        .striped(true)
                        .show(ui, |ui| {
                            let trace = a.table.columns.iter().position(|c| c == "Trace");
                            for (i, c) in a.table.columns.iter().enumerate() {
                                if Some(i) != trace {
                                    ui.strong(short_title(c)).on_hover_text(c.as_str());
                                }
                            }
                            ui.end_row();
                            let straggler = a.straggler.map(|(k, _)| k);
                            for (k, row) in a.table.rows.iter().enumerate() {
                                let trace_name =
                                    trace.and_then(|t| row.cells.get(t)).map(Cell::csv_text);
                                for (c, cell) in row.cells.iter().enumerate() {
                                    let column = &a.table.columns[c];
                                    if Some(c) == trace {
                                        continue;
                                    }
                                    let (text, mut full) = cell_text(column, cell);
                                    if column == "Rank" {
                                        full = trace_name.clone().unwrap_or(full);
                                    }
                                    let r = if straggler == Some(k) && column == "Late Arrivals" {
                                        ui.colored_label(LATE, text)
                                    } else {
                                        ui.label(text)
                                    };
                                    r.on_hover_text(full);
                                }
                                ui.end_row();
                            }
                        });
                });
        });
    ui.separator();
    ui.strong("Rank × step");
    let zoom = super::heatmap::show(ui, run);
    if let Some((start, end)) = zoom {
        run.range = Some((start, end));
        run.zoom_to(start, end);
    }
    ui.separator();
    let mut select = None;
    if let Some(a) = &run.analysis {
        ui.strong(format!(
            "Collectives ({} matched across ranks)",
            a.instances().len()
        ));
        egui::Grid::new("run_instances")
            .num_columns(4)
            .striped(true)
            .show(ui, |ui| {
                ui.strong("Collective");
                ui.strong("#");
                ui.strong("Last rank");
                ui.strong("Skew");
                ui.end_row();
                for (i, inst) in a.instances().iter().enumerate().take(500) {
                    let chosen = run.selected_instance == Some(i);
                    if ui.selectable_label(chosen, &inst.name).clicked() {
                        select = Some((i, inst.first_arrival(), inst.skew_ns));
                    }
                    ui.label(inst.ordinal.to_string());
                    match inst.last.and_then(|k| a.ranks.get(k)) {
                        Some(r) => ui.colored_label(LATE, r.rank.to_string()),
                        None => ui.weak("tie"),
                    };
                    ui.label(format_duration(inst.skew_ns as f64));
                    ui.end_row();
                }
            });
    }
    if let Some((i, first, skew)) = select {
        select_instance(run, Some(i));
        let span = (run.view.1 - run.view.0) as i64;
        if !((first as f64) >= run.view.0 && ((first + skew) as f64) <= run.view.1) {
            run.zoom_to(first - span / 2, first + span / 2);
        }
    }
    if let Some((k, ns)) = shift_to {
        run.set_shift(k, ns, Some(ui.ctx()));
    }
}

/// A table cell as the panel shows it: durations for the ns columns.
/// A per-rank column's title as the table shows it (`Kernel Time (ns)` → `Kernels`).
fn short_title(column: &str) -> &str {
    match column {
        "Kernel Time (ns)" => "Kernels",
        "Communication (ns)" => "Comm",
        "Exposed Communication (ns)" => "Exposed",
        "Collectives" => "Coll.",
        "Late Arrivals" => "Late",
        other => other.trim_end_matches(" (ns)"),
    }
}

/// A cell as shown (a time in three digits) and in full, for its hover.
fn cell_text(column: &str, cell: &Cell) -> (String, String) {
    match cell {
        Cell::Int(v) if column.ends_with("(ns)") => (
            compact_duration(*v as f64),
            format!("{} ({v} ns)", format_duration(*v as f64)),
        ),
        other => (other.csv_text(), other.csv_text()),
    }
}
