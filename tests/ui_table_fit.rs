//! The statistics table fits the analysis panel at its default width in a 1600×1000 window
//! (issue 11 item 6: the "Total Time" column used to be cut off): every header cell of the
//! summaries (kernels, CUDA API, NVTX) lies inside the panel, found by nsys's full column
//! names as the golden CSVs of `nsys stats` print them (the header shows a shorter title and
//! keeps the full one as its accessible name and tooltip). Sorting by a column keeps them in.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{settle, wait_for_load};
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::Sort;

const WINDOW: Vec2 = Vec2::new(1600.0, 1000.0);

/// The header line of a golden `nsys stats` CSV of the transformer fixture.
fn nsys_columns(report: &str) -> Vec<String> {
    let path = common::fixtures().join(format!("golden/transformer/{report}.csv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let header = text.lines().next().unwrap();
    header.split(',').map(str::to_string).collect()
}

fn assert_headers_inside_the_panel(h: &Harness<'static, SightlineApp>, report: &str) {
    // The panel's left edge: its first widget, flush with it.
    let panel_left = h.get_by_label("Exclude warm-up").rect().left() - 12.0;
    assert!(
        panel_left > WINDOW.x / 2.0,
        "the panel is on the right: {panel_left}"
    );
    let columns = nsys_columns(report);
    assert!(columns.len() >= 9, "{columns:?}");
    for column in &columns {
        let rect = h.get_by_label(column).rect();
        assert!(
            rect.left() >= panel_left && rect.right() <= WINDOW.x,
            "{report}: header '{column}' at {rect:?}, outside the panel [{panel_left}, {}]",
            WINDOW.x
        );
        assert!(
            rect.width() > 10.0,
            "{report}: '{column}' squeezed: {rect:?}"
        );
    }
}

#[test]
fn statistics_table_headers_fit_the_panel_at_1600_by_1000() {
    let mut h = Harness::builder()
        .with_size(WINDOW)
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::new(Some(common::fixture("transformer"))),
        );
    wait_for_load(&mut h);
    assert_eq!(h.state().tab().analysis.report, "cuda_gpu_kern_sum");
    assert_headers_inside_the_panel(&h, "cuda_gpu_kern_sum");

    // Sorted by the last number column: its arrow takes room too.
    h.state_mut().tab_mut().analysis.sort = Some(Sort {
        column: 7,
        descending: true,
    });
    settle(&mut h);
    h.run();
    assert_headers_inside_the_panel(&h, "cuda_gpu_kern_sum");

    for report in ["cuda_api_sum", "nvtx_sum"] {
        h.state_mut().tab_mut().analysis.sort = None;
        h.state_mut().tab_mut().analysis.report = report;
        settle(&mut h);
        h.run();
        assert_headers_inside_the_panel(&h, report);
    }
}
