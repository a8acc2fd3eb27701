//! A path through the trace drawn over the timeline — the critical path of an iteration: each
//! segment outlined on the row that shows its stream or thread, and an arrow from the end of one
//! segment to the start of the next where the path moves to another row. The window and
//! `sightline render` draw it with this one piece of code (through [`super::OverlayInput::path`]).

use egui::{Align2, Color32, Pos2, Rect, Shape, Stroke};

use super::gaps::clip_to_x;
use super::{OverlayLabel, OverlayShapes};
use crate::analysis::critical_path::{CriticalPath, Part, PathRow as CpRow};
use crate::timeline::navigation::{TimeToX, ViewState};
use crate::timeline::painter::RowPlacement;
use crate::timeline::rows::{RowKind, TimelineModel};
use crate::trace::{StreamKey, Trace};

/// Width of a segment's outline, in points: thicker than a selection's, so it reads over bars.
pub const PATH_OUTLINE_PX: f32 = 3.0;
/// Width of the arrows between rows, and the length of their heads.
pub const PATH_ARROW_PX: f32 = 2.0;
const ARROW_HEAD_PX: f32 = 7.0;
/// Segments narrower than this get no label.
const MIN_LABEL_WIDTH_PX: f32 = 40.0;

/// A path to draw: its segments in order (each starts at or after the end of the one before).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathOverlay {
    pub segments: Vec<PathMark>,
}

/// One segment of a path: a time span on the row of a stream or a thread.
#[derive(Debug, Clone, PartialEq)]
pub struct PathMark {
    pub row: PathRow,
    pub start_ns: i64,
    pub end_ns: i64,
    pub colour: Color32,
    /// Drawn above the segment's outline when it is wide enough.
    pub label: Option<String>,
}

/// Where a segment is: a CUDA stream, or a thread by its nsys `globalTid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathRow {
    Stream(StreamKey),
    Thread(i64),
}

/// The colour of a critical-path part, the same in the window, `render` and the HTML report.
pub fn part_colour(part: Part) -> Color32 {
    match part {
        Part::Cpu => Color32::from_rgb(0x8c, 0x8c, 0x8c),
        Part::Kernels => Color32::from_rgb(0x4e, 0x79, 0xa7),
        Part::CopyH2D => Color32::from_rgb(0x59, 0xa1, 0x4f),
        Part::CopyD2H => Color32::from_rgb(0xe1, 0x57, 0x59),
        Part::CopyOther => Color32::from_rgb(0xb0, 0x7a, 0xa1),
        Part::Memset => Color32::from_rgb(0x9c, 0x75, 0x5f),
        Part::Communication => Color32::from_rgb(0xf2, 0x8e, 0x2b),
        Part::LaunchLatency => Color32::from_rgb(0xed, 0xc9, 0x48),
        Part::GpuIdle => Color32::from_rgb(0xd9, 0xd9, 0xd9),
        Part::Unattributed => Color32::from_rgb(0xc5, 0xb0, 0xd5),
    }
}

impl PathOverlay {
    /// A critical path to draw: each segment in its part's colour, labelled with its part.
    /// Unattributed stretches are not outlined: nothing in the trace stands for them.
    pub fn of(path: &CriticalPath) -> Self {
        let segments = path
            .segments
            .iter()
            .filter(|s| s.part != Part::Unattributed)
            .map(|s| PathMark {
                row: match s.row {
                    CpRow::Stream(k) => PathRow::Stream(k),
                    CpRow::Thread(t) => PathRow::Thread(t),
                },
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                colour: part_colour(s.part),
                label: Some(s.part.label().to_string()),
            })
            .collect();
        Self { segments }
    }
}

