//! The SQL tab in the window (issue 22): a query's result pinned as a track shows its
//! intervals where SQL says, `:sel_start` / `:sel_end` follow the range selection, a runaway
//! query is cancelled while the window keeps drawing frames, a wrong query shows SQLite's
//! message, and the queries are remembered per trace.

// Helpers fail the test on a broken fixture, which is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use egui::{Modifiers, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::types::Value;
use sightline::timeline::rows::RowKind;
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::timeline::TimeToX;
use sightline::ui::timeline::sql_tracks;

use common::ui::{drag_with, opened, pause};

/// The app on `name` with the SQL tab shown and `query` in the editor.
fn sql_tab(name: &str) -> Harness<'static, SightlineApp> {
    let mut h = opened(name);
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Sql;
    h.step();
    h.step();
    h
}

fn set_query(h: &mut Harness<'static, SightlineApp>, query: &str) {
    h.state_mut().tab_mut().analysis.sql_mut().query = query.to_string();
    h.step();
}

/// Clicks Run and steps until the answer is in (fails after 30 s).
fn run(h: &mut Harness<'static, SightlineApp>) {
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().tab().analysis.sql().is_running() || answered(h));
    let started = Instant::now();
    while h.state().tab().analysis.sql().is_running() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the query did not end"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.step();
}

fn answered(h: &Harness<'static, SightlineApp>) -> bool {
    h.state().tab().analysis.sql().answer().is_some()
}

fn rows(h: &Harness<'static, SightlineApp>) -> Vec<Vec<Value>> {
    let answer = h.state().tab().analysis.sql().answer().expect("an answer");
    match &answer.result {
        Ok(r) => r.rows.clone(),
        Err(e) => panic!("the query failed: {e}"),
    }
}

