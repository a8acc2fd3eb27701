//! Several traces in one window and the compare view, driven as a person would: tabs with their
//! own view state, two timelines on one relative axis (zooming one zooms both), alignment on an
//! NVTX range instance, the diff panel's rows and outlines, and the odd cases (a broken file, a
//! trace compared with itself, different GPU counts). Expected values come from SQL on the files.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui::{Event, Modifiers, MouseWheelUnit, TouchPhase, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::align::Alignment;
use sightline::analysis::diff::Status;
use sightline::ui::SightlineApp;
use sightline::ui::timeline::{GroupId, TimeToX};

fn app_with(files: &[&str], compare: bool) -> Harness<'static, SightlineApp> {
    app_with_paths(files.iter().map(|f| common::fixture(f)).collect(), compare)
}

fn app_with_paths(paths: Vec<PathBuf>, compare: bool) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(Vec2::new(1600.0, 1000.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_files(paths, compare),
        );
    settle(&mut h);
    h
}

fn busy(app: &SightlineApp) -> bool {
    app.is_loading()
        || app.tabs.iter().any(|t| t.analysis.busy())
        || app.compare.as_ref().is_some_and(|c| c.diff.busy())
}

/// Steps until every load and background job is done and drawn.
fn settle(h: &mut Harness<'static, SightlineApp>) {
    let started = Instant::now();
    let mut idle = 0;
    while idle < 3 {
        h.step();
        if busy(h.state()) {
            idle = 0;
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "jobs did not finish"
            );
            std::thread::sleep(Duration::from_millis(2));
        } else {
            idle += 1;
        }
    }
}

fn wheel_at(h: &mut Harness<'static, SightlineApp>, pos: egui::Pos2, dy: f32) {
    h.event(Event::PointerMoved(pos));
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Point,
        delta: Vec2::new(0.0, dy),
        phase: TouchPhase::Move,
        modifiers: Modifiers::NONE,
        source: egui::MouseWheelSource::Wheel,
    });
    h.step();
    h.step();
}

