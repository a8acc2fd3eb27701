//! The Statistics section drawn: the report selector (every `nsys stats` report the trace has
//! data for), the name filter, the sortable table (only the rows on screen are laid out, so a
//! row dump of millions costs what fits), CSV export, and the duration histogram of the chosen
//! row. Tables are computed on a worker thread; while one is computed the last one stays, dimmed.

use std::sync::Arc;

use egui::{Align, Button, Layout, RichText, Ui};
use egui_plot::{Bar, BarChart, Plot};

use super::{
    AnalysisPanel, ChosenRow, Message, PanelAction, RowKey, Sort, TableLayout, export_table,
    save_dialog, table_summary,
};
use crate::analysis::{Cell, EventTable, NsysFormat, Table, TimeRange, reports, unreadable};
use crate::trace::Trace;
use crate::ui::file_dialog::FilePurpose;

impl AnalysisPanel {
    pub(super) fn statistics_ui(
        &mut self,
        ui: &mut Ui,
        trace: &Arc<Trace>,
        _selection: TimeRange,
        actions: &mut Vec<PanelAction>,
    ) {
        let current = self.report;
        let title = reports::find(current).map_or(current, |r| r.title());
        let mut chosen_report = current;
        ui.horizontal(|ui| {
            let label = ui.label("Report");
            egui::ComboBox::from_id_salt("analysis_report")
                .selected_text(format!("{title} ({current})"))
                .width(300.0)
                .height(600.0)
                .show_ui(ui, |ui| {
                    for r in reports::REPORTS {
                        if !self.available.contains(&r.name()) {
                            continue;
                        }
                        ui.selectable_value(
                            &mut chosen_report,
                            r.name(),
                            format!("{} ({})", r.title(), r.name()),
                        );
                    }
                })
                .response
                .labelled_by(label.id);
            self.nsys_format_ui(ui, trace);
        });
        if chosen_report != current {
            self.report = chosen_report;
            self.sort = None;
        }
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

        let fresh = self.ensure_report(trace, self.report);
        let Some(inputs) = self.inputs else {
            return;
        };
        // While the fresh table is computed, the last one of the same report stays, dimmed.
        let shown = fresh.clone().or_else(|| {
            let status = self.jobs.report.status(&(inputs, self.report));
            let same_report = self
                .jobs
                .report
                .done_key()
                .is_some_and(|k| k.1 == self.report);
            status.latest().filter(|_| same_report).cloned()
        });
        let Some(table) = shown else {
            if self.jobs.report.failed(&(inputs, self.report)) {
                ui.colored_label(
                    super::ERROR_COLOR,
                    "Computing this report failed: a bug in Sightline (the message is on stderr).",
                );
            } else {
                spinner(ui);
            }
            return;
        };
        let layout_key = (inputs, self.report, self.name_filter.clone(), self.sort);
        if let Some(fresh) = &fresh {
            let (t, filter, sort) = (fresh.clone(), self.name_filter.clone(), self.sort);
            let repaint = self.repaint_fn();
            self.jobs.layout.request(
                &layout_key,
                move || Arc::new(TableLayout::of(&t, &filter, sort)),
                repaint,
            );
        }
        let layout_status = self.jobs.layout.status(&layout_key);
        let stale = fresh.is_none() || layout_status.is_pending();
        // A layout made for another report's columns is no use meanwhile.
        let fits = |l: &&Arc<TableLayout>| l.numeric.len() == table.columns.len();
        let Some(layout) = layout_status.latest().filter(fits).cloned() else {
            spinner(ui);
            return;
        };
        let rows = &layout.order;
        if table.rows.is_empty() {
            let missing = reports::find(self.report).map_or("data", |r| r.missing_data());
            match unreadable::none_readable(trace, missing) {
                Some(why) => ui.label(format!("The trace {why}.")),
                None => ui.label(format!("No {missing} in the selection.")),
            };
        }
        let chosen = self.chosen.as_ref().filter(|k| k.report == self.report);
        let click = ui
            .add_enabled_ui(!stale, |ui| {
                draw_table(ui, &table, &layout, self.sort, self.report, chosen)
            })
            .inner;
        ui.label(table_summary(&table, rows));
        if table.omitted > 0 {
            ui.label(format!(
                "Only the first {} of {} rows are kept here; `sightline summary TRACE --report {}` \
                 prints them all.",
                table.rows.len(),
                table.rows.len() + table.omitted,
                self.report
            ));
        }

        let file_name = format!("{}.csv", self.report);
        if let Some(path) = save_dialog(ui, export_clicked, FilePurpose::SaveStatsCsv, &file_name) {
            // The rows as shown when the path comes back (the browser answers on a later frame).
            let shown = Table::from_parts(
                table.columns.clone(),
                rows.slice(0..rows.len())
                    .filter_map(|i| table.rows.get(i).cloned())
                    .collect(),
            );
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
        let clicked_row = click
            .row
            .and_then(|i| Some(RowKey::of(self.report, table.rows.get(i)?, i)));
        if let Some(column) = click.header {
            let numeric = layout.numeric.get(column).copied().unwrap_or(false);
            self.sort = Some(match self.sort {
                Some(s) if s.column == column => Sort {
                    column,
                    descending: !s.descending,
                },
                _ => Sort {
                    column,
                    descending: numeric,
                },
            });
        }
        if let Some(key) = clicked_row {
            let next = (self.chosen.as_ref() != Some(&key)).then_some(key);
            self.choose_row(next, trace, actions);
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
        }) = self.chosen_row()
        else {
            return;
        };
        if key.report != self.report {
            return;
        }
        ui.separator();
        let name = key
            .text
            .iter()
            .max_by_key(|t| t.chars().count())
            .cloned()
            .unwrap_or_default();
        ui.label(RichText::new(format!("{name} · {} events", events.len())).strong());
        if !events.is_empty() {
            let max = histogram.start as f64 + histogram.bin_width * histogram.counts.len() as f64;
            let (unit, scale) = time_unit(max);
            let bars: Vec<Bar> = histogram
                .counts
                .iter()
                .enumerate()
                .map(|(b, &n)| Bar::new(histogram.centre(b) / scale, n as f64))
                .collect();
            let chart = BarChart::new("events", bars).width(histogram.bin_width / scale * 0.95);
            Plot::new("analysis_row_histogram")
                .height(150.0)
                .allow_zoom(false)
                .allow_drag(false)
                .allow_scroll(false)
                .x_axis_label(format!("duration ({unit})"))
                .y_axis_label("events")
                .show(ui, |plot| plot.bar_chart(chart));
        }
        if let Some((table, start_ns, end_ns)) = *longest {
            ui.horizontal(|ui| {
                let what = if events.is_empty() {
                    "Zoom to it"
                } else {
                    "Zoom to the longest"
                };
                if ui.button(what).clicked() {
                    actions.push(PanelAction::ZoomTo { start_ns, end_ns });
                }
                if table == EventTable::Nvtx && ui.button("Select the longest").clicked() {
                    actions.push(PanelAction::SetSelection { start_ns, end_ns });
                }
            });
        } else if events.is_empty() {
            ui.label("None of its events is in the selection.");
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

/// What a click on the table chose.
#[derive(Default)]
struct TableClick {
    header: Option<usize>,
    row: Option<usize>,
}

/// Space between two cells of a row, in points (less than egui's default, so that the nine
/// columns of a summary fit the panel's default width).
const CELL_SPACING_PX: f32 = 4.0;
/// The name column never gets narrower than this, however many columns there are.
const MIN_NAME_WIDTH_PX: f32 = 100.0;

/// A column's title as the header shows it: nsys's own, less what the cells already say — the
/// unit `(ns)` (durations are shown with their unit) and a few long words; the full title is the
/// header's tooltip and its accessible name.
fn short_title(title: &str) -> String {
    let title = title.strip_suffix(" (ns)").unwrap_or(title);
    match title {
        "Time (%)" => "Time %".to_string(),
        "Total Time" => "Total".to_string(),
        "Instances" => "Count".to_string(),
        "Num Calls" => "Calls".to_string(),
        _ => title.to_string(),
    }
}

/// A duration in at most three significant digits with its unit and no space (`91.8ms`,
/// `399µs`, `150ns`): six characters at most below 1000 s, so that eight columns of them fit
/// the panel; the exact value is the cell's tooltip.
pub(crate) fn compact_duration(ns: f64) -> String {
    let (unit, scale) = time_unit(ns.abs());
    let v = ns / scale;
    let decimals = if scale == 1.0 || v.abs() >= 99.95 {
        0
    } else if v.abs() >= 9.995 {
        1
    } else {
        2
    };
    format!("{v:.decimals$}{unit}")
}

/// A cell's text as the table shows it: durations compact, other values as nsys prints them.
fn shown_text(column: &str, value: &Cell, numeric: bool) -> String {
    match (numeric, value.number()) {
        (true, Some(_)) => super::stats_table::pretty_number(column, value, compact_duration),
        _ => value.csv_text(),
    }
}

/// Widths of the columns in points: each number column as wide as its header or its widest
/// value among the first rows shown, other text columns as wide as their texts (capped: the
/// full text is in the tooltip), and the name column the width that is left in the panel
/// (at least [`MIN_NAME_WIDTH_PX`], at most what its texts need).
fn column_widths(ui: &Ui, table: &Table, layout: &TableLayout, sort: Option<Sort>) -> Vec<f32> {
    let body = egui::TextStyle::Body.resolve(ui.style());
    let text_w = |text: String, strong: bool| {
        let color = if strong {
            ui.visuals().strong_text_color()
        } else {
            ui.visuals().text_color()
        };
        ui.fonts_mut(|f| f.layout_no_wrap(text, body.clone(), color).size().x)
    };
    let char_w = ui.fonts_mut(|f| f.glyph_width(&body, '0')).max(5.0);
    // Room for the sort arrow beside the sorted column's title.
    let arrow_w = |c: usize| {
        if sort.is_some_and(|s| s.column == c) {
            char_w + 4.0
        } else {
            0.0
        }
    };
    let pad = 3.0;
    let mut widths: Vec<f32> = (0..table.columns.len())
        .map(|c| {
            let numeric = layout.numeric.get(c).copied().unwrap_or(false);
            let chars = layout.width_chars.get(c).copied().unwrap_or(8);
            if !numeric {
                return (chars as f32 + 1.0).min(34.0) * char_w + pad;
            }
            let title = &table.columns[c];
            let shown: Vec<String> = layout
                .order
                .slice(0..layout.order.len().min(200))
                .filter_map(|i| table.rows.get(i)?.cells.get(c))
                .map(|cell| shown_text(title, cell, true))
                .collect();
            // The longest texts measured (`8.59ms` is wider than `47.1µs`).
            let most = shown.iter().map(|t| t.chars().count()).max().unwrap_or(0);
            let widest = shown
                .into_iter()
                .filter(|t| t.chars().count() == most)
                .map(|t| text_w(t, false))
                .fold(0.0, f32::max);
            text_w(short_title(title), true).max(widest) + arrow_w(c) + pad
        })
        .collect();
    if let Some(name) = layout.name_column {
        let others: f32 = widths
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != name)
            .map(|(_, w)| w + CELL_SPACING_PX)
            .sum();
        let left = ui.available_width() - others - 2.0;
        if let Some(w) = widths.get_mut(name) {
            *w = left.min(*w).max(MIN_NAME_WIDTH_PX);
        }
    }
    widths
}

impl AnalysisPanel {
    /// Which Nsight Systems release's output the reports and findings copy: by default the one
    /// that wrote the trace, else the one chosen here.
    fn nsys_format_ui(&mut self, ui: &mut Ui, trace: &Trace) {
        let writer = NsysFormat::of_trace(trace);
        let shown = self.nsys_format.unwrap_or(writer);
        egui::ComboBox::from_id_salt("analysis_nsys_format")
            .selected_text(format!("as nsys {shown}"))
            .show_ui(ui, |ui| {
                ui.selectable_value(
                    &mut self.nsys_format,
                    None,
                    format!("as nsys {writer} (the trace's)"),
                );
                for f in NsysFormat::ALL {
                    ui.selectable_value(&mut self.nsys_format, Some(f), format!("as nsys {f}"));
                }
            })
            .response
            .on_hover_text(
                "Print reports and findings as this Nsight Systems release prints them \
                 (NVTX range names, rounding, empty context and stream)",
            );
    }
}

fn spinner(ui: &mut Ui) {
    ui.horizontal(|ui| {
        ui.spinner();
        ui.label("Computing…");
    });
}

/// One cell of `width` × `height`, numbers right-aligned (the panel's tables share it).
pub(super) fn cell<R>(
    ui: &mut Ui,
    width: f32,
    height: f32,
    right: bool,
    add: impl FnOnce(&mut Ui) -> R,
) -> R {
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
/// to sort by it, a click on a row's first text cell chooses the row.
fn draw_table(
    ui: &mut Ui,
    table: &Table,
    layout: &TableLayout,
    sort: Option<Sort>,
    report: &'static str,
    chosen: Option<&RowKey>,
) -> TableClick {
    let mut click = TableClick::default();
    let height = ui.spacing().interact_size.y;
    let numeric = &layout.numeric;
    let rows = &layout.order;
    let widths = column_widths(ui, table, layout, sort);
    // The row is chosen by clicking its name: the widest text column (a kernel or range name,
    // not a style or a kind). The panel is narrow and the name is what a person looks for, so
    // it is drawn first, wherever nsys prints it.
    let name_column = layout.name_column;
    let order: Vec<usize> = name_column
        .into_iter()
        .chain((0..table.columns.len()).filter(|&c| Some(c) != name_column))
        .collect();
    egui::ScrollArea::horizontal()
        .id_salt("analysis_stats_table")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.spacing_mut().item_spacing.x = CELL_SPACING_PX;
            ui.horizontal(|ui| {
                for &c in &order {
                    let title = &table.columns[c];
                    // The sort arrow in the monospace font: the proportional default font has
                    // no arrows or triangles.
                    let arrow = match sort {
                        Some(s) if s.column == c && s.descending => "▼",
                        Some(s) if s.column == c => "▲",
                        _ => "",
                    };
                    let numeric = numeric.get(c).copied().unwrap_or(false);
                    let width = widths.get(c).copied().unwrap_or(80.0);
                    let header = cell(ui, width, height, numeric, |ui| {
                        let add_arrow = |ui: &mut Ui| {
                            if !arrow.is_empty() {
                                ui.label(RichText::new(arrow).monospace());
                            }
                        };
                        let title = Button::new(RichText::new(short_title(title)).strong())
                            .frame(false)
                            .truncate();
                        if numeric {
                            add_arrow(ui);
                            ui.add(title)
                        } else {
                            let r = ui.add(title);
                            add_arrow(ui);
                            r
                        }
                    });
                    // Named by nsys's full title for screen readers (and tests), as on hover.
                    header.widget_info(|| {
                        egui::WidgetInfo::labeled(egui::Role::Button, true, title.as_str())
                    });
                    if header
                        .on_hover_text(format!("{title}: click to sort"))
                        .clicked()
                    {
                        click.header = Some(c);
                    }
                }
            });
            egui::ScrollArea::vertical()
                .id_salt("analysis_stats_rows")
                .max_height(320.0)
                .auto_shrink([false, true])
                .show_rows(ui, height, rows.len(), |ui, range| {
                    for i in rows.slice(range) {
                        let Some(row) = table.rows.get(i) else {
                            continue;
                        };
                        ui.horizontal(|ui| {
                            for &c in &order {
                                let Some(value) = row.cells.get(c) else {
                                    continue;
                                };
                                let w = widths.get(c).copied().unwrap_or(80.0);
                                let text = value.csv_text();
                                if Some(c) == name_column {
                                    let on = chosen.is_some_and(|k| {
                                        k.report == report && *k == RowKey::of(report, row, i)
                                    });
                                    let name = cell(ui, w, height, false, |ui| {
                                        ui.add(Button::selectable(on, text.as_str()).truncate())
                                    });
                                    if name.on_hover_text(&text).clicked() {
                                        click.row = Some(i);
                                    }
                                    continue;
                                }
                                let numeric = numeric.get(c).copied().unwrap_or(false);
                                let shown = shown_text(&table.columns[c], value, numeric);
                                cell(ui, w, height, numeric, |ui| {
                                    ui.add(egui::Label::new(shown).truncate())
                                })
                                .on_hover_text(text);
                            }
                        });
                    }
                });
        });
    click
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_durations_keep_three_digits_and_fit_six_characters() {
        assert_eq!(compact_duration(91_754_321.0), "91.8ms");
        assert_eq!(compact_duration(1_466_000.0), "1.47ms");
        assert_eq!(compact_duration(398_900.0), "399µs");
        assert_eq!(compact_duration(150.0), "150ns");
        assert_eq!(compact_duration(2_500_000_000.0), "2.50s");
        for ns in [
            0.0, 9.0, 999.0, 1_000.0, 9_999.0, 99_950.0, 999_999.0, 999e9,
        ] {
            assert!(compact_duration(ns).chars().count() <= 6, "{ns}");
        }
    }

    #[test]
    fn short_titles_drop_the_unit_and_long_words() {
        assert_eq!(short_title("Total Time (ns)"), "Total");
        assert_eq!(short_title("Instances"), "Count");
        assert_eq!(short_title("StdDev (ns)"), "StdDev");
        assert_eq!(short_title("Time (%)"), "Time %");
        assert_eq!(short_title("Name"), "Name");
    }
}
