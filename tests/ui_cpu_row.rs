//! A thread's CPU row driven through `egui_kittest` on a real capture (cpu_side): the row is
//! there for every thread with scheduling or samples, its strip is drawn in the running colour
//! exactly where SQL says the thread ran, and hovering a sample tick shows that sample's call
//! stack as SAMPLING_CALLCHAINS holds it (innermost first).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::opened;

use egui::Pos2;
use egui_kittest::kittest::Queryable;
use rusqlite::{Connection, OpenFlags};
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::timeline::{RowKind, TimeToX, format_duration};

fn conn() -> Connection {
    Connection::open_with_flags(
        common::fixture("cpu_side"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open")
}

#[test]
fn every_scheduled_or_sampled_thread_has_a_cpu_row() {
    let h = opened("cpu_side");
    let app = h.state();
    let trace = app.trace().expect("trace");
    let model = &app.tab().document.as_ref().expect("document").model;
    let want: i64 = conn()
        .query_row(
            "SELECT count(*) FROM (SELECT globalTid FROM SCHED_EVENTS UNION \
             SELECT globalTid FROM COMPOSITE_EVENTS)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let rows: Vec<usize> = model
        .rows
        .iter()
        .filter_map(|r| match r.kind {
            RowKind::ThreadCpu { thread } => Some(thread),
            _ => None,
        })
        .collect();
    assert_eq!(rows.len() as i64, want);
    for t in rows {
        let th = &trace.threads[t];
        assert!(!th.samples.is_empty() || !th.running.is_empty());
    }
}

#[test]
fn hovering_a_sample_shows_its_call_stack() {
    let mut h = opened("cpu_side");
    h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    let c = conn();
    // The main thread's sample with the deepest stack, from the file.
    let (tid, time, depth): (i64, i64, i64) = c
        .query_row(
            "SELECT e.globalTid, e.start, max(c.stackDepth) AS d FROM COMPOSITE_EVENTS e \
             JOIN SAMPLING_CALLCHAINS c ON c.id = e.id GROUP BY e.id \
             ORDER BY d DESC, e.start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let frames: Vec<(String, String)> = c
        .prepare(
            "SELECT s.value, m.value FROM COMPOSITE_EVENTS e JOIN SAMPLING_CALLCHAINS c \
             ON c.id = e.id JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module \
             WHERE e.globalTid = ?1 AND e.start = ?2 ORDER BY c.stackDepth",
        )
        .unwrap()
        .query_map([tid, time], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(frames.len() as i64, depth + 1);

    // Zoom to 2 ms around the sample so no other sample shares its pixel.
    let row_kind = {
        let app = h.state_mut().tab_mut();
        let trace = app.trace().expect("trace");
        let thread = trace
            .threads
            .iter()
            .position(|t| t.global_tid == tid)
            .expect("thread");
        app.timeline.view.start_ns = (time - 1_000_000) as f64;
        app.timeline.view.end_ns = (time + 1_000_000) as f64;
        RowKind::ThreadCpu { thread }
    };
    h.step();
    h.step();
    let (pos, want_time) = {
        let app = h.state();
        let model = &app.tab().document.as_ref().expect("document").model;
        let row = model.row_index(row_kind).expect("row");
        let p = app
            .tab()
            .timeline
            .last_rows
            .iter()
            .find(|p| p.row == row)
            .copied()
            .expect("CPU row shown");
        let area = app.tab().timeline.last_event_area;
        let map = TimeToX::new(&app.tab().timeline.view, area.left(), area.width());
        (
            Pos2::new(map.x(time) + 1.0, p.top + p.height - 4.0),
            format_duration(time as f64),
        )
    };
    assert!(h.query_by_label("CPU sample").is_none(), "no tooltip yet");
    h.hover_at(pos);
    h.step();
    h.step();
    h.get_by_label("CPU sample");
    h.get_by_label(&want_time);
    // Frames innermost first, as many as the tooltip lists.
    for (function, _) in frames.iter().take(24) {
        assert!(
            h.query_all_by_label(function).next().is_some(),
            "frame {function} listed"
        );
    }
}

/// The CPU samples tab lists each sampled thread with its running share of the selection: the
/// running time inside the selection over the selection clipped to the thread's first and last
/// scheduling events, both computed here with SQL (LEAD pairing over SCHED_EVENTS).
#[test]
fn the_panel_gives_each_threads_running_share_of_the_selection() {
    let mut h = opened("cpu_side");
    let c = conn();
    let (t0, t1): (i64, i64) = c
        .query_row(
            "SELECT start, end FROM NVTX_EVENTS WHERE text = 'data_loader'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    // Settled first: the tab labels change width as the panel's findings come in ("Findings
    // (3)"), and nine tabs wrap, so a click aimed before then can land on the next tab.
    common::ui::settle(&mut h);
    h.get_by_label("CPU samples").click();
    h.step();
    assert_eq!(h.state().tab().analysis.tab, AnalysisTab::CpuSamples);
    h.state_mut().set_selection_range(Some((t0, t1)));
    common::ui::settle(&mut h);
    let (tid, running, first, last): (i64, i64, i64, i64) = c
        .query_row(
            "WITH iv AS (SELECT globalTid g, start s, next_start e FROM (SELECT globalTid, start, \
             isSchedIn, lead(start) OVER w AS next_start, lead(isSchedIn) OVER w AS next_in \
             FROM SCHED_EVENTS WINDOW w AS (PARTITION BY globalTid ORDER BY start, rowid)) \
             WHERE isSchedIn != 0 AND next_in = 0) \
             SELECT g, sum(max(0, min(e, ?2) - max(s, ?1))), \
             (SELECT min(start) FROM SCHED_EVENTS WHERE globalTid = g), \
             (SELECT max(start) FROM SCHED_EVENTS WHERE globalTid = g) \
             FROM iv WHERE g IN (SELECT globalTid FROM COMPOSITE_EVENTS) \
             GROUP BY g ORDER BY count(*) DESC LIMIT 1",
            [t0, t1],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let span = (t1.min(last) - t0.max(first)) as f64;
    let share = format!(
        "running {:.1} % ({})",
        100.0 * running as f64 / span,
        format_duration(running as f64)
    );
    let samples: i64 = c
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = ?1",
            [tid],
            |r| r.get(0),
        )
        .unwrap();
    // One checkbox line per thread: "name [tid] · N samples · running X % (time)".
    h.get_by_label_contains(&format!("{samples} samples · {share}"));
}
