//! Turns one view of the trace into the shapes of a frame, without a window: the function
//! [`build_shapes`] is what the window paints each frame and what `sightline bench` times.
//!
//! Cost follows the screen, not the trace (the puffin/Tracy approach): rows outside the visible
//! height are skipped, and within a row [`crate::index::SpanIndex::walk_absorbing`] visits only
//! the visible span and stops at blocks narrower than two pixels, which come out as one merged
//! block; the bars of a lane coalesce into runs that take whole blocks of the index without
//! opening them (`painter/lane_runs.rs`).

mod hit;
mod lane_runs;

pub use hit::{event_at, event_rect, placement_at, row_lanes};

use egui::{Color32, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState, tick_step_ns};
use super::rows::{EventKind, EventRef, RowKind, TimelineModel};
use crate::timeline::palette::{self, Palette};
use crate::trace::{Slice, StrId, Trace};
use lane_runs::{LaneRuns, LaneStyle, NARROW_PX};

/// Where a row is on screen this frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowPlacement {
    /// Index into [`TimelineModel::rows`].
    pub row: usize,
    pub top: f32,
    pub height: f32,
}

impl RowPlacement {
    pub fn y_range(&self) -> (f32, f32) {
        (self.top, self.top + self.height)
    }
}

/// Text to draw inside a bar once fonts are at hand (the painter elides it to the bar's width).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarLabel {
    pub rect: Rect,
    pub text: StrId,
    pub color: Color32,
    /// A CUDA API call: shown without the `_vNNNN` version suffix, as nsys shows it.
    pub api_call: bool,
}

/// The label of a run of touching bars of one colour, each too narrow for its own name ("31
/// ranges"): drawn over the run so that it does not read as part of the named bar before it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLabel {
    pub rect: Rect,
    pub text: String,
    pub color: Color32,
}

/// Everything one frame of the timeline's event area paints.
#[derive(Debug, Default)]
pub struct FrameShapes {
    pub shapes: Vec<Shape>,
    pub labels: Vec<BarLabel>,
    /// Labels of runs of unnamed bars ([`RunLabel`]).
    pub run_labels: Vec<RunLabel>,
    /// Rows that intersect the event area, top to bottom.
    pub rows: Vec<RowPlacement>,
    /// Height of all shown rows together (for the vertical scroll range).
    pub content_height: f32,
    /// Number of single events and merged blocks drawn.
    pub events_drawn: usize,
    pub merged_drawn: usize,
    /// What is drawn over the events (empty from [`build_shapes`]; filled by
    /// [`super::build_shapes_with_overlays`]).
    pub overlay: super::overlays::OverlayShapes,
    /// Names in the bars of pinned query results.
    pub sql_labels: Vec<super::sql_tracks::SqlLabel>,
}

/// Bars narrower than this get no label.
const MIN_LABEL_WIDTH_PX: f32 = 28.0;

/// Places every shown (not collapsed) row, the first at `top - view.scroll_y`.
pub fn layout_rows(model: &TimelineModel, view: &ViewState, top: f32) -> (Vec<RowPlacement>, f32) {
    let mut y = 0.0;
    let mut out = Vec::with_capacity(model.rows.len());
    for (i, row) in model.rows.iter().enumerate() {
        if view.hides(&row.hidden_by) {
            continue;
        }
        out.push(RowPlacement {
            row: i,
            top: top + y - view.scroll_y,
            height: row.height_px,
        });
        y += row.height_px;
    }
    (out, y)
}

