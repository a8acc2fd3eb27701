//! A whole frame of the timeline painted: the event area's shapes with the names in its bars,
//! the overlays, the row-title column on the left, the time axis on top and the corner between
//! them. The window's widget paints a frame with these pieces (adding what follows the pointer and
//! the selection); [`paint_still`] paints one as it looks with no pointer, no selection and no
//! search, which is what `sightline render` draws.

use egui::text::{LayoutJob, TextWrapping};
use egui::{Align2, Color32, FontId, Pos2, Rect, Shape, Stroke};

use super::navigation::{self, TimeToX, ViewState, format_duration, format_tick};
use super::overlays::{self, OverlayInput};
use super::painter::{BarLabel, FrameShapes, RunLabel, build_shapes};
use super::palette::Palette;
use super::rows::TimelineModel;
use super::{graph_brackets, sql_tracks};
use crate::trace::Trace;

/// Width of the row-title column, in points.
pub const TITLE_WIDTH_PX: f32 = 250.0;
/// Height of the time axis strip.
pub const AXIS_HEIGHT_PX: f32 = 26.0;

/// The parts of the timeline's rect: row titles on the left below the axis, the axis on top
/// right of the titles, the events below the axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Areas {
    pub full: Rect,
    pub titles: Rect,
    pub axis: Rect,
    pub events: Rect,
}

impl Areas {
    pub fn of(full: Rect) -> Self {
        let titles = Rect::from_min_max(
            Pos2::new(full.left(), full.top() + AXIS_HEIGHT_PX),
            Pos2::new(full.left() + TITLE_WIDTH_PX, full.bottom()),
        );
        let axis = Rect::from_min_max(
            Pos2::new(full.left() + TITLE_WIDTH_PX, full.top()),
            Pos2::new(full.right(), full.top() + AXIS_HEIGHT_PX),
        );
        let events = Rect::from_min_max(
            Pos2::new(full.left() + TITLE_WIDTH_PX, full.top() + AXIS_HEIGHT_PX),
            full.max,
        );
        Self {
            full,
            titles,
            axis,
            events,
        }
    }

    /// Whether the event area is too small to draw anything in.
    pub fn too_small(&self) -> bool {
        self.events.width() < 10.0 || self.events.height() < 10.0
    }
}

/// The shapes of the event area and the graph launches' brackets over them: what both the window
/// and [`paint_still`] draw first.
pub fn build_event_shapes(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    event_area: Rect,
    palette: &Palette,
) -> FrameShapes {
    let mut frame = build_shapes(trace, model, view, event_area, palette);
    graph_brackets::add_brackets(trace, model, view, event_area, &mut frame);
    frame
}

/// Paints the bars of `frame` and the names in them into the event area's painter.
pub fn paint_events(event_painter: &egui::Painter, trace: &Trace, frame: &FrameShapes) {
    event_painter.extend(frame.shapes.iter().cloned());
    paint_labels(event_painter, trace, &frame.labels);
    paint_run_labels(event_painter, &frame.run_labels);
    sql_tracks::paint_labels(event_painter, &frame.sql_labels);
}

/// The corner above the row titles, left of the axis: the visible span.
pub fn paint_corner(painter: &egui::Painter, areas: &Areas, view: &ViewState, palette: &Palette) {
    let corner = Rect::from_min_max(
        areas.full.min,
        Pos2::new(areas.titles.right(), areas.axis.bottom()),
    );
    painter.rect_filled(corner, 0.0, palette.header_row);
    painter.text(
        corner.left_center() + egui::vec2(6.0, 0.0),
        Align2::LEFT_CENTER,
        format!("visible span {}", format_duration(view.span_ns())),
        FontId::proportional(11.0),
        palette.weak_text,
    );
}

/// Paints the timeline into `painter` over `full` as the window shows it with no pointer, no
/// selection and no search: events, their names, the overlays of `input`, the row titles, the
/// axis counted from `axis_origin_ns` and the corner. `None` when `full` is too small.
#[allow(clippy::too_many_arguments)]
pub fn paint_still(
    painter: &egui::Painter,
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    full: Rect,
    palette: &Palette,
    input: &OverlayInput<'_>,
    axis_origin_ns: i64,
) -> Option<FrameShapes> {
    let areas = Areas::of(full);
    if areas.too_small() {
        return None;
    }
    let mut frame = build_event_shapes(trace, model, view, areas.events, palette);
    let event_painter = painter.with_clip_rect(areas.events);
    paint_events(&event_painter, trace, &frame);
    let overlay = overlays::overlay_shapes(
        trace,
        model,
        view,
        &frame.rows,
        areas.events,
        palette,
        input,
    );
    overlays::paint(&event_painter, &overlay, palette);
    paint_titles(
        &painter.with_clip_rect(areas.titles),
        model,
        view,
        &frame,
        areas.titles,
        palette,
    );
    paint_axis(
        &painter.with_clip_rect(areas.axis),
        view,
        axis_origin_ns,
        None,
        areas.axis,
        areas.events,
        palette,
    );
    paint_corner(painter, &areas, view, palette);
    frame.overlay = overlay;
    Some(frame)
}

/// The names in the bars that have room for one, cut to the visible part of each bar.
pub fn paint_labels(painter: &egui::Painter, trace: &Trace, labels: &[BarLabel]) {
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

/// The counts over runs of unnamed bars ("29 ranges"), cut to the visible part of each run.
pub fn paint_run_labels(painter: &egui::Painter, labels: &[RunLabel]) {
    let font = FontId::proportional(11.0);
    for label in labels {
        let visible = label.rect.intersect(painter.clip_rect());
        if visible.width() - 6.0 < 12.0 {
            continue;
        }
        paint_bar_text(painter, visible, label.text.clone(), &font, label.color);
    }
}

/// `text` on the visible part of a bar, cut to its width, 3 px in and centred vertically (event
/// labels and pinned SQL tracks' labels).
pub fn paint_bar_text(
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

/// The row-title column: each placed row's title (indented by its depth, a triangle on the rows
/// that open or close a group) on its row's background.
pub fn paint_titles(
    painter: &egui::Painter,
    model: &TimelineModel,
    view: &ViewState,
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
            let points = if view.collapsed.contains(&g) {
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

/// The time axis: ticks and times counted from `origin_ns`, and the band of a zoom drag on it
/// (from `drag_from_ns` to the pointer).
pub fn paint_axis(
    painter: &egui::Painter,
    view: &ViewState,
    origin_ns: i64,
    drag_from_ns: Option<f64>,
    axis: Rect,
    event_area: Rect,
    palette: &Palette,
) {
    painter.rect_filled(axis, 0.0, palette.header_row);
    let map = TimeToX::new(view, event_area.left(), event_area.width());
    let step = navigation::tick_step_ns(map.ns_per_px(), 90.0);
    let origin = origin_ns as f64;
    let mut t = ((view.start_ns - origin) / step).floor() * step + origin;
    let font = FontId::proportional(11.0);
    while t <= view.end_ns {
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
    if let (Some(from), Some(p)) = (drag_from_ns, painter.ctx().pointer_latest_pos()) {
        let x0 = map.left_px + ((from - map.start_ns) * map.px_per_ns) as f32;
        let band =
            Rect::from_x_y_ranges(x0.min(p.x)..=x0.max(p.x), axis.top()..=event_area.bottom());
        painter
            .with_clip_rect(axis.union(event_area))
            .rect_filled(band, 0.0, palette.zoom_band);
    }
}
