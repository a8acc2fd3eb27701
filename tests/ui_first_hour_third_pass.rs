//! Issue 47 ("The first hour, third pass"), in the window with `egui_kittest`: the analysis
//! panel's splitter takes a drag at its visible edge (item 6: its grab zone was about 2 px, and a
//! drag there panned the timeline).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::{Pos2, Vec2};

use common::ui::{app_with_size, slow_drag};

#[test]
fn the_panel_splitter_takes_a_drag_at_its_visible_edge() {
    let mut h = app_with_size(vec![common::fixture("moe")], Vec2::new(1600.0, 1000.0));
    assert!(h.state().tab().error.is_none());
    h.step();
    h.step();
    let area = h.state().tab().timeline.last_event_area;
    let view = h.state().tab().timeline.view.clone();
    // 2 px inside the timeline's right edge, where the panel's edge is drawn.
    for inside in [2.0, 4.0] {
        let edge = h.state().tab().timeline.last_event_area.right();
        let y = area.center().y;
        slow_drag(
            &mut h,
            Pos2::new(edge - inside, y),
            Pos2::new(edge - inside - 100.0, y),
        );
        h.step();
        let moved = h.state().tab().timeline.last_event_area.right();
        assert!(
            (edge - moved - 100.0).abs() < 8.0,
            "a drag {inside} px inside the edge: the timeline's edge {edge} → {moved}"
        );
    }
    // The timeline did not pan: the same time span, on a narrower area.
    let after = &h.state().tab().timeline.view;
    assert_eq!((after.start_ns, after.end_ns), (view.start_ns, view.end_ns));
}