/// The placed row that shows `row` this frame: the stream's own row, or the thread's first placed
/// row of events (CPU, NVTX, CUDA API, OS runtime, in the timeline's order); when those are
/// hidden by a collapsed group, the group's header row (the GPU's summary, the process) if it is
/// placed. `None` when nothing on screen stands for it (off screen, or not among the rows).
pub fn placed_row<'a>(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &'a [RowPlacement],
    row: PathRow,
) -> Option<&'a RowPlacement> {
    let placed = |i: usize| rows.iter().find(|p| p.row == i);
    let own: Vec<usize> = match row {
        PathRow::Stream(key) => {
            let stream = trace.streams.iter().position(|s| s.key == key)?;
            vec![model.row_index(RowKind::Stream { stream })?]
        }
        PathRow::Thread(global_tid) => {
            let thread = model.thread_of(global_tid)?;
            model
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| match r.kind {
                    RowKind::ThreadCpu { thread: t }
                    | RowKind::Nvtx { thread: t, .. }
                    | RowKind::ApiCalls { thread: t }
                    | RowKind::Osrt { thread: t } => t == thread,
                    _ => false,
                })
                .map(|(i, _)| i)
                .collect()
        }
    };
    if let Some(p) = own.iter().find_map(|&i| placed(i)) {
        return Some(p);
    }
    let first = *own.first()?;
    let standing = model.shown_row(first, view);
    (standing != first).then(|| placed(standing)).flatten()
}

/// Adds the shapes of `path` to `out`: outlines first, then the arrows between rows, so an arrow
/// stays visible where it crosses an outline.
#[allow(clippy::too_many_arguments)]
pub(super) fn path_shapes(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    path: &PathOverlay,
    out: &mut OverlayShapes,
) {
    let map = TimeToX::new(view, area.left(), area.width());
    let x_clamped = |t: i64| map.x(t).clamp(area.left() - 2.0, area.right() + 2.0);
    let placements: Vec<Option<&RowPlacement>> = path
        .segments
        .iter()
        .map(|m| placed_row(trace, model, view, rows, m.row))
        .collect();
    for (mark, p) in path.segments.iter().zip(&placements) {
        let Some(p) = p else {
            continue;
        };
        if (mark.end_ns as f64) < view.start_ns || (mark.start_ns as f64) > view.end_ns {
            continue;
        }
        let x0 = x_clamped(mark.start_ns);
        let x1 = x_clamped(mark.end_ns).max(x0 + 1.0);
        let r = Rect::from_x_y_ranges(x0..=x1, p.top + 1.0..=p.top + p.height - 1.0);
        out.shapes.push(Shape::rect_stroke(
            r,
            0.0,
            Stroke::new(PATH_OUTLINE_PX, mark.colour),
            egui::StrokeKind::Outside,
        ));
        out.counts.path_segments += 1;
        // The label goes inside its own segment, on the outlined row (above it, it read as the
        // row above's), and only where the whole label fits: two segments never share pixels,
        // so neither do their labels.
        if let Some(text) = &mark.label {
            let visible = r.intersect(area);
            if visible.width() >= label_width_px(text).max(MIN_LABEL_WIDTH_PX) {
                out.labels.push(OverlayLabel {
                    anchor: Pos2::new(visible.left() + PATH_OUTLINE_PX, r.top() + 1.0),
                    align: Align2::LEFT_TOP,
                    text: text.clone(),
                    boxed: true,
                });
            }
        }
    }
    for (pair, rows_pair) in path.segments.windows(2).zip(placements.windows(2)) {
        let (Some(from_row), Some(to_row)) = (rows_pair[0], rows_pair[1]) else {
            continue;
        };
        if from_row.row == to_row.row {
            continue;
        }
        let from = Pos2::new(map.x(pair[0].end_ns), from_row.top + from_row.height / 2.0);
        let to = Pos2::new(map.x(pair[1].start_ns), to_row.top + to_row.height / 2.0);
        let Some(line) = clip_to_x(from, to, area.left() - 2.0, area.right() + 2.0) else {
            continue;
        };
        let stroke = Stroke::new(PATH_ARROW_PX, pair[1].colour);
        out.shapes.push(Shape::line_segment(line, stroke));
        if to.x >= area.left() - 2.0 && to.x <= area.right() + 2.0 {
            out.shapes.push(arrow_head(from, to, pair[1].colour));
        }
        out.counts.path_arrows += 1;
    }
}

/// The width a boxed overlay label of `text` takes, with room to spare (the timeline's small
/// font is under 7 px a character).
pub fn label_width_px(text: &str) -> f32 {
    text.chars().count() as f32 * 7.0 + 8.0
}

