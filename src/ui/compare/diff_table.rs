//! The compare panel's two tables drawn. The headline: one line per figure, values and changes
//! with their units (`414.4 ms`, `+0.3 pt`), each change green where the new run is better, red
//! where it is worse, and the trace span (start-up included) in the weak colour, judged neither
//! way. The per-name diff: columns measured to their contents so that all nine fit the panel at
//! its default width in a 1600-pixel window, names cut where the rows' names agree (the whole
//! name on hover), widths draggable and remembered ([`crate::ui::columns`]).

use egui::{Align, Color32, Layout, RichText, Ui};

use crate::analysis::diff::{self, DiffRow, HeadlineRow, Status};
use crate::analysis::headline::{self, Better, judged};
use crate::export::elide::keeps_end_each;
use crate::ui::columns::{self, ColumnWidths, text_width};

/// Rows drawn at most (the CSV has all of them).
pub const SHOWN_ROWS: usize = 500;
/// Space between two cells of a row, in points.
const SPACING_PX: f32 = 6.0;
/// The name column never gets narrower than this.
const MIN_NAME_PX: f32 = 80.0;
const BETTER: Color32 = Color32::from_rgb(0x4c, 0xaf, 0x50);
const WORSE: Color32 = Color32::from_rgb(0xe0, 0x5a, 0x4f);

/// A change's colour: green when better, red when worse, `None` (the text colour) otherwise.
fn change_colour(change: Option<f64>, better: Better) -> Option<Color32> {
    judged(change, better).map(|good| if good { BETTER } else { WORSE })
}

/// One cell `width` wide holding `text`, right-aligned when `right`; named by `name` for screen
/// readers (the text itself when `None`).
fn text_cell(ui: &mut Ui, width: f32, right: bool, text: RichText, name: Option<&str>) {
    let height = ui.spacing().interact_size.y;
    let layout = if right {
        Layout::right_to_left(Align::Center)
    } else {
        Layout::left_to_right(Align::Center)
    };
    ui.allocate_ui_with_layout(egui::vec2(width, height), layout, |ui| {
        ui.set_min_size(egui::vec2(width, height));
        let r = ui.add(egui::Label::new(text).truncate());
        if let Some(name) = name {
            r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, name));
        }
    });
}

/// The headline lines (see the module's documentation).
pub fn headline_grid(ui: &mut Ui, rows: &[HeadlineRow]) {
    let texts: Vec<headline::HeadlineText> = rows.iter().map(headline::headline_text).collect();
    let font = egui::TextStyle::Body.resolve(ui.style());
    let header = ["Metric", "Base", "New", "Δ", "Δ %"];
    let cells = |t: &headline::HeadlineText| {
        [
            t.metric.clone(),
            t.base.clone(),
            t.new.clone(),
            t.delta.clone(),
            t.delta_percent.clone(),
        ]
    };
    let widths: Vec<f32> = (0..header.len())
        .map(|c| {
            texts
                .iter()
                .map(|t| text_width(ui, &cells(t)[c], &font))
                .fold(text_width(ui, header[c], &font), f32::max)
                + 4.0
        })
        .collect();
    ui.spacing_mut().item_spacing.x = SPACING_PX;
    ui.horizontal(|ui| {
        for (c, h) in header.iter().enumerate() {
            text_cell(ui, widths[c], c > 0, RichText::new(*h).strong(), None);
        }
    });
    for t in &texts {
        let span = t.better == Better::Neither && t.metric == "Trace span";
        let weak = ui.visuals().weak_text_color();
        ui.horizontal(|ui| {
            for (c, text) in cells(t).into_iter().enumerate() {
                let mut rich = RichText::new(text);
                if span {
                    rich = rich.color(weak);
                } else if c >= 3
                    && let Some(colour) = change_colour(t.change, t.better)
                {
                    rich = rich.color(colour);
                }
                text_cell(ui, widths[c], c > 0, rich, None);
            }
        });
    }
}

/// A figure of the diff table: durations and sizes with their unit (compact: `16.1ms`, so the
/// nine columns fit), counts as they are.
fn figure(v: f64, unit: &str) -> String {
    match unit {
        "ns" => columns::compact_duration(v),
        _ if v.fract() == 0.0 && v.abs() < 1e15 => format!("{} {unit}", v as i64),
        _ => format!("{v:.3} {unit}"),
    }
}

