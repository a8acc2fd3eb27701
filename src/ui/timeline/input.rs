//! The timeline's pointer and keyboard input: wheel zoom and row scroll, drag to pan, drag on the
//! axis to zoom, Shift+drag to select a range (its edges snap to the edges of the events under
//! the pointer, as ruler ends do), and the keys (W/S/A/D, Home, R, Esc, Z or Enter to zoom to the
//! selected range, Backspace or Alt+Left to go back in the history of views).

use egui::{Key, Pos2, Rect, Ui, Vec2};

use super::{TimelineState, WHEEL_LINE_PX};
use crate::timeline::navigation::TimeToX;
use crate::timeline::overlays::snapped_time;
use crate::timeline::rows::TimelineModel;
use crate::trace::Trace;

/// The time a range edge at `pos` takes: the nearest edge of an event in the row under the
/// pointer within [`super::SNAP_PX`], else the pointer's own time. The rows of the last frame
/// are the ones on screen: a range drag neither pans nor zooms.
fn range_edge_ns(
    trace: &Trace,
    model: &TimelineModel,
    state: &TimelineState,
    event_area: Rect,
    pos: Pos2,
) -> f64 {
    snapped_time(trace, model, &state.view, &state.last_rows, event_area, pos)
}

/// The responses of the timeline's three areas.
pub(super) struct Areas<'a> {
    pub events: &'a egui::Response,
    pub axis: &'a egui::Response,
    pub titles: &'a egui::Response,
}

pub(super) fn handle_navigation(
    ui: &Ui,
    trace: &Trace,
    model: &TimelineModel,
    state: &mut TimelineState,
    areas: &Areas<'_>,
    event_area: Rect,
) {
    let (area, axis, titles) = (areas.events, areas.axis, areas.titles);
    let map = TimeToX::new(&state.view, event_area.left(), event_area.width());
    // Wheel: read the raw events so zoom is deterministic (no smoothing) and tests can drive it.
    let hover = area.hover_pos().or(axis.hover_pos());
    let over_titles = titles.hovered();
    if hover.is_some() || over_titles {
        let wheel: Vec<(Vec2, egui::Modifiers)> = ui.input(|i| {
            i.events
                .iter()
                .filter_map(|e| match e {
                    egui::Event::MouseWheel {
                        unit,
                        delta,
                        modifiers,
                        ..
                    } => {
                        let scale = match unit {
                            egui::MouseWheelUnit::Point => 1.0,
                            egui::MouseWheelUnit::Line => WHEEL_LINE_PX,
                            egui::MouseWheelUnit::Page => event_area.height(),
                        };
                        Some((*delta * scale, *modifiers))
                    }
                    _ => None,
                })
                .collect()
        });
        for (delta, modifiers) in wheel {
            if over_titles || modifiers.shift {
                state.view.scroll_y = (state.view.scroll_y - delta.y - delta.x).max(0.0);
                continue;
            }
            if let Some(p) = hover {
                if delta.y != 0.0 {
                    let factor = (-f64::from(delta.y) * 0.0025).exp();
                    state.view.zoom_at(map.t(p.x), factor);
                }
                if delta.x != 0.0 {
                    state.view.pan_ns(-f64::from(delta.x) * map.ns_per_px());
                }
            }
        }
    }
    let shift = ui.input(|i| i.modifiers.shift);
    let press_pos = ui
        .input(|i| i.pointer.press_origin())
        .or(area.interact_pointer_pos())
        .or(axis.interact_pointer_pos());
    // Shift+drag anywhere, or Ctrl/Cmd+drag on the axis, selects; a plain axis drag zooms.
    let command = ui.input(|i| i.modifiers.command || i.modifiers.ctrl);
    if (area.drag_started() && shift) || (axis.drag_started() && (shift || command)) {
        state.range_drag_from_ns =
            press_pos.map(|p| range_edge_ns(trace, model, state, event_area, p));
    }
    if let Some(from) = state.range_drag_from_ns {
        let pos = area.interact_pointer_pos().or(axis.interact_pointer_pos());
        if let Some(p) = pos {
            let to = range_edge_ns(trace, model, state, event_area, p);
            let (a, b) = if from <= to { (from, to) } else { (to, from) };
            state.range_selection = Some((a.round() as i64, b.round() as i64));
        }
        if area.drag_stopped() || axis.drag_stopped() || !(area.dragged() || axis.dragged()) {
            state.range_drag_from_ns = None;
        }
        return;
    }
    if area.dragged() {
        let d = area.drag_delta();
        state.view.pan_ns(-f64::from(d.x) * map.ns_per_px());
        state.view.scroll_y = (state.view.scroll_y - d.y).max(0.0);
    }
    // The press position, not where the drag was recognised (a few points later).
    if axis.drag_started()
        && let Some(p) = ui
            .input(|i| i.pointer.press_origin())
            .or(axis.interact_pointer_pos())
    {
        state.axis_drag_from_ns = Some(map.t(p.x));
    }
    if axis.drag_stopped()
        && let (Some(from), Some(p)) = (state.axis_drag_from_ns.take(), axis.interact_pointer_pos())
    {
        let to = map.t(p.x);
        if (to - from).abs() * map.px_per_ns >= 3.0 {
            state.view.zoom_to(from, to);
            state.history.jumped();
        }
    }
}

