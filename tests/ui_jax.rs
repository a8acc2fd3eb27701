//! A JAX profile in the window: the `jax.profiler.trace` log folder given on the command line
//! opens as its one XPlane in a trace tab (not as a run of one rank), with the GPU's rows, its
//! 440 kernels, XProf's XLA Modules and XLA Ops lines and the host's ranges. Uses
//! `../shared/traces/jax`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::Vec2;
use egui_kittest::Harness;
use sightline::trace::TraceFormat;
use sightline::ui::SightlineApp;
use sightline::ui::timeline::RowKind;

fn busy(app: &SightlineApp) -> bool {
    app.is_loading() || app.tabs.iter().any(|t| t.analysis.busy())
}

#[test]
fn a_jax_log_folder_opens_as_its_xplane_in_a_trace_tab() {
    let Some(root) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is absent");
        return;
    };
    let dir = root.join("jax/jax_train");
    let xplane = sightline::load::xplane::xplanes_in_folder(&dir);
    assert_eq!(xplane.len(), 1, "{xplane:?}");
    let mut h = Harness::builder()
        .with_size(Vec2::new(1600.0, 1000.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::new(Some(dir)),
        );
    common::ui::settle_with(&mut h, busy);
    let app = h.state();
    assert_eq!(app.tabs.len(), 1);
    let tab = app.tab();
    assert!(tab.run.is_none(), "a folder of one trace is no run");
    assert!(tab.error.is_none(), "{:?}", tab.error);
    let trace = app.trace().expect("the XPlane is loaded");
    assert_eq!(trace.format, TraceFormat::XPlane);
    assert_eq!(trace.path, xplane[0]);
    assert_eq!(trace.kernels.spans.len(), 440);
    let rows = &tab.document.as_ref().expect("document").model.rows;
    assert!(
        rows[0].title.starts_with("GPU 0 · NVIDIA H200"),
        "{}",
        rows[0].title
    );
    let streams = rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Stream { .. }))
        .count();
    let ranges = rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Nvtx { .. }))
        .count();
    assert!(
        streams >= 1 && ranges >= 1,
        "{streams} streams, {ranges} range rows"
    );
    // XProf's derived lines, one row each under the GPU, before the host's threads.
    let titles: Vec<&str> = rows.iter().map(|r| r.title.as_str()).collect();
    let at = |title: &str| titles.iter().position(|t| *t == title);
    let (modules, ops) = (at("XLA Modules"), at("XLA Ops"));
    assert!(
        modules.is_some() && ops == modules.map(|m| m + 1),
        "XLA Modules then XLA Ops: {titles:?}"
    );
    assert_eq!(titles.iter().filter(|t| **t == "XLA Ops").count(), 1);
    let host = titles
        .iter()
        .position(|t| t.starts_with("python3"))
        .expect("the host process");
    assert!(ops.unwrap() < host, "{titles:?}");
    println!(
        "jax_train's folder: one trace tab, {} kernels, {} rows ({streams} streams, {ranges} range rows)",
        trace.kernels.spans.len(),
        rows.len()
    );
}