/// A count: whole, or to 3 places per iteration.
fn count(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

/// The per-name diff of `rows` (at most [`SHOWN_ROWS`]); returns the name clicked.
pub fn rows_table(
    ui: &mut Ui,
    rows: &[&DiffRow],
    unit: &str,
    selected: Option<&str>,
) -> Option<String> {
    const TABLE: &str = "compare_diff";
    // Short titles shown, and the full ones (those of `sightline diff --format csv`) as names.
    let columns: [(&str, String); 9] = [
        ("Name", "Name".to_string()),
        ("Δ total", format!("Delta Total ({unit})")),
        ("Δ %", "Delta Total (%)".to_string()),
        ("Base", format!("Base Total ({unit})")),
        ("New", format!("New Total ({unit})")),
        ("Base n", "Base Instances".to_string()),
        ("New n", "New Instances".to_string()),
        ("Δ avg %", "Delta Avg (%)".to_string()),
        ("Status", "Status".to_string()),
    ];
    let shown: Vec<&DiffRow> = rows.iter().take(SHOWN_ROWS).copied().collect();
    let pct = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let avg_delta = |row: &DiffRow| match (
        row.base.and_then(|s| s.avg()),
        row.new.and_then(|s| s.avg()),
    ) {
        (Some(x), Some(y)) => diff::delta_percent(x, y),
        _ => None,
    };
    let values = |row: &DiffRow| -> [String; 8] {
        let (b, n) = (row.base.unwrap_or_default(), row.new.unwrap_or_default());
        let d = row.delta_total();
        [
            format!("{}{}", if d > 0.0 { "+" } else { "" }, figure(d, unit)),
            pct(diff::delta_percent(row.base_total(), row.new_total())),
            figure(b.total, unit),
            figure(n.total, unit),
            count(b.instances),
            count(n.instances),
            pct(avg_delta(row)),
            row.status().label().to_string(),
        ]
    };
    let font = egui::TextStyle::Body.resolve(ui.style());
    let set = ColumnWidths::load(ui.ctx(), TABLE);
    let mut widths: Vec<f32> = (0..columns.len())
        .map(|c| {
            if c == 0 {
                return 0.0;
            }
            shown
                .iter()
                .take(200)
                .map(|r| text_width(ui, &values(r)[c - 1], &font))
                .fold(text_width(ui, columns[c].0, &font), f32::max)
                + 4.0
        })
        .collect();
    for (c, w) in widths.iter_mut().enumerate() {
        if let Some(user) = set.get(&columns[c].1) {
            *w = user;
        }
    }
    if set.get("Name").is_none() {
        let others: f32 = widths[1..].iter().map(|w| w + SPACING_PX).sum();
        let need = shown
            .iter()
            .take(200)
            .map(|r| text_width(ui, &r.name, &font))
            .fold(60.0, f32::max)
            + 12.0;
        widths[0] = (ui.available_width() - others - 4.0)
            .min(need)
            .max(MIN_NAME_PX);
    }
    let names: Vec<&str> = shown.iter().map(|r| r.name.as_str()).collect();
    let ends = keeps_end_each(&names);
    let height = ui.spacing().interact_size.y;
    let mut clicked = None;
    if rows.len() > SHOWN_ROWS {
        ui.weak(format!(
            "The {SHOWN_ROWS} largest changes of {} (narrow with the filter, or export the CSV)",
            rows.len()
        ));
    }
    egui::ScrollArea::horizontal()
        .id_salt("compare_diff_columns")
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.spacing_mut().item_spacing.x = SPACING_PX;
            ui.horizontal(|ui| {
                for (c, (title, full)) in columns.iter().enumerate() {
                    let left = ui.cursor().min.x;
                    text_cell(
                        ui,
                        widths[c],
                        c > 0 && c < 8,
                        RichText::new(*title).strong(),
                        Some(full),
                    );
                    let right = left + widths[c] + SPACING_PX / 2.0;
                    let rect = egui::Rect::from_x_y_ranges(left..=right, ui.min_rect().y_range());
                    columns::resize_handle(ui, TABLE, full, right, rect, widths[c]);
                }
            });
            egui::ScrollArea::vertical()
                .id_salt("compare_diff_rows")
                .auto_shrink([false, false])
                .show_rows(ui, height, shown.len(), |ui, range| {
                    for (k, row) in shown.iter().enumerate().take(range.end).skip(range.start) {
                        let end = ends.get(k).copied().unwrap_or(false);
                        ui.horizontal(|ui| {
                            let chosen = selected == Some(row.name.as_str());
                            let name = columns::elide_to_width(
                                ui,
                                &row.name,
                                &font,
                                widths[0] - 2.0 * ui.spacing().button_padding.x - 2.0,
                                end,
                            );
                            let r = ui
                                .allocate_ui_with_layout(
                                    egui::vec2(widths[0], height),
                                    Layout::left_to_right(Align::Center),
                                    |ui| {
                                        ui.set_min_size(egui::vec2(widths[0], height));
                                        ui.add(egui::Button::selectable(chosen, name.as_str()))
                                    },
                                )
                                .inner;
                            r.widget_info(|| {
                                let mut info = egui::WidgetInfo::selected(
                                    egui::Role::Button,
                                    true,
                                    chosen,
                                    row.name.as_str(),
                                );
                                info.current_text_value = Some(name.clone());
                                info
                            });
                            if r.on_hover_text(format!(
                                "{}\nclick to outline its events in both runs",
                                row.name
                            ))
                            .clicked()
                            {
                                clicked = Some(row.name.clone());
                            }
                            let d = row.delta_total();
                            let pct = diff::delta_percent(row.base_total(), row.new_total());
                            let avg = avg_delta(row);
                            for (k, text) in values(row).into_iter().enumerate() {
                                let c = k + 1;
                                let colour = match c {
                                    1 => change_colour(Some(d), Better::Lower),
                                    2 => change_colour(pct, Better::Lower),
                                    7 => change_colour(avg, Better::Lower),
                                    8 => match row.status() {
                                        Status::New => Some(BETTER),
                                        Status::Gone => Some(WORSE),
                                        Status::Both => Some(ui.visuals().weak_text_color()),
                                    },
                                    _ => None,
                                };
                                let mut rich = RichText::new(text);
                                if let Some(colour) = colour {
                                    rich = rich.color(colour);
                                }
                                text_cell(ui, widths[c], c < 8, rich, None);
                            }
                        });
                    }
                });
        });
    clicked
}
