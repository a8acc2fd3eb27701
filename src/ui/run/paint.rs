//! Drawing the run's rows: each rank's header (its GPUs' busy time merged, its collectives, its
//! search matches), the selected collective instance outlined and linked across ranks with the
//! last rank marked, the range selection and rulers over the headers, and the run's time axis.

use egui::{Align2, Color32, FontId, Pos2, Rect, Shape, Stroke};

use super::RunTab;
use super::view::{Drawn, LATE, RANK_ROW_PX, occurrence_of};
use crate::analysis::ranks::summary;
use crate::ui::theme::Palette;
use crate::ui::timeline::{TimeToX, format_tick, navigation};

#[allow(clippy::too_many_arguments)]
pub(super) fn paint_header(
    painter: &egui::Painter,
    run: &RunTab,
    k: usize,
    header: Rect,
    events_left: f32,
    map: &TimeToX,
    palette: &Palette,
    drawn: &mut Drawn,
) {
    let r = &run.ranks[k];
    let title = Rect::from_x_y_ranges(header.left()..=events_left, header.y_range());
    let events = Rect::from_x_y_ranges(events_left..=header.right(), header.y_range());
    painter.rect_filled(title, 0.0, palette.header_row);
    painter.rect_filled(events, 0.0, palette.row_background(true, k));
    painter.hline(
        header.x_range(),
        header.bottom() - 0.5,
        Stroke::new(1.0, palette.grid_line),
    );
    // The triangle: right when collapsed, down when expanded.
    let c = Pos2::new(header.left() + 10.0, header.center().y);
    let points = if r.expanded {
        vec![
            c + egui::vec2(-4.5, -3.0),
            c + egui::vec2(4.5, -3.0),
            c + egui::vec2(0.0, 4.0),
        ]
    } else {
        vec![
            c + egui::vec2(-3.0, -4.5),
            c + egui::vec2(4.0, 0.0),
            c + egui::vec2(-3.0, 4.5),
        ]
    };
    painter.add(Shape::convex_polygon(points, palette.text, Stroke::NONE));
    let a = run.analysis.as_ref();
    let info = a.and_then(|a| a.ranks.get(k));
    let label = match info {
        Some(i) => format!("Rank {}", i.rank),
        // Before the analysis the rank is not known: its file (beside) names it, and a number
        // here would read as a rank.
        None => "Trace".to_string(),
    };
    let text_left = header.left() + 20.0;
    let galley = painter.layout_no_wrap(label, FontId::proportional(13.0), palette.text);
    let label_w = galley.size().x;
    painter.galley(
        Pos2::new(text_left, header.center().y - galley.size().y / 2.0),
        galley,
        palette.text,
    );
    let straggler = a.and_then(|a| a.straggler).is_some_and(|(s, _)| s == k);
    let mut note = r.file_name();
    if let Some(e) = &r.error {
        note = format!("{note}: {e}");
    } else if let Some(f) = run.open_progress(k) {
        note = format!("{note}: reading {:.0}%", f * 100.0);
    } else if let Some(f) = run.detail_progress(k) {
        note = format!("{note}: loading its events {:.0}%", f * 100.0);
    } else if r.detail_error.is_some() {
        // The whole sentence, with the path, is on the line under the header (view.rs).
        note = format!("{note}: trace cannot be read here");
    }
    let note_color = if straggler { LATE } else { palette.weak_text };
    let note = if straggler {
        format!("straggler · {note}")
    } else {
        note
    };
    let mut job =
        egui::text::LayoutJob::simple_singleline(note, FontId::proportional(11.0), note_color);
    job.wrap =
        egui::text::TextWrapping::truncate_at_width(events_left - text_left - label_w - 12.0);
    let galley = painter.layout_job(job);
    painter.galley(
        Pos2::new(
            text_left + label_w + 8.0,
            header.center().y - galley.size().y / 2.0,
        ),
        galley,
        note_color,
    );

    let (Some(a), Some(info)) = (a, info) else {
        return;
    };
    let o = run.offset_ns(k);
    let from = (map.t(events_left) as i64).saturating_sub(o);
    let to = (map.t(header.right()) as i64).saturating_sub(o);
    let px_ns = (map.ns_per_px() as i64).max(1);
    let ep = painter.with_clip_rect(painter.clip_rect().intersect(events));
    let busy_band = Rect::from_x_y_ranges(0.0..=0.0, header.top() + 4.0..=header.bottom() - 4.0);
    for (s, e) in summary::visible_blocks(&info.digest.busy, from, to, px_ns) {
        let x0 = map.x(s + o);
        let x1 = map.x(e + o).max(x0 + 1.0);
        ep.rect_filled(
            Rect::from_x_y_ranges(x0..=x1, busy_band.y_range()),
            0.0,
            palette.merged,
        );
    }
    let comm_band = header.top() + RANK_ROW_PX * 0.5..=header.bottom() - 4.0;
    if let Some(mine) = a.collectives.per_rank.get(k) {
        // Collectives closer than two pixels are drawn as one block (thousands per rank).
        let first = mine.list.partition_point(|c| c.end_ns < from);
        let spans = mine.list[first..]
            .iter()
            .take_while(|c| c.start_ns <= to)
            .map(|c| (c.start_ns, c.end_ns));
        let mut block: Option<(i64, i64)> = None;
        let mut draw = |(s, e): (i64, i64)| {
            let x0 = map.x(s + o);
            let x1 = map.x(e + o).max(x0 + 2.0);
            ep.rect_filled(
                Rect::from_x_y_ranges(x0..=x1, comm_band.clone()),
                0.0,
                palette.comm,
            );
            drawn.collectives_drawn += 1;
        };
        for (s, e) in spans {
            block = match block {
                Some((bs, be)) if s - be < 2 * px_ns => Some((bs, be.max(e))),
                Some(b) => {
                    draw(b);
                    Some((s, e))
                }
                None => Some((s, e)),
            };
        }
        if let Some(b) = block {
            draw(b);
        }
    }
    // Search matches of this rank, as ticks on its header.
    let first = r
        .search
        .matches
        .partition_point(|m| r.trace.as_ref().is_some_and(|t| m.end_ns(t) < from));
    if let Some(t) = &r.trace {
        for m in r.search.matches[first..].iter().take(4000) {
            if m.start_ns(t) > to {
                break;
            }
            let x = map.x(m.start_ns(t) + o);
            ep.vline(
                x,
                header.top() + 1.0..=header.top() + 6.0,
                Stroke::new(1.5, palette.search_match),
            );
        }
    }
}

