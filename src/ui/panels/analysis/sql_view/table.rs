//! The SQL tab's answer as a table (headers that sort, at most
//! [`SHOWN_ROWS_MAX`] rows shown) and its CSV export.

use std::path::Path;

use egui::{Button, Ui};

use super::SHOWN_ROWS_MAX;
use crate::sql::{QueryResult, cell_text};

/// The table of an answer: a header row of buttons (a click sorts) over the rows in `order`, at
/// most [`SHOWN_ROWS_MAX`] of them. Returns the header clicked.
pub(super) fn table_ui(
    ui: &mut Ui,
    result: &QueryResult,
    order: &[usize],
    sort: Option<(usize, bool)>,
) -> Option<usize> {
    let mut clicked = None;
    egui::ScrollArea::both()
        .id_salt("sql_result_table")
        .max_height(420.0)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new("sql_result_grid")
                .striped(true)
                .spacing([14.0, 2.0])
                .show(ui, |ui| {
                    for (c, name) in result.columns.iter().enumerate() {
                        let arrow = match sort {
                            Some((col, false)) if col == c => " ⏶",
                            Some((col, true)) if col == c => " ⏷",
                            _ => "",
                        };
                        if ui
                            .add(
                                Button::new(egui::RichText::new(format!("{name}{arrow}")).strong())
                                    .frame(false),
                            )
                            .on_hover_text("Sort by this column")
                            .clicked()
                        {
                            clicked = Some(c);
                        }
                    }
                    ui.end_row();
                    for &r in order.iter().take(SHOWN_ROWS_MAX) {
                        let Some(row) = result.rows.get(r) else {
                            continue;
                        };
                        for v in row {
                            let text = cell_text(v);
                            if matches!(
                                v,
                                rusqlite::types::Value::Integer(_)
                                    | rusqlite::types::Value::Real(_)
                            ) {
                                ui.monospace(text);
                            } else {
                                ui.label(text);
                            }
                        }
                        ui.end_row();
                    }
                });
        });
    if order.len() > SHOWN_ROWS_MAX {
        ui.weak(format!(
            "The first {SHOWN_ROWS_MAX} of {} rows are shown; Export CSV writes them all.",
            order.len()
        ));
    }
    clicked
}

/// Writes the answer's rows in `order` to `path`; returns how many.
pub fn write_csv(path: &Path, result: &QueryResult, order: &[usize]) -> Result<usize, csv::Error> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(&result.columns)?;
    let mut n = 0;
    for &i in order {
        if let Some(row) = result.rows.get(i) {
            w.write_record(row.iter().map(cell_text))?;
            n += 1;
        }
    }
    w.flush()?;
    Ok(n)
}
