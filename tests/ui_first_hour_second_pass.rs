//! Issue 36 ("The first hour, second pass"), driven with `egui_kittest` on the bundled exports
//! as a person would: `?` shows the keys and leaves the search box alone, so the next `w` zooms
//! (item 4); the Findings tab's GPU Gaps names nsys's 500 ms threshold and points to the Gaps
//! tab, which lists the shorter gaps (item 8); File → Open… after a CSV export starts where the
//! trace was opened from, not in the export's folder (item 9); "CUDA graph" in the search box
//! finds n25_graphs' graph executions, as their blocks are named (item 6); a comparison stays
//! when a third trace is opened, until its tab is closed (item 3); File → Open… lists PyTorch
//! traces and Nsight Compute reports without "Show all files", and the texts name every format
//! (item 1).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{app_with_size, panel_harness, settle_panel};

use egui::{Event, Key, Modifiers, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::{self, Filter, TimeRange};
use sightline::load;
use sightline::ui::SightlineApp;
use sightline::ui::file_dialog::{self, FileDialogs, FilePurpose, NO_SYSTEM_DIALOG};
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::panels::search::search_box_id;
use sightline::ui::timeline::EventKind;

type App = Harness<'static, SightlineApp>;

const WINDOW: Vec2 = Vec2::new(1600.0, 1000.0);

fn open(name: &str) -> App {
    let mut h = app_with_size(vec![common::fixture(name)], WINDOW);
    assert!(
        h.state().tab().error.is_none(),
        "{:?}",
        h.state().tab().error
    );
    h.step();
    h
}

/// A key's press or release, in the next frame with whatever `text` it types (as winit sends
/// them: one frame, where the harness's `event` gives each event a frame of its own).
fn key(h: &mut App, key: Key, pressed: bool, modifiers: Modifiers, text: Option<&str>) {
    let events = &mut h.input_mut().events;
    events.push(Event::Key {
        key,
        pressed,
        modifiers,
        repeat: false,
        physical_key: Some(key),
    });
    if let Some(text) = text {
        events.push(Event::Text(text.into()));
    }
    h.step();
}

fn span(h: &App) -> f64 {
    let v = &h.state().tab().timeline.view;
    v.end_ns - v.start_ns
}

// ---------------------------------------------------------------- item 4: `?` and search

/// Shift+/ as a keyboard sends it: the key with Shift, the text `?`, and — Shift often let go
/// first — the key's release without Shift, a frame later. Then `w`.
#[test]
fn question_mark_shows_the_keys_and_the_next_w_zooms() {
    for (help_key, release_modifiers) in [
        (Key::Slash, Modifiers::NONE),
        (Key::Slash, Modifiers::SHIFT),
        (Key::Questionmark, Modifiers::NONE),
    ] {
        let mut h = open("moe");
        let focused = |h: &App| h.ctx.memory(|m| m.has_focus(search_box_id()));
        key(&mut h, help_key, true, Modifiers::SHIFT, Some("?"));
        key(&mut h, help_key, false, release_modifiers, None);
        h.step();
        assert!(h.state().show_help, "{help_key:?}: ? shows the keys");
        assert!(!focused(&h), "{help_key:?}: ? left the search box alone");
        let before = span(&h);
        key(&mut h, Key::W, true, Modifiers::NONE, Some("w"));
        key(&mut h, Key::W, false, Modifiers::NONE, None);
        h.step();
        assert_eq!(h.state().tab().search.query, "", "{help_key:?}: w typed");
        assert!(!focused(&h));
        assert!(
            span(&h) < before * 0.9,
            "{help_key:?}: w zooms in ({before} -> {})",
            span(&h)
        );
    }
}

// ---------------------------------------------------------------- item 8: GPU Gaps at 500 ms

/// moe's GPU is never idle for 500 ms, but is for shorter times: the Findings tab's GPU Gaps says
/// it looks over 500 ms only, how many gaps the Gaps tab lists (the same gaps the analysis
/// finds), and its link opens that tab.
#[test]
fn findings_gpu_gaps_names_the_500_ms_threshold_and_the_gaps_tab() {
    let trace = load::load_file(&common::fixture("moe")).expect("load moe");
    let mut h = panel_harness(trace, TimeRange::ALL);
    let options = h.state().panel.gap_options();
    let gaps = analysis::gpu_idle_gaps(&h.state().trace, &Filter::range(TimeRange::ALL), &options);
    assert!(gaps.len() > 1, "moe has short gaps: {}", gaps.len());
    assert!(gaps.iter().all(|g| g.duration_ns() < 500_000_000));
    h.state_mut().panel.tab = AnalysisTab::Findings;
    settle_panel(&mut h);
    let header = "GPU Gaps over 500 ms · 0";
    h.get_by_label(header).scroll_to_me();
    h.run();
    h.get_by_label(header).click();
    settle_panel(&mut h);
    h.get_by_label_contains("looks only for GPU idle time")
        .scroll_to_me();
    h.run();
    h.get_by_label_contains(&format!(
        "looks only for GPU idle time over 500 ms. The Gaps tab lists {} gaps of",
        gaps.len()
    ));
    h.get_by_label("Open the Gaps tab").click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.tab, AnalysisTab::Gaps);
}

