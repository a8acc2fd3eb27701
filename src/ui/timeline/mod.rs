//! The timeline widget: row titles on the left, a time axis on top, the events below, and the
//! navigation (wheel/keys/drags), hover tooltips, selection and correlation lines.
//!
//! What rows exist, what span is visible and the shapes of a frame come from the layer below,
//! [`crate::timeline`] (rows, navigation, painter, overlays, palette), which `sightline render`
//! and the benchmark draw with too; this module wires it to egui input ([`show`]), and adds what
//! follows the pointer and the selection: hover tooltips, the right-click menu ([`event_menu`]),
//! the selected event's correlation lines, search matches, the view history ([`history`]).

pub mod event_facts;
pub mod event_menu;
pub mod graph_facts;
pub mod history;
mod input;
pub mod placed;
pub mod reveal;
mod tooltip;

pub use tooltip::sql_tooltip;

pub use crate::timeline::navigation::{self, TimeToX, ViewState, format_duration, format_tick};
pub use crate::timeline::overlays::{
    GapLink, GapMark, OverlayCounts, OverlayInput, OverlayLabel, OverlayShapes, Overlays, Ruler,
    RulerTool, SNAP_PX,
};
pub use crate::timeline::painter::{
    BarLabel, FrameShapes, RowPlacement, build_shapes, event_at, event_rect,
};
pub use crate::timeline::rows::{EventKind, EventRef, GroupId, RowKind, TimelineModel};
pub use crate::timeline::sql_tracks;
pub use crate::timeline::{AXIS_HEIGHT_PX, TITLE_WIDTH_PX, build_shapes_with_overlays};

use egui::{Pos2, Rect, Sense, Shape, Stroke, Ui};

use crate::timeline::frame::{
    Areas, build_event_shapes, paint_axis, paint_corner, paint_events, paint_titles,
};
use crate::timeline::overlays::PathOverlay;
use crate::timeline::palette::Palette;
use crate::timeline::{counters, cpu_row, graph_brackets, launch_arrows, overlays};
use crate::trace::Trace;

/// Points a line of wheel scroll counts for.
pub(crate) const WHEEL_LINE_PX: f32 = 40.0;

/// The timeline's interaction state, kept by the app between frames.
#[derive(Debug, Clone)]
pub struct TimelineState {
    pub view: ViewState,
    pub selection: Option<EventRef>,
    /// Where a drag on the time axis started (ns).
    axis_drag_from_ns: Option<f64>,
    /// The selected time range `[start, end)` (Shift+drag, Alt+click on an NVTX range, or the
    /// analysis panel); the panel's statistics follow it.
    pub range_selection: Option<(i64, i64)>,
    /// Where a Shift+drag selecting a range started (ns).
    range_drag_from_ns: Option<f64>,
    pub ruler: RulerTool,
    pub overlays: Overlays,
    /// Draw an arrow from the launching call to every kernel in view (thinned).
    pub launch_arrows: bool,
    /// Launch arrows drawn in the last frame.
    pub last_launch_arrows: usize,
    /// The layout of the last frame, so tests and the app can find things on screen.
    pub last_rows: Vec<RowPlacement>,
    pub last_event_area: Rect,
    pub last_title_area: Rect,
    pub last_axis_area: Rect,
    /// Events and merged blocks drawn in the last frame.
    pub last_events_drawn: usize,
    pub last_merged_drawn: usize,
    /// The overlays drawn in the last frame.
    pub last_overlays_drawn: OverlayCounts,
    /// The time the axis labels count from (0: the session start; the compare view puts each
    /// run's alignment point there).
    pub axis_origin_ns: i64,
    /// The views Backspace / Alt+Left go back to.
    pub history: history::ViewHistory,
    /// The event the open right-click menu is about.
    pub context_event: Option<EventRef>,
    /// The selected interval of a pinned query result (apart from `selection`: it is no event
    /// of the trace).
    pub sql_selection: Option<sql_tracks::SqlHit>,
    /// Pinned intervals the search box matched (outlined as search matches are).
    pub sql_search_matches: std::sync::Arc<Vec<sql_tracks::SqlHit>>,
    /// A path drawn over the timeline (the critical path of an iteration or a selection).
    pub critical_path: Option<PathOverlay>,
    /// When each ruler, the selections and the gap's mark were placed: what Esc takes back.
    pub placed: placed::PlacedOrder,
}

