//! CUDA graph launches traced node by node (`trace.graph_launches`) on their stream rows.
//!
//! A launch starts collapsed: one gold block over its span, as a graph traced as a whole looks,
//! with a disclosure triangle, its name, and a strip along its bottom edge where its nodes ran
//! (the idle time between nodes stays visible). Expanded, its kernels, copies and memsets are
//! drawn as every other operation and the launch becomes a bracket: a thin gold bar along the
//! top of the row, ticks at both ends and a tab with the triangle. Clicking the triangle toggles;
//! clicking the block or the bar selects the launch (details, its `cudaGraphLaunch`).
//!
//! Only the drawing groups the nodes: they stay kernels, memcpys and memsets for every figure,
//! and the launches are in no analysis, so nothing is counted twice. Headless (shapes out), like
//! [`super::painter`], so tests can look at what is drawn.

use egui::{Color32, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState};
use super::painter::{BarLabel, FrameShapes, RowPlacement, placement_at};
use super::rows::{EventKind, EventRef, RowKind, TimelineModel, stream_of};
use crate::index::LodItem;
use crate::timeline::palette;
use crate::trace::{NO_GRAPH_NODE, Slice, Spans, Trace};

/// Height of an expanded launch's bar along the top of its row.
pub const BRACKET_BAR_PX: f32 = 4.0;
/// Width of the disclosure triangle's place at the left of a launch.
pub const DISCLOSURE_PX: f32 = 12.0;
/// Height of the tab that holds an expanded launch's triangle.
const TAB_PX: f32 = 10.0;
/// Narrower launches get no triangle (the details panel and the context still toggle them).
const MIN_DISCLOSURE_WIDTH_PX: f32 = 16.0;
/// Narrower collapsed blocks get no name.
const MIN_LABEL_WIDTH_PX: f32 = 48.0;
/// Narrower collapsed blocks get no dark edges.
const MIN_EDGES_WIDTH_PX: f32 = 6.0;
/// Narrower collapsed blocks get no strip of their nodes.
const MIN_STRIP_WIDTH_PX: f32 = 12.0;
/// Height of a collapsed block's strip of nodes.
const STRIP_PX: f32 = 4.0;
/// Where a collapsed launch's nodes ran, and where it waited, in its strip.
const NODE_BUSY: Color32 = Color32::from_rgb(104, 74, 0);
const NODE_IDLE: Color32 = Color32::from_rgb(240, 214, 136);

/// Whether launch `launch` of `trace.graph_launches` shows its nodes.
pub fn is_expanded(view: &ViewState, launch: usize) -> bool {
    u32::try_from(launch).is_ok_and(|l| view.expanded_graphs.contains(&l))
}

/// Shows launch `launch` node by node, or collapses it back into one block.
pub fn toggle(view: &mut ViewState, launch: usize) {
    let Ok(l) = u32::try_from(launch) else {
        return;
    };
    if !view.expanded_graphs.remove(&l) {
        view.expanded_graphs.insert(l);
    }
}

/// The spans, correlation ids and node ids of a kind of GPU operation.
fn node_table(trace: &Trace, kind: EventKind) -> Option<(&Spans, &[u32], &[u64])> {
    Some(match kind {
        EventKind::Kernel => (
            &trace.kernels.spans,
            &trace.kernels.correlation_id,
            &trace.kernels.graph_node,
        ),
        EventKind::Memcpy => (
            &trace.memcpys.spans,
            &trace.memcpys.correlation_id,
            &trace.memcpys.graph_node,
        ),
        EventKind::Memset => (
            &trace.memsets.spans,
            &trace.memsets.correlation_id,
            &trace.memsets.graph_node,
        ),
        _ => return None,
    })
}

/// The `graphNodeId` of a GPU operation run as a graph node.
pub fn graph_node_id(trace: &Trace, event: EventRef) -> Option<u64> {
    let (_, _, nodes) = node_table(trace, event.kind)?;
    nodes
        .get(event.index as usize)
        .copied()
        .filter(|&n| n != NO_GRAPH_NODE)
}

