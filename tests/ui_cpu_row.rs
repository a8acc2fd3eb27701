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
use sightline::ui::timeline::{RowKind, TimeToX, format_duration};

fn conn() -> Connection {
    Connection::open_with_flags(common::fixture("cpu_side"), OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open")
}

#[test]
fn every_scheduled_or_sampled_thread_has_a_cpu_row() {
    let h = opened("cpu_side");
    let app = h.state();
    let trace = app.trace().expect("trace");
    let model = &app.document.as_ref().expect("document").model;
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
        let app = h.state_mut();
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
        let model = &app.document.as_ref().expect("document").model;
        let row = model.row_index(row_kind).expect("row");
        let p = app
            .timeline
            .last_rows
            .iter()
            .find(|p| p.row == row)
            .copied()
            .expect("CPU row shown");
        let area = app.timeline.last_event_area;
        let map = TimeToX::new(&app.timeline.view, area.left(), area.width());
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
