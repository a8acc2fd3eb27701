//! What the window remembers, driven as a person would: File → Open Recent lists the traces
//! opened, most recent first, without the ones deleted since; a trace opened again comes back
//! with its view (range, collapsed rows) and warm-up exclusion, unless the file changed; Ctrl+Q
//! and File → Quit close the window (eframe saves the settings as it closes). Expected times come
//! from SQL on the files.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::ui::{click_at, settle_with, wait_for_load};
use egui::{Key, Modifiers, Pos2, Vec2, ViewportCommand, ViewportId};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::WarmupSettings;
use sightline::ui::settings::Settings;
use sightline::ui::timeline::GroupId;

fn harness(app: SightlineApp) -> Harness<'static, SightlineApp> {
    Harness::builder()
        .with_size(Vec2::new(1400.0, 900.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app)
}

/// Steps until every tab has loaded and no analysis job runs.
fn settle_all(h: &mut Harness<'static, SightlineApp>) {
    wait_for_load(h);
    settle_with(h, |app| {
        app.is_loading() || app.tabs.iter().any(|t| t.analysis.busy())
    });
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("sightline_settings_{}_{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("make a scratch folder");
    dir
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).expect("canonical path")
}

/// Opens File → Open Recent ▸ and returns which of `candidates` (paths) it lists, top to bottom.
fn recent_menu_entries(
    h: &mut Harness<'static, SightlineApp>,
    candidates: &[PathBuf],
) -> Vec<PathBuf> {
    h.get_by_label("File").click();
    h.run_steps(3);
    h.get_by_label("Open Recent").hover();
    h.run_steps(3);
    let mut shown: Vec<(f32, PathBuf)> = candidates
        .iter()
        .filter_map(|path| {
            h.query_by_label(&path.display().to_string())
                .map(|n| (n.rect().top(), path.clone()))
        })
        .collect();
    shown.sort_by(|a, b| a.0.total_cmp(&b.0));
    shown.into_iter().map(|(_, n)| n).collect()
}

