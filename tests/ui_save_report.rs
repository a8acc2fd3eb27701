//! File → Save report… in the window: with a range selected, the page written covers that range
//! (the figures equal the analyses over the selection), and with the panel's warm-up exclusion on
//! it leaves the warm-up out; through the in-window file browser.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable;
use serde_json::Value;
use sightline::analysis::{self, Filter, TimeRange};
use sightline::ui::file_dialog::{self, FileDialogs, NO_SYSTEM_DIALOG};

#[test]
fn save_report_writes_the_selection_s_report_where_chosen() {
    let dir = common::scratch_dir("save-report");
    let mut h = common::ui::opened("ws_streaming");
    let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
    dialogs.set_export_dir(&dir);
    file_dialog::install(&h.ctx, dialogs);
    // The middle half of the GPU work, selected as Shift+drag would.
    let (a, b) = h
        .state()
        .tab()
        .document
        .as_ref()
        .unwrap()
        .trace
        .gpu_span()
        .unwrap();
    let (s, e) = (a + (b - a) / 4, b - (b - a) / 4);
    h.state_mut().set_selection_range(Some((s, e)));
    h.step();

    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Save report…").click();
    h.step();
    h.step();
    h.get_by_label("Save report as HTML");
    let name = h.get_by_label("File name");
    assert_eq!(name.value().as_deref(), Some("ws_streaming.report.html"));
    h.get_by_label("Save").click();
    h.step();
    let started = Instant::now();
    loop {
        h.step();
        let status = h.state().tab().status.clone().unwrap_or_default();
        if status.starts_with("Report written") {
            break;
        }
        assert!(!status.starts_with("Report not written"), "{status}");
        assert!(started.elapsed() < Duration::from_secs(120), "{status}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let html = std::fs::read_to_string(dir.join("ws_streaming.report.html")).unwrap();
    let open = "<script type=\"application/json\" id=\"sightline-metrics\">";
    let from = html.find(open).unwrap() + open.len();
    let to = from + html[from..].find("</script>").unwrap();
    let json: Value = serde_json::from_str(&html[from..to]).unwrap();
    assert_eq!(json["config"]["range_start_ns"], s);
    assert_eq!(json["config"]["range_end_ns"], e);
    // The figures are the selection's, not the whole trace's.
    let trace = &h.state().tab().document.as_ref().unwrap().trace;
    let filter = Filter::range(TimeRange::new(s, e));
    let activity = analysis::gpu_activity(trace, &filter);
    let whole = analysis::gpu_activity(trace, &Filter::all());
    assert_eq!(json["gpus"][0]["busy_ns"], activity[0].busy_ns);
    assert!(activity[0].busy_ns < whole[0].busy_ns);
    assert_eq!(
        html.matches("data:image/png;base64,").count(),
        2,
        "no gap: the selection, and the critical path of a token in it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_report_leaves_out_the_warm_up_the_panel_excludes() {
    let dir = common::scratch_dir("save-report-warmup");
    let mut h = common::ui::opened("transformer");
    let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
    dialogs.set_export_dir(&dir);
    file_dialog::install(&h.ctx, dialogs);
    h.get_by_label("Exclude warm-up").click();
    common::ui::settle(&mut h);
    let excluded = h
        .state()
        .tab()
        .analysis
        .exclusion_arc()
        .expect("warm-up excluded");
    assert!(
        !excluded.ranges.is_empty(),
        "transformer has a warmup range"
    );
    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Save report…").click();
    h.step();
    h.step();
    h.get_by_label("Save").click();
    h.step();
    let started = Instant::now();
    loop {
        h.step();
        let status = h.state().tab().status.clone().unwrap_or_default();
        if status.starts_with("Report written") {
            break;
        }
        assert!(!status.starts_with("Report not written"), "{status}");
        assert!(started.elapsed() < Duration::from_secs(120), "{status}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let html = std::fs::read_to_string(dir.join("transformer.report.html")).unwrap();
    let open = "<script type=\"application/json\" id=\"sightline-metrics\">";
    let from = html.find(open).unwrap() + open.len();
    let to = from + html[from..].find("</script>").unwrap();
    let json: Value = serde_json::from_str(&html[from..to]).unwrap();
    assert_eq!(json["config"]["excluded_ranges"], excluded.ranges.len());
    let trace = &h.state().tab().document.as_ref().unwrap().trace;
    let with = analysis::gpu_activity(trace, &excluded.filter(TimeRange::ALL));
    let without = analysis::gpu_activity(trace, &Filter::all());
    assert_eq!(json["gpus"][0]["busy_ns"], with[0].busy_ns);
    assert!(
        with[0].busy_ns < without[0].busy_ns,
        "the warm-up's GPU work is left out"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