/// The selected instance: outlined on every rank, its arrivals joined from rank to rank, the
/// last rank to arrive marked "last" with the skew.
pub(super) fn paint_instance(
    painter: &egui::Painter,
    run: &RunTab,
    layout: &[(usize, Rect, Option<Rect>)],
    map: &TimeToX,
    drawn: &mut Drawn,
) {
    let (Some(a), Some(inst)) = (&run.analysis, run.selected_instance) else {
        return;
    };
    let Some(instance) = a.instances().get(inst) else {
        return;
    };
    let mut previous: Option<Pos2> = None;
    for &(k, header, _) in layout {
        let Some((j, _)) = occurrence_of(a, k, inst) else {
            continue;
        };
        let c = &a.collectives.per_rank[k].list[j];
        let o = run.offset_ns(k);
        let x0 = map.x(c.start_ns + o);
        let x1 = map.x(c.end_ns + o).max(x0 + 3.0);
        let rect = Rect::from_x_y_ranges(x0..=x1, header.top() + 2.0..=header.bottom() - 2.0);
        let late = instance.last == Some(k);
        let stroke = if late {
            Stroke::new(3.0, LATE)
        } else {
            Stroke::new(2.0, Color32::from_rgb(255, 200, 40))
        };
        painter.rect_stroke(rect, 1.0, stroke, egui::StrokeKind::Outside);
        let arrival = Pos2::new(x0, rect.center().y);
        if let Some(p) = previous {
            painter.line_segment(
                [p, arrival],
                Stroke::new(1.5, Color32::from_rgb(255, 200, 40)),
            );
        }
        previous = Some(arrival);
        if late {
            let galley = painter.layout_no_wrap(
                format!(
                    "last · {} after the first",
                    navigation::format_duration(instance.skew_ns as f64)
                ),
                FontId::proportional(11.0),
                Color32::WHITE,
            );
            // Left of the arrival, kept off the titles (inside the outline when it must).
            let at = Pos2::new(
                (x0 - 6.0 - galley.size().x).max(map.left_px + 4.0),
                header.center().y - galley.size().y / 2.0,
            );
            painter.rect_filled(
                Rect::from_min_size(at, galley.size()).expand(2.0),
                2.0,
                LATE,
            );
            painter.galley(at, galley, Color32::WHITE);
            drawn.late = Some(k);
        }
        drawn.outlines.push((k, rect));
    }
}

/// The range selection and rulers across every row.
pub(super) fn paint_marks(
    painter: &egui::Painter,
    run: &RunTab,
    rows: Rect,
    events_left: f32,
    map: &TimeToX,
    palette: &Palette,
) {
    let area = Rect::from_x_y_ranges(events_left..=rows.right(), rows.y_range());
    let p = painter.with_clip_rect(painter.clip_rect().intersect(area));
    // Only over the header rows: an expanded rank's timeline draws its own.
    for &(_, h) in &run.last.headers {
        if let Some((a, b)) = run.range {
            let x0 = map.x(a);
            let x1 = map.x(b);
            p.rect_filled(
                Rect::from_x_y_ranges(x0..=x1, h.y_range()),
                0.0,
                palette.range_band,
            );
        }
        for u in &run.rulers {
            for t in [u.from_ns, u.to_ns] {
                let x = map.x(t as i64);
                p.vline(x, h.y_range(), Stroke::new(1.0, palette.ruler));
            }
        }
    }
}

pub(super) fn paint_axis(
    painter: &egui::Painter,
    run: &RunTab,
    axis: Rect,
    full: Rect,
    map: &TimeToX,
    palette: &Palette,
) {
    let corner = Rect::from_min_max(full.min, Pos2::new(axis.left(), axis.bottom()));
    painter.rect_filled(corner, 0.0, palette.header_row);
    painter.text(
        corner.left_center() + egui::vec2(6.0, 0.0),
        Align2::LEFT_CENTER,
        format!(
            "run clock · visible {}",
            navigation::format_duration(run.view.1 - run.view.0)
        ),
        FontId::proportional(11.0),
        palette.weak_text,
    );
    let p = painter.with_clip_rect(axis);
    p.rect_filled(axis, 0.0, palette.header_row);
    let step = navigation::tick_step_ns(map.ns_per_px(), 90.0);
    let origin = run.bounds.0 as f64;
    let mut t = ((run.view.0 - origin) / step).floor() * step + origin;
    while t <= run.view.1 {
        let x = map.left_px + ((t - map.start_ns) * map.px_per_ns) as f32;
        p.vline(
            x,
            axis.bottom() - 6.0..=axis.bottom(),
            Stroke::new(1.0, palette.weak_text),
        );
        p.text(
            Pos2::new(x + 3.0, axis.top() + 3.0),
            Align2::LEFT_TOP,
            format_tick(t - origin, step),
            FontId::proportional(11.0),
            palette.text,
        );
        t += step;
    }
}
