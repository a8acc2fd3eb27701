//! The critical path in the window (issue #34): in ws_baseline's Iterations tab, "Critical path"
//! in an iteration's context menu outlines that iteration's path on the timeline — the same path
//! `critical_path` computes — and the tab's table lists every iteration's path by part, the
//! parts a path has before its bar, so Copies H2D is on screen at the default size (issue 47).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{opened, settle};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use sightline::analysis::TimeRange;
use sightline::analysis::critical_path::{Part, step_paths};
use sightline::analysis::iterations::{self, FamilyChoice};

#[test]
fn asking_for_an_iterations_critical_path_outlines_it() {
    let mut h = opened("ws_baseline");
    h.get_by_label("Iterations").click();
    settle(&mut h);
    settle(&mut h);
    h.get_by_label("What bounds each step (critical path)");
    // Issue 47 item 9: at the window's default size the table's Copies H2D column (weight
    // streaming's question) is on screen: the legend's label and the column's header.
    let screen = h.ctx.content_rect();
    let h2d: Vec<egui::Rect> = h.get_all_by_label("Copies H2D").map(|n| n.rect()).collect();
    assert!(h2d.len() >= 2, "legend and column header: {h2d:?}");
    for r in &h2d {
        assert!(
            r.right() <= screen.right(),
            "Copies H2D at {r:?}, window {screen:?}"
        );
    }

    // The path computed directly, for the second token.
    let trace = h.state().tab().document.as_ref().unwrap().trace.clone();
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let it = &found.iterations[1];
    let expected = &step_paths(&trace, std::slice::from_ref(it))[0];
    assert!(expected.part_ns(Part::CopyH2D) > 0);

    h.get_by_role_and_label(Role::Label, "#1 token_1")
        .click_secondary();
    h.run();
    h.get_by_label("Critical path").click();
    settle(&mut h);
    settle(&mut h);
    let shown = h
        .state()
        .tab()
        .critical_path
        .clone()
        .expect("a path is shown");
    assert_eq!(shown.segments, expected.segments);
    assert_eq!(shown.parts_ns, expected.parts_ns);
    // The timeline shows the iteration, and outlines the path's segments on their rows, with
    // arrows where it changes rows.
    let v = &h.state().tab().timeline.view;
    assert!(v.start_ns <= it.start_ns as f64 + 1.0 && v.end_ns >= it.end_ns as f64 - 1.0);
    let overlay = h
        .state()
        .tab()
        .timeline
        .critical_path
        .clone()
        .expect("outlined");
    // Every segment but the unattributed ones, which nothing on the timeline stands for.
    let outlined = expected
        .segments
        .iter()
        .filter(|s| s.part != Part::Unattributed)
        .count();
    assert_eq!(overlay.segments.len(), outlined);
    h.run();
    let drawn = &h.state().tab().timeline.last_overlays_drawn;
    assert!(drawn.path_segments > 0, "{drawn:?}");
    assert!(drawn.path_arrows > 0, "{drawn:?}");
}

/// "Select this iteration" in an iteration's context menu makes it the range selection, which
/// every tab then measures (the Operators and Statistics tables, the gaps).
#[test]
fn selecting_an_iteration_from_its_menu_sets_the_range_selection() {
    let mut h = opened("ws_baseline");
    h.get_by_label("Iterations").click();
    settle(&mut h);
    settle(&mut h);
    let trace = h.state().tab().document.as_ref().unwrap().trace.clone();
    let found = iterations::iterations(&trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let it = &found.iterations[1];
    h.get_by_role_and_label(Role::Label, "#1 token_1")
        .click_secondary();
    h.run();
    h.get_by_label("Select this iteration").click();
    settle(&mut h);
    assert_eq!(
        h.state().selection_range(),
        Some((it.start_ns, it.end_ns)),
        "the selection is token_1's span"
    );
}
