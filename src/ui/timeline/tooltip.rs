//! The hover tooltip of an event: the same facts as the details panel, in a compact grid, and
//! the first frames of its call stack when it has one.

use egui::Ui;

use super::event_facts as details;
use super::rows::{EventRef, TimelineModel};
use crate::trace::Trace;

pub fn event_tooltip(ui: &mut Ui, trace: &Trace, model: &TimelineModel, event: EventRef) {
    facts_grid(
        ui,
        "sightline_tooltip",
        details::describe(trace, model, event),
    );
    details::call_stack_ui(
        ui,
        trace,
        details::call_stack(trace, event),
        details::TOOLTIP_FRAMES,
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
