//! What the app draws over the frame: the compare dialog (View → Compare…), the keys help window
//! ("?") and the hint shown while a file is dragged over the window.

use super::*;

impl SightlineApp {
    /// View → Compare…: choose the baseline and the new run among the open traces (it opens on
    /// the two most recently opened, see [`compare::dialog`]).
    pub(super) fn compare_dialog(&mut self, ctx: &egui::Context) {
        if !self.show_compare_dialog {
            return;
        }
        let mut open = true;
        let start = compare::dialog::show(ctx, &self.tabs, &mut self.compare_choice, &mut open);
        if let Some((b, n)) = start {
            self.start_compare(b, n);
            open = false;
        }
        if !open {
            // The next opening starts again from the most recent traces.
            self.compare_choice = None;
        }
        self.show_compare_dialog = open;
    }

    pub(super) fn help_window(&mut self, ctx: &egui::Context) {
        let mut open = self.show_help;
        // Esc closes it, as it closes every other window.
        if open && ctx.input(|i| i.key_pressed(egui::Key::Escape)) {
            open = false;
        }
        egui::Window::new("Keys")
            .id(Id::unique("sightline_help"))
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .anchor(Align2::RIGHT_TOP, [-12.0, 60.0])
            .show(ctx, |ui| {
                egui::Grid::new("sightline_keys")
                    .num_columns(2)
                    .show(ui, |ui| {
                        for (key, what) in HELP_KEYS {
                            ui.strong(*key);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
            });
        self.show_help = open;
    }

    /// While a file is dragged over the window, darken it and say what dropping will do.
    pub(super) fn drop_hint(&self, ctx: &egui::Context, palette: &Palette) {
        let hovering = ctx.input(|i| {
            i.raw
                .hovered_files
                .iter()
                .map(|f| {
                    f.path
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default()
                })
                .next()
        });
        let Some(name) = hovering else {
            return;
        };
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            Id::unique("sightline_drop"),
        ));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, Color32::from_black_alpha(170));
        painter.rect_stroke(
            rect.shrink(12.0),
            8.0,
            egui::Stroke::new(3.0, palette.memcpy_htod),
            egui::StrokeKind::Inside,
        );
        painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            format!("Drop to open in a new tab\n{name}"),
            FontId::proportional(22.0),
            Color32::WHITE,
        );
    }
}

/// Keys and mouse gestures, shown by "?".
pub const HELP_KEYS: &[(&str, &str)] = &[
    ("Wheel", "zoom at the pointer"),
    ("Shift+Wheel", "scroll rows"),
    ("Drag", "pan (time and rows)"),
    ("W / S", "zoom in / out"),
    ("A / D", "pan left / right"),
    ("Home or 0", "show the whole trace"),
    ("Drag on time axis", "zoom to that span"),
    ("Click", "select an event (details below)"),
    ("Double-click", "zoom to the event and select its span"),
    (
        "Right-click",
        "menu: select span, zoom to, copy name, show launch / kernels, search this name",
    ),
    ("Click a row title", "collapse / expand the group"),
    (
        "Shift+Drag",
        "select a time range (statistics follow it; edges snap to event edges)",
    ),
    ("Shift/Ctrl+Drag on time axis", "select a time range"),
    ("Alt+Click an NVTX range", "select its time range"),
    (
        "R, then two clicks",
        "ruler between two points (snaps to event edges)",
    ),
    ("Z or Enter", "zoom to the selected range"),
    ("Backspace or Alt+Left", "back to the previous view"),
    (
        "Esc",
        "take back the last thing placed: a ruler, the range, the selection, the gap mark",
    ),
    ("Ctrl+O", "open a trace"),
    (
        "Ctrl+F or /",
        "search (Enter / Shift+Enter: next / previous match)",
    ),
    ("?", "this help"),
];
