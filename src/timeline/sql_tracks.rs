//! Query results pinned as tracks (the SQL tab's "Pin as track", `sightline render --sql-track`):
//! one row per lane of each [`SqlTrack`], first on the timeline, painted, hit-tested and described
//! here. The tracks live in the [`TimelineModel`] (the trace itself stays immutable); the panel
//! that made them hands them over and takes them back.

use std::sync::Arc;

use egui::{Color32, FontId, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState};
use super::painter::{RowPlacement, placement_at};
use super::rows::{EVENT_ROW_HEIGHT, Row, RowKind, TimelineModel};
use crate::sql::track::SqlTrack;
use crate::timeline::palette::{self, Palette};

/// An interval of a pinned track: indices into [`TimelineModel::sql_tracks`] and its intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SqlHit {
    pub track: usize,
    pub interval: usize,
}

/// Text a pinned bar shows (its `name`), elided to the bar when painted.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlLabel {
    pub rect: Rect,
    pub text: String,
    pub color: Color32,
}

/// The rows of `tracks`: one per lane, the first titled by the track.
pub fn rows_of(tracks: &[Arc<SqlTrack>]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (t, track) in tracks.iter().enumerate() {
        for (lane, label) in track.lanes.iter().enumerate() {
            let title = match (lane, label.is_empty()) {
                (0, true) => format!("SQL · {}", track.title),
                (0, false) => format!("SQL · {} · {label}", track.title),
                (_, true) => format!("SQL · {} · {}", track.title, lane + 1),
                (_, false) => label.clone(),
            };
            rows.push(Row {
                kind: RowKind::SqlTrack { track: t, lane },
                title,
                indent: u8::from(lane > 0),
                toggles: None,
                hidden_by: Vec::new(),
                height_px: EVENT_ROW_HEIGHT,
            });
        }
    }
    rows
}

/// Colour of a bar: by its name as kernels are coloured (one colour per name), the track's own
/// hue when it has no names.
pub fn bar_color(track: &SqlTrack, name: &str) -> Color32 {
    if name.is_empty() {
        palette::kernel_color(&track.title)
    } else {
        palette::kernel_color(name)
    }
}

/// Paints one lane into `bar`; bars under two pixels that touch merge into one grey block.
/// Returns (single bars, merged blocks) drawn.
#[allow(clippy::too_many_arguments)]
pub fn paint_lane(
    track: &SqlTrack,
    lane: usize,
    map: &TimeToX,
    (t0, t1): (i64, i64),
    bar: Rect,
    palette: &Palette,
    shapes: &mut Vec<Shape>,
    labels: &mut Vec<SqlLabel>,
) -> (usize, usize) {
    let mut run: Option<(f32, f32, Color32, usize)> = None;
    let flush = |run: Option<(f32, f32, Color32, usize)>,
                 shapes: &mut Vec<Shape>,
                 counts: &mut (usize, usize)| {
        if let Some((x0, x1, color, n)) = run {
            let r = Rect::from_x_y_ranges(x0..=x1.max(x0 + 1.0), bar.y_range());
            let fill = if n > 1 { palette.merged } else { color };
            shapes.push(Shape::rect_filled(r, 0.0, fill));
            if n > 1 {
                counts.1 += 1;
            } else {
                counts.0 += 1;
            }
        }
    };
    let mut counts = (0, 0);
    for i in track.in_view(lane, t0, t1) {
        let iv = &track.intervals[i];
        let (x0, x1) = (
            map.x(iv.start_ns),
            map.x(iv.end_ns).max(map.x(iv.start_ns) + 1.0),
        );
        let color = bar_color(track, &iv.name);
        if x1 - x0 < 2.0 {
            match &mut run {
                Some((_, end, _, n)) if x0 <= *end + 1.0 => {
                    *end = end.max(x1);
                    *n += 1;
                }
                _ => {
                    flush(run.take(), shapes, &mut counts);
                    run = Some((x0, x1, color, 1));
                }
            }
            continue;
        }
        flush(run.take(), shapes, &mut counts);
        let r = Rect::from_x_y_ranges(x0..=x1, bar.y_range());
        shapes.push(Shape::rect_filled(r, 0.0, color));
        counts.0 += 1;
        if r.width() >= 28.0 && !iv.name.is_empty() {
            labels.push(SqlLabel {
                rect: r,
                text: iv.name.clone(),
                color: palette::text_on(color),
            });
        }
    }
    flush(run.take(), shapes, &mut counts);
    counts
}

