//! The Source view's SASS table: a header of column buttons (a click sorts by the column, largest
//! first; again: the other way), then one row per instruction in the view's order, Address and
//! Source kept at the left while the counters scroll sideways. Rows are painted, not laid out as
//! widgets, and only those on screen (`ScrollArea::show_rows`), only the cells in view: a kernel
//! of tens of thousands of instructions draws as fast as a small one. A cell's background is its
//! value's share of the column's largest ([`super::source::heat_colour`]).

use egui::{Align2, Rect, RichText, Sense, Ui, pos2, vec2};

use super::source::{ROW_HEIGHT, SourceView, heat_colour};
use super::source_model::KernelSourceModel;
use crate::analysis::ncu::source::ColumnKind;

const ADDRESS_WIDTH: f32 = 128.0;
const TEXT_WIDTH: f32 = 330.0;
const NUMBER_WIDTH: f32 = 92.0;
const MEMORY_WIDTH: f32 = 104.0;
const HEADER_HEIGHT: f32 = 58.0;
const PAD: f32 = 4.0;

/// The left edge of each counter column from the first's, and their total width.
fn column_offsets(model: &KernelSourceModel) -> (Vec<f32>, f32) {
    let mut offsets = Vec::with_capacity(model.columns.len());
    let mut x = 0.0;
    for c in &model.columns {
        offsets.push(x);
        x += column_width(c.kind);
    }
    (offsets, x)
}

pub(super) fn column_width(kind: ColumnKind) -> f32 {
    match kind {
        ColumnKind::Number => NUMBER_WIDTH,
        _ => MEMORY_WIDTH,
    }
}

/// What a person did in the table this frame.
enum Action {
    Sort(usize),
    Select(usize),
}

/// Draws the table of `view`'s model.
pub(super) fn show(ui: &mut Ui, view: &mut SourceView) {
    let Some(model) = &view.model else {
        return;
    };
    let (offsets, counters_width) = column_offsets(model);
    let frozen = ADDRESS_WIDTH + TEXT_WIDTH;
    let total_width = frozen + counters_width;
    let mut action = None;
    egui::ScrollArea::horizontal()
        .id_salt("ncu_source_sass_header")
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysHidden)
        .scroll_source(egui::scroll_area::ScrollSource::NONE)
        .horizontal_scroll_offset(view.sass_x)
        .show(ui, |ui| {
            let (rect, _) =
                ui.allocate_exact_size(vec2(total_width, HEADER_HEIGHT), Sense::hover());
            let clip = ui.clip_rect();
            for (c, info) in model.columns.iter().enumerate() {
                let left = rect.left() + frozen + offsets[c];
                let cell = Rect::from_min_size(
                    pos2(left, rect.top()),
                    vec2(column_width(info.kind), HEADER_HEIGHT),
                );
                if cell.right() <= clip.left() + frozen || cell.left() >= clip.right() {
                    continue;
                }
                let sorted = view.sort.0 == c;
                let button = egui::Button::selectable(sorted, RichText::new(&info.label).small())
                    .wrap_mode(egui::TextWrapMode::Wrap);
                let arrow = if view.sort.1 {
                    "largest first"
                } else {
                    "smallest first"
                };
                let tip = if sorted {
                    format!("{}\n{}\nSorted: {arrow}", info.label, info.metric)
                } else {
                    format!("{}\n{}\nClick to sort by it", info.label, info.metric)
                };
                if ui
                    .put(cell.shrink(1.0), button)
                    .on_hover_text(tip)
                    .clicked()
                {
                    action = Some(Action::Sort(c));
                }
            }
            // Address and Source stay at the left, over the counters scrolled under them.
            let left = clip.left().max(rect.left());
            let fixed = Rect::from_min_size(pos2(left, rect.top()), vec2(frozen, HEADER_HEIGHT));
            ui.painter()
                .rect_filled(fixed, 0.0, ui.visuals().panel_fill);
            for (x, label) in [(0.0, "Address"), (ADDRESS_WIDTH, "Source")] {
                ui.painter().text(
                    pos2(left + x + PAD, rect.bottom() - PAD),
                    Align2::LEFT_BOTTOM,
                    label,
                    egui::TextStyle::Body.resolve(ui.style()),
                    ui.visuals().strong_text_color(),
                );
            }
        });
    let target = view
        .scroll_sass
        .then(|| {
            let wanted = view.selected?;
            view.order.iter().position(|&i| i == wanted)
        })
        .flatten();
    view.scroll_sass = false;
    let highlighted = view.highlighted();
    let mut area = egui::ScrollArea::both()
        .id_salt("ncu_source_sass")
        .auto_shrink([false, false]);
    if let Some(position) = target {
        let offset = position as f32 * ROW_HEIGHT - ui.available_height() / 2.0;
        area = area.vertical_scroll_offset(offset.max(0.0));
    }
    let output = ui
        .scope(|ui| {
            ui.spacing_mut().item_spacing.y = 0.0;
            area.show_rows(ui, ROW_HEIGHT, view.order.len(), |ui, rows| {
                let mut cell = String::new();
                for position in rows {
                    let i = view.order[position];
                    let row = Row {
                        instruction: i,
                        stripe: position % 2 == 1,
                        selected: view.selected == Some(i),
                        highlighted: highlighted.contains(&i),
                    };
                    if draw_row(ui, model, &row, (&offsets, total_width), &mut cell) {
                        action = Some(Action::Select(i));
                    }
                }
            })
        })
        .inner;
    if (output.state.clamped_offset().x - view.sass_x).abs() > 0.5 {
        ui.ctx().request_repaint();
    }
    view.sass_x = output.state.clamped_offset().x;
    match action {
        Some(Action::Sort(c)) => {
            let descending = view.sort.0 != c || !view.sort.1;
            view.sort_note = None;
            view.sort_by(c, descending);
        }
        Some(Action::Select(i)) => view.select_instruction(i),
        None => {}
    }
}