impl Default for TimelineState {
    fn default() -> Self {
        Self {
            view: ViewState::default(),
            selection: None,
            axis_drag_from_ns: None,
            range_selection: None,
            range_drag_from_ns: None,
            ruler: RulerTool::default(),
            overlays: Overlays::default(),
            launch_arrows: false,
            last_launch_arrows: 0,
            last_rows: Vec::new(),
            last_event_area: Rect::NOTHING,
            last_title_area: Rect::NOTHING,
            last_axis_area: Rect::NOTHING,
            last_events_drawn: 0,
            last_merged_drawn: 0,
            last_overlays_drawn: OverlayCounts::default(),
            axis_origin_ns: 0,
            history: history::ViewHistory::default(),
            context_event: None,
            sql_selection: None,
            sql_search_matches: std::sync::Arc::default(),
            critical_path: None,
            placed: placed::PlacedOrder::default(),
        }
    }
}

impl TimelineState {
    /// The first view of a trace: where its GPUs work, when that is a small part of the whole (a
    /// Python program spends seconds importing before its first kernel); Home shows everything.
    pub fn new(trace: &Trace, model: &TimelineModel) -> Self {
        Self {
            view: ViewState::first_view(trace, model),
            axis_origin_ns: trace.time_origin_ns(),
            ..Self::default()
        }
    }

    /// What is drawn over the events: the panel's overlays, the selected range, the placed
    /// rulers (not the one being placed, which follows the pointer) and the critical path.
    pub fn overlay_input(&self) -> OverlayInput<'_> {
        OverlayInput {
            overlays: &self.overlays,
            range: self.range_selection,
            rulers: &self.ruler.rulers,
            path: self.critical_path.as_ref(),
        }
    }

    /// Sets the selected range, in either order; `None` clears it.
    pub fn set_range_selection(&mut self, range: Option<(i64, i64)>) {
        self.range_selection = range.map(|(a, b)| (a.min(b), a.max(b)));
    }

    /// Whether a Shift+drag is selecting a range right now.
    pub fn is_selecting_range(&self) -> bool {
        self.range_drag_from_ns.is_some()
    }

    /// Where `event` was drawn in the last frame.
    pub fn event_screen_rect(
        &self,
        trace: &Trace,
        model: &TimelineModel,
        event: EventRef,
    ) -> Option<Rect> {
        event_rect(
            trace,
            model,
            &self.view,
            &self.last_rows,
            self.last_event_area,
            event,
        )
    }
}

/// What the timeline asks the app to do after a frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineOutput {
    pub toggle_help: bool,
    /// Asked for from the right-click menu of an event.
    pub event_action: Option<event_menu::EventAction>,
}