/// Starts of the NVTX ranges named `name`, ascending (SQL).
fn nvtx_starts(file: &str, name: &str) -> Vec<i64> {
    let conn = common::open_ro(&common::fixture(file));
    let mut st = conn
        .prepare(
            "SELECT n.start FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType IN (59, 60, 70, 71) AND n.end IS NOT NULL \
             AND COALESCE(n.text, s.value) = ?1 ORDER BY n.start",
        )
        .expect("sql");
    st.query_map([name], |r| r.get(0))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
fn a_second_trace_opens_in_its_own_tab_with_its_own_view() {
    let mut h = app_with(&["moe"], false);
    h.state_mut().open(common::fixture("p2p_2gpu"), None);
    settle(&mut h);
    assert_eq!(h.state().tabs.len(), 2);
    assert_eq!(h.state().active, 1);
    assert!(
        h.state()
            .trace()
            .expect("trace")
            .path
            .ends_with("p2p_2gpu.sqlite")
    );
    // Zoom the second tab; the first keeps its own view.
    let first_view = h.state().tabs[0].timeline.view.clone();
    let area = h.state().tab().timeline.last_event_area;
    wheel_at(&mut h, area.center(), 300.0);
    let zoomed = h.state().tab().timeline.view.span_ns();
    assert!(
        zoomed
            < h.state().tabs[1]
                .trace()
                .map_or(0, |t| t.last_ns - t.first_ns) as f64
    );
    h.get_by_label("moe.sqlite").click();
    h.step();
    h.step();
    assert_eq!(h.state().active, 0);
    assert_eq!(h.state().tab().timeline.view, first_view);
    assert!(
        h.state()
            .trace()
            .expect("trace")
            .path
            .ends_with("moe.sqlite")
    );
    // Closing a tab frees it and shows a neighbour.
    h.state_mut().close_tab(0);
    h.step();
    assert_eq!(h.state().tabs.len(), 1);
    assert!(
        h.state()
            .trace()
            .expect("trace")
            .path
            .ends_with("p2p_2gpu.sqlite")
    );
    assert!(h.state().tab().timeline.view.span_ns() - zoomed < 1.0);
}

#[test]
fn the_compare_view_shares_one_relative_axis_and_zoom() {
    let mut h = app_with(&["ws_baseline", "ws_streaming"], true);
    let cv = h.state().compare.as_ref().expect("compare view on");
    let rel = |cv: &sightline::ui::compare::CompareView, k: usize| {
        let v = &cv.views[k].view;
        (
            v.start_ns - cv.offsets[k] as f64,
            v.end_ns - cv.offsets[k] as f64,
        )
    };
    let (b0, n0) = (rel(cv, 0), rel(cv, 1));
    assert!((b0.0 - n0.0).abs() < 1.0 && (b0.1 - n0.1).abs() < 1.0);
    // GPU and stream level: only GPU groups are expanded.
    for k in 0..2 {
        assert!(
            cv.views[k]
                .view
                .collapsed
                .iter()
                .all(|g| !matches!(g, GroupId::Gpu(_)))
        );
        assert!(
            cv.views[k]
                .view
                .collapsed
                .iter()
                .any(|g| matches!(g, GroupId::Process(_)))
        );
    }
    let span_before = b0.1 - b0.0;
    // Zoom over the bottom half: both halves follow.
    let area = cv.views[1].last_event_area;
    wheel_at(&mut h, area.center(), 300.0);
    h.step();
    let cv = h.state().compare.as_ref().expect("compare view on");
    let (b1, n1) = (rel(cv, 0), rel(cv, 1));
    assert!(b1.1 - b1.0 < span_before * 0.5, "{b1:?} vs {span_before}");
    assert!(
        (b1.0 - n1.0).abs() < 1.0 && (b1.1 - n1.1).abs() < 1.0,
        "{b1:?} {n1:?}"
    );
    // And the top half drives the bottom one too (pan with a key while hovering the top).
    let top = cv.views[0].last_event_area;
    h.event(Event::PointerMoved(top.center()));
    h.key_press(egui::Key::D);
    h.step();
    h.step();
    let cv = h.state().compare.as_ref().expect("compare view on");
    let (b2, n2) = (rel(cv, 0), rel(cv, 1));
    assert!(b2.0 > b1.0);
    assert!((b2.0 - n2.0).abs() < 1.0 && (b2.1 - n2.1).abs() < 1.0);
}

#[test]
fn alignment_on_an_nvtx_range_instance_puts_both_at_the_same_place() {
    let mut h = app_with(&["transformer", "transformer"], true);
    // Choose the range in the alignment bar (its box shows the default's name), then the
    // instance.
    let default_name = match &h.state().compare.as_ref().expect("compare").alignment {
        Some(Alignment::Nvtx { name, .. }) => name.clone(),
        other => panic!("transformer has repeated ranges: {other:?}"),
    };
    // Another repeated range, near the top of the list (so it is on screen in the popup).
    let (b, n) = {
        let app = h.state();
        (
            app.tabs[0].document.as_ref().expect("doc").trace.clone(),
            app.tabs[1].document.as_ref().expect("doc").trace.clone(),
        )
    };
    // A name, not a family (`layer_*_forward`): SQL finds its instances by name.
    let other = sightline::analysis::align::repeated_nvtx_names(&b)
        .into_iter()
        .map(|(name, _)| name)
        .find(|name| *name != default_name && !name.contains('*'))
        .expect("a second repeated range");
    h.get_by_value(&default_name).click();
    h.step();
    h.step();
    h.get_by_label_contains(&format!("{other} (")).click();
    h.step();
    assert!(matches!(
        &h.state().compare.as_ref().expect("compare").alignment,
        Some(Alignment::Nvtx { name, .. }) if *name == other
    ));
    // Then instance #5 (as the index box would set it).
    let want = nvtx_starts("transformer", &other);
    assert!(want.len() > 5);
    h.state_mut()
        .compare
        .as_mut()
        .expect("compare")
        .set_alignment(
            [&b, &n],
            Alignment::Nvtx {
                name: other.clone(),
                index: 5,
            },
        );
    // Zoom in so a misalignment of a few pixels would show.
    let area = h.state().compare.as_ref().expect("compare").views[0].last_event_area;
    for _ in 0..3 {
        wheel_at(&mut h, area.center(), 200.0);
    }
    settle(&mut h);
    let cv = h.state().compare.as_ref().expect("compare");
    assert_eq!(cv.offsets, [want[5], want[5]]);
    // The instance starts at the same x in both halves.
    let x = |k: usize| {
        let a = cv.views[k].last_event_area;
        TimeToX::new(&cv.views[k].view, a.left(), a.width()).x(cv.offsets[k])
    };
    assert!((x(0) - x(1)).abs() < 0.5, "{} vs {}", x(0), x(1));
}

#[test]
fn the_default_alignment_is_the_outermost_repeated_range_after_warmup() {
    let h = app_with(&["transformer", "transformer"], true);
    let cv = h.state().compare.as_ref().expect("compare");
    // SQL: transformer numbers its steps (step_0 … step_9): the family step_* holds every other
    // repeated range (forward_pass, layer_N_forward, …) and lies inside none of them.
    let conn = common::open_ro(&common::fixture("transformer"));
    let ranges: Vec<(String, i64, i64)> = {
        let mut st = conn
            .prepare(
                "SELECT COALESCE(n.text, s.value), n.start, n.end FROM NVTX_EVENTS n \
                 LEFT JOIN StringIds s ON s.id = n.textId \
                 WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL ORDER BY n.start",
            )
            .expect("sql");
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .map(|r| r.expect("row"))
            .collect()
    };
    let steps: Vec<&(String, i64, i64)> = ranges
        .iter()
        .filter(|r| {
            r.0.strip_prefix("step_")
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .collect();
    assert!(steps.len() > 1);
    let inside_a_step = |r: &(String, i64, i64)| steps.iter().any(|s| s.1 <= r.1 && r.2 <= s.2);
    let others: Vec<&(String, i64, i64)> = ranges
        .iter()
        .filter(|r| !r.0.starts_with("step_") && !r.0.to_lowercase().contains("warm"))
        .filter(|r| inside_a_step(r))
        .collect();
    assert!(!others.is_empty(), "the steps hold the phases");
    for s in &steps {
        assert!(
            !ranges
                .iter()
                .any(|r| !r.0.starts_with("step_") && r.1 <= s.1 && s.2 <= r.2 && r.0 != "warmup"),
            "{} lies inside another range",
            s.0
        );
    }
    let warm_end: Option<i64> = conn
        .query_row(
            "SELECT MAX(n.end) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType IN (59, 60, 70, 71) AND (lower(COALESCE(n.text, s.value)) LIKE '%warmup%' \
             OR lower(COALESCE(n.text, s.value)) LIKE '%warm-up%' OR lower(COALESCE(n.text, s.value)) LIKE '%warm\\_up%' ESCAPE '\\')",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    let starts: Vec<i64> = steps.iter().map(|s| s.1).collect();
    let index = warm_end.map_or(0, |e| starts.iter().position(|&s| s >= e).unwrap_or(0));
    assert_eq!(
        cv.alignment,
        Some(Alignment::Nvtx {
            name: "step_*".to_string(),
            index
        })
    );
    assert_eq!(cv.offsets, [starts[index], starts[index]]);
}

#[test]
fn the_diff_panel_lists_deltas_and_outlines_a_name_in_both_runs() {
    let mut h = app_with(&["ws_baseline", "ws_streaming"], true);
    let (top, base_n, new_n) = {
        let cv = h.state().compare.as_ref().expect("compare");
        let r = cv.diff.result().expect("diff computed");
        assert!(!r.rows.is_empty());
        // Ordered by |Δ total| descending.
        for w in r.rows.windows(2) {
            assert!(w[0].delta_total().abs() >= w[1].delta_total().abs());
        }
        let top = r.rows[0].clone();
        (
            top.name.clone(),
            top.base.map_or(0.0, |s| s.instances),
            top.new.map_or(0.0, |s| s.instances),
        )
    };
    // The kernels of that name by SQL, in each run.
    let count = |file: &str| -> i64 {
        common::open_ro(&common::fixture(file))
            .query_row(
                "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s \
                 ON s.id = k.demangledName WHERE s.value = ?1",
                [&top],
                |r| r.get(0),
            )
            .expect("sql")
    };
    assert_eq!(base_n as i64, count("ws_baseline"));
    assert_eq!(new_n as i64, count("ws_streaming"));
    // Click the name: its events are outlined in both halves.
    let shown: String = top.chars().take(33).collect();
    h.get_by_label_contains(&shown).click();
    h.step();
    h.step();
    let cv = h.state().compare.as_ref().expect("compare");
    assert_eq!(
        cv.views[0].overlays.highlighted.len() as i64,
        count("ws_baseline")
    );
    assert_eq!(
        cv.views[1].overlays.highlighted.len() as i64,
        count("ws_streaming")
    );
    // The headline is there.
    assert!(h.query_by_label("Trace span").is_some());
    let idle = format!(
        "Idle in gaps ≥ {} µs",
        sightline::analysis::DEFAULT_MIN_GAP_NS / 1000
    );
    assert!(h.query_by_label(&idle).is_some());
}

#[test]
fn a_trace_compared_with_itself_differs_by_nothing() {
    let h = app_with(&["moe", "moe"], true);
    let cv = h.state().compare.as_ref().expect("compare");
    let r = cv.diff.result().expect("diff");
    assert!(!r.rows.is_empty());
    for row in &r.rows {
        assert_eq!(row.delta_total(), 0.0, "{}", row.name);
        assert_eq!(row.status(), Status::Both);
    }
    for line in &r.headline {
        assert_eq!(line.base, line.new, "{}", line.metric);
    }
}

#[test]
fn a_broken_file_shows_its_error_in_its_half_only_and_gpu_counts_may_differ() {
    let dir = common::scratch_dir("ui-compare");
    let bad = dir.join("broken.sqlite");
    std::fs::write(&bad, "not a database\n".repeat(40)).expect("write");
    let h = app_with_paths(vec![common::fixture("moe"), bad.clone()], true);
    let app = h.state();
    assert!(app.compare.is_some());
    assert!(app.tabs[0].error.is_none() && app.tabs[0].document.is_some());
    assert!(
        app.tabs[1]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("not a trace Sightline reads")
    );
    assert!(
        h.query_by_label_contains("not a trace Sightline reads")
            .is_some()
    );

    // One GPU against two: each half lists the GPUs its run has.
    let mut h = app_with(&["moe", "p2p_2gpu"], true);
    settle(&mut h);
    let cv = h.state().compare.as_ref().expect("compare");
    let gpus = |k: usize| {
        let app = h.state();
        let d = app.tabs[k].document.as_ref().expect("doc");
        cv.views[k]
            .last_rows
            .iter()
            .filter(|p| matches!(d.model.rows[p.row].toggles, Some(GroupId::Gpu(_))))
            .count()
    };
    assert_eq!(gpus(0), 1);
    assert_eq!(gpus(1), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn view_compare_opens_the_compare_view_on_two_open_tabs_and_leaving_restores_the_tab() {
    let mut h = app_with(&["ws_baseline", "ws_streaming"], false);
    assert!(h.state().compare.is_none());
    assert_eq!(h.state().tabs.len(), 2);
    let tab_view = h.state().tabs[1].timeline.view.clone();
    h.get_by_label("View").click();
    h.step();
    h.get_by_label("Compare…").click();
    h.step();
    h.step();
    h.get_by_label("Compare").click();
    settle(&mut h);
    let app = h.state();
    let cv = app.compare.as_ref().expect("compare view on");
    assert_eq!((cv.base, cv.new), (app.tabs[0].id, app.tabs[1].id));
    // Zooming the compare view leaves the tab's own view alone.
    let area = cv.views[0].last_event_area;
    wheel_at(&mut h, area.center(), 300.0);
    h.get_by_role_and_label(Role::Button, "ws_streaming.sqlite")
        .click();
    h.step();
    // The tab is shown; the comparison stays (its tab) until it is closed.
    assert!(!h.state().compare_shown);
    assert!(h.state().shown_compare().is_none());
    assert_eq!(h.state().tab().timeline.view, tab_view);
}