// ---------------------------------------------------------------- item 9: Open… after Export

#[test]
fn open_after_a_csv_export_starts_where_the_trace_came_from() {
    let scratch = common::scratch_dir("open-after-export");
    let mut h = open("moe");
    file_dialog::install(&h.ctx, FileDialogs::builtin(NO_SYSTEM_DIALOG));
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Export;
    h.step();
    h.step();
    h.get_by_label("Export selection to CSV…").click();
    h.step();
    h.step();
    let csv = scratch.join("selection.csv");
    h.get_by_label("File name")
        .set_text_value_accesskit(&csv.display().to_string());
    h.step();
    h.get_by_label("Save").click();
    h.step();
    h.step();
    assert!(csv.is_file(), "{} written", csv.display());
    // File → Open… (Ctrl+O).
    common::ui::press(&mut h, Modifiers::COMMAND, Key::O);
    assert_eq!(
        file_dialog::with(&h.ctx, |d| d.browsing().cloned()),
        Some(FilePurpose::OpenTrace)
    );
    let fixtures = std::fs::canonicalize(common::fixtures()).expect("fixtures folder");
    assert_eq!(
        h.get_by_label("Folder").value().unwrap_or_default(),
        fixtures.display().to_string(),
        "Open… starts where moe was opened from"
    );
    std::fs::remove_dir_all(&scratch).ok();
}

// ---------------------------------------------------------------- item 6: search CUDA graphs

/// n25_graphs (graphs traced as a whole): "CUDA graph" finds every graph execution, typed as a
/// user types it; their count is the export's own rows.
#[test]
fn search_finds_cuda_graph_executions() {
    let Some(path) = common::shared_traces()
        .map(|d| d.join("n25_graphs.sqlite"))
        .filter(|p| p.is_file())
    else {
        eprintln!("SKIPPED: ../shared/traces/n25_graphs.sqlite is not beside the checkout");
        return;
    };
    let executions: i64 = common::open_ro(&path)
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
            [],
            |r| r.get(0),
        )
        .expect("count graph executions");
    assert!(executions > 0);
    let mut h = app_with_size(vec![path], WINDOW);
    assert!(h.state().tab().error.is_none());
    common::ui::press(&mut h, Modifiers::COMMAND, Key::F);
    h.event(Event::Text("CUDA graph".into()));
    h.step();
    h.step();
    let search = &h.state().tab().search;
    assert_eq!(search.query, "CUDA graph");
    let graphs = search
        .matches
        .iter()
        .filter(|e| e.kind == EventKind::Graph)
        .count();
    assert_eq!(graphs as i64, executions, "every graph execution found");
}

