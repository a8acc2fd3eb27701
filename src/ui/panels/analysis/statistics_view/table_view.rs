//! The statistics table drawn: its header (short titles, sort arrows, a drag handle on each
//! column's right edge, see [`crate::ui::columns`]), the rows on screen with names cut to their
//! column where the column's names agree, and the widths of the columns.

use crate::export::elide::{MIN_TAIL_CHARS, elide_keeping_end};
use egui::{Align, Button, Layout, RichText, Ui};

use super::super::{RowKey, Sort, TableLayout};
use crate::analysis::{Cell, Table};
use crate::ui::columns::{self, ColumnWidths};

/// What a click on the table chose.
#[derive(Default)]
pub(super) struct TableClick {
    pub(super) header: Option<usize>,
    pub(super) row: Option<usize>,
}

/// Space between two cells of a row, in points (less than egui's default, so that the nine
/// columns of a summary fit the panel's default width).
const CELL_SPACING_PX: f32 = 4.0;
/// The name column never gets narrower than this, however many columns there are.
const MIN_NAME_WIDTH_PX: f32 = 100.0;
/// When the other columns alone fill the panel (the table scrolls sideways anyway, as the
/// NVTX GPU projection's long titles make it), the name column takes up to this width: scrolling
/// to a number costs less than a name cut to `backward_…`.
const SCROLLED_NAME_WIDTH_PX: f32 = 170.0;

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

pub(crate) use crate::ui::columns::compact_duration;

/// A cell's text as the table shows it: durations compact, other values as nsys prints them.
fn shown_text(column: &str, value: &Cell, numeric: bool) -> String {
    match (numeric, value.number()) {
        (true, Some(_)) => {
            super::super::stats_table::pretty_number(column, value, compact_duration)
        }
        _ => value.csv_text(),
    }
}

/// Widths of the columns in points: each number column as wide as its header or its widest
/// value among the first rows shown, other text columns as wide as their texts (capped: the
/// full text is in the tooltip), and the name column the width that is left in the panel
/// (at least [`MIN_NAME_WIDTH_PX`], or [`SCROLLED_NAME_WIDTH_PX`] when the table scrolls anyway;
/// at most what its texts need). A width a person set
/// (`set`, by column title) takes the place of the column's own.
/// The width the names of column `c` that keep their end need to stay apart: the widest of
/// them cut to `[…` and [`MIN_TAIL_CHARS`] of its end (at most 64 measured); 0 without any.
fn keeps_end_floor(layout: &TableLayout, c: usize, text_w: &dyn Fn(String, bool) -> f32) -> f32 {
    layout.keeps_end.get(c).map_or(0.0, |names| {
        names
            .iter()
            .take(64)
            .map(|n| text_w(elide_keeping_end(n, MIN_TAIL_CHARS + 2), false))
            .fold(0.0, f32::max)
    })
}

fn column_widths(
    ui: &Ui,
    table: &Table,
    layout: &TableLayout,
    sort: Option<Sort>,
    set: &ColumnWidths,
) -> Vec<f32> {
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
    for (c, w) in widths.iter_mut().enumerate() {
        if let Some(user) = table.columns.get(c).and_then(|t| set.get(t)) {
            // A column of names that keep their end is never narrower than the words that tell
            // them apart (`[…Device-to-Device]` against `[…Host-to-Device]`): cut further, two
            // rows would read the same.
            let button_pad = 2.0 * ui.spacing().button_padding.x + 2.0;
            *w = user.max(keeps_end_floor(layout, c, &text_w) + button_pad + char_w + pad);
        }
    }
    if let Some(name) = layout
        .name_column
        .filter(|&c| table.columns.get(c).is_none_or(|t| set.get(t).is_none()))
    {
        let others: f32 = widths
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != name)
            .map(|(_, w)| w + CELL_SPACING_PX)
            .sum();
        let left = ui.available_width() - others - 2.0;
        let floor = if left < MIN_NAME_WIDTH_PX {
            SCROLLED_NAME_WIDTH_PX
        } else {
            MIN_NAME_WIDTH_PX
        };
        if let Some(w) = widths.get_mut(name) {
            *w = left.min(*w).max(floor.min(*w)).max(MIN_NAME_WIDTH_PX);
        }
    }
    widths
}

/// One cell of `width` × `height`, numbers right-aligned (the panel's tables share it).
pub(in crate::ui::panels::analysis) fn cell<R>(
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
/// to sort by it, a click on a row's first text cell chooses the row. Texts too long for their
/// column are cut where the column's texts agree (the whole text is the cell's tooltip); each
/// header's right edge drags the column's width, remembered per report.
pub(super) fn draw_table(
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
    let memory_key = format!("stats:{report}");
    let set = ColumnWidths::load(ui.ctx(), &memory_key);
    let widths = column_widths(ui, table, layout, sort, &set);
    let font = egui::TextStyle::Body.resolve(ui.style());
    // Room for the button's padding around a name.
    let button_pad = 2.0 * ui.spacing().button_padding.x + 2.0;
    let keeps_end =
        |c: usize, text: &str| layout.keeps_end.get(c).is_some_and(|s| s.contains(text));
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
                    let left = ui.cursor().min.x;
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
                    let header_rect = header.rect;
                    if header
                        .on_hover_text(format!("{title}: click to sort"))
                        .clicked()
                    {
                        click.header = Some(c);
                    }
                    let right = left + width + CELL_SPACING_PX / 2.0;
                    let cell_rect =
                        egui::Rect::from_x_y_ranges(left..=right, header_rect.y_range());
                    columns::resize_handle(ui, &memory_key, title, right, cell_rect, width);
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
                                    let shown = columns::elide_name_to_width(
                                        ui,
                                        &text,
                                        &font,
                                        w - button_pad,
                                        keeps_end(c, &text),
                                        layout.name_differs_at.get(&text).copied().unwrap_or(0),
                                    );
                                    let name = cell(ui, w, height, false, |ui| {
                                        let r = ui.add(Button::selectable(on, shown.as_str()));
                                        // Named by the whole text, as its tooltip says it;
                                        // its value is the text shown.
                                        r.widget_info(|| {
                                            let mut info = egui::WidgetInfo::selected(
                                                egui::Role::Button,
                                                true,
                                                on,
                                                text.as_str(),
                                            );
                                            info.current_text_value = Some(shown.clone());
                                            info
                                        });
                                        r
                                    });
                                    if name.on_hover_text(&text).clicked() {
                                        click.row = Some(i);
                                    }
                                    continue;
                                }
                                let numeric = numeric.get(c).copied().unwrap_or(false);
                                let mut shown = shown_text(&table.columns[c], value, numeric);
                                if !numeric {
                                    shown = columns::elide_to_width(
                                        ui,
                                        &shown,
                                        &font,
                                        w,
                                        keeps_end(c, &text),
                                    );
                                }
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
    fn short_titles_drop_the_unit_and_long_words() {
        assert_eq!(short_title("Total Time (ns)"), "Total");
        assert_eq!(short_title("Instances"), "Count");
        assert_eq!(short_title("StdDev (ns)"), "StdDev");
        assert_eq!(short_title("Time (%)"), "Time %");
        assert_eq!(short_title("Name"), "Name");
    }
}