/// Paints the names in pinned bars, elided to each bar's visible width.
pub fn paint_labels(painter: &egui::Painter, labels: &[SqlLabel]) {
    let font = FontId::proportional(11.0);
    for label in labels {
        let visible = label.rect.intersect(painter.clip_rect());
        let width = visible.width() - 6.0;
        if width < 12.0 {
            continue;
        }
        super::frame::paint_bar_text(painter, visible, label.text.clone(), &font, label.color);
    }
}

/// The pinned interval under `pos`, if the row there is a pinned lane.
pub fn interval_at(
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    pos: Pos2,
) -> Option<SqlHit> {
    let placement = placement_at(rows, rect, pos)?;
    let RowKind::SqlTrack { track, lane } = model.rows.get(placement.row)?.kind else {
        return None;
    };
    let map = TimeToX::new(view, rect.left(), rect.width());
    let interval = model
        .sql_tracks
        .get(track)?
        .at(lane, map.t(pos.x), map.ns_per_px() * 3.0)?;
    Some(SqlHit { track, interval })
}

/// Where a pinned interval is drawn this frame; `None` when its row is off screen.
pub fn interval_rect(
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    hit: SqlHit,
) -> Option<Rect> {
    let iv = model
        .sql_tracks
        .get(hit.track)?
        .intervals
        .get(hit.interval)?;
    let row = model.row_index(RowKind::SqlTrack {
        track: hit.track,
        lane: iv.lane,
    })?;
    let p = rows.iter().find(|p| p.row == row)?;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let x0 = map.x(iv.start_ns);
    let x1 = map.x(iv.end_ns).max(x0 + 1.0);
    Some(Rect::from_x_y_ranges(
        x0..=x1,
        p.top + 1.0..=p.top + p.height - 1.0,
    ))
}

/// Outlines the selected pinned interval.
pub fn paint_selection(
    painter: &egui::Painter,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    hit: Option<SqlHit>,
    palette: &Palette,
) {
    if let Some(r) = hit.and_then(|h| interval_rect(model, view, rows, rect, h)) {
        painter.rect_stroke(
            r.expand(1.5),
            0.0,
            Stroke::new(2.5, palette.selection),
            egui::StrokeKind::Outside,
        );
    }
}

/// Outlines the search's matches among pinned intervals that are in view (at most 4000).
pub fn paint_matches(
    painter: &egui::Painter,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    matches: &[SqlHit],
    palette: &Palette,
) {
    let mut drawn = 0;
    for &hit in matches {
        let Some((a, b)) = span_of(model, hit) else {
            continue;
        };
        if (b as f64) < view.start_ns || (a as f64) > view.end_ns {
            continue;
        }
        if let Some(r) = interval_rect(model, view, rows, rect, hit) {
            painter.rect_stroke(
                r,
                0.0,
                Stroke::new(1.5, palette.search_match),
                egui::StrokeKind::Inside,
            );
            drawn += 1;
            if drawn >= 4000 {
                break;
            }
        }
    }
}

/// The `[start, end)` of a pinned interval.
pub fn span_of(model: &TimelineModel, hit: SqlHit) -> Option<(i64, i64)> {
    let iv = model
        .sql_tracks
        .get(hit.track)?
        .intervals
        .get(hit.interval)?;
    Some((iv.start_ns, iv.end_ns))
}