/// The launch (index into `trace.graph_launches`) a GPU operation ran in as a graph node.
pub fn launch_of_node(trace: &Trace, event: EventRef) -> Option<usize> {
    if trace.graph_launches.is_empty() {
        return None;
    }
    graph_node_id(trace, event)?;
    let (spans, correlation, _) = node_table(trace, event.kind)?;
    let i = event.index as usize;
    let stream = trace.streams.get(stream_of(trace, event)?)?;
    trace
        .graph_launches
        .launch_of(stream, *correlation.get(i)?, *spans.start_ns.get(i)?)
}

/// What stands for `event` on screen: the launch, when `event` is a node of a collapsed one;
/// else the event itself.
pub fn stand_in(trace: &Trace, view: &ViewState, event: EventRef) -> EventRef {
    match launch_of_node(trace, event) {
        Some(l) if !is_expanded(view, l) => EventRef::new(EventKind::GraphLaunch, l),
        _ => event,
    }
}

/// `events` with each node of a collapsed launch replaced by the launch, once, in order.
pub fn stand_ins(trace: &Trace, view: &ViewState, events: &[EventRef]) -> Vec<EventRef> {
    let mut out: Vec<EventRef> = Vec::with_capacity(events.len());
    for &e in events {
        let shown = stand_in(trace, view, e);
        if shown == e || !out.contains(&shown) {
            out.push(shown);
        }
    }
    out
}

/// Left and right of `[start, end)` on screen, clipped to `rect`, at least a point wide.
fn span_x(map: &TimeToX, rect: Rect, start_ns: i64, end_ns: i64) -> (f32, f32) {
    let x0 = map.x(start_ns).max(rect.left());
    let x1 = map.x(end_ns).min(rect.right()).max(x0 + 1.0);
    (x0, x1)
}

/// A triangle in `cell`: pointing right when collapsed, down when expanded.
fn disclosure(cell: Rect, expanded: bool, color: Color32) -> Shape {
    let c = cell.center();
    let points = if expanded {
        vec![
            c + egui::vec2(-3.5, -2.0),
            c + egui::vec2(3.5, -2.0),
            c + egui::vec2(0.0, 2.5),
        ]
    } else {
        vec![
            c + egui::vec2(-2.0, -3.5),
            c + egui::vec2(2.5, 0.0),
            c + egui::vec2(-2.0, 3.5),
        ]
    };
    Shape::convex_polygon(points, color, Stroke::NONE)
}