/// Builds the shapes of the event area `rect` (right of the row titles, below the time axis) for
/// `view`: row backgrounds, grid lines, event bars, merged blocks, memory charts, and the labels
/// that fit. Headless: needs no `egui::Context`.
pub fn build_shapes(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rect: Rect,
    palette: &Palette,
) -> FrameShapes {
    let (placements, content_height) = layout_rows(model, view, rect.top());
    let map = TimeToX::new(view, rect.left(), rect.width());
    let mut frame = FrameShapes {
        content_height,
        ..FrameShapes::default()
    };
    let visible: Vec<RowPlacement> = placements
        .into_iter()
        .filter(|p| p.top + p.height > rect.top() && p.top < rect.bottom())
        .collect();

    for (n, p) in visible.iter().enumerate() {
        let row = &model.rows[p.row];
        let bg = palette.row_background(row.is_header(), n);
        let row_rect = Rect::from_x_y_ranges(rect.x_range(), p.top..=p.top + p.height);
        frame.shapes.push(Shape::rect_filled(row_rect, 0.0, bg));
    }
    grid_lines(&map, view, rect, palette, &mut frame.shapes);

    let mut painter = RowPainter {
        trace,
        model,
        palette,
        map,
        t0: view.start_ns.floor() as i64,
        t1: view.end_ns.ceil() as i64 + 1,
        // Blocks up to NARROW_PX wide are drawn merged: narrower bars are coalesced anyway.
        merge_below_ns: ((map.ns_per_px() * f64::from(NARROW_PX)).floor() as i64).max(1),
        clip: rect,
        frame: &mut frame,
    };
    for p in &visible {
        let bar = Rect::from_x_y_ranges(rect.x_range(), p.top + 2.0..=p.top + p.height - 2.0);
        match model.rows[p.row].kind {
            RowKind::GpuSummary { device } => {
                for s in trace.streams.iter().filter(|s| s.key.device == device) {
                    painter.gpu_stream(s, bar);
                }
            }
            RowKind::Stream { stream } => {
                if let Some(s) = trace.streams.get(stream) {
                    painter.gpu_stream(s, bar);
                }
            }
            RowKind::Nvtx { thread, depth } => {
                if let Some(level) = trace
                    .threads
                    .get(thread)
                    .and_then(|t| t.nvtx_levels.get(depth))
                {
                    painter.lane(level, EventKind::Nvtx, bar);
                }
            }
            RowKind::ApiCalls { thread } => {
                if let Some(t) = trace.threads.get(thread) {
                    painter.lane(&t.api_calls, EventKind::ApiCall, bar);
                }
            }
            RowKind::Osrt { thread } => {
                if let Some(t) = trace.threads.get(thread) {
                    painter.lane(&t.osrt, EventKind::Osrt, bar);
                }
            }
            RowKind::Memory { track } => painter.memory_chart(track, bar),
            RowKind::ThreadCpu { thread } => {
                painter.frame.events_drawn += super::cpu_row::paint_cpu_row(
                    trace,
                    thread,
                    &painter.map,
                    (painter.t0, painter.t1),
                    bar,
                    palette,
                    &mut painter.frame.shapes,
                );
            }
            RowKind::ExposedComm { device } => painter.exposed_comm(device, bar),
            kind @ (RowKind::UnifiedMemoryCpu { .. } | RowKind::UnifiedMemoryGpu { .. }) => {
                let (single, merged) = super::unified_memory::paint_row(
                    &model.unified_memory,
                    kind,
                    &painter.map,
                    (painter.t0, painter.t1),
                    painter.merge_below_ns,
                    bar,
                    palette,
                    &mut painter.frame.shapes,
                );
                painter.frame.events_drawn += single;
                painter.frame.merged_drawn += merged;
            }
            RowKind::GpuMetric { series } => super::counters::paint_metric(
                trace,
                series,
                &painter.map,
                bar,
                palette,
                &mut painter.frame.shapes,
            ),
            RowKind::SqlTrack { track, lane } => {
                if let Some(t) = model.sql_tracks.get(track) {
                    let (single, merged) = super::sql_tracks::paint_lane(
                        t,
                        lane,
                        &painter.map,
                        (painter.t0, painter.t1),
                        bar,
                        palette,
                        &mut painter.frame.shapes,
                        &mut painter.frame.sql_labels,
                    );
                    painter.frame.events_drawn += single;
                    painter.frame.merged_drawn += merged;
                }
            }
            RowKind::ProcessHeader { .. }
            | RowKind::ThreadHeader { .. }
            | RowKind::MemoryHeader
            | RowKind::MetricsHeader { .. }
            | RowKind::QuietThreads { .. } => {}
        }
    }
    frame.rows = visible;
    frame
}

fn grid_lines(
    map: &TimeToX,
    view: &ViewState,
    rect: Rect,
    palette: &Palette,
    out: &mut Vec<Shape>,
) {
    let step = tick_step_ns(map.ns_per_px(), 90.0);
    let mut t = (view.start_ns / step).floor() * step;
    while t <= view.end_ns {
        let x = map.left_px + ((t - map.start_ns) * map.px_per_ns) as f32;
        if x >= rect.left() {
            out.push(Shape::line_segment(
                [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
                Stroke::new(1.0, palette.grid_line),
            ));
        }
        t += step;
    }
}

struct RowPainter<'a> {
    trace: &'a Trace,
    model: &'a TimelineModel,
    palette: &'a Palette,
    map: TimeToX,
    t0: i64,
    t1: i64,
    merge_below_ns: i64,
    clip: Rect,
    frame: &'a mut FrameShapes,
}

