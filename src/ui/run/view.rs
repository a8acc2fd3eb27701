//! The run's timeline: one time axis on the run's clock, then per rank a header row (its GPUs'
//! busy time merged, as a GPU header merges its streams, and its collectives) and, when the rank
//! is expanded, its usual rows drawn by the usual timeline on that rank's offset. Zoom, pan,
//! range selection, rulers and search are the run's and reach every rank; a selected collective
//! instance is outlined on every rank and linked across them, the last rank to arrive marked.

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Shape, Stroke, Ui, UiBuilder};

use super::RunTab;
use crate::analysis::ranks::collectives::Source;
use crate::analysis::ranks::summary;
use crate::ui::theme::Palette;
use crate::ui::timeline::{
    self, AXIS_HEIGHT_PX, EventKind, EventRef, TITLE_WIDTH_PX, TimeToX, ViewState, format_tick,
    navigation,
};

/// Height of a rank's header row.
pub const RANK_ROW_PX: f32 = 28.0;
/// The colour that marks the last rank to arrive.
pub const LATE: Color32 = Color32::from_rgb(235, 64, 52);

/// Where the last frame put things, for the app and its tests.
#[derive(Debug, Clone)]
pub struct Drawn {
    /// Each rank's header row (title and events), by rank index.
    pub headers: Vec<(usize, Rect)>,
    /// The events column of the rows.
    pub event_area: Rect,
    /// The selected collective instance's outline on each rank that has it.
    pub outlines: Vec<(usize, Rect)>,
    /// The rank marked as the last to arrive at the selected instance.
    pub late: Option<usize>,
    /// Each expanded rank's rows.
    pub bodies: Vec<(usize, Rect)>,
    /// Collective blocks drawn in the header rows.
    pub collectives_drawn: usize,
}

impl Default for Drawn {
    fn default() -> Self {
        Self {
            headers: Vec::new(),
            event_area: Rect::NOTHING,
            outlines: Vec::new(),
            late: None,
            bodies: Vec::new(),
            collectives_drawn: 0,
        }
    }
}