#[test]
fn open_recent_lists_the_last_opened_first_and_prunes_deleted_files() {
    let dir = scratch("recent");
    let doomed = dir.join("deleted_later.sqlite");
    std::fs::copy(common::fixture("p2p_2gpu"), &doomed).expect("copy a fixture");
    let missing = dir.join("never_there.sqlite");

    let mut h = harness(SightlineApp::new(None));
    h.step();
    // Opened in this order: the last one opened is the most recent.
    let opened = [
        doomed.clone(),
        common::fixture("moe"),
        missing.clone(),
        common::fixture("p2p_2gpu"),
        common::fixture("ws_baseline"),
    ];
    for path in &opened {
        h.state_mut().open(path.clone(), None);
        h.step();
    }
    settle_all(&mut h);
    // A file that failed to open is not a recent file.
    assert!(h.state().tabs.iter().any(|t| t.error.is_some()));
    let expected_all: Vec<PathBuf> = [
        common::fixture("ws_baseline"),
        common::fixture("p2p_2gpu"),
        common::fixture("moe"),
        doomed.clone(),
    ]
    .iter()
    .map(|p| canonical(p))
    .collect();
    assert_eq!(h.state().settings.recent_files, expected_all);

    std::fs::remove_file(&doomed).expect("delete the copy");
    let mut candidates = expected_all.clone();
    candidates.push(missing.clone());
    assert_eq!(
        recent_menu_entries(&mut h, &candidates),
        expected_all[..3].to_vec()
    );
    assert_eq!(h.state().settings.recent_files, expected_all[..3].to_vec());
    assert_eq!(
        h.state().settings.last_folder,
        Some(canonical(&common::fixtures()))
    );

    // Choosing one opens it (in a new tab) and makes it the most recent.
    let tabs_before = h.state().tabs.len();
    let moe = canonical(&common::fixture("moe"));
    h.get_by_label(&moe.display().to_string()).click();
    h.step();
    settle_all(&mut h);
    assert_eq!(h.state().tabs.len(), tabs_before + 1);
    assert_eq!(
        h.state().tab().path.as_deref(),
        Some(canonical(&common::fixture("moe")).as_path())
    );
    assert!(h.state().tab().document.is_some());
    assert_eq!(
        h.state().settings.recent_files[0],
        canonical(&common::fixture("moe"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `(start, end)` of the NVTX ranges named `name`, by start (SQL).
fn nvtx_ranges(path: &Path, name: &str) -> Vec<(i64, i64)> {
    let conn = common::open_ro(path);
    let mut st = conn
        .prepare(
            "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType IN (59, 60, 70, 71) AND n.end IS NOT NULL \
             AND COALESCE(n.text, s.value) = ?1 ORDER BY n.start",
        )
        .expect("prepare");
    st.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

fn is_excluded(excluded: &[(i64, i64)], t: i64) -> bool {
    excluded.iter().any(|&(a, b)| a <= t && t < b)
}

/// Zooms in at the middle of the timeline (wheel), collapses the first row's group (a click on
/// its title) and excludes the warm-up and the first two `step_*` iterations.
fn change_the_view(h: &mut Harness<'static, SightlineApp>) {
    let area = h.state().tab().timeline.last_event_area;
    h.hover_at(area.center());
    for _ in 0..4 {
        h.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: Vec2::new(0.0, 120.0),
            phase: egui::TouchPhase::Move,
            modifiers: Modifiers::NONE,
            source: egui::MouseWheelSource::Wheel,
        });
        h.step();
    }
    let title_area = h.state().tab().timeline.last_title_area;
    let first = h.state().tab().timeline.last_rows[0];
    click_at(
        h,
        Pos2::new(title_area.left() + 20.0, first.top + first.height / 2.0),
    );
    let rules = WarmupSettings {
        skip_first: 2,
        iteration_regex: "step_.*".into(),
        ..WarmupSettings::default()
    };
    h.state_mut()
        .tab_mut()
        .analysis
        .apply_warmup(rules)
        .expect("valid warm-up rules");
    h.step();
    settle_all(h);
}

#[test]
fn a_trace_opened_again_gets_its_view_and_warmup_back() {
    let path = common::fixture("transformer");
    let mut first = harness(SightlineApp::new(Some(path.clone())));
    settle_all(&mut first);
    let fresh_view = first.state().tab().timeline.view.clone();
    change_the_view(&mut first);
    let changed = first.state().tab().timeline.view.clone();
    // The view really moved away from the default one.
    assert!(changed.span_ns() < fresh_view.span_ns() / 2.0, "not zoomed");
    assert!(changed.collapsed.contains(&GroupId::Gpu(0)));
    assert_ne!(changed.collapsed, fresh_view.collapsed);
    let excluded = first.state().tab().timeline.overlays.excluded.clone();
    let warmup = first.state().tab().analysis.warmup_settings().clone();
    let settings: Settings = first.state_mut().record_settings().clone();

    // A new window with those settings, as eframe hands them to the next run.
    let mut again = harness(SightlineApp::new(Some(path.clone())).with_settings(settings.clone()));
    settle_all(&mut again);
    let tab = again.state().tab();
    assert_eq!(tab.timeline.view.start_ns, changed.start_ns);
    assert_eq!(tab.timeline.view.end_ns, changed.end_ns);
    assert_eq!(tab.timeline.view.collapsed, changed.collapsed);
    assert!(tab.analysis.exclude_warmup);
    assert_eq!(tab.analysis.warmup_settings(), &warmup);
    // The exclusion is in force again: the warm-up range and the first two steps are veiled,
    // the third step is not (times by SQL).
    let veiled = &tab.timeline.overlays.excluded;
    assert_eq!(veiled, &excluded);
    let (warm_start, warm_end) = nvtx_ranges(&path, "warmup")[0];
    assert!(is_excluded(veiled, (warm_start + warm_end) / 2));
    for step in ["step_0", "step_1"] {
        let (a, b) = nvtx_ranges(&path, step)[0];
        assert!(is_excluded(veiled, (a + b) / 2), "{step} not excluded");
    }
    let (a, b) = nvtx_ranges(&path, "step_2")[0];
    assert!(!is_excluded(veiled, (a + b) / 2), "step_2 excluded");

    // Unticking the exclusion is remembered too (the rules stay).
    again.get_by_label("Exclude warm-up").click();
    again.step();
    settle_all(&mut again);
    assert!(!again.state().tab().analysis.exclude_warmup);
    let settings = again.state_mut().record_settings().clone();
    let mut third = harness(SightlineApp::new(Some(path)).with_settings(settings));
    settle_all(&mut third);
    assert!(!third.state().tab().analysis.exclude_warmup);
    assert_eq!(third.state().tab().analysis.warmup_settings(), &warmup);
    assert!(third.state().tab().timeline.overlays.excluded.is_empty());
    assert_eq!(third.state().tab().timeline.view.start_ns, changed.start_ns);
}

#[test]
fn a_changed_file_opens_with_a_fresh_view() {
    let dir = scratch("changed");
    let copy = dir.join("transformer_copy.sqlite");
    std::fs::copy(common::fixture("transformer"), &copy).expect("copy a fixture");
    let mut first = harness(SightlineApp::new(Some(copy.clone())));
    settle_all(&mut first);
    let fresh_view = first.state().tab().timeline.view.clone();
    change_the_view(&mut first);
    let settings = first.state_mut().record_settings().clone();
    assert_eq!(settings.traces.len(), 1);

    // Unchanged: restored (so the case below fails for the right reason).
    let mut same = harness(SightlineApp::new(Some(copy.clone())).with_settings(settings.clone()));
    settle_all(&mut same);
    assert_eq!(
        same.state().tab().timeline.view.start_ns,
        first.state().tab().timeline.view.start_ns
    );

    // Touched (a new export written over it): not restored.
    let modified = std::fs::metadata(&copy)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::File::options()
        .write(true)
        .open(&copy)
        .and_then(|f| f.set_modified(modified + Duration::from_secs(60)))
        .expect("touch the copy");
    assert!(
        std::fs::metadata(&copy)
            .and_then(|m| m.modified())
            .expect("mtime")
            > modified
    );
    let mut changed = harness(SightlineApp::new(Some(copy.clone())).with_settings(settings));
    settle_all(&mut changed);
    let tab = changed.state().tab();
    assert!(tab.document.is_some(), "the touched copy loads");
    assert_eq!(tab.timeline.view, fresh_view);
    assert!(!tab.analysis.exclude_warmup);
    assert_eq!(tab.analysis.warmup_settings(), &WarmupSettings::default());
    assert!(
        changed.state().settings.traces.is_empty(),
        "stale view kept"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn key_q(pressed: bool, modifiers: Modifiers) -> egui::Event {
    egui::Event::Key {
        key: Key::Q,
        physical_key: None,
        pressed,
        repeat: false,
        modifiers,
    }
}

fn closes(h: &Harness<'static, SightlineApp>) -> bool {
    h.output()
        .viewport_output
        .get(&ViewportId::ROOT)
        .is_some_and(|v| v.commands.contains(&ViewportCommand::Close))
}

#[test]
fn ctrl_q_and_file_quit_close_the_window() {
    let mut h = harness(SightlineApp::new(Some(common::fixture("p2p_2gpu"))));
    settle_all(&mut h);
    // Q alone does nothing. (One event per frame: the harness keeps the last frame's output.)
    h.event(key_q(true, Modifiers::NONE));
    h.step();
    assert!(!closes(&h));
    h.event(key_q(false, Modifiers::NONE));
    h.step();
    // Ctrl as winit reports it on Linux and Windows: ctrl and command.
    h.event(key_q(true, Modifiers::CTRL | Modifiers::COMMAND));
    h.step();
    assert!(
        closes(&h),
        "Ctrl+Q did not close the window: {:?}",
        h.output()
            .viewport_output
            .get(&ViewportId::ROOT)
            .map(|v| &v.commands)
    );
    h.event(key_q(false, Modifiers::CTRL | Modifiers::COMMAND));
    h.step();
    assert!(!closes(&h));

    // File → Quit says its shortcut, and closes too.
    h.get_by_label("File").click();
    h.run_steps(3);
    let shortcut = h.ctx.format_shortcut(&sightline::ui::app::QUIT_SHORTCUT);
    assert_eq!(shortcut, "Ctrl+Q");
    // The shortcut is written on the Quit entry itself.
    assert_eq!(
        h.get_by_label_contains("Quit").rect(),
        h.get_by_label_contains(&shortcut).rect()
    );
    h.get_by_label_contains("Quit").click();
    h.step();
    assert!(closes(&h), "File → Quit did not close the window");
}