/// W/S zoom, A/D pan, Home/0 show all, R ruler, Esc take back the last thing placed (a ruler, the
/// range selection, the selected event, the gap's mark: [`super::placed`]), Z or Enter zoom to the selected
/// range, Backspace or Alt+Left back to the previous view, ? help. Returns whether help was
/// toggled.
pub(super) fn handle_keys(ui: &Ui, state: &mut TimelineState) -> bool {
    let (ruler, escape) = ui.input(|i| (i.key_pressed(Key::R), i.key_pressed(Key::Escape)));
    if ruler {
        state.ruler.active = !state.ruler.active;
        state.ruler.pending_ns = None;
    }
    if escape {
        // One thing at a time: a user removing a ruler keeps the selection (issue 47, item 7).
        super::placed::take_back_last(state);
    }
    let (zoom_in, zoom_out, left, right, home, help) = ui.input(|i| {
        (
            i.num_presses(Key::W),
            i.num_presses(Key::S),
            i.num_presses(Key::A),
            i.num_presses(Key::D),
            i.key_pressed(Key::Home) || i.key_pressed(Key::Num0),
            i.key_pressed(Key::Questionmark)
                || i.events
                    .iter()
                    .any(|e| matches!(e, egui::Event::Text(t) if t == "?")),
        )
    });
    // The modifiers of each key press, not those held at the end of the frame.
    let pressed = |key: Key, with: fn(&egui::Modifiers) -> bool| {
        ui.input(|i| {
            i.events.iter().any(|e| {
                matches!(e, egui::Event::Key { key: k, pressed: true, modifiers, .. }
                    if *k == key && with(modifiers))
            })
        })
    };
    let to_selection =
        pressed(Key::Z, |m| !m.command && !m.ctrl) || pressed(Key::Enter, |m| !m.any());
    let back = pressed(Key::Backspace, |m| !m.any()) || pressed(Key::ArrowLeft, |m| m.alt);
    for _ in 0..zoom_in {
        state.view.zoom_center(0.8);
    }
    for _ in 0..zoom_out {
        state.view.zoom_center(1.25);
    }
    let step = state.view.span_ns() * 0.1;
    for _ in 0..left {
        state.view.pan_ns(-step);
    }
    for _ in 0..right {
        state.view.pan_ns(step);
    }
    if home {
        state.view.show_all();
        state.history.jumped();
    }
    if to_selection && let Some((a, b)) = state.range_selection {
        state.view.zoom_to_event(a, b);
        state.history.jumped();
    }
    if back {
        state.history.go_back(&mut state.view);
    }
    help
}
