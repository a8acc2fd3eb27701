//! The timeline as drawn, below the window: which rows a trace has and how they fold
//! ([`rows`]), what span is visible ([`navigation`]), the shapes of one frame ([`painter`], with
//! the rows that draw themselves: [`counters`], [`cpu_row`], [`unified_memory`], [`sql_tracks`],
//! [`graph_brackets`]), what the analysis marks on top ([`overlays`], [`launch_arrows`]), the
//! colours ([`palette`]) and a whole still frame with its titles and axis ([`frame`]).
//!
//! Everything here is headless: it turns a trace and a view into egui shapes and paints them
//! into a painter, with no input. The window's widget (`ui::timeline`), `sightline render`, the
//! HTML report's pictures and `sightline bench` all draw with it, so a mark drawn here looks the
//! same everywhere. Nothing here knows the window.

pub mod counters;
pub mod cpu_row;
pub mod fonts;
pub mod frame;
pub mod graph_brackets;
pub mod launch_arrows;
pub mod navigation;
pub mod overlays;
pub mod painter;
pub mod palette;
pub mod rows;
pub mod sql_tracks;
mod thread_rows;
pub mod unified_memory;

pub use frame::{AXIS_HEIGHT_PX, TITLE_WIDTH_PX, paint_still};
pub use navigation::{TimeToX, ViewState, format_duration, format_tick};
pub use overlays::{OverlayInput, OverlayShapes, Overlays, PathMark, PathOverlay, PathRow};
pub use painter::{FrameShapes, RowPlacement, build_shapes, event_at, event_rect};
pub use palette::{Palette, PaletteKind};
pub use rows::{EventKind, EventRef, GroupId, RowKind, TimelineModel};

use egui::Rect;

use crate::trace::Trace;

/// [`build_shapes`] plus the overlays of `input` (in [`FrameShapes::overlay`]): the headless
/// version of everything the window's widget draws in the event area except text and the pointer-driven
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
