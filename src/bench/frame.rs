//! The frame-build part of `sightline bench`: the time to turn one view of the timeline into the
//! shapes a frame paints, with the window's own headless builder
//! ([`crate::timeline::build_shapes`]) over its default row layout
//! ([`crate::timeline::TimelineModel`], default groups collapsed). No window or GPU needed.

use egui::{Pos2, Rect, Vec2};

use crate::timeline::{Palette, TimelineModel, ViewState, build_shapes};
use crate::trace::Trace;

/// What one frame shows: the visible time span and the size of the event area it is drawn into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameView {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: u32,
    pub height_px: u32,
}

/// What one frame drew.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameCounts {
    pub shapes: usize,
    /// Single events plus merged blocks.
    pub events: usize,
    pub rows: usize,
}

/// The window's row layout and colours for one trace, made once before timing frames.
pub struct FrameBuilder {
    model: TimelineModel,
    palette: Palette,
    view: ViewState,
}

impl FrameBuilder {
    pub fn new(trace: &Trace) -> Self {
        let model = TimelineModel::new(trace);
        let view = ViewState::new(trace.first_ns, trace.last_ns, &model);
        Self {
            model,
            palette: Palette::dark(),
            view,
        }
    }

    /// Builds one frame's shapes, as the window does each frame.
    pub fn build_frame_shapes_headless(&mut self, trace: &Trace, view: &FrameView) -> FrameCounts {
        self.view.zoom_to(view.start_ns as f64, view.end_ns as f64);
        let rect = Rect::from_min_size(
            Pos2::ZERO,
            Vec2::new(view.width_px as f32, view.height_px as f32),
        );
        let frame = build_shapes(trace, &self.model, &self.view, rect, &self.palette);
        FrameCounts {
            shapes: frame.shapes.len(),
            events: frame.events_drawn + frame.merged_drawn,
            rows: frame.rows.len(),
        }
    }
}
