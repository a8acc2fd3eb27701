//! What the loader could not read, in the window: a small "▲ N" badge for the status bar (in the
//! warning colour, the reasons on hover) and the window it opens, one line per reason, the same
//! lines `sightline summary` prints on stderr. Nothing is drawn for a trace read cleanly.

use egui::{Button, Context, RichText, Ui};

use crate::trace::LoadWarnings;

/// The window's title; also how tests find it.
pub const WINDOW_TITLE: &str = "What could not be read";

/// The warning sign, drawn in the monospace font: egui's default fonts have no "⚠" at all, and
/// only the monospace one (Hack) has this triangle.
pub const SIGN: &str = "▲";

/// The badge's text for `warnings`: "▲ 3" for three reasons.
pub fn badge_text(warnings: &LoadWarnings) -> String {
    format!("{SIGN} {}", warnings.entries.len())
}

/// Draws the badge when the trace has warnings; a click toggles `open`. Returns whether it was
/// drawn.
pub fn badge(ui: &mut Ui, warnings: &LoadWarnings, open: &mut bool) -> bool {
    if warnings.is_empty() {
        return false;
    }
    let colour = ui.visuals().warn_fg_color;
    let reasons = warnings.entries.len();
    let hover = format!(
        "The file has rows Sightline could not read as they are ({} {}): click for the list.\n{}",
        reasons,
        if reasons == 1 { "reason" } else { "reasons" },
        warnings.messages().join("\n")
    );
    let response = ui
        .add(
            Button::new(
                RichText::new(badge_text(warnings))
                    .monospace()
                    .color(colour),
            )
            .small(),
        )
        .on_hover_text(hover);
    if response.clicked() {
        *open = !*open;
    }
    true
}

/// The list of reasons, one line each, with the table each was found in; open while `open`.
pub fn window(ctx: &Context, warnings: &LoadWarnings, open: &mut bool) {
    if warnings.is_empty() {
        return;
    }
    // Esc closes it, as it closes every other window.
    if *open && ctx.input(|i| i.key_pressed(egui::Key::Escape)) {
        *open = false;
    }
    egui::Window::new(WINDOW_TITLE)
        .open(open)
        .resizable(true)
        .collapsible(false)
        .show(ctx, |ui| {
            ui.label("Rows the loader skipped or repaired; the numbers shown leave the skipped ones out.");
            ui.separator();
            egui::ScrollArea::vertical().show(ui, |ui| {
                let colour = ui.visuals().warn_fg_color;
                for w in &warnings.entries {
                    ui.horizontal(|ui| {
                        ui.label(RichText::new(SIGN).monospace().color(colour));
                        ui.label(w.message())
                            .on_hover_text(format!("table {}", w.table));
                    });
                }
            });
        });
}