/// Draws the graph launches of the stream rows in `frame.rows` over their kernels (after
/// [`super::build_shapes`]): collapsed ones as blocks whose name replaces the labels of the
/// nodes under them, expanded ones as brackets.
pub fn add_brackets(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rect: Rect,
    frame: &mut FrameShapes,
) {
    let g = &trace.graph_launches;
    if g.is_empty() {
        return;
    }
    let map = TimeToX::new(view, rect.left(), rect.width());
    let (t0, t1) = (view.start_ns.floor() as i64, view.end_ns.ceil() as i64 + 1);
    let merge_below = ((map.ns_per_px() * 2.0).floor() as i64).max(1);
    let text = palette::text_on(palette::GRAPH);
    let mut hidden: Vec<Rect> = Vec::new();
    let mut labels: Vec<BarLabel> = Vec::new();
    let rows: Vec<RowPlacement> = frame.rows.clone();
    for p in rows {
        let Some(RowKind::Stream { stream }) = model.rows.get(p.row).map(|r| r.kind) else {
            continue;
        };
        let Some(s) = trace
            .streams
            .get(stream)
            .filter(|s| !s.graph_launches.is_empty())
        else {
            continue;
        };
        let range = s.graph_launches.range.clone();
        let base = range.start;
        let (starts, ends) = (&g.spans.start_ns[range.clone()], &g.spans.end_ns[range]);
        let bar = Rect::from_x_y_ranges(rect.x_range(), p.top + 2.0..=p.top + p.height - 2.0);
        let shapes = &mut frame.shapes;
        s.graph_launches
            .index
            .walk(starts, ends, t0, t1, merge_below, &mut |item| {
                let (launch, start, end, expanded) = match item {
                    LodItem::Event(i) => (
                        Some(base + i),
                        starts[i],
                        ends[i],
                        is_expanded(view, base + i),
                    ),
                    LodItem::Merged(b) => {
                        // Launches too close to tell apart: a block unless one of them is open.
                        let first = base + starts.partition_point(|&t| t < b.start_ns);
                        let open = view
                            .expanded_graphs
                            .iter()
                            .any(|&e| (first..first + b.count as usize).contains(&(e as usize)));
                        (None, b.start_ns, b.max_end_ns, open)
                    }
                };
                let (x0, x1) = span_x(&map, rect, start, end);
                let block = Rect::from_x_y_ranges(x0..=x1, bar.y_range());
                if expanded {
                    bracket(
                        shapes,
                        block,
                        p,
                        launch.is_some() && x1 - x0 >= MIN_DISCLOSURE_WIDTH_PX,
                        text,
                    );
                    return;
                }
                shapes.push(Shape::rect_filled(block, 0.0, palette::GRAPH));
                hidden.push(block);
                let Some(launch) = launch else {
                    return;
                };
                if x1 - x0 >= MIN_EDGES_WIDTH_PX {
                    // Launches back to back stay apart.
                    for x in [x0, x1 - 1.0] {
                        let edge = Rect::from_x_y_ranges(x..=x + 1.0, bar.y_range());
                        shapes.push(Shape::rect_filled(edge, 0.0, NODE_BUSY));
                    }
                }
                if x1 - x0 >= MIN_STRIP_WIDTH_PX {
                    node_strip(trace, s, launch, (&map, block, merge_below), shapes);
                }
                let mut name_left = x0;
                if x1 - x0 >= MIN_DISCLOSURE_WIDTH_PX {
                    let cell = Rect::from_x_y_ranges(
                        x0..=x0 + DISCLOSURE_PX,
                        bar.top()..=bar.bottom() - STRIP_PX,
                    );
                    shapes.push(disclosure(cell, false, text));
                    name_left = x0 + DISCLOSURE_PX - 2.0;
                }
                if x1 - x0 >= MIN_LABEL_WIDTH_PX {
                    labels.push(BarLabel {
                        rect: Rect::from_x_y_ranges(
                            name_left..=x1,
                            bar.top()..=bar.bottom() - STRIP_PX,
                        ),
                        text: g.spans.name[launch],
                        color: text,
                        api_call: false,
                    });
                }
            });
    }
    // The nodes' names would be written over the block that hides them.
    frame
        .labels
        .retain(|l| !hidden.iter().any(|h| h.contains(l.rect.center())));
    frame.labels.extend(labels);
}

/// An expanded launch over the nodes drawn in `block`: a bar along the top of the row, a tick
/// at each end, and (when `tab`) the tab with the triangle at the left.
fn bracket(shapes: &mut Vec<Shape>, block: Rect, p: RowPlacement, tab: bool, text: Color32) {
    let top = p.top + 1.0;
    let bottom = p.top + p.height - 1.0;
    let (x0, x1) = (block.left(), block.right());
    shapes.push(Shape::rect_filled(
        Rect::from_x_y_ranges(x0..=x1, top..=top + BRACKET_BAR_PX),
        0.0,
        palette::GRAPH,
    ));
    for x in [x0, (x1 - 2.0).max(x0)] {
        shapes.push(Shape::rect_filled(
            Rect::from_x_y_ranges(x..=x + 2.0, top..=bottom),
            0.0,
            palette::GRAPH,
        ));
    }
    if tab {
        let cell = Rect::from_x_y_ranges(x0..=x0 + DISCLOSURE_PX, top..=top + TAB_PX);
        shapes.push(Shape::rect_filled(cell, 1.0, palette::GRAPH));
        shapes.push(disclosure(cell, true, text));
    }
}

