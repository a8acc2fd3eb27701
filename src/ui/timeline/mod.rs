//! The timeline widget: row titles on the left, a time axis on top, the events below, and the
//! navigation (wheel/keys/drags), hover tooltips, selection and correlation lines.
//!
//! [`rows`] decides what rows exist, [`navigation`] what span is visible, [`painter`] turns both
//! into shapes ([`build_shapes`], also used headless by the benchmark), [`overlays`] adds what the
//! analysis marks on top (selected range, excluded time, idle gaps, highlights, rulers; headless
//! with [`build_shapes_with_overlays`]), and [`show`] wires them to egui input.

pub mod counters;
pub mod cpu_row;
pub mod event_facts;
pub mod event_menu;
pub mod graph_brackets;
pub mod graph_facts;
pub mod history;
mod input;
pub mod launch_arrows;
pub mod navigation;
pub mod overlays;
pub mod painter;
pub mod reveal;
pub mod rows;
pub mod sql_tracks;
mod thread_rows;
mod tooltip;
pub mod unified_memory;

pub use navigation::{TimeToX, ViewState, format_duration, format_tick};
pub use overlays::{
    GapLink, GapMark, OverlayCounts, OverlayInput, OverlayLabel, OverlayShapes, Overlays, Ruler,
    RulerTool, SNAP_PX,
};
pub use painter::{BarLabel, FrameShapes, RowPlacement, build_shapes, event_at, event_rect};
pub use rows::{EventKind, EventRef, GroupId, RowKind, TimelineModel};

use egui::text::{LayoutJob, TextWrapping};
use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Shape, Stroke, Ui};

use crate::trace::Trace;
use crate::ui::theme::Palette;

/// Width of the row-title column, in points.
pub const TITLE_WIDTH_PX: f32 = 250.0;
/// Height of the time axis strip.
pub const AXIS_HEIGHT_PX: f32 = 26.0;
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
        }
    }
}

impl TimelineState {
    /// The first view of a trace: where its GPUs work, when that is a small part of the whole (a
    /// Python program spends seconds importing before its first kernel); Home shows everything.
    pub fn new(trace: &Trace, model: &TimelineModel) -> Self {
        let mut view = ViewState::new(trace.first_ns, trace.last_ns, model);
        if let Some((a, b)) = trace.gpu_span() {
            let whole = (trace.last_ns - trace.first_ns).max(1) as f64;
            let gpu = (b - a).max(1) as f64;
            if gpu < 0.8 * whole {
                let margin = gpu * 0.02;
                view.zoom_to(a as f64 - margin, b as f64 + margin);
            }
        }
        Self {
            view,
            axis_origin_ns: trace.time_origin_ns(),
            ..Self::default()
        }
    }