/// Draws the run into the whole of `ui`'s available rect and handles its input.
pub fn show(ui: &mut Ui, run: &mut RunTab, palette: &Palette) {
    info_bar(ui, run);
    let full = ui.available_rect_before_wrap();
    ui.allocate_rect(full, Sense::hover());
    if full.width() < TITLE_WIDTH_PX + 20.0 || full.height() < AXIS_HEIGHT_PX + 10.0 {
        return;
    }
    let axis = Rect::from_min_max(
        Pos2::new(full.left() + TITLE_WIDTH_PX, full.top()),
        Pos2::new(full.right(), full.top() + AXIS_HEIGHT_PX),
    );
    let rows = Rect::from_min_max(Pos2::new(full.left(), axis.bottom()), full.max);
    let events_x = axis.x_range();
    let mut drawn = Drawn {
        event_area: Rect::from_x_y_ranges(events_x, rows.y_range()),
        ..Drawn::default()
    };
    let map = TimeToX::new(&view_state(run), axis.left(), axis.width());

    // Layout: headers and expanded bodies, one under another, scrolled by `scroll_y`.
    let mut y = rows.top() - run.scroll_y;
    let mut layout = Vec::new();
    for (k, r) in run.ranks.iter().enumerate() {
        let header = Rect::from_min_max(
            Pos2::new(full.left(), y),
            Pos2::new(full.right(), y + RANK_ROW_PX),
        );
        y += RANK_ROW_PX;
        let body = (r.expanded && r.trace.is_some()).then(|| {
            let h = body_height(r, rows.height());
            let b = Rect::from_min_max(Pos2::new(full.left(), y), Pos2::new(full.right(), y + h));
            y += h + 2.0;
            b
        });
        layout.push((k, header, body));
    }
    let content = y + run.scroll_y - rows.top();
    run.scroll_y = run.scroll_y.min((content - rows.height()).max(0.0));

    let id = ui.scope_id().with("sightline_run_rows");
    let mut zoom_to_event = None;
    for &(k, header, body) in &layout {
        if header.bottom() < rows.top() || header.top() > rows.bottom() {
            continue;
        }
        let visible = header.intersect(rows);
        let title = Rect::from_x_y_ranges(full.left()..=axis.left(), visible.y_range());
        let events = Rect::from_x_y_ranges(events_x, visible.y_range());
        let t = ui.interact(title, id.with(("title", k)), Sense::click());
        if t.clicked() {
            run.ranks[k].expanded = !run.ranks[k].expanded;
        }
        let e = ui.interact(events, id.with(("events", k)), Sense::click_and_drag());
        header_input(ui, run, &e, &map, k, header, &mut zoom_to_event);
        if !e.dragged()
            && let Some(p) = e.hover_pos()
            && let Some(text) = collective_tooltip(run, k, header, &map, p)
        {
            e.on_hover_text_at_pointer(text);
        }
        drawn.headers.push((k, header));
        let _ = body;
    }
    if let Some((a, b)) = zoom_to_event {
        run.zoom_to(a, b);
    }
    wheel(ui, run, rows, axis.left(), &map);
    if !ui.ctx().egui_wants_keyboard_input()
        && ui.input(|i| i.key_pressed(egui::Key::Home) || i.key_pressed(egui::Key::Num0))
    {
        run.show_all();
    }
    if !ui.ctx().egui_wants_keyboard_input() && ui.input(|i| i.key_pressed(egui::Key::Escape)) {
        run.range = None;
        run.rulers.clear();
        select_instance(run, None);
        run.apply_view();
    }
    let map = TimeToX::new(&view_state(run), axis.left(), axis.width());

    // Expanded ranks: their usual timeline, on their offset.
    for &(k, _, body) in &layout {
        let Some(body) = body else { continue };
        if body.bottom() < rows.top() || body.top() > rows.bottom() {
            continue;
        }
        let r = &mut run.ranks[k];
        let (Some(trace), Some(model)) = (r.trace.clone(), r.model.as_ref()) else {
            continue;
        };
        let before = r.state.selection;
        let mut child = ui.new_child(UiBuilder::new().max_rect(body).id_salt(("run_rank", k)));
        child.set_clip_rect(body.intersect(rows));
        timeline::show(
            &mut child,
            &trace,
            model,
            &mut r.state,
            palette,
            &r.search.matches,
        );
        drawn.bodies.push((k, body));
        if r.state.selection != before
            && let Some(e) = r.state.selection
            && let Some(inst) = instance_of_event(run, k, e)
        {
            select_instance(run, Some(inst));
        }
    }

    let painter = ui.painter_at(rows);
    for &(k, header, _) in &layout {
        if header.bottom() < rows.top() || header.top() > rows.bottom() {
            continue;
        }
        paint_header(
            &painter,
            run,
            k,
            header,
            axis.left(),
            &map,
            palette,
            &mut drawn,
        );
    }
    paint_instance(&painter, run, &layout, &map, &mut drawn);
    paint_marks(&painter, run, rows, axis.left(), &map, palette);
    paint_axis(&ui.painter_at(full), run, axis, full, &map, palette);
    run.last = drawn;
    if run.sync() {
        ui.ctx().request_repaint();
    }
}

/// The run's view as a [`ViewState`] (for the time ↔ x map and the zoom arithmetic).
fn view_state(run: &RunTab) -> ViewState {
    ViewState {
        start_ns: run.view.0,
        end_ns: run.view.1,
        trace_start_ns: run.bounds.0,
        trace_end_ns: run.bounds.1,
        ..ViewState::default()
    }
}

fn set_view(run: &mut RunTab, v: &ViewState) {
    run.view = (v.start_ns, v.end_ns);
    run.apply_view();
}

