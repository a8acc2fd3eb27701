//! The headless frame builder (`ui::timeline::build_shapes`): its cost follows the screen. At full
//! zoom-out on the stress fixture the events come out as merged blocks, bounded by the width; a
//! deep zoom draws single events, only those in the visible span.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::{Pos2, Rect};
use sightline::load;
use sightline::ui::theme::Palette;
use sightline::ui::timeline::{TimelineModel, ViewState, build_shapes};

#[test]
fn zoomed_out_frame_merges_and_zoomed_in_frame_draws_only_the_visible_events() {
    let trace = load::load_file(&common::fixture("stress")).expect("load stress");
    let model = TimelineModel::new(&trace);
    let mut view = ViewState::new(trace.first_ns, trace.last_ns, &model);
    view.collapsed.clear();
    let rect = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(1350.0, 100_000.0));
    let palette = Palette::dark();

    let full = build_shapes(&trace, &model, &view, rect, &palette);
    assert!(full.merged_drawn > 0, "nothing merged at full zoom-out");
    let lanes = trace.streams.len() * 3 + trace.threads.len() * 4 + 8;
    let drawn = full.events_drawn + full.merged_drawn;
    assert!(
        drawn < trace.event_count(),
        "{drawn} items for {} events",
        trace.event_count()
    );
    assert!(
        drawn < lanes * rect.width() as usize * 2,
        "{drawn} items is more than the screen can show"
    );

    // Zoom far in: only events overlapping the span, none merged at this scale.
    let mid = (trace.first_ns + trace.last_ns) / 2;
    view.zoom_to(mid as f64, mid as f64 + 20_000.0);
    let deep = build_shapes(&trace, &model, &view, rect, &palette);
    let (t0, t1) = (view.start_ns as i64, view.end_ns as i64 + 1);
    let visible_kernels = trace
        .kernels
        .spans
        .start_ns
        .iter()
        .zip(&trace.kernels.spans.end_ns)
        .filter(|&(&s, &e)| s < t1 && e > t0)
        .count();
    assert!(deep.events_drawn >= visible_kernels);
    assert!(deep.events_drawn < trace.event_count() / 10);
}