/// One row's state.
struct Row {
    instruction: usize,
    stripe: bool,
    selected: bool,
    /// Of the selected CUDA line.
    highlighted: bool,
}

/// Paints one instruction's row; true when it was clicked.
fn draw_row(
    ui: &mut Ui,
    model: &KernelSourceModel,
    row: &Row,
    (offsets, total_width): (&[f32], f32),
    cell: &mut String,
) -> bool {
    let i = row.instruction;
    let Some(instruction) = model.instructions.get(i) else {
        return false;
    };
    let (rect, _) = ui.allocate_exact_size(vec2(total_width, ROW_HEIGHT), Sense::hover());
    // An id of the instruction's own, not of the row's place on screen (that changes as the
    // table scrolls or sorts).
    // Its visible part only: the row is as wide as all columns.
    let hit = rect.intersect(ui.clip_rect());
    let response = ui.interact(
        hit,
        ui.make_persistent_id(("ncu_sass_row", i)),
        Sense::click(),
    );
    let address = format!("0x{:x}", instruction.address);
    response.widget_info(|| {
        egui::WidgetInfo::selected(egui::Role::Button, true, row.selected, &address)
    });
    let clip = ui.clip_rect();
    if !clip.intersects(rect) {
        return response.clicked();
    }
    let visuals = ui.visuals();
    let painter = ui.painter();
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let text_colour = visuals.text_color();
    let frozen = ADDRESS_WIDTH + TEXT_WIDTH;
    let background = if row.selected {
        visuals.selection.bg_fill
    } else if row.highlighted {
        visuals.selection.bg_fill.gamma_multiply(0.45)
    } else if row.stripe {
        visuals.faint_bg_color
    } else {
        egui::Color32::TRANSPARENT
    };
    painter.rect_filled(rect, 0.0, background);
    for (c, info) in model.columns.iter().enumerate() {
        let left = rect.left() + frozen + offsets[c];
        let r = Rect::from_min_size(
            pos2(left, rect.top()),
            vec2(column_width(info.kind), ROW_HEIGHT),
        );
        if r.right() <= clip.left() + frozen || r.left() >= clip.right() {
            continue;
        }
        let max = model.max[c];
        if max > 0.0 && !row.selected {
            let share = model.number(c, i) / max;
            painter.rect_filled(r.shrink2(vec2(1.0, 1.0)), 0.0, heat_colour(share));
        }
        cell.clear();
        model.write_cell(c, i, cell);
        painter.with_clip_rect(r.intersect(clip)).text(
            r.right_center() - vec2(PAD, 0.0),
            Align2::RIGHT_CENTER,
            cell.as_str(),
            font.clone(),
            text_colour,
        );
    }
    // Address and Source, kept at the left.
    let left = clip.left().max(rect.left());
    let fixed = Rect::from_min_size(pos2(left, rect.top()), vec2(frozen, ROW_HEIGHT));
    painter.rect_filled(fixed, 0.0, visuals.panel_fill);
    painter.rect_filled(fixed, 0.0, background);
    let fixed_painter = painter.with_clip_rect(fixed.intersect(clip));
    fixed_painter.text(
        pos2(left + PAD, rect.center().y),
        Align2::LEFT_CENTER,
        &address,
        font.clone(),
        visuals.weak_text_color(),
    );
    fixed_painter
        .with_clip_rect(
            Rect::from_min_size(
                pos2(left + ADDRESS_WIDTH, rect.top()),
                vec2(TEXT_WIDTH - PAD, ROW_HEIGHT),
            )
            .intersect(clip),
        )
        .text(
            pos2(left + ADDRESS_WIDTH + PAD, rect.center().y),
            Align2::LEFT_CENTER,
            instruction.text.trim(),
            font,
            visuals.strong_text_color(),
        );
    let clicked = response.clicked();
    response.on_hover_text(format!("{address}  {}", instruction.text.trim()));
    clicked
}