/// An expanded rank's rows: as tall as they are, within reason.
fn body_height(r: &super::RankView, rows_px: f32) -> f32 {
    let content: f32 = r.model.as_ref().map_or(0.0, |m| {
        m.rows
            .iter()
            .filter(|row| !r.state.view.hides(&row.hidden_by))
            .map(|row| row.height_px)
            .sum()
    });
    (content + AXIS_HEIGHT_PX + 4.0).clamp(120.0, (rows_px * 0.7).max(160.0))
}

/// Clicks and drags on a rank's header row: a click selects the collective under the pointer
/// (or clears), a double-click zooms to it, a drag pans, Shift+drag selects a range.
fn header_input(
    ui: &Ui,
    run: &mut RunTab,
    e: &egui::Response,
    map: &TimeToX,
    k: usize,
    header: Rect,
    zoom_to_event: &mut Option<(i64, i64)>,
) {
    let shift = ui.input(|i| i.modifiers.shift);
    if e.drag_started() && shift {
        run.range_drag_from_ns = e.interact_pointer_pos().map(|p| map.t(p.x));
    }
    if let Some(from) = run.range_drag_from_ns {
        if let Some(p) = e.interact_pointer_pos() {
            let to = map.t(p.x);
            run.range = Some((from.min(to).round() as i64, from.max(to).round() as i64));
            run.apply_view();
        }
        if e.drag_stopped() {
            run.range_drag_from_ns = None;
        }
        return;
    }
    if e.dragged() {
        let mut v = view_state(run);
        v.pan_ns(-f64::from(e.drag_delta().x) * map.ns_per_px());
        set_view(run, &v);
        run.scroll_y = (run.scroll_y - e.drag_delta().y).max(0.0);
    }
    if (e.clicked() || e.double_clicked())
        && let Some(p) = e.interact_pointer_pos()
    {
        let hit = collective_at(run, k, header, map, p);
        if e.double_clicked() {
            if let Some((start, end)) = hit.map(|(_, s, e)| (s, e)) {
                *zoom_to_event = Some((start, end));
            }
        } else {
            select_instance(run, hit.map(|(i, _, _)| i));
        }
    }
}

/// The instance of rank `k`'s collective under `p` (within 3 px), with its span on the run's clock.
fn collective_at(
    run: &RunTab,
    k: usize,
    header: Rect,
    map: &TimeToX,
    p: Pos2,
) -> Option<(usize, i64, i64)> {
    let a = run.analysis.as_ref()?;
    if !header.contains(p) {
        return None;
    }
    let o = run.offset_ns(k);
    let list = &a.collectives.per_rank.get(k)?.list;
    let t = map.t(p.x);
    let slack = 3.0 * map.ns_per_px();
    list.iter()
        .enumerate()
        .filter(|(_, c)| {
            ((c.start_ns + o) as f64) - slack <= t && t <= ((c.end_ns + o) as f64) + slack
        })
        .find_map(|(j, c)| {
            let inst = a.occurrence_instance.get(k)?.get(j).copied().flatten()?;
            Some((inst, c.start_ns + o, c.end_ns + o))
        })
}

/// What the collective under the pointer is: its instance, this rank's arrival and wait, the
/// last rank and the skew.
fn collective_tooltip(
    run: &RunTab,
    k: usize,
    header: Rect,
    map: &TimeToX,
    p: Pos2,
) -> Option<String> {
    let (i, start, end) = collective_at(run, k, header, map, p)?;
    let a = run.analysis.as_ref()?;
    let inst = a.instances().get(i)?;
    let rank = |r: usize| a.ranks.get(r).map_or(0, |x| x.rank);
    let d = |ns: i64| navigation::format_duration(ns as f64);
    let last = match inst.last {
        Some(r) => format!("last to arrive: rank {}", rank(r)),
        None => "the latest arrivals tie".to_string(),
    };
    Some(format!(
        "{} #{} (rank {}, {})\narrived {} after the first rank, waited {}\n{last}; skew {}\nclick: outline on every rank · double-click: zoom",
        inst.name,
        inst.ordinal,
        rank(k),
        d(end - start),
        d(inst.arrivals.get(k).copied().flatten().unwrap_or(0) - inst.first_arrival()),
        d(inst.wait_ns(k).unwrap_or(0)),
        d(inst.skew_ns),
    ))
}

