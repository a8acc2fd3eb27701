//! Issue 36 item 10: the per-rank table of a run fits the run panel at its default width — its
//! last column (`Wait`) is inside the window, not cut off on the right — with each time in three
//! digits and the whole value on hover.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::ui::SightlineApp;

#[test]
fn the_per_rank_table_fits_the_panel() {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout");
        return;
    };
    let paths = ["kt_ranks_rank0", "kt_ranks_rank1"]
        .map(|r| dir.join(format!("pytorch/{r}.pt.trace.json.gz")))
        .to_vec();
    let window = Vec2::new(1600.0, 1000.0);
    let mut h = Harness::builder()
        .with_size(window)
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_run(paths),
        );
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    h.step();
    let rank = h.get_by_label("Per rank (2)").rect();
    for title in ["Span", "Kernels", "Exposed", "Late", "Wait"] {
        let r = h.get_by_label(title).rect();
        assert!(
            r.left() >= rank.left() - 1.0 && r.right() <= window.x - 4.0,
            "'{title}' at {r:?} in a {window:?} window"
        );
    }
}