/// The step ranges of transformer.sqlite read from the export's own tables (not the views).
fn step_ranges_by_sql() -> Vec<(i64, i64, String)> {
    let conn = common::open_ro(&common::fixture("transformer"));
    let mut stmt = conn
        .prepare(
            "SELECT n.start, n.\"end\", COALESCE(n.text, s.value) AS t FROM NVTX_EVENTS n \
             LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType = 59 AND t LIKE 'step\\_%' ESCAPE '\\' ORDER BY n.start",
        )
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
fn a_pinned_result_shows_its_intervals_where_sql_says_and_they_select() {
    let steps = step_ranges_by_sql();
    assert_eq!(steps.len(), 10, "transformer.sqlite has step_0..9");
    let mut h = sql_tab("transformer");
    set_query(
        &mut h,
        "SELECT start, \"end\", name FROM ranges WHERE name LIKE 'step\\_%' ESCAPE '\\'",
    );
    run(&mut h);
    assert_eq!(rows(&h).len(), steps.len());
    h.get_by_label("Pin as track").click();
    h.step();
    h.step();
    assert_eq!(h.state().tab().analysis.sql().pinned().len(), 1);
    // The pin is listed for removal.
    assert!(h.query_by_label("Remove").is_some());

    // Show the steps: zoom to their span, then find each one on screen by its SQL times.
    let (first, last) = (steps[0].0, steps[steps.len() - 1].1);
    h.state_mut()
        .tab_mut()
        .timeline
        .view
        .zoom_to(first as f64, last as f64);
    h.step();
    h.step();
    let tab = h.state().tab();
    let model = &tab.document.as_ref().expect("loaded").model;
    let row = model
        .row_index(RowKind::SqlTrack { track: 0, lane: 0 })
        .expect("the pinned track is a row");
    assert_eq!(row, 0, "pinned tracks come first");
    let placement = *tab
        .timeline
        .last_rows
        .iter()
        .find(|p| p.row == row)
        .expect("the pinned row is on screen");
    let area = tab.timeline.last_event_area;
    let map = TimeToX::new(&tab.timeline.view, area.left(), area.width());
    let y = placement.top + placement.height / 2.0;
    let mut middles = Vec::new();
    for (start, end, name) in &steps {
        let x = map.x(start + (end - start) / 2);
        let pos = Pos2::new(x, y);
        let hit = sql_tracks::interval_at(
            model,
            &tab.timeline.view,
            &tab.timeline.last_rows,
            area,
            pos,
        )
        .unwrap_or_else(|| panic!("{name} is not drawn at x = {x}"));
        let iv = &model.sql_tracks[0].intervals[hit.interval];
        assert_eq!((iv.start_ns, iv.end_ns, &iv.name), (*start, *end, name));
        let rect = sql_tracks::interval_rect(
            model,
            &tab.timeline.view,
            &tab.timeline.last_rows,
            area,
            hit,
        )
        .expect("drawn");
        assert!(
            (rect.left() - map.x(*start)).abs() < 0.5 && (rect.right() - map.x(*end)).abs() < 1.0
        );
        middles.push((pos, *start, *end));
    }
    // Before the first step there is none (the warm-up comes first).
    let before = Pos2::new(map.x(first) - 40.0, y);
    assert!(
        before.x <= area.left()
            || sql_tracks::interval_at(
                model,
                &tab.timeline.view,
                &tab.timeline.last_rows,
                area,
                before
            )
            .is_none()
    );

    // The search box finds pinned intervals by name too, beside the trace's own events.
    h.state_mut().tab_mut().search.query = "step_3".into();
    h.step();
    h.step();
    let tab = h.state().tab();
    let found = tab.search.sql_matches.clone();
    assert_eq!(found.len(), 1);
    let model = &tab.document.as_ref().expect("loaded").model;
    assert_eq!(
        model.sql_tracks[0].intervals[found[0].interval].name,
        "step_3"
    );
    assert_eq!(
        *tab.timeline.sql_search_matches, *found,
        "outlined on the timeline"
    );
    let label = format!("{} matches (+1 in pinned tracks)", tab.search.matches.len());
    assert!(h.query_by_label(&label).is_some(), "{label}");
    h.state_mut().tab_mut().search.query.clear();
    h.step();

    // A click selects the interval under the pointer; a double-click selects its span.
    let (pos, start, end) = middles[3];
    common::ui::click_at(&mut h, pos);
    let selected = h.state().tab().timeline.sql_selection.expect("selected");
    let iv = &h
        .state()
        .tab()
        .document
        .as_ref()
        .expect("loaded")
        .model
        .sql_tracks[0]
        .intervals[selected.interval];
    assert_eq!((iv.start_ns, iv.end_ns), (start, end));
    let name = iv.name.clone();
    // The details panel shows its row (the pointer moved off, so no tooltip says it).
    h.event(egui::Event::PointerMoved(Pos2::new(5.0, 5.0)));
    h.step();
    h.step();
    // Its name: once in the result table, once in the details.
    assert_eq!(
        h.query_all_by_label(&name).count(),
        2,
        "{name} in the details"
    );
    assert!(h.query_by_label("Select range").is_some());
    pause(&mut h);
    h.event(egui::Event::PointerMoved(pos));
    for _ in 0..2 {
        for pressed in [true, false] {
            h.event(egui::Event::PointerButton {
                pos,
                button: egui::PointerButton::Primary,
                pressed,
                modifiers: Modifiers::NONE,
            });
        }
    }
    h.step();
    h.step();
    assert_eq!(h.state().selection_range(), Some((start, end)));

    // Removed, the row goes.
    h.get_by_label("Remove").click();
    h.step();
    h.step();
    let model = &h.state().tab().document.as_ref().expect("loaded").model;
    assert!(
        model
            .row_index(RowKind::SqlTrack { track: 0, lane: 0 })
            .is_none()
    );
    assert!(model.sql_tracks.is_empty());
}

#[test]
fn sel_start_and_sel_end_follow_the_range_selection() {
    let mut h = sql_tab("moe");
    set_query(&mut h, "SELECT :sel_start AS a, :sel_end AS b");
    run(&mut h);
    let (first, last) = {
        let t = h.state().tab().trace().expect("loaded");
        (t.first_ns, t.last_ns)
    };
    // No selection: the whole trace, its end exclusive as every range here is [start, end).
    assert_eq!(
        rows(&h),
        vec![vec![Value::Integer(first), Value::Integer(last + 1)]]
    );

    // A Shift+drag over the timeline selects a range: the parameters are its ends.
    let area = h.state().tab().timeline.last_event_area;
    let y = area.top() + 30.0;
    drag_with(
        &mut h,
        Pos2::new(area.left() + 100.0, y),
        Pos2::new(area.left() + 400.0, y),
        Modifiers::SHIFT,
    );
    let (a, b) = h.state().selection_range().expect("a range is selected");
    assert!(b > a);
    run(&mut h);
    assert_eq!(rows(&h), vec![vec![Value::Integer(a), Value::Integer(b)]]);
    let shown = format!(":sel_start = {a}, :sel_end = {b} (ns)");
    assert!(
        h.query_by_label(&shown).is_some(),
        "the bound values are shown"
    );

    // Set from elsewhere (the panel, a double-click): the next run follows.
    h.state_mut()
        .set_selection_range(Some((first + 1000, first + 5000)));
    h.step();
    run(&mut h);
    assert_eq!(
        rows(&h),
        vec![vec![
            Value::Integer(first + 1000),
            Value::Integer(first + 5000)
        ]]
    );

    // The "+ :sel_start" button writes the parameter into the query.
    set_query(&mut h, "SELECT count(*) FROM kernels WHERE start >= ");
    h.get_by_label("+ :sel_start").click();
    h.step();
    assert!(
        h.state().tab().analysis.sql().query.contains(":sel_start"),
        "{}",
        h.state().tab().analysis.sql().query
    );
}

#[test]
fn a_cancelled_runaway_query_returns_control_and_the_window_keeps_drawing() {
    let mut h = sql_tab("moe");
    set_query(
        &mut h,
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
    );
    h.get_by_label("Run").click();
    h.step();
    assert!(h.state().tab().analysis.sql().is_running());
    // For a second the query runs on its thread while frames go on being drawn quickly.
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    let mut frames = 0;
    while started.elapsed() < Duration::from_secs(1) {
        let t = Instant::now();
        h.step();
        slowest = slowest.max(t.elapsed());
        frames += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        h.state().tab().analysis.sql().is_running(),
        "a runaway query runs on"
    );
    assert!(frames >= 10, "only {frames} frames in a second");
    assert!(
        slowest < Duration::from_millis(500),
        "a frame took {slowest:?}"
    );

    h.get_by_label("Cancel").click();
    let cancelled = Instant::now();
    while h.state().tab().analysis.sql().is_running() {
        assert!(
            cancelled.elapsed() < Duration::from_secs(5),
            "the cancelled query did not stop"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.step();
    let answer = h.state().tab().analysis.sql().answer().expect("an answer");
    let message = answer.result.as_ref().expect_err("cancelled, not answered");
    assert!(message.contains("cancelled"), "{message}");
    assert!(h.query_by_label("the query was cancelled").is_some());

    // Run again: while it runs, the last query's error is not shown as if it were this one's.
    h.get_by_label("Run").click();
    h.step();
    h.step();
    assert!(h.state().tab().analysis.sql().is_running());
    assert!(h.query_by_label("the query was cancelled").is_none());
    h.get_by_label("Cancel").click();
    let cancelled = Instant::now();
    while h.state().tab().analysis.sql().is_running() {
        assert!(cancelled.elapsed() < Duration::from_secs(5), "not stopped");
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.step();

    // Control is back: the next query runs and answers.
    set_query(&mut h, "SELECT count(*) FROM memcpy");
    run(&mut h);
    let conn = common::open_ro(&common::fixture("moe"));
    let n: i64 = conn
        .query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY", [], |r| {
            r.get(0)
        })
        .expect("count");
    assert_eq!(rows(&h), vec![vec![Value::Integer(n)]]);
}

#[test]
fn a_wrong_query_shows_sqlites_message_and_queries_are_remembered_for_the_trace() {
    let mut h = sql_tab("moe");
    set_query(&mut h, "SELEC name FROM kernels");
    run(&mut h);
    assert!(h.query_by_label_contains("syntax error").is_some());
    set_query(&mut h, "SELECT name FROM no_such_view");
    run(&mut h);
    assert!(
        h.query_by_label_contains("no such table: no_such_view")
            .is_some()
    );
    set_query(&mut h, "DELETE FROM StringIds");
    run(&mut h);
    assert!(
        h.query_by_label_contains("refused: DELETE from StringIds")
            .is_some()
    );

    let history = h.state().tab().analysis.sql().history().to_vec();
    assert_eq!(history[0], "DELETE FROM StringIds");
    assert_eq!(history[1], "SELECT name FROM no_such_view");
    // Saved with the trace's view in the settings, and given back when the trace opens again.
    let settings = h.state_mut().record_settings().clone();
    let remembered = settings.traces.first().expect("the trace is remembered");
    assert_eq!(remembered.view.sql_history, history);
    let mut again = Harness::builder()
        .with_size(egui::Vec2::new(1400.0, 900.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::new(Some(common::fixture("moe"))).with_settings(settings),
        );
    common::ui::wait_for_load(&mut again);
    assert_eq!(
        again.state().tab().analysis.sql().history(),
        history.as_slice()
    );
}

/// Next steps through the search's matches in time order, the pinned intervals among the
/// trace's own events, and a pinned match is selected as a click selects it and shown.
#[test]
fn next_steps_to_pinned_matches_in_time_order() {
    let steps = step_ranges_by_sql();
    let mut h = sql_tab("transformer");
    // The steps, each moved by half its length: pinned intervals between the NVTX events.
    set_query(
        &mut h,
        "SELECT start + dur / 2 AS start, \"end\" + dur / 2 AS \"end\", name FROM ranges \
         WHERE name LIKE 'step\\_%' ESCAPE '\\'",
    );
    run(&mut h);
    h.get_by_label("Pin as track").click();
    h.step();
    h.step();
    h.state_mut().tab_mut().search.query = "step_".into();
    h.step();
    h.step();
    // What the order must be: the trace's matching events and the SQL steps moved, by start
    // (an event first where both start together).
    let tab = h.state().tab();
    let trace = tab.document.as_ref().expect("loaded").trace.clone();
    let events = tab.search.matches.clone();
    assert!(!events.is_empty(), "the NVTX steps match");
    let mut expected: Vec<(i64, u8, Option<sightline::ui::timeline::EventRef>, String)> = events
        .iter()
        .map(|&e| (e.start_ns(&trace), 0, Some(e), String::new()))
        .collect();
    for (start, end, name) in &steps {
        let moved = start + (end - start) / 2;
        expected.push((moved, 1, None, name.clone()));
    }
    expected.sort_by_key(|e| (e.0, e.1));
    assert!(
        expected.windows(2).any(|w| w[0].1 != w[1].1),
        "events and pinned intervals interleave"
    );
    for (k, (start, _, event, name)) in expected.iter().enumerate() {
        h.get_by_label("Next").click();
        h.step();
        h.step();
        let tab = h.state().tab();
        assert_eq!(tab.search.current, Some(k));
        match event {
            Some(e) => {
                assert_eq!(tab.timeline.selection, Some(*e), "match {k}");
                assert_eq!(tab.timeline.sql_selection, None, "match {k}");
            }
            None => {
                assert_eq!(tab.timeline.selection, None, "match {k}: no event selected");
                let hit = tab
                    .timeline
                    .sql_selection
                    .expect("a pinned interval selected");
                let model = &tab.document.as_ref().expect("loaded").model;
                let iv = &model.sql_tracks[hit.track].intervals[hit.interval];
                assert_eq!((iv.start_ns, &iv.name), (*start, name), "match {k}");
                let v = &tab.timeline.view;
                assert!(
                    v.start_ns <= iv.start_ns as f64 && iv.end_ns as f64 <= v.end_ns,
                    "match {k} is in view"
                );
            }
        }
    }
    let label = format!(
        "{} / {} matches ({} in pinned tracks)",
        expected.len(),
        expected.len(),
        steps.len()
    );
    assert!(h.query_by_label(&label).is_some(), "{label}");
    // Past the last, Next wraps to the first; Prev goes back to the last.
    h.get_by_label("Next").click();
    h.step();
    assert_eq!(h.state().tab().search.current, Some(0));
    h.get_by_label("Prev").click();
    h.step();
    assert_eq!(h.state().tab().search.current, Some(expected.len() - 1));
    assert!(
        h.state().tab().timeline.sql_selection.is_some() == expected.last().unwrap().2.is_none()
    );
}