/// The instance `e` (a kernel or range of rank `k`) belongs to, when it is one of its collectives.
fn instance_of_event(run: &RunTab, k: usize, e: EventRef) -> Option<usize> {
    let a = run.analysis.as_ref()?;
    let mine = a.collectives.per_rank.get(k)?;
    let kind = match mine.source? {
        Source::NcclKernels => EventKind::Kernel,
        Source::C10dOperators | Source::Ranges => EventKind::Nvtx,
    };
    if e.kind != kind {
        return None;
    }
    let j = mine.list.iter().position(|c| c.index == e.index as usize)?;
    a.occurrence_instance.get(k)?.get(j).copied().flatten()
}

/// Selects a collective instance: outlined on every rank's header, and its events outlined in
/// the rows of the expanded ranks.
pub fn select_instance(run: &mut RunTab, inst: Option<usize>) {
    run.selected_instance = inst;
    let Some(a) = &run.analysis else { return };
    for (k, r) in run.ranks.iter_mut().enumerate() {
        r.state.overlays.highlighted = inst
            .and_then(|i| occurrence_of(a, k, i))
            .map(|(j, kind)| {
                let index = a.collectives.per_rank[k].list[j].index;
                vec![EventRef::new(kind, index)]
            })
            .unwrap_or_default();
    }
}

/// Rank `k`'s collective (index into its list) in instance `inst`, and its event kind.
fn occurrence_of(
    a: &super::analysis::RunAnalysis,
    k: usize,
    inst: usize,
) -> Option<(usize, EventKind)> {
    let j = a
        .occurrence_instance
        .get(k)?
        .iter()
        .position(|&i| i == Some(inst))?;
    let kind = match a.collectives.per_rank.get(k)?.source? {
        Source::NcclKernels => EventKind::Kernel,
        Source::C10dOperators | Source::Ranges => EventKind::Nvtx,
    };
    Some((j, kind))
}

/// Wheel: over the titles it scrolls the ranks, over the header rows it zooms at the pointer.
fn wheel(ui: &Ui, run: &mut RunTab, rows: Rect, events_left: f32, map: &TimeToX) {
    let Some(p) = ui.input(|i| i.pointer.hover_pos()) else {
        return;
    };
    if !rows.contains(p) || !run.last.headers.iter().any(|(_, h)| h.contains(p)) {
        return;
    }
    let d: egui::Vec2 = ui.input(|i| {
        i.events
            .iter()
            .filter_map(|e| match e {
                egui::Event::MouseWheel { unit, delta, .. } => Some(
                    *delta
                        * match unit {
                            egui::MouseWheelUnit::Point => 1.0,
                            egui::MouseWheelUnit::Line => 40.0,
                            egui::MouseWheelUnit::Page => rows.height(),
                        },
                ),
                _ => None,
            })
            .fold(egui::Vec2::ZERO, |a, b| a + b)
    });
    if d == egui::Vec2::ZERO {
        return;
    }
    if p.x < events_left || ui.input(|i| i.modifiers.shift) {
        run.scroll_y = (run.scroll_y - d.y - d.x).max(0.0);
        return;
    }
    let mut v = view_state(run);
    if d.y != 0.0 {
        v.zoom_at(map.t(p.x), (-f64::from(d.y) * 0.0025).exp());
    }
    if d.x != 0.0 {
        v.pan_ns(-f64::from(d.x) * map.ns_per_px());
    }
    set_view(run, &v);
}

