//! The Source view's CUDA source: every line of the files the kernel's line table names, those
//! with instructions with their counters summed over them (the CUDA view's cells, as
//! `--print-source cuda,sass` prints them) for the columns that say where time goes (warp stall
//! samples, instructions executed, and the column the SASS is sorted by), heat-coloured by the
//! line's share of the hottest line. A click on a line selects its instructions; a selected
//! instruction's line is highlighted and scrolled to. Only the lines on screen are drawn.

use std::collections::HashMap;

use egui::{Align2, Rect, Sense, Ui, pos2, vec2};

use super::source::{ROW_HEIGHT, SourceView, heat_colour};
use super::source_model::{DEFAULT_SORT_LABEL, KernelSourceModel};

const NUMBER_WIDTH: f32 = 48.0;
const COUNTER_WIDTH: f32 = 84.0;
const HEADER_HEIGHT: f32 = 44.0;
const PAD: f32 = 4.0;

/// The counter columns shown beside the source (few: the text needs the room): the stall
/// samples, instructions executed, and the SASS table's sort column.
fn shown_columns(model: &KernelSourceModel, sort: usize) -> Vec<usize> {
    let mut shown: Vec<usize> = [DEFAULT_SORT_LABEL, "Instructions Executed"]
        .iter()
        .filter_map(|label| model.column(label))
        .collect();
    if !shown.contains(&sort) && sort < model.columns.len() {
        shown.push(sort);
    }
    shown
}

/// Draws the CUDA source of `view`'s model.
pub(super) fn show(ui: &mut Ui, view: &mut SourceView) {
    let Some(model) = &view.model else {
        return;
    };
    let line_at: HashMap<(usize, u32), usize> = model
        .lines
        .iter()
        .enumerate()
        .map(|(k, l)| ((l.file, l.number), k))
        .collect();
    // Display rows: each file's lines one after the other.
    let mut starts = Vec::with_capacity(model.files.len());
    let mut rows = 0;
    for f in &model.files {
        starts.push(rows);
        rows += f.lines.len();
    }
    let at_row = |row: usize| -> Option<(usize, u32)> {
        let file = starts.iter().rposition(|&s| s <= row)?;
        Some((file, (row - starts[file] + 1) as u32))
    };
    let paths: Vec<&str> = model.files.iter().map(|f| f.path.as_str()).collect();
    ui.horizontal(|ui| {
        ui.strong("CUDA source");
        ui.weak(paths.join(", "));
    });
    let columns = shown_columns(model, view.sort.0);
    let counters_width = COUNTER_WIDTH * columns.len() as f32;
    // The header: the counters' labels over their columns, at the right.
    let (header, _) =
        ui.allocate_exact_size(vec2(ui.available_width(), HEADER_HEIGHT), Sense::hover());
    let counters_left = (header.right() - counters_width).max(header.left() + 160.0);
    for (k, &c) in columns.iter().enumerate() {
        let rect = Rect::from_min_size(
            pos2(counters_left + k as f32 * COUNTER_WIDTH, header.top()),
            vec2(COUNTER_WIDTH, HEADER_HEIGHT),
        );
        let galley = ui.painter().layout(
            model.columns[c].label.clone(),
            egui::TextStyle::Small.resolve(ui.style()),
            ui.visuals().strong_text_color(),
            COUNTER_WIDTH - 2.0 * PAD,
        );
        let at = pos2(
            rect.right() - PAD - galley.size().x,
            rect.bottom() - PAD - galley.size().y,
        );
        ui.painter()
            .galley(at, galley, ui.visuals().strong_text_color());
    }
    let target = view
        .scroll_line
        .then(|| {
            let line = model.lines.get(view.selected_line?)?;
            Some(starts.get(line.file)? + line.number as usize - 1)
        })
        .flatten();
    view.scroll_line = false;
    let mut area = egui::ScrollArea::both()
        .id_salt("ncu_source_cuda_lines")
        .auto_shrink([false, false]);
    if let Some(row) = target {
        let offset = row as f32 * ROW_HEIGHT - ui.available_height() / 2.0;
        area = area.vertical_scroll_offset(offset.max(0.0));
    }
    let mut clicked = None;
    ui.scope(|ui| {
        ui.spacing_mut().item_spacing.y = 0.0;
        area.show_rows(ui, ROW_HEIGHT, rows, |ui, range| {
            let width = ui.available_width().max(counters_width + 160.0);
            let font = egui::TextStyle::Monospace.resolve(ui.style());
            for row in range {
                let Some((file, number)) = at_row(row) else {
                    continue;
                };
                let line = line_at.get(&(file, number)).copied();
                let sense = if line.is_some() {
                    Sense::click()
                } else {
                    Sense::hover()
                };
                let (rect, _) = ui.allocate_exact_size(vec2(width, ROW_HEIGHT), Sense::hover());
                let response =
                    ui.interact(rect, ui.make_persistent_id(("ncu_cuda_line", row)), sense);
                let selected = line.is_some() && line == view.selected_line;
                if let Some(l) = line {
                    response.widget_info(|| {
                        egui::WidgetInfo::selected(
                            egui::Role::Button,
                            true,
                            selected,
                            format!("line {number}"),
                        )
                    });
                    if response.clicked() {
                        clicked = Some(l);
                    }
                }
                let visuals = ui.visuals();
                let painter = ui.painter();
                if selected {
                    painter.rect_filled(rect, 0.0, visuals.selection.bg_fill);
                }
                let text = model.files[file]
                    .lines
                    .get(number as usize - 1)
                    .map_or("", String::as_str);
                let colour = if line.is_some() {
                    visuals.strong_text_color()
                } else {
                    visuals.weak_text_color()
                };
                painter.text(
                    pos2(rect.left() + NUMBER_WIDTH - PAD, rect.center().y),
                    Align2::RIGHT_CENTER,
                    number.to_string(),
                    font.clone(),
                    visuals.weak_text_color(),
                );
                let counters_left = rect.right() - counters_width;
                let text_rect = Rect::from_min_max(
                    pos2(rect.left() + NUMBER_WIDTH + PAD, rect.top()),
                    pos2(counters_left - PAD, rect.bottom()),
                );
                painter.with_clip_rect(text_rect).text(
                    text_rect.left_center(),
                    Align2::LEFT_CENTER,
                    text,
                    font.clone(),
                    colour,
                );
                let Some(l) = line.and_then(|l| model.lines.get(l)) else {
                    continue;
                };
                for (k, &c) in columns.iter().enumerate() {
                    let cell = Rect::from_min_size(
                        pos2(counters_left + k as f32 * COUNTER_WIDTH, rect.top()),
                        vec2(COUNTER_WIDTH, ROW_HEIGHT),
                    );
                    let max = model.line_max.get(c).copied().unwrap_or(0.0);
                    if max > 0.0 && !selected {
                        let share = l.sums[c] / max;
                        painter.rect_filled(cell.shrink2(vec2(1.0, 1.0)), 0.0, heat_colour(share));
                    }
                    painter.with_clip_rect(cell).text(
                        cell.right_center() - vec2(PAD, 0.0),
                        Align2::RIGHT_CENTER,
                        &l.cells[c],
                        font.clone(),
                        visuals.text_color(),
                    );
                }
                response.on_hover_text(format!(
                    "line {number}: {} instructions; click to select them",
                    l.instructions.len()
                ));
            }
        });
    });
    if let Some(l) = clicked {
        view.select_line(l);
    }
}