/// A filled triangle with its tip at `to`, pointing along `from` → `to`.
fn arrow_head(from: Pos2, to: Pos2, colour: Color32) -> Shape {
    let dir = (to - from).normalized();
    let dir = if dir.x.is_finite() && dir.y.is_finite() && dir.length() > 0.0 {
        dir
    } else {
        egui::vec2(0.0, 1.0)
    };
    let normal = egui::vec2(-dir.y, dir.x);
    let base = to - dir * ARROW_HEAD_PX;
    Shape::convex_polygon(
        vec![
            to,
            base + normal * (ARROW_HEAD_PX / 2.0),
            base - normal * (ARROW_HEAD_PX / 2.0),
        ],
        colour,
        Stroke::NONE,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::overlays::{OverlayInput, Overlays};
    use crate::timeline::palette::Palette;
    use crate::timeline::rows::GroupId;
    use crate::timeline::{FrameShapes, build_shapes_with_overlays};

    const STREAM_COLOUR: Color32 = Color32::from_rgb(250, 20, 20);
    const THREAD_COLOUR: Color32 = Color32::from_rgb(20, 250, 20);

    /// A small generated trace (one GPU, two streams, one launching thread), made once for the
    /// tests of this module.
    fn tiny_trace() -> &'static Trace {
        static TRACE: std::sync::OnceLock<Trace> = std::sync::OnceLock::new();
        TRACE.get_or_init(|| {
            let path = std::env::temp_dir().join(format!(
                "sightline_path_overlay_{}.sqlite",
                std::process::id()
            ));
            let options = crate::synth::GenOptions {
                events: 3_000,
                gpus: 1,
                streams: 2,
                threads: 1,
                sampling_period_ns: 0,
                seed: 7,
            };
            crate::synth::generate(&path, &options, true).expect("generate the trace");
            let trace = crate::load::load_file(&path).expect("load the trace");
            let _ = std::fs::remove_file(&path);
            trace
        })
    }

    fn draw(
        trace: &Trace,
        model: &TimelineModel,
        view: &ViewState,
        path: &PathOverlay,
    ) -> FrameShapes {
        let area = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(1200.0, 2000.0));
        build_shapes_with_overlays(
            trace,
            model,
            view,
            area,
            &Palette::dark(),
            &OverlayInput {
                overlays: &Overlays::default(),
                range: None,
                rulers: &[],
                path: Some(path),
            },
        )
    }

    fn outline_of(frame: &FrameShapes, colour: Color32) -> Option<Rect> {
        frame.overlay.shapes.iter().find_map(|s| match s {
            Shape::Rect(r) if r.stroke.color == colour && r.stroke.width == PATH_OUTLINE_PX => {
                Some(r.rect)
            }
            _ => None,
        })
    }

    fn placement_of(frame: &FrameShapes, row: usize) -> RowPlacement {
        *frame
            .rows
            .iter()
            .find(|p| p.row == row)
            .expect("row placed")
    }

    #[test]
    fn two_marks_on_two_rows_are_outlined_and_joined_by_an_arrow() {
        let trace = tiny_trace();
        let model = TimelineModel::new(trace);
        let mut view = ViewState::new(trace.first_ns, trace.last_ns, &model);
        view.collapsed.clear();
        let span = trace.last_ns - trace.first_ns;
        let at = |f: f64| trace.first_ns + (span as f64 * f) as i64;
        let stream = trace.streams[0].key;
        let thread = &trace.threads[0];
        let path = PathOverlay {
            segments: vec![
                PathMark {
                    row: PathRow::Stream(stream),
                    start_ns: at(0.2),
                    end_ns: at(0.3),
                    colour: STREAM_COLOUR,
                    label: Some("kernels".into()),
                },
                PathMark {
                    row: PathRow::Thread(thread.global_tid),
                    start_ns: at(0.4),
                    end_ns: at(0.5),
                    colour: THREAD_COLOUR,
                    label: None,
                },
            ],
        };
        let frame = draw(trace, &model, &view, &path);
        let area = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(1200.0, 2000.0));
        let map = TimeToX::new(&view, area.left(), area.width());
        assert_eq!(frame.overlay.counts.path_segments, 2);
        assert_eq!(frame.overlay.counts.path_arrows, 1);

        // The stream's mark: outlined on the stream's own row, from its start to its end.
        let stream_row = model.row_index(RowKind::Stream { stream: 0 }).unwrap();
        let stream_place = placement_of(&frame, stream_row);
        let a = outline_of(&frame, STREAM_COLOUR).expect("the stream mark is outlined");
        assert!((a.left() - map.x(at(0.2))).abs() < 0.5, "{a:?}");
        assert!((a.right() - map.x(at(0.3))).abs() < 0.5, "{a:?}");
        assert!(
            a.top() >= stream_place.top && a.bottom() <= stream_place.top + stream_place.height
        );
        // Its label sits inside the outline, on the stream's own row, and fits in it.
        let label = frame
            .overlay
            .labels
            .iter()
            .find(|l| l.text == "kernels")
            .expect("the stream mark is labelled");
        assert!(
            label.anchor.y >= a.top() && label.anchor.y < a.bottom(),
            "{label:?} in {a:?}"
        );
        assert!(
            label.anchor.x >= a.left() && label.anchor.x + label_width_px("kernels") <= a.right()
        );

        // The thread's mark: on the thread's first row on screen that shows its events.
        let thread_place = *frame
            .rows
            .iter()
            .find(|p| {
                matches!(
                    model.rows[p.row].kind,
                    RowKind::ThreadCpu { thread: 0 }
                        | RowKind::Nvtx { thread: 0, .. }
                        | RowKind::ApiCalls { thread: 0 }
                        | RowKind::Osrt { thread: 0 }
                )
            })
            .expect("a row of the thread");
        let b = outline_of(&frame, THREAD_COLOUR).expect("the thread mark is outlined");
        assert!((b.left() - map.x(at(0.4))).abs() < 0.5, "{b:?}");
        assert!((b.right() - map.x(at(0.5))).abs() < 0.5, "{b:?}");
        assert!(
            b.top() >= thread_place.top && b.bottom() <= thread_place.top + thread_place.height
        );

        // The arrow: from the end of the first mark on its row to the start of the second on its.
        let line = frame
            .overlay
            .shapes
            .iter()
            .find_map(|s| match s {
                Shape::LineSegment { points, stroke } if stroke.color == THREAD_COLOUR => {
                    Some(*points)
                }
                _ => None,
            })
            .expect("an arrow between the rows");
        let from = Pos2::new(map.x(at(0.3)), stream_place.top + stream_place.height / 2.0);
        let to = Pos2::new(map.x(at(0.4)), thread_place.top + thread_place.height / 2.0);
        assert!(line[0].distance(from) < 0.5, "{line:?} from {from:?}");
        assert!(line[1].distance(to) < 0.5, "{line:?} to {to:?}");
        assert!(frame.overlay.shapes.iter().any(|s| matches!(s,
            Shape::Path(p) if p.fill == THREAD_COLOUR && p.points.first().is_some_and(|q| q.distance(to) < 0.5))));
    }

    #[test]
    fn a_stream_in_a_collapsed_gpu_is_outlined_on_the_gpu_row_and_a_missing_row_is_skipped() {
        let trace = tiny_trace();
        let model = TimelineModel::new(trace);
        let mut view = ViewState::new(trace.first_ns, trace.last_ns, &model);
        view.collapsed.clear();
        let device = trace.streams[0].key.device;
        view.collapsed.insert(GroupId::Gpu(device));
        let (a, b) = (trace.first_ns + 1_000, trace.first_ns + 50_000);
        let path = PathOverlay {
            segments: vec![
                PathMark {
                    row: PathRow::Stream(trace.streams[0].key),
                    start_ns: a,
                    end_ns: b,
                    colour: STREAM_COLOUR,
                    label: None,
                },
                PathMark {
                    row: PathRow::Thread(-12345),
                    start_ns: b,
                    end_ns: b + 1_000,
                    colour: THREAD_COLOUR,
                    label: None,
                },
            ],
        };
        let frame = draw(trace, &model, &view, &path);
        let gpu_row = model.row_index(RowKind::GpuSummary { device }).unwrap();
        let gpu = placement_of(&frame, gpu_row);
        let r = outline_of(&frame, STREAM_COLOUR).expect("outlined on the GPU row");
        assert!(r.top() >= gpu.top && r.bottom() <= gpu.top + gpu.height);
        assert_eq!(frame.overlay.counts.path_segments, 1);
        assert_eq!(frame.overlay.counts.path_arrows, 0);
    }
}