// ---------------------------------------------------------------- item 3: compare stays

#[test]
fn a_comparison_stays_when_a_third_trace_opens_until_it_is_closed() {
    let mut h = common::ui::app_of(
        vec![
            common::fixture("ws_baseline"),
            common::fixture("ws_streaming"),
        ],
        WINDOW,
        true,
    );
    let (base, new) = {
        let app = h.state();
        (app.tabs[0].id, app.tabs[1].id)
    };
    assert!(h.state().shown_compare().is_some(), "--compare shows it");
    // A third trace opens (File → Open… ends here) and is shown; the comparison keeps its tab.
    let ctx = h.ctx.clone();
    h.state_mut().open(common::fixture("moe"), Some(&ctx));
    common::ui::settle_all(&mut h);
    assert_eq!(h.state().tabs.len(), 3);
    assert!(
        h.state().shown_compare().is_none(),
        "the new trace is shown"
    );
    let cv = h.state().compare.as_ref().expect("the comparison stays");
    assert_eq!((cv.base, cv.new), (base, new));
    let tab = "Compare: ws_baseline.sqlite vs ws_streaming.sqlite";
    h.get_by_label(tab).click();
    h.step();
    h.step();
    assert!(
        h.state().shown_compare().is_some(),
        "its tab shows it again"
    );
    // Closed with its × (the last in the tab bar, after the traces' own): gone.
    let closes = h.get_all_by_label("×").count();
    assert_eq!(closes, 4, "three traces and the comparison");
    h.get_all_by_label("×").last().expect("its ×").click();
    h.step();
    h.step();
    assert!(h.state().compare.is_none());
    assert!(h.query_by_label_contains("Compare: ").is_none());
}

// ---------------------------------------------------------------- item 1: every format listed

#[test]
fn open_lists_every_format_by_default_and_the_texts_name_them() {
    // The browser's filter, as the system dialog's.
    for name in [
        "a/kt_moe.pt.trace.json.gz",
        "a/trace.json",
        "a/moe.ncu-rep",
        "a/moe.ncu-rep.gz",
        "a/moe.ncu-repz",
        "a/moe.raw.csv",
        "a/moe.sqlite",
        "a/moe.nsys-rep",
    ] {
        let listed = file_dialog::TRACE_EXTENSIONS
            .iter()
            .any(|x| name.to_ascii_lowercase().ends_with(&format!(".{x}")));
        assert!(listed, "{name}");
    }
    for text in [
        file_dialog::OPEN_TITLE,
        sightline::ui::app::WELCOME_FORMATS,
        sightline::ui::about::DESCRIPTION,
    ] {
        for word in ["Nsight Systems", "PyTorch", "Nsight Compute"] {
            assert!(text.contains(word), "{text:?} names {word}");
        }
    }
    for x in [
        ".json.gz",
        ".ncu-rep",
        ".ncu-repz",
        ".csv",
        ".sqlite",
        ".nsys-rep",
    ] {
        assert!(sightline::ui::app::WELCOME_FORMATS.contains(x), "{x}");
    }
    // The built-in browser in the shared PyTorch and Nsight Compute folders: the traces are
    // listed without ticking "Show all files".
    let Some(shared) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout (browser part)");
        return;
    };
    for (folder, file) in [
        ("pytorch", "kt_moe.pt.trace.json.gz"),
        ("ncu", "ncu_moe_dram.ncu-rep.gz"),
    ] {
        let mut h = common::ui::harness(None);
        let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
        dialogs.set_start_dir(shared.join(folder));
        file_dialog::install(&h.ctx, dialogs);
        h.step();
        file_dialog::with(&h.ctx, FileDialogs::open_trace);
        h.step();
        h.step();
        assert!(h.query_by_label(file).is_some(), "{folder}/{file} listed");
    }
}
