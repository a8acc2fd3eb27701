//! The Statistics section drawn: the report selector, the name filter, the sortable table (only
//! the rows on screen are laid out, so a report of thousands of names costs what fits) and the
//! histogram of the chosen row.

use egui::{Align, Button, Layout, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot};

use super::{
    AnalysisPanel, ChosenRow, Message, PanelAction, RowKey, Sort, SortColumn, columns,
    export_table, report_label, save_dialog, table_summary, visible_rows,
};
use crate::analysis::{EventTable, Report, ReportTable, TimeRange};
use crate::trace::Trace;
use crate::ui::timeline::format_duration;

impl AnalysisPanel {
    pub(super) fn statistics_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Trace,
        selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        ui.horizontal_wrapped(|ui| {
            for report in Report::ALL {
                let on = self.report == report;
                if ui
                    .selectable_label(on, report_label(report))
                    .on_hover_text(report.title())
                    .clicked()
                    && !on
                {
                    self.report = report;
                    let kept = columns(report);
                    if self
                        .sort
                        .is_some_and(|s| !kept.iter().any(|(c, _)| *c == s.column))
                    {
                        self.sort = None;
                    }
                }
            }
        });
        let mut export_clicked = false;
        ui.horizontal(|ui| {
            let label = ui.label("Filter names");
            ui.add(
                egui::TextEdit::singleline(&mut self.name_filter)
                    .hint_text("part of a name")
                    .desired_width(180.0),
            )
            .labelled_by(label.id);
            export_clicked = ui
                .button("Export table as CSV…")
                .on_hover_text("The rows shown, in their order, in the columns nsys stats prints")
                .clicked();
        });

        self.ensure_table(trace, selection, self.report);
        let Some(table) = self.stats.tables.get(&self.report) else {
            return;
        };
        let fresh = self.order.key.as_ref().is_some_and(|(g, r, f, s)| {
            *g == self.stats.generation
                && *r == self.report
                && *f == self.name_filter
                && *s == self.sort
        });
        if !fresh {
            self.order.rows = visible_rows(table, &self.name_filter, self.sort);
            self.order.key = Some((
                self.stats.generation,
                self.report,
                self.name_filter.clone(),
                self.sort,
            ));
        }
        let rows = &self.order.rows;
        if table.rows.is_empty() {
            ui.label(format!(
                "No {} in the selection.",
                self.report.missing_data()
            ));
        }
        let click = draw_table(ui, table, rows, self.sort, self.chosen.as_ref());
        ui.label(table_summary(table, rows));

        if export_clicked {
            let shown = ReportTable {
                report: table.report,
                rows: rows
                    .iter()
                    .filter_map(|&i| table.rows.get(i).cloned())
                    .collect(),
            };
            if let Some(path) = save_dialog(&format!("{}.csv", self.report.id())) {
                self.message = Some(match export_table(&path, &shown) {
                    Ok(n) => Message {
                        text: format!("Wrote {n} rows to {}", path.display()),
                        error: false,
                    },
                    Err(e) => Message {
                        text: e.to_string(),
                        error: true,
                    },
                });
            }
        }
        let clicked_row = click
            .row
            .and_then(|i| table.rows.get(i))
            .map(|row| RowKey::of(self.report, row));
        if let Some(column) = click.header {
            self.sort = Some(match self.sort {
                Some(s) if s.column == column => Sort {
                    column,
                    descending: !s.descending,
                },
                _ => Sort {
                    column,
                    descending: column.first_direction_descending(),
                },
            });
        }
        if let Some(key) = clicked_row {
            let next = (self.chosen.as_ref() != Some(&key)).then_some(key);
            self.choose_row(next, trace, selection, actions);
        }
        self.message_ui(ui);
        self.chosen_ui(ui, actions);
    }

    /// The histogram of the chosen row, with ways to jump to its longest event.
    pub(super) fn chosen_ui(&self, ui: &mut Ui, actions: &mut Vec<PanelAction>) {
        let Some(ChosenRow {
            key,
            events,
            histogram,
            longest,
            ..
        }) = self.chosen_row()
        else {
            return;
        };
        if key.report != self.report {
            return;
        }
        ui.separator();
        let sizes = key.report == Report::MemorySize;
        ui.label(RichText::new(format!("{} · {} events", key.name, events.len())).strong());
        if events.is_empty() {
            ui.label("None of its events is in the selection.");
            return;
        }
        let max = histogram.start as f64 + histogram.bin_width * histogram.counts.len() as f64;
        let (unit, scale) = if sizes {
            bytes_unit(max)
        } else {
            time_unit(max)
        };
        let bars: Vec<Bar> = histogram
            .counts
            .iter()
            .enumerate()
            .map(|(b, &n)| Bar::new(histogram.centre(b) / scale, n as f64))
            .collect();
        let chart = BarChart::new("events", bars).width(histogram.bin_width / scale * 0.95);
        let what = if sizes { "size" } else { "duration" };
        Plot::new("analysis_row_histogram")
            .height(150.0)
            .allow_zoom(false)
            .allow_drag(false)
            .allow_scroll(false)
            .x_axis_label(format!("{what} ({unit})"))
            .y_axis_label("events")
            .show(ui, |plot| plot.bar_chart(chart));

        if let Some((table, start_ns, end_ns)) = *longest {
            ui.horizontal(|ui| {
                if ui.button("Zoom to the longest").clicked() {
                    actions.push(PanelAction::ZoomTo { start_ns, end_ns });
                }
                if table == EventTable::Nvtx && ui.button("Select the longest").clicked() {
                    actions.push(PanelAction::SetSelection { start_ns, end_ns });
                }
            });
        }
    }
}