impl RowPainter<'_> {
    fn gpu_stream(&mut self, s: &crate::trace::StreamTrack, bar: Rect) {
        self.lane(&s.kernels, EventKind::Kernel, bar);
        self.lane(&s.memcpys, EventKind::Memcpy, bar);
        self.lane(&s.memsets, EventKind::Memset, bar);
        self.lane(&s.graphs, EventKind::Graph, bar);
    }

    /// Draws one slice of a table into the bar area `bar`.
    fn lane(&mut self, slice: &Slice, kind: EventKind, bar: Rect) {
        if slice.is_empty() {
            return;
        }
        let spans = super::rows::spans_of(self.trace, kind);
        let range = slice.range.clone();
        let (starts, ends) = (&spans.start_ns[range.clone()], &spans.end_ns[range.clone()]);
        let mut runs = LaneRuns {
            style: TraceLane {
                trace: self.trace,
                model: self.model,
                palette: self.palette,
                kind,
                base: range.start,
                starts,
            },
            starts,
            ends,
            map: self.map,
            clip: self.clip,
            bar,
            merged: merged_color(self.palette, kind),
            pending: None,
            unnamed: None,
            pending_items: 0,
            last_drawn: None,
            frame: &mut *self.frame,
        };
        let (t0, t1, merge_below_ns) = (self.t0, self.t1, self.merge_below_ns);
        slice
            .index
            .walk_absorbing(starts, ends, t0, t1, merge_below_ns, &mut runs);
        runs.flush();
        runs.end_unnamed();
    }

    /// The exposed-communication intervals of `device`, in the communication colour. Intervals
    /// less than a pixel apart are drawn as one block, found by binary search, so a zoomed-out
    /// row costs O(pixels · log n), not O(intervals).
    fn exposed_comm(&mut self, device: u32, bar: Rect) {
        let exposed = self.model.exposed_comm(device);
        let px_ns = (self.map.ns_per_px().ceil() as i64).max(1);
        let (map, clip, color) = (self.map, self.clip, self.palette.comm);
        let shapes = &mut self.frame.shapes;
        self.frame.events_drawn += super::cpu_row::merged_blocks(
            exposed.len(),
            |i| exposed[i].0,
            |i| exposed[i].1,
            (self.t0, self.t1),
            px_ns,
            |start, end| {
                let x0 = map.x(start).max(clip.left());
                let x1 = map.x(end).min(clip.right()).max(x0 + 1.0);
                shapes.push(Shape::rect_filled(
                    Rect::from_x_y_ranges(x0..=x1, bar.y_range()),
                    0.0,
                    color,
                ));
            },
        );
    }

    /// GPU memory in use as an area chart: one rectangle per step wider than a pixel; steps
    /// within a pixel are merged keeping their maximum, so a peak never disappears.
    fn memory_chart(&mut self, track: usize, bar: Rect) {
        let Some(m) = self.trace.memory_usage.get(track) else {
            return;
        };
        let peak = self
            .model
            .memory_peak_bytes
            .get(track)
            .copied()
            .unwrap_or(0)
            .max(1) as f32;
        let samples = &m.samples;
        if samples.is_empty() {
            return;
        }
        let first = samples
            .partition_point(|s| s.time_ns <= self.t0)
            .saturating_sub(1);
        let y_of = |bytes: i64| bar.bottom() - bar.height() * (bytes.max(0) as f32 / peak);
        let mut x0 = self.map.x(samples[first].time_ns).max(self.clip.left());
        let mut value = samples[first].bytes_in_use;
        let end_x = self.map.x(self.trace.last_ns).min(self.clip.right());
        let emit = |x0: f32, x1: f32, value: i64, shapes: &mut Vec<Shape>| {
            if x1 <= x0 || value <= 0 {
                return;
            }
            let y = y_of(value);
            shapes.push(Shape::rect_filled(
                Rect::from_x_y_ranges(x0..=x1, y..=bar.bottom()),
                0.0,
                self.palette.memory_fill,
            ));
            shapes.push(Shape::line_segment(
                [Pos2::new(x0, y), Pos2::new(x1, y)],
                Stroke::new(1.5, self.palette.memory_line),
            ));
        };
        for s in &samples[first + 1..] {
            let x = self.map.x(s.time_ns).min(self.clip.right());
            if x - x0 >= 1.0 {
                emit(x0, x, value, &mut self.frame.shapes);
                x0 = x;
                value = s.bytes_in_use;
            } else {
                value = value.max(s.bytes_in_use);
            }
            if s.time_ns > self.t1 {
                break;
            }
        }
        emit(x0, end_x.max(x0 + 1.0), value, &mut self.frame.shapes);
    }
}

