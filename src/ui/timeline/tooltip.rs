//! The hover tooltip of an event: the same facts as the details panel, in a compact grid.

use egui::Ui;

use super::rows::{EventRef, TimelineModel};
use crate::trace::Trace;
use crate::ui::panels::details;

pub fn event_tooltip(ui: &mut Ui, trace: &Trace, model: &TimelineModel, event: EventRef) {
    facts_grid(
        ui,
        "sightline_tooltip",
        details::describe(trace, model, event),
    );
}

/// (field, value) pairs as a compact two-column grid: the body of every timeline tooltip.
pub fn facts_grid(ui: &mut Ui, id: &str, facts: Vec<(&'static str, String)>) {
    egui::Grid::new(id)
        .num_columns(2)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            for (key, value) in facts {
                ui.weak(key);
                ui.label(value);
                ui.end_row();
            }
        });
}
