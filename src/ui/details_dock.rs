//! The details panel at the bottom of the window: the selected event's record with its buttons
//! ([`crate::ui::panels::details`] draws the record).
//!
//! With something selected it opens tall enough for a whole record ([`DEFAULT_ROWS`] lines: a
//! kernel's record with its launch; at most half the height, so a small window keeps its
//! timeline), shows a grip on its splitter, and keeps the height a person drags it to. egui
//! remembers a panel's height as the height of what it drew (in its memory, which eframe saves
//! with the settings), so the panel is always filled. With nothing selected, a one-line strip
//! with the hint takes its place (a panel of its own id, so its height never becomes the
//! record's), rather than a big empty block. It sits under the timeline only: the analysis panel
//! keeps the window's whole height.

use egui::{Rect, Stroke, Ui, Vec2};

use super::panels::{details, graph_launch};
use super::timeline::EventKind;
use super::workspace::TraceTab;

/// Lines of a record the panel shows at first: a kernel's (kind, name, times, stream, device,
/// process, launch configuration, shared memory, correlation and launch latency) fits.
pub const DEFAULT_ROWS: f32 = 18.0;
/// The panel can be dragged down to this height, never to nothing.
const MIN_HEIGHT_PX: f32 = 60.0;

/// The height that shows `rows` lines of a record with its title and buttons, in this style.
pub fn record_height(ui: &Ui, rows: f32) -> f32 {
    // A row of the record's grid: a selectable label (interact height) and the grid's spacing.
    let line = ui
        .spacing()
        .interact_size
        .y
        .max(ui.text_style_height(&egui::TextStyle::Body))
        + 2.5;
    let bar = ui.spacing().interact_size.y + ui.spacing().item_spacing.y;
    let margins = 2.0 * ui.spacing().window_margin.sum().y;
    rows * line + 2.0 * bar + margins
}

/// What the strip says while nothing is selected (the words of [`details::show`] with no event).
pub const HINT: &str =
    "Click an event to see its details. Double-click zooms to it. Press ? for keys.";

/// The details panel of `tab`, at the bottom of `ui`: the record of what is selected, or, with
/// nothing selected, a one-line strip with the hint.
pub fn show(ui: &mut Ui, tab: &mut TraceTab) {
    if tab.timeline.selection.is_none() && tab.timeline.sql_selection.is_none() {
        show_hint(ui);
        return;
    }
    // On a small window the timeline keeps at least half the height.
    let default_height = record_height(ui, DEFAULT_ROWS).min(ui.available_height() * 0.5);
    // Its own id, not the old "sightline_details": builds before this one stored a two-line
    // height under that id, which would otherwise win over the default for good.
    let response = egui::Panel::bottom("sightline_details_dock")
        .resizable(true)
        .default_size(default_height)
        .min_size(MIN_HEIGHT_PX)
        .show(ui, |ui| {
            ui.set_min_height(ui.available_height());
            details_panel(ui, tab);
        })
        .response;
    paint_grip(ui, response.rect);
}

/// With nothing selected: the hint on one line in a strip of its own (its own id, so that its
/// height never becomes the record's), with a line along its top edge. The record's panel keeps
/// its height for the next selection.
fn show_hint(ui: &mut Ui) {
    let height = ui.spacing().interact_size.y + 8.0;
    let response = egui::Panel::bottom("sightline_details_hint")
        .resizable(false)
        .exact_size(height)
        .show(ui, |ui| {
            ui.weak(HINT);
        })
        .response;
    paint_top_line(ui, response.rect);
}

/// A line along a bottom panel's top edge, so that its edge shows.
fn paint_top_line(ui: &Ui, panel: Rect) {
    let color = ui.style().visuals.widgets.noninteractive.fg_stroke.color;
    ui.painter().hline(
        panel.x_range(),
        panel.top() + 0.5,
        Stroke::new(1.0, color.gamma_multiply(0.5)),
    );
}

/// A visible splitter: a line along the panel's top edge with a grip in its middle.
fn paint_grip(ui: &Ui, panel: Rect) {
    let visuals = &ui.style().visuals.widgets;
    paint_top_line(ui, panel);
    let grip = Rect::from_center_size(
        egui::pos2(panel.center().x, panel.top() + 4.0),
        Vec2::new(40.0, 4.0),
    );
    ui.painter()
        .rect_filled(grip, 2.0, visuals.inactive.fg_stroke.color);
}

/// The details of the selected event, with "Select range" for an NVTX range.
fn details_panel(ui: &mut Ui, tab: &mut TraceTab) {
    let Some(d) = &tab.document else {
        return;
    };
    if let Some(e) = tab.timeline.selection.filter(|e| e.kind == EventKind::Nvtx)
        && ui
            .button("Select range")
            .on_hover_text(
                "Select this NVTX range's time (double-click or the right-click menu does too)",
            )
            .clicked()
    {
        tab.timeline
            .set_range_selection(Some((e.start_ns(&d.trace), e.end_ns(&d.trace))));
    }
    if let Some(e) = tab.timeline.selection {
        graph_launch::launch_buttons(ui, &d.trace, &mut tab.timeline.view, e);
    }
    // A selected bar of a pinned query result: its row ([`super::timeline::sql_tracks`]).
    if tab.timeline.selection.is_none()
        && let Some(hit) = tab.timeline.sql_selection
    {
        let span = super::timeline::sql_tracks::span_of(&d.model, hit);
        if ui.button("Select range").clicked() {
            tab.timeline.set_range_selection(span);
        }
        let origin = tab.timeline.axis_origin_ns;
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                super::timeline::sql_tooltip(ui, &d.model, hit, origin)
            });
        return;
    }
    // A call stack makes the details taller than the panel: scroll.
    let selection = tab.timeline.selection;
    let ncu = tab.ncu_attached.attached.as_deref();
    let shown = if selection.is_some() {
        egui::ScrollArea::vertical()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                details::show(ui, &d.trace, &d.model, selection, ncu)
            })
            .inner
    } else {
        details::show(ui, &d.trace, &d.model, selection, ncu)
    };
    if let Some(e) = shown.go_to {
        tab.timeline.reveal(&d.trace, &d.model, e);
    }
    if let Some(w) = shown.source_of {
        tab.ncu_attached.open_source(w, ui.ctx());
    }
}
