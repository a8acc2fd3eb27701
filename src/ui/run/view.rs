//! The run's timeline: one time axis on the run's clock, then per rank a header row (its GPUs'
//! busy time merged, as a GPU header merges its streams, and its collectives) and, when the rank
//! is expanded, its usual rows drawn by the usual timeline on that rank's offset. Zoom, pan,
//! range selection, rulers and search are the run's and reach every rank; a selected collective
//! instance is outlined on every rank and linked across them, the last rank to arrive marked.
//! An expanded rank whose trace cannot be read (a run opened from digests whose traces are
//! elsewhere) gets a line under its header saying which path and why.

use egui::{Color32, Pos2, Rect, Sense, Ui, UiBuilder};

use super::{RunTab, paint};
use crate::analysis::ranks::collectives::Source;
use crate::ui::theme::Palette;
use crate::ui::timeline::{
    self, AXIS_HEIGHT_PX, EventKind, EventRef, TITLE_WIDTH_PX, TimeToX, ViewState, navigation,
};

/// Height of a rank's header row.
pub const RANK_ROW_PX: f32 = 28.0;
/// Height of the line under an expanded rank whose trace cannot be read.
pub const UNREADABLE_PX: f32 = 40.0;
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
    /// The line under an expanded rank whose trace cannot be read, saying why.
    pub unreadable: Vec<(usize, Rect)>,
    /// Collective blocks drawn in the header rows (collectives closer than 2 px make one).
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
            unreadable: Vec::new(),
            collectives_drawn: 0,
        }
    }
}

/// Draws the run into the whole of `ui`'s available rect and handles its input.
pub fn show(ui: &mut Ui, run: &mut RunTab, palette: &Palette) {
    super::info_bar::show(ui, run);
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
    let mut unreadable = Vec::new();
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
        if r.expanded && r.trace.is_none() && r.detail_error.is_some() {
            let line = Rect::from_min_max(
                Pos2::new(full.left(), y),
                Pos2::new(full.right(), y + UNREADABLE_PX),
            );
            y += UNREADABLE_PX;
            unreadable.push((k, line));
        }
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
            run.set_expanded(k, !run.ranks[k].expanded);
            ui.ctx().request_repaint();
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

    for &(k, line) in &unreadable {
        if line.bottom() < rows.top() || line.top() > rows.bottom() {
            continue;
        }
        let Some(text) = run.ranks[k].detail_error.as_deref() else {
            continue;
        };
        show_unreadable(ui, k, line, rows, text);
        drawn.unreadable.push((k, line));
    }

    let painter = ui.painter_at(rows);
    for &(k, header, _) in &layout {
        if header.bottom() < rows.top() || header.top() > rows.bottom() {
            continue;
        }
        paint::paint_header(
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
    paint::paint_instance(&painter, run, &layout, &map, &mut drawn);
    paint::paint_marks(&painter, run, rows, axis.left(), &map, palette);
    paint::paint_axis(&ui.painter_at(full), run, axis, full, &map, palette);
    run.last = drawn;
    if run.sync() {
        ui.ctx().request_repaint();
    }
}

/// Says under a rank's header why its trace cannot be read: in the error colour, wrapped, as a
/// label (selectable, so the path can be copied).
fn show_unreadable(ui: &mut Ui, k: usize, line: Rect, rows: Rect, text: &str) {
    let text_rect = Rect::from_min_max(
        line.min + egui::vec2(20.0, 3.0),
        line.max - egui::vec2(8.0, 3.0),
    );
    let mut child = ui.new_child(
        UiBuilder::new()
            .max_rect(text_rect)
            .id_salt(("run_unreadable", k)),
    );
    child.set_clip_rect(line.intersect(rows));
    let colour = child.visuals().error_fg_color;
    child.add(egui::Label::new(egui::RichText::new(text).color(colour)).wrap());
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
pub(super) fn occurrence_of(
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