/// Where the nodes of a collapsed launch ran, as a strip along the bottom of its block: the
/// stream's operations in the launch's span, merged per pixel as the painter merges them.
fn node_strip(
    trace: &Trace,
    stream: &crate::trace::StreamTrack,
    launch: usize,
    (map, block, merge_below): (&TimeToX, Rect, i64),
    shapes: &mut Vec<Shape>,
) {
    let g = &trace.graph_launches;
    let (start, end) = (g.spans.start_ns[launch], g.spans.end_ns[launch]);
    let strip = Rect::from_x_y_ranges(block.x_range(), block.bottom() - STRIP_PX..=block.bottom());
    shapes.push(Shape::rect_filled(strip, 0.0, NODE_IDLE));
    let lanes: [(&Slice, EventKind); 3] = [
        (&stream.kernels, EventKind::Kernel),
        (&stream.memcpys, EventKind::Memcpy),
        (&stream.memsets, EventKind::Memset),
    ];
    let mut busy: Vec<(f32, f32)> = Vec::new();
    for (slice, kind) in lanes {
        let Some((spans, correlation, nodes)) = node_table(trace, kind) else {
            continue;
        };
        if slice.is_empty() || nodes.is_empty() {
            continue;
        }
        let base = slice.range.start;
        let starts = &spans.start_ns[slice.range.clone()];
        let ends = &spans.end_ns[slice.range.clone()];
        slice
            .index
            .walk(starts, ends, start, end + 1, merge_below, &mut |item| {
                let (s, e) = match item {
                    LodItem::Event(i) => {
                        let n = base + i;
                        if nodes[n] == NO_GRAPH_NODE || correlation[n] != g.correlation_id[launch] {
                            return;
                        }
                        (starts[i], ends[i])
                    }
                    // Operations too close to tell apart, inside the launch on its stream.
                    LodItem::Merged(b) => (b.start_ns.max(start), b.max_end_ns.min(end)),
                };
                let (x0, x1) = span_x(map, strip, s, e);
                busy.push((x0, x1));
            });
    }
    busy.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut run: Option<(f32, f32)> = None;
    for (x0, x1) in busy {
        match run.as_mut() {
            Some(r) if x0 <= r.1 + 0.5 => r.1 = r.1.max(x1),
            _ => {
                if let Some((a, b)) = run.replace((x0, x1)) {
                    shapes.push(strip_rect(strip, a, b));
                }
            }
        }
    }
    if let Some((a, b)) = run {
        shapes.push(strip_rect(strip, a, b));
    }
}

fn strip_rect(strip: Rect, x0: f32, x1: f32) -> Shape {
    Shape::rect_filled(
        Rect::from_x_y_ranges(x0..=x1.max(x0 + 1.0), strip.y_range()),
        0.0,
        NODE_BUSY,
    )
}

/// A graph launch under the pointer, and whether the pointer is on its disclosure triangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BracketHit {
    pub launch: EventRef,
    pub disclosure: bool,
}

/// The graph launch under `pos`, if any: a collapsed block anywhere on it, an expanded one on
/// its bar or tab (the nodes below it are the painter's). Of several, the shortest.
pub fn bracket_at(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    pos: Pos2,
) -> Option<BracketHit> {
    let g = &trace.graph_launches;
    if g.is_empty() {
        return None;
    }
    let p = placement_at(rows, rect, pos)?;
    let RowKind::Stream { stream } = model.rows.get(p.row)?.kind else {
        return None;
    };
    let slice = &trace.streams.get(stream)?.graph_launches;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let (t, tolerance) = (map.t(pos.x), map.ns_per_px() * 2.0);
    let mut best: Option<(i64, BracketHit)> = None;
    for i in slice.overlapping(
        &g.spans.start_ns,
        &g.spans.end_ns,
        (t - tolerance).floor() as i64,
        (t + tolerance).ceil() as i64 + 1,
    ) {
        let (x0, x1) = span_x(&map, rect, g.spans.start_ns[i], g.spans.end_ns[i]);
        if pos.x < x0 - 1.0 || pos.x > x1 + 1.0 {
            continue;
        }
        let expanded = is_expanded(view, i);
        let on_triangle = x1 - x0 >= MIN_DISCLOSURE_WIDTH_PX
            && pos.x <= x0 + DISCLOSURE_PX
            && (!expanded || pos.y <= p.top + 1.0 + TAB_PX);
        if expanded && !on_triangle && pos.y > p.top + 2.0 + BRACKET_BAR_PX {
            continue;
        }
        let duration = g.spans.duration_ns(i);
        if best.is_none_or(|(d, _)| duration < d) {
            let hit = BracketHit {
                launch: EventRef::new(EventKind::GraphLaunch, i),
                disclosure: on_triangle,
            };
            best = Some((duration, hit));
        }
    }
    best.map(|b| b.1)
}