/// Draws the timeline into the whole of `ui`'s available rect and handles its input.
pub fn show(
    ui: &mut Ui,
    trace: &Trace,
    model: &TimelineModel,
    state: &mut TimelineState,
    palette: &Palette,
    search_matches: &[EventRef],
) -> TimelineOutput {
    let mut output = TimelineOutput::default();
    let full = ui.available_rect_before_wrap();
    ui.allocate_rect(full, Sense::hover());
    let layout = Areas::of(full);
    if layout.too_small() {
        return output;
    }
    let (title_area, axis_area, event_area) = (layout.titles, layout.axis, layout.events);

    // Relative to the enclosing ui, so two timelines (the compare view) do not clash.
    let id = ui.scope_id().with("sightline_timeline");
    // The events take no drag at the panel splitter beside them: a drag there resizes the panel.
    let grab = ui.style().interaction.resize_grab_radius_side;
    let events_interact = Rect::from_min_max(
        event_area.min,
        egui::pos2(
            (event_area.max.x - grab).max(event_area.min.x),
            event_area.max.y,
        ),
    );
    let area_response = ui.interact(events_interact, id.with("events"), Sense::click_and_drag());
    let axis_response = ui.interact(axis_area, id.with("axis"), Sense::click_and_drag());
    let title_response = ui.interact(title_area, id.with("titles"), Sense::click());

    placed::look(state);
    state.history.begin_frame(&state.view);
    let areas = input::Areas {
        events: &area_response,
        axis: &axis_response,
        titles: &title_response,
    };
    input::handle_navigation(ui, trace, model, state, &areas, event_area);
    if !ui.ctx().egui_wants_keyboard_input() {
        output.toggle_help = input::handle_keys(ui, state);
    }

    let frame = build_event_shapes(trace, model, &state.view, event_area, palette);
    let max_scroll = (frame.content_height - event_area.height()).max(0.0);
    if state.view.scroll_y > max_scroll {
        state.view.scroll_y = max_scroll;
    }

    // Clicks need this frame's layout: hit-test against it.
    let pointer = area_response.hover_pos();
    let bracket = pointer.and_then(|p| {
        graph_brackets::bracket_at(trace, model, &state.view, &frame.rows, event_area, p)
    });
    let hovered = bracket.map(|b| b.launch).or_else(|| {
        pointer.and_then(|p| event_at(trace, model, &state.view, &frame.rows, event_area, p))
    });
    let sql_hovered = match (hovered, pointer) {
        (None, Some(p)) => sql_tracks::interval_at(model, &state.view, &frame.rows, event_area, p),
        _ => None,
    };
    let alt = ui.input(|i| i.modifiers.alt);
    if state.ruler.active && area_response.clicked() {
        if let Some(p) = pointer {
            let t = overlays::snapped_time(trace, model, &state.view, &frame.rows, event_area, p);
            state.ruler.click(t);
        }
    } else if alt && area_response.clicked() {
        if let Some(e) = hovered.filter(|e| e.kind == EventKind::Nvtx) {
            state.set_range_selection(Some((e.start_ns(trace), e.end_ns(trace))));
        }
    } else if area_response.double_clicked() {
        // Zoom to it and select its span: the binding for a step that survives window
        // managers taking Alt+click.
        if let Some(e) = hovered {
            state.selection = Some(e);
            state.view.zoom_to_event(e.start_ns(trace), e.end_ns(trace));
            state.set_range_selection(Some((e.start_ns(trace), e.end_ns(trace))));
            state.history.jumped();
        } else if let Some((h, (a, b))) =
            sql_hovered.and_then(|h| Some((h, sql_tracks::span_of(model, h)?)))
        {
            state.sql_selection = Some(h);
            state.view.zoom_to_event(a, b);
            state.set_range_selection(Some((a, b)));
            state.history.jumped();
        }
    } else if area_response.clicked() {
        if let Some(b) = bracket.filter(|b| b.disclosure) {
            graph_brackets::toggle(&mut state.view, b.launch.index as usize);
        }
        state.selection = hovered;
        state.sql_selection = sql_hovered;
    }
    if title_response.clicked()
        && let Some(p) = title_response.interact_pointer_pos()
        && let Some(placement) = frame
            .rows
            .iter()
            .find(|r| p.y >= r.top && p.y < r.top + r.height)
        && let Some(group) = model.rows[placement.row].toggles
    {
        state.view.toggle(group);
    }
    output.event_action = event_menu::show(&area_response, trace, model, state, hovered);
    state.history.end_frame(&state.view, ui.input(|i| i.time));

    let painter = ui.painter_at(full);
    let event_painter = painter.with_clip_rect(event_area);
    paint_events(&event_painter, trace, &frame);
    // After the clicks, so a ruler or range set this frame is drawn this frame.
    let mut rulers = state.ruler.rulers.clone();
    if state.ruler.active
        && let (Some(from_ns), Some(p)) = (state.ruler.pending_ns, pointer)
    {
        let map = TimeToX::new(&state.view, event_area.left(), event_area.width());
        rulers.push(Ruler {
            from_ns,
            to_ns: map.t(p.x),
        });
    }
    let overlay = overlays::overlay_shapes(
        trace,
        model,
        &state.view,
        &frame.rows,
        event_area,
        palette,
        &OverlayInput {
            rulers: &rulers,
            ..state.overlay_input()
        },
    );
    overlays::paint(&event_painter, &overlay, palette);
    state.last_overlays_drawn = overlay.counts;
    state.last_launch_arrows = 0;
    if state.launch_arrows {
        let (arrows, drawn) = launch_arrows::launch_arrows(
            trace,
            model,
            &state.view,
            &frame.rows,
            event_area,
            palette,
        );
        event_painter.extend(arrows);
        state.last_launch_arrows = drawn;
    }
    paint_highlights(
        &event_painter,
        trace,
        model,
        state,
        &frame,
        event_area,
        palette,
        search_matches,
    );
    sql_tracks::paint_matches(
        &event_painter,
        model,
        &state.view,
        &frame.rows,
        event_area,
        &state.sql_search_matches,
        palette,
    );
    sql_tracks::paint_selection(
        &event_painter,
        model,
        &state.view,
        &frame.rows,
        event_area,
        state.sql_selection,
        palette,
    );
    paint_titles(
        &painter.with_clip_rect(title_area),
        model,
        &state.view,
        &frame,
        title_area,
        palette,
    );
    paint_axis(
        &painter.with_clip_rect(axis_area),
        &state.view,
        state.axis_origin_ns,
        state.axis_drag_from_ns,
        axis_area,
        event_area,
        palette,
    );
    paint_corner(&painter, &layout, &state.view, palette);

    state.last_rows = frame.rows;
    state.last_event_area = event_area;
    state.last_title_area = title_area;
    state.last_axis_area = axis_area;
    state.last_events_drawn = frame.events_drawn;
    state.last_merged_drawn = frame.merged_drawn;

    if let Some(e) = hovered
        && !area_response.dragged()
    {
        area_response.on_hover_ui_at_pointer(|ui| tooltip::event_tooltip(ui, trace, model, e));
    } else if let Some(h) = sql_hovered
        && !area_response.dragged()
    {
        let origin = state.axis_origin_ns;
        area_response.on_hover_ui_at_pointer(|ui| tooltip::sql_tooltip(ui, model, h, origin));
    } else if !area_response.dragged()
        && let Some(pos) = area_response.hover_pos()
        && let Some(m) =
            counters::metric_at(trace, model, &state.view, &state.last_rows, event_area, pos)
    {
        area_response.on_hover_ui_at_pointer(|ui| tooltip::metric_tooltip(ui, trace, m));
    } else if !area_response.dragged()
        && let Some(pos) = area_response.hover_pos()
        && let Some(c) =
            cpu_row::cpu_at(trace, model, &state.view, &state.last_rows, event_area, pos)
    {
        let (window, what) = match state.range_selection {
            Some((a, b)) => ((a, b), "the selection"),
            None => (
                (state.view.start_ns as i64, state.view.end_ns as i64),
                "the view",
            ),
        };
        area_response.on_hover_ui_at_pointer(|ui| tooltip::cpu_tooltip(ui, trace, c, window, what));
    } else if !area_response.dragged()
        && let Some(pos) = area_response.hover_pos()
        && let Some(g) = crate::ui::gap_tooltip::gap_at(
            trace,
            model,
            &state.view,
            &state.last_rows,
            event_area,
            pos,
            &state.overlays.gaps,
        )
    {
        // The hatched gap under the pointer: its cause and host-time split.
        area_response.on_hover_ui_at_pointer(|ui| crate::ui::gap_tooltip::show(ui, trace, &g));
    }
    output
}