/// A lane of the trace for [`LaneRuns`]: its events look as [`event_style`] says.
struct TraceLane<'a> {
    trace: &'a Trace,
    model: &'a TimelineModel,
    palette: &'a Palette,
    kind: EventKind,
    /// Index in its table of the lane's first event.
    base: usize,
    starts: &'a [i64],
}

impl LaneStyle for TraceLane<'_> {
    fn event(&self, i: usize) -> (Color32, StrId) {
        let event = EventRef::new(self.kind, self.base + i);
        event_style(self.trace, self.model, self.palette, event)
    }

    fn merged_block(&self, block: &crate::index::Block) -> Color32 {
        let (trace, palette, kind) = (self.trace, self.palette, self.kind);
        merged_copy_color(trace, palette, kind, self.base, self.starts, block)
            .unwrap_or_else(|| merged_color(palette, kind))
    }

    fn merged_blocks_look_merged(&self) -> bool {
        self.kind != EventKind::Memcpy
    }

    fn api_calls(&self) -> bool {
        self.kind == EventKind::ApiCall
    }

    fn unnamed_run_noun(&self) -> Option<&'static str> {
        (self.kind == EventKind::Nvtx).then_some("ranges")
    }
}

/// Fill colour and label text of one event.
pub fn event_style(
    trace: &Trace,
    model: &TimelineModel,
    palette: &Palette,
    event: EventRef,
) -> (Color32, StrId) {
    let i = event.index as usize;
    match event.kind {
        EventKind::Kernel => {
            let name = trace.kernels.spans.name[i];
            let short = trace.kernels.short_name.get(i).copied().unwrap_or(name);
            let label = if trace.str(short).is_empty() {
                name
            } else {
                short
            };
            (palette.kernel_fill(model.kernel_color(name)), label)
        }
        EventKind::Memcpy => {
            let kind = trace.memcpys.copy_kind[i];
            (palette.memcpy(kind), trace.memcpys.spans.name[i])
        }
        EventKind::Memset => (palette.memset, trace.memsets.spans.name[i]),
        EventKind::Graph => (palette::GRAPH, trace.graphs.spans.name[i]),
        EventKind::GraphLaunch => (palette::GRAPH, trace.graph_launches.spans.name[i]),
        EventKind::ApiCall => {
            let name = trace.api_calls.spans.name[i];
            let sync = model
                .sync_names
                .get(name as usize)
                .copied()
                .unwrap_or(false);
            (
                if sync {
                    palette.api_sync
                } else {
                    palette.api_call
                },
                name,
            )
        }
        EventKind::Nvtx => (
            palette::nvtx_color(trace.nvtx.color_argb[i]).unwrap_or(palette.nvtx_default),
            trace.nvtx.spans.name[i],
        ),
        EventKind::Osrt => (palette.osrt, trace.osrt.spans.name[i]),
        EventKind::CpuPageFault | EventKind::GpuPageFault => {
            (palette.um_fault, event.spans(trace).name[i])
        }
    }
}

/// A merged block of memory copies keeps the copies' colour when its first and last copy share
/// it (a run of one direction, or of unified-memory migrations), rather than the neutral merged
/// colour: one binary search per block. `None` for other kinds or a mixed block.
fn merged_copy_color(
    trace: &Trace,
    palette: &Palette,
    kind: EventKind,
    base: usize,
    starts: &[i64],
    block: &crate::index::Block,
) -> Option<Color32> {
    if kind != EventKind::Memcpy || starts.is_empty() {
        return None;
    }
    let first = starts.partition_point(|&s| s < block.start_ns);
    let last = (first + block.count.max(1) as usize - 1).min(starts.len() - 1);
    let kinds = &trace.memcpys.copy_kind;
    let (a, b) = (kinds.get(base + first)?, kinds.get(base + last)?);
    let (ca, cb) = (palette.memcpy(*a), palette.memcpy(*b));
    (ca == cb).then_some(ca)
}

fn merged_color(palette: &Palette, kind: EventKind) -> Color32 {
    match kind {
        EventKind::Kernel => palette.merged,
        EventKind::Memcpy => palette.memcpy_other,
        EventKind::Memset => palette.memset,
        EventKind::Graph | EventKind::GraphLaunch => palette::GRAPH,
        EventKind::ApiCall => palette.api_call.gamma_multiply(0.8),
        EventKind::Nvtx => palette.nvtx_default,
        EventKind::Osrt => palette.osrt.gamma_multiply(0.8),
        EventKind::CpuPageFault | EventKind::GpuPageFault => palette.um_fault,
    }
}
