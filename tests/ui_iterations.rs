//! The Iterations tab (issue #23): the heatmap of a family's iterations follows the family chosen,
//! shows warm-up iterations apart, and a click on a cell zooms the timeline to it — checked
//! against the ranges SQL finds in transformer.sqlite.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{opened, panel_harness, settle, settle_panel};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use sightline::analysis::TimeRange;
use sightline::load;
use sightline::ui::panels::analysis::{AnalysisTab, PanelAction};

/// Start and end of the NVTX ranges named `text`, in start order.
fn ranges(text: &str) -> Vec<(i64, i64)> {
    let conn = common::open_ro(&common::fixture("transformer"));
    let mut stmt = conn
        .prepare("SELECT start, end FROM NVTX_EVENTS WHERE text = ?1 ORDER BY start")
        .unwrap();
    stmt.query_map([text], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// The one range named `text` inside `[start, end]`.
fn inside(text: &str, (start, end): (i64, i64)) -> (i64, i64) {
    let found: Vec<(i64, i64)> = ranges(text)
        .into_iter()
        .filter(|&(s, e)| s >= start && e <= end)
        .collect();
    assert_eq!(found.len(), 1, "{text} in [{start}, {end}]");
    found[0]
}

#[test]
fn the_heatmap_follows_the_family_chosen_and_a_cell_click_zooms_to_it() {
    let trace = load::load_file(&common::fixture("transformer")).unwrap();
    let mut h = panel_harness(trace, TimeRange::ALL);
    h.get_by_label("Iterations").click();
    settle_panel(&mut h);
    settle_panel(&mut h);

    // The default family: the step_N ranges, one row each.
    let steps: Vec<(i64, i64)> = (0..10).map(|n| ranges(&format!("step_{n}"))[0]).collect();
    let found = h.state().panel.iterations().expect("iterations computed");
    assert_eq!(found.family, "step_*");
    assert_eq!(found.iterations.len(), steps.len());
    assert_eq!(
        h.get_by_role_and_label(Role::ComboBox, "Family")
            .value()
            .as_deref(),
        Some("step_*")
    );
    h.get_by_label("Iterations (10)");
    assert!(h.query_by_label_contains("Warm-up (").is_none());

    // A click on step_3's forward_pass cell zooms to that forward_pass.
    let forward = inside("forward_pass", steps[3]);
    h.state_mut().actions.clear();
    h.get_by_label("#3 step_3 · forward_pass").click();
    h.run();
    assert_eq!(
        h.state().actions,
        vec![PanelAction::ZoomTo {
            start_ns: forward.0,
            end_ns: forward.1
        }]
    );

    // Choose forward_pass: one row per forward pass, the warm-up ones in a block of their own,
    // the layers inside as columns.
    h.get_by_role_and_label(Role::ComboBox, "Family").click();
    h.run();
    let passes = ranges("forward_pass");
    h.get_by_label(&format!("forward_pass ({})", passes.len()))
        .click();
    settle_panel(&mut h);
    settle_panel(&mut h);
    assert_eq!(h.state().panel.iteration_family(), Some("forward_pass"));
    let found = h.state().panel.iterations().expect("iterations computed");
    assert_eq!(found.family, "forward_pass");
    assert_eq!(found.iterations.len(), passes.len());
    let warmup = ranges("warmup")[0];
    let warm = passes
        .iter()
        .filter(|&&(s, _)| s >= warmup.0 && s < warmup.1)
        .count();
    assert!(warm > 0);
    h.get_by_label(&format!("Warm-up ({warm})"));
    h.get_by_label(&format!("Iterations ({})", passes.len() - warm));
    assert!(h.query_by_label("#3 step_3 · forward_pass").is_none());
    let layer = inside("layer_2_forward", passes[7]);
    h.state_mut().actions.clear();
    h.get_by_label("#7 forward_pass · layer_2_forward").click();
    h.run();
    assert_eq!(
        h.state().actions,
        vec![PanelAction::ZoomTo {
            start_ns: layer.0,
            end_ns: layer.1
        }]
    );
}

#[test]
fn a_click_on_an_iteration_zooms_the_timeline_to_it() {
    let mut h = opened("transformer");
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Iterations;
    settle(&mut h);
    settle(&mut h);
    let (start, end) = ranges("step_4")[0];
    let before = h.state().tab().timeline.view.clone();
    h.get_by_role_and_label(Role::Button, "#4 step_4").click();
    h.run();
    let view = &h.state().tab().timeline.view;
    assert_ne!(
        (view.start_ns, view.end_ns),
        (before.start_ns, before.end_ns)
    );
    // The timeline shows the step with a fifth of its length either side.
    let margin = (end - start) as f64 * 0.2;
    assert!(
        (view.start_ns - (start as f64 - margin)).abs() < 1.0,
        "{}",
        view.start_ns
    );
    assert!(
        (view.end_ns - (end as f64 + margin)).abs() < 1.0,
        "{}",
        view.end_ns
    );
}