#[allow(clippy::too_many_arguments)]
fn paint_highlights(
    painter: &egui::Painter,
    trace: &Trace,
    model: &TimelineModel,
    state: &TimelineState,
    frame: &FrameShapes,
    area: Rect,
    palette: &Palette,
    search_matches: &[EventRef],
) {
    let view = &state.view;
    // Search matches in the visible span (matches are sorted by start), capped so a match on
    // every event of a huge trace stays cheap.
    let first = search_matches
        .partition_point(|e| (e.start_ns(trace) as f64) < view.start_ns - view.span_ns());
    for &m in search_matches[first..].iter().take(4000) {
        if m.start_ns(trace) as f64 > view.end_ns {
            break;
        }
        let m = graph_brackets::stand_in(trace, view, m);
        if let Some(r) = event_rect(trace, model, view, &frame.rows, area, m) {
            painter.rect_stroke(
                r,
                0.0,
                Stroke::new(1.5, palette.search_match),
                egui::StrokeKind::Inside,
            );
        }
    }
    let Some(selected) = state.selection else {
        return;
    };
    // A node of a collapsed graph launch is outlined by its launch's block.
    let selected = graph_brackets::stand_in(trace, view, selected);
    let selected_rect = event_rect(trace, model, view, &frame.rows, area, selected);
    let partners = graph_brackets::stand_ins(trace, view, &model.partners(trace, selected));
    for p in partners.iter().take(64) {
        let Some(pr) = event_rect(trace, model, view, &frame.rows, area, *p) else {
            continue;
        };
        painter.rect_stroke(
            pr.expand(1.0),
            0.0,
            Stroke::new(2.0, palette.correlation_line),
            egui::StrokeKind::Outside,
        );
        if let Some(sr) = selected_rect {
            let (a, b) = if sr.center().y < pr.center().y {
                (
                    Pos2::new(sr.left(), sr.bottom()),
                    Pos2::new(pr.left(), pr.top()),
                )
            } else {
                (
                    Pos2::new(sr.left(), sr.top()),
                    Pos2::new(pr.left(), pr.bottom()),
                )
            };
            painter.add(Shape::line_segment(
                [a, b],
                Stroke::new(1.5, palette.correlation_line),
            ));
        }
    }
    if let Some(sr) = selected_rect {
        painter.rect_stroke(
            sr.expand(1.5),
            0.0,
            Stroke::new(2.5, palette.selection),
            egui::StrokeKind::Outside,
        );
    }
}
