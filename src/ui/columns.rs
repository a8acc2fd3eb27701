//! Table columns in the window: names cut to their column's width where their column's names
//! agree (the start of a kernel name is kept, the end of `[CUDA memcpy Device-to-Host]`: see
//! [`crate::export::elide`]), and column widths a person sets by dragging a header's right edge,
//! remembered per table and column in egui's persisted memory (saved with the window's state,
//! so they outlive the run). A double click on the edge gives the column its automatic width
//! back.

use std::collections::BTreeMap;

use egui::{CursorIcon, FontId, Id, Rect, Sense, Ui};

use crate::export::elide::{elide, elide_keeping_end};

/// No column is dragged narrower than this.
pub const MIN_COLUMN_WIDTH_PX: f32 = 24.0;
/// Width of the drag handle on a header cell's right edge.
const HANDLE_WIDTH_PX: f32 = 7.0;

/// A duration in at most three significant digits with its unit and no space (`91.8ms`,
/// `399µs`, `150ns`): six characters at most below 1000 s, so that eight columns of them fit
/// a side panel; the exact value is the cell's tooltip.
pub fn compact_duration(ns: f64) -> String {
    let a = ns.abs();
    let (unit, scale) = if a >= 1e9 {
        ("s", 1e9)
    } else if a >= 1e6 {
        ("ms", 1e6)
    } else if a >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    };
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

/// Width of `text` in `font`, in points.
pub fn text_width(ui: &Ui, text: &str, font: &FontId) -> f32 {
    let color = ui.visuals().text_color();
    ui.fonts_mut(|f| {
        f.layout_no_wrap(text.to_string(), font.clone(), color)
            .size()
            .x
    })
}

/// `text` cut to fit `width` points in `font`: whole when it fits, else its start and `…` or,
/// when `keep_end`, a few characters of its start, `…` and most of its end.
pub fn elide_to_width(ui: &Ui, text: &str, font: &FontId, width: f32, keep_end: bool) -> String {
    let full = text_width(ui, text, font);
    if full <= width {
        return text.to_string();
    }
    let n = text.chars().count().max(1);
    let per_char = full / n as f32;
    let mut chars = ((width / per_char.max(0.1)).floor() as usize).clamp(1, n - 1);
    loop {
        let cut = match keep_end {
            true => elide_keeping_end(text, chars),
            false => elide(text, chars, 0),
        };
        if chars <= 1 || text_width(ui, &cut, font) <= width {
            return cut;
        }
        chars -= 1;
    }
}

/// A name cut to fit `width` points in `font` where it differs from the column's name most like
/// it, when the two share more of their start than fits (`sm80…_nn_n_tilesize64x…`, see
/// [`crate::export::elide::elide_to_difference`]); otherwise as [`elide_to_width`] cuts it.
pub fn elide_name_to_width(
    ui: &Ui,
    text: &str,
    font: &FontId,
    width: f32,
    keep_end: bool,
    differs_at: usize,
) -> String {
    let full = text_width(ui, text, font);
    if keep_end || full <= width {
        return elide_to_width(ui, text, font, width, keep_end);
    }
    let n = text.chars().count().max(1);
    let per_char = full / n as f32;
    let mut chars = ((width / per_char.max(0.1)).floor() as usize).clamp(1, n - 1);
    loop {
        let cut = crate::export::elide::elide_to_difference(text, chars, differs_at);
        if chars <= 1 || text_width(ui, &cut, font) <= width {
            return cut;
        }
        chars -= 1;
    }
}

/// The widths a person set for the columns of one table, by column title.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnWidths(pub BTreeMap<String, f32>);

impl ColumnWidths {
    fn memory_id(table: &str) -> Id {
        Id::unique(("sightline_column_widths", table))
    }

    /// The widths remembered for `table` (none set: empty).
    pub fn load(ctx: &egui::Context, table: &str) -> Self {
        ctx.data_mut(|d| d.get_persisted::<ColumnWidths>(Self::memory_id(table)))
            .unwrap_or_default()
    }

    /// Remembers `self` for `table`.
    pub fn store(&self, ctx: &egui::Context, table: &str) {
        ctx.data_mut(|d| d.insert_persisted(Self::memory_id(table), self.clone()));
    }

    /// The width set for `column`, if any.
    pub fn get(&self, column: &str) -> Option<f32> {
        self.0.get(column).copied()
    }
}

/// The drag handle on the right edge (`right_x`) of the header cell of `column` in `table`,
/// spanning `header` vertically: a drag sets the column's width (from `width`, its width this
/// frame), a double click forgets it. Named "Resize column COLUMN" for screen readers and tests.
pub fn resize_handle(ui: &Ui, table: &str, column: &str, right_x: f32, header: Rect, width: f32) {
    let rect = Rect::from_x_y_ranges(
        right_x - HANDLE_WIDTH_PX / 2.0..=right_x + HANDLE_WIDTH_PX / 2.0,
        header.y_range(),
    );
    let id = Id::unique(("sightline_column_handle", table, column));
    let response = ui
        .interact(rect, id, Sense::click_and_drag())
        .on_hover_cursor(CursorIcon::ResizeColumn)
        .on_hover_text("Drag to resize the column; double-click for its automatic width");
    response.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::Role::Splitter,
            true,
            format!("Resize column {column}"),
        )
    });
    if response.hovered() || response.dragged() {
        ui.painter().vline(
            right_x,
            header.y_range(),
            ui.visuals().widgets.hovered.fg_stroke,
        );
    }
    let ctx = ui.ctx();
    if response.double_clicked() {
        let mut widths = ColumnWidths::load(ctx, table);
        widths.0.remove(column);
        widths.store(ctx, table);
    } else if response.dragged() {
        let dx = response.drag_delta().x;
        if dx != 0.0 {
            let mut widths = ColumnWidths::load(ctx, table);
            let from = widths.get(column).unwrap_or(width);
            widths
                .0
                .insert(column.to_string(), (from + dx).max(MIN_COLUMN_WIDTH_PX));
            widths.store(ctx, table);
        }
    }
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
}