    /// What is drawn over the events: the panel's overlays, the selected range and the placed
    /// rulers (not the one being placed, which follows the pointer).
    pub fn overlay_input(&self) -> OverlayInput<'_> {
        OverlayInput {
            overlays: &self.overlays,
            range: self.range_selection,
            rulers: &self.ruler.rulers,
        }
    }

    /// Sets the selected range, in either order; `None` clears it.
    pub fn set_range_selection(&mut self, range: Option<(i64, i64)>) {
        self.range_selection = range.map(|(a, b)| (a.min(b), a.max(b)));
    }

    /// What Esc does: clears the rulers (and leaves ruler mode), the selected range and the
    /// chosen gap's mark.
    pub fn clear_marks(&mut self) {
        self.ruler.clear();
        self.ruler.active = false;
        self.range_selection = None;
        self.overlays.gap_link = None;
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

/// [`build_shapes`] plus the overlays of `input` (in [`FrameShapes::overlay`]): the headless
/// version of everything [`show`] draws in the event area except text and the pointer-driven
/// marks (hover, the ruler being placed).
pub fn build_shapes_with_overlays(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rect: Rect,
    palette: &Palette,
    input: &OverlayInput<'_>,
) -> FrameShapes {
    let mut frame = build_shapes(trace, model, view, rect, palette);
    graph_brackets::add_brackets(trace, model, view, rect, &mut frame);
    frame.overlay = overlays::overlay_shapes(trace, model, view, &frame.rows, rect, palette, input);
    frame
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
    let title_area = Rect::from_min_max(
        Pos2::new(full.left(), full.top() + AXIS_HEIGHT_PX),
        Pos2::new(full.left() + TITLE_WIDTH_PX, full.bottom()),
    );
    let axis_area = Rect::from_min_max(
        Pos2::new(full.left() + TITLE_WIDTH_PX, full.top()),
        Pos2::new(full.right(), full.top() + AXIS_HEIGHT_PX),
    );
    let event_area = Rect::from_min_max(
        Pos2::new(full.left() + TITLE_WIDTH_PX, full.top() + AXIS_HEIGHT_PX),
        full.max,
    );
    if event_area.width() < 10.0 || event_area.height() < 10.0 {
        return output;
    }

    // Relative to the enclosing ui, so two timelines (the compare view) do not clash.
    let id = ui.scope_id().with("sightline_timeline");
    let area_response = ui.interact(event_area, id.with("events"), Sense::click_and_drag());
    let axis_response = ui.interact(axis_area, id.with("axis"), Sense::click_and_drag());
    let title_response = ui.interact(title_area, id.with("titles"), Sense::click());

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

    let mut frame = build_shapes(trace, model, &state.view, event_area, palette);
    graph_brackets::add_brackets(trace, model, &state.view, event_area, &mut frame);
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
    event_painter.extend(frame.shapes.iter().cloned());
    paint_labels(&event_painter, trace, &frame.labels);
    sql_tracks::paint_labels(&event_painter, &frame.sql_labels);
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
        state,
        &frame,
        title_area,
        palette,
    );
    paint_axis(
        &painter.with_clip_rect(axis_area),
        state,
        axis_area,
        event_area,
        palette,
    );
    let corner = Rect::from_min_max(full.min, Pos2::new(title_area.right(), axis_area.bottom()));
    painter.rect_filled(corner, 0.0, palette.header_row);
    painter.text(
        corner.left_center() + egui::vec2(6.0, 0.0),
        Align2::LEFT_CENTER,
        format!("visible span {}", format_duration(state.view.span_ns())),
        FontId::proportional(11.0),
        palette.weak_text,
    );

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
        area_response.on_hover_ui_at_pointer(|ui| sql_tracks::tooltip(ui, model, h, origin));
    } else if !area_response.dragged()
        && let Some(pos) = area_response.hover_pos()
        && let Some(m) =
            counters::metric_at(trace, model, &state.view, &state.last_rows, event_area, pos)
    {
        area_response.on_hover_ui_at_pointer(|ui| counters::metric_tooltip(ui, trace, m));
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
        area_response.on_hover_ui_at_pointer(|ui| cpu_row::cpu_tooltip(ui, trace, c, window, what));
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

fn paint_labels(painter: &egui::Painter, trace: &Trace, labels: &[BarLabel]) {
    let font = FontId::proportional(11.0);
    for label in labels {
        let visible = label.rect.intersect(painter.clip_rect());
        let width = visible.width() - 6.0;
        if width < 12.0 {
            continue;
        }
        let name = trace.str(label.text);
        let name = if label.api_call {
            crate::analysis::stats::strip_version_suffix(name)
        } else {
            name
        };
        paint_bar_text(painter, visible, name.to_string(), &font, label.color);
    }
}

/// `text` on the visible part of a bar, cut to its width, 3 px in and centred vertically (event
/// labels and pinned SQL tracks' labels).
pub(crate) fn paint_bar_text(
    painter: &egui::Painter,
    visible: Rect,
    text: String,
    font: &FontId,
    color: Color32,
) {
    let mut job = LayoutJob::simple_singleline(text, font.clone(), color);
    job.wrap = TextWrapping::truncate_at_width(visible.width() - 6.0);
    let galley = painter.layout_job(job);
    let pos = Pos2::new(
        visible.left() + 3.0,
        visible.center().y - galley.size().y / 2.0,
    );
    painter.galley(pos, galley, color);
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

fn paint_titles(
    painter: &egui::Painter,
    model: &TimelineModel,
    state: &TimelineState,
    frame: &FrameShapes,
    area: Rect,
    palette: &Palette,
) {
    painter.rect_filled(area, 0.0, palette.row_odd);
    let font = FontId::proportional(12.0);
    for (n, p) in frame.rows.iter().enumerate() {
        let row = &model.rows[p.row];
        let r = Rect::from_x_y_ranges(area.x_range(), p.top..=p.top + p.height);
        let bg = palette.row_background(row.is_header(), n);
        painter.rect_filled(r, 0.0, bg);
        let indent = 6.0 + 14.0 * f32::from(row.indent);
        let mut indent = indent;
        if let Some(g) = row.toggles {
            // A drawn triangle: the default fonts have no ▶/▼ glyphs.
            let c = Pos2::new(area.left() + indent + 4.0, p.top + p.height.min(22.0) / 2.0);
            let points = if state.view.collapsed.contains(&g) {
                vec![
                    c + egui::vec2(-3.0, -4.5),
                    c + egui::vec2(4.0, 0.0),
                    c + egui::vec2(-3.0, 4.5),
                ]
            } else {
                vec![
                    c + egui::vec2(-4.5, -3.0),
                    c + egui::vec2(4.5, -3.0),
                    c + egui::vec2(0.0, 4.0),
                ]
            };
            painter.add(Shape::convex_polygon(points, palette.text, Stroke::NONE));
            indent += 13.0;
        }
        let text = row.title.clone();
        let color = if row.is_header() {
            palette.text
        } else {
            palette.weak_text
        };
        let mut job = LayoutJob::simple_singleline(text, font.clone(), color);
        job.wrap = TextWrapping::truncate_at_width(area.width() - indent - 4.0);
        let galley = painter.layout_job(job);
        let y = (p.top + p.height.min(22.0) / 2.0 - galley.size().y / 2.0).round();
        painter.galley(Pos2::new(area.left() + indent, y), galley, color);
    }
    painter.line_segment(
        [area.right_top(), area.right_bottom()],
        Stroke::new(1.0, palette.grid_line),
    );
}

fn paint_axis(
    painter: &egui::Painter,
    state: &TimelineState,
    axis: Rect,
    event_area: Rect,
    palette: &Palette,
) {
    painter.rect_filled(axis, 0.0, palette.header_row);
    let map = TimeToX::new(&state.view, event_area.left(), event_area.width());
    let step = navigation::tick_step_ns(map.ns_per_px(), 90.0);
    let origin = state.axis_origin_ns as f64;
    let mut t = ((state.view.start_ns - origin) / step).floor() * step + origin;
    let font = FontId::proportional(11.0);
    while t <= state.view.end_ns {
        let x = map.left_px + ((t - map.start_ns) * map.px_per_ns) as f32;
        if x < axis.left() {
            t += step;
            continue;
        }
        painter.line_segment(
            [
                Pos2::new(x, axis.bottom() - 6.0),
                Pos2::new(x, axis.bottom()),
            ],
            Stroke::new(1.0, palette.weak_text),
        );
        painter.text(
            Pos2::new(x + 3.0, axis.top() + 3.0),
            Align2::LEFT_TOP,
            format_tick(t - origin, step),
            font.clone(),
            palette.text,
        );
        t += step;
    }
    if let (Some(from), Some(p)) = (state.axis_drag_from_ns, painter.ctx().pointer_latest_pos()) {
        let x0 = map.left_px + ((from - map.start_ns) * map.px_per_ns) as f32;
        let band =
            Rect::from_x_y_ranges(x0.min(p.x)..=x0.max(p.x), axis.top()..=event_area.bottom());
        painter
            .with_clip_rect(axis.union(event_area))
            .rect_filled(band, 0.0, palette.zoom_band);
    }
}