/// A unit for durations up to `max_ns`, as (name, ns per unit).
fn time_unit(max_ns: f64) -> (&'static str, f64) {
    if max_ns >= 1e9 {
        ("s", 1e9)
    } else if max_ns >= 1e6 {
        ("ms", 1e6)
    } else if max_ns >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    }
}

/// A unit for sizes up to `max_bytes`, as (name, bytes per unit), decimal like nsys.
fn bytes_unit(max_bytes: f64) -> (&'static str, f64) {
    if max_bytes >= 1e9 {
        ("GB", 1e9)
    } else if max_bytes >= 1e6 {
        ("MB", 1e6)
    } else if max_bytes >= 1e3 {
        ("kB", 1e3)
    } else {
        ("B", 1.0)
    }
}

fn bytes_text(bytes: f64) -> String {
    let (unit, scale) = bytes_unit(bytes);
    if scale == 1.0 {
        format!("{bytes:.0} {unit}")
    } else {
        format!("{:.3} {unit}", bytes / scale)
    }
}

/// What a click on the table chose.
#[derive(Default)]
struct TableClick {
    header: Option<SortColumn>,
    row: Option<usize>,
}

fn column_width(column: SortColumn) -> f32 {
    match column {
        SortColumn::Percent => 64.0,
        SortColumn::Count => 70.0,
        SortColumn::Style => 70.0,
        SortColumn::Name => 280.0,
        _ => 78.0,
    }
}

/// One cell of `width` × `height`, numbers right-aligned.
fn cell<R>(ui: &mut Ui, width: f32, height: f32, right: bool, add: impl FnOnce(&mut Ui) -> R) -> R {
    let layout = if right {
        Layout::right_to_left(Align::Center)
    } else {
        Layout::left_to_right(Align::Center)
    };
    ui.allocate_ui_with_layout(egui::vec2(width, height), layout, |ui| {
        ui.set_min_size(egui::vec2(width, height));
        add(ui)
    })
    .inner
}

/// Draws the header and the `rows` of `table` (only those on screen); a click on a header asks
/// to sort by it, a click on a name chooses the row.
fn draw_table(
    ui: &mut Ui,
    table: &ReportTable,
    rows: &[usize],
    sort: Option<Sort>,
    chosen: Option<&RowKey>,
) -> TableClick {
    let mut click = TableClick::default();
    let cols = columns(table.report);
    let height = ui.spacing().interact_size.y;
    let sizes = table.report == Report::MemorySize;
    let amount = |v: f64| {
        if sizes {
            bytes_text(v)
        } else {
            format_duration(v)
        }
    };
    egui::ScrollArea::horizontal()
        .id_salt("analysis_stats_table")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                for &(column, title) in &cols {
                    // The sort arrow in the monospace font: the proportional default font
                    // (Ubuntu-Light) has no arrows or triangles.
                    let arrow = match sort {
                        Some(s) if s.column == column && s.descending => "▼",
                        Some(s) if s.column == column => "▲",
                        _ => "",
                    };
                    let header = cell(ui, column_width(column), height, !column.is_text(), |ui| {
                        let add_arrow = |ui: &mut Ui| {
                            if !arrow.is_empty() {
                                ui.label(RichText::new(arrow).monospace());
                            }
                        };
                        let title = Button::new(RichText::new(title).strong()).frame(false);
                        if column.is_text() {
                            let r = ui.add(title);
                            add_arrow(ui);
                            r
                        } else {
                            // Right to left: the arrow first lands rightmost.
                            add_arrow(ui);
                            ui.add(title)
                        }
                    });
                    if header.on_hover_text("Sort by this column").clicked() {
                        click.header = Some(column);
                    }
                }
            });
            egui::ScrollArea::vertical()
                .id_salt("analysis_stats_rows")
                .max_height(320.0)
                .auto_shrink([false, true])
                .show_rows(ui, height, rows.len(), |ui, range| {
                    for &i in rows.get(range).unwrap_or_default() {
                        let Some(row) = table.rows.get(i) else {
                            continue;
                        };
                        let s = &row.stats;
                        ui.horizontal(|ui| {
                            for &(column, _) in &cols {
                                let w = column_width(column);
                                let text = match column {
                                    SortColumn::Percent => format!("{:.1}", row.percent),
                                    SortColumn::Total => amount(s.total as f64),
                                    SortColumn::Count => s.count.to_string(),
                                    SortColumn::Avg => amount(s.avg),
                                    SortColumn::Median => amount(s.median),
                                    SortColumn::Min => amount(s.min as f64),
                                    SortColumn::Max => amount(s.max as f64),
                                    SortColumn::StdDev => amount(s.stddev),
                                    SortColumn::Style => {
                                        row.style.map_or(String::new(), |st| st.label().into())
                                    }
                                    SortColumn::Name => {
                                        let on = chosen.is_some_and(|k| {
                                            k.report == table.report
                                                && k.name == row.name
                                                && k.style == row.style
                                        });
                                        let name = cell(ui, w, height, false, |ui| {
                                            ui.add(
                                                Button::selectable(on, row.name.as_str())
                                                    .truncate(),
                                            )
                                        });
                                        if name.on_hover_text(&row.name).clicked() {
                                            click.row = Some(i);
                                        }
                                        continue;
                                    }
                                };
                                cell(ui, w, height, !column.is_text(), |ui| {
                                    ui.add(egui::Label::new(text).truncate())
                                });
                            }
                        });
                    }
                });
        });
    click
}