#[allow(clippy::too_many_arguments)]
fn paint_header(
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
        None => format!("Trace {}", k + 1),
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
    } else if r.job.is_some() {
        note = format!("{note}: loading…");
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
    for (s, e) in summary::visible_blocks(&info.busy, from, to, px_ns) {
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
        let first = mine.list.partition_point(|c| c.end_ns < from);
        for c in &mine.list[first..] {
            if c.start_ns > to {
                break;
            }
            let x0 = map.x(c.start_ns + o);
            let x1 = map.x(c.end_ns + o).max(x0 + 2.0);
            ep.rect_filled(
                Rect::from_x_y_ranges(x0..=x1, comm_band.clone()),
                0.0,
                palette.comm,
            );
            drawn.collectives_drawn += 1;
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
fn paint_instance(
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
fn paint_marks(
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

fn paint_axis(
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

/// The run's line above its rows: the clock used, the straggler, search across ranks, expand
/// and collapse all.
fn info_bar(ui: &mut Ui, run: &mut RunTab) {
    ui.horizontal_wrapped(|ui| {
        ui.add_space(6.0);
        ui.strong(run.title());
        if run.is_loading() {
            ui.spinner();
            ui.label(format!("loading {:.0}%", run.progress() * 100.0));
            if ui.button("Cancel").clicked() {
                run.cancel();
            }
        } else if run.busy() {
            ui.spinner();
            ui.label("matching collectives…");
        }
        if let Some(e) = &run.analysis_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        if let Some(a) = &run.analysis {
            ui.separator();
            ui.label(format!("Clock: {}", a.alignment.describe()))
                .on_hover_text(
                    "How the ranks' times were put on one clock; shift a rank by hand in the panel",
                );
            ui.separator();
            match a.straggler {
                Some((k, n)) => ui.colored_label(
                    LATE,
                    format!(
                        "Straggler: rank {} (last at {n} of {} collectives)",
                        a.ranks.get(k).map_or(0, |r| r.rank),
                        a.instances().len()
                    ),
                ),
                None => ui.label(format!(
                    "No straggler ({} collectives matched)",
                    a.instances().len()
                )),
            };
        }
        ui.separator();
        let label = ui.label("Search all ranks");
        let edit = ui
            .add(egui::TextEdit::singleline(&mut run.query).desired_width(160.0))
            .labelled_by(label.id);
        if edit.changed() {
            for r in &mut run.ranks {
                r.search.query = run.query.clone();
                if let Some(t) = &r.trace {
                    r.search.refresh(t);
                }
            }
        }
        if !run.query.is_empty() {
            let n: usize = run.ranks.iter().map(|r| r.search.matches.len()).sum();
            ui.weak(format!("{n} matches"));
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Next").clicked() || enter) && n > 0 {
                next_match(run);
            }
        }
        ui.separator();
        if ui.button("Expand all").clicked() {
            run.ranks.iter_mut().for_each(|r| r.expanded = true);
        }
        if ui.button("Collapse all").clicked() {
            run.ranks.iter_mut().for_each(|r| r.expanded = false);
        }
        if ui.button("Show all").on_hover_text("Home").clicked() {
            run.show_all();
        }
    });
}

/// The first search match (any rank) starting after the middle of the view: its rank expanded,
/// the match selected and brought into view.
fn next_match(run: &mut RunTab) {
    let mid = (run.view.0 + run.view.1) / 2.0;
    let mut best: Option<(i64, usize, EventRef)> = None;
    for (k, r) in run.ranks.iter().enumerate() {
        let Some(t) = &r.trace else { continue };
        let o = run.offset_ns(k);
        let i = r
            .search
            .matches
            .partition_point(|m| ((m.start_ns(t) + o) as f64) <= mid);
        if let Some(&m) = r.search.matches.get(i) {
            let at = m.start_ns(t) + o;
            if best.is_none_or(|(b, _, _)| at < b) {
                best = Some((at, k, m));
            }
        }
    }
    let Some((_, k, m)) = best else { return };
    let r = &mut run.ranks[k];
    r.expanded = true;
    if let (Some(t), Some(model)) = (r.trace.clone(), r.model.as_ref()) {
        r.state.reveal_match(&t, model, m);
    }
    run.sync();
}
