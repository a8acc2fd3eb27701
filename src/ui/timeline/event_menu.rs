//! The right-click menu on an event: select its span (the range the statistics follow), zoom to
//! it, copy its name, show its launching call or the work it launched, search for its name.
//! Everything but the search is done here; the search box belongs to the app, which is told.

use egui::{Response, Ui};

use super::TimelineState;
use crate::timeline::rows::{EventKind, EventRef, TimelineModel};
use crate::trace::Trace;

/// What the menu asks of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventAction {
    /// Put this name in the search box and search for it.
    SearchName(String),
}

/// Remembers the event under the pointer when the menu opens (a right click), then draws the
/// menu for it while it is open. Call every frame, after the clicks are handled.
pub fn show(
    response: &Response,
    trace: &Trace,
    model: &TimelineModel,
    state: &mut TimelineState,
    hovered: Option<EventRef>,
) -> Option<EventAction> {
    if response.secondary_clicked() {
        state.context_event = hovered;
    }
    let mut action = None;
    response.context_menu(|ui| {
        let Some(event) = state.context_event else {
            ui.weak("No event here: right-click an event");
            return;
        };
        action = menu(ui, trace, model, state, event);
    });
    action
}

fn menu(
    ui: &mut Ui,
    trace: &Trace,
    model: &TimelineModel,
    state: &mut TimelineState,
    event: EventRef,
) -> Option<EventAction> {
    let name = event.name(trace).to_string();
    let (start, end) = (event.start_ns(trace), event.end_ns(trace));
    let mut action = None;
    if ui
        .button("Select span")
        .on_hover_text("Select this event's time: the statistics follow it (Z zooms to it)")
        .clicked()
    {
        state.selection = Some(event);
        state.set_range_selection(Some((start, end)));
        ui.close();
    }
    if ui.button("Zoom to").clicked() {
        state.selection = Some(event);
        state.view.zoom_to_event(start, end);
        state.history.jumped();
        ui.close();
    }
    if ui
        .add_enabled(!name.is_empty(), egui::Button::new("Copy name"))
        .clicked()
    {
        ui.ctx().copy_text(name.clone());
        ui.close();
    }
    if !model.partners(trace, event).is_empty() {
        let text = if event.kind == EventKind::ApiCall {
            "Show kernels"
        } else {
            "Show launch"
        };
        let hint = if event.kind == EventKind::ApiCall {
            "Select the GPU work this call launched and show it beside the call"
        } else {
            "Select the CUDA call that launched this and show it beside it"
        };
        if ui.button(text).on_hover_text(hint).clicked() {
            state.show_partners(trace, model, event);
            state.history.jumped();
            ui.close();
        }
    }
    if ui
        .add_enabled(!name.is_empty(), egui::Button::new("Search this name"))
        .clicked()
    {
        action = Some(EventAction::SearchName(name));
        ui.close();
    }
    action
}
