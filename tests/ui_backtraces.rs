//! Backtraces of CUDA and OS-runtime calls in the window, driven through `egui_kittest` on a real
//! capture (cpu_side, recorded with `--cudabacktrace=all` and OS-runtime tracing): clicking a call
//! with a backtrace lists its frames in the details panel, innermost first, as the file's
//! callchain tables hold them; hovering one lists the first frames in its tooltip; a call without
//! one shows no call stack. The frames are read here with SQL over `CUDA_CALLCHAINS` /
//! `OSRT_CALLCHAINS` joined to `StringIds`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{click_at, opened};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::{Connection, OpenFlags};
use sightline::ui::SightlineApp;
use sightline::ui::timeline::{EventKind, EventRef};

fn conn() -> Connection {
    Connection::open_with_flags(
        common::fixture("cpu_side"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open")
}

/// (function, module file name) of each frame of callchain `id` of `table`, by stackDepth.
fn sql_frames(c: &Connection, table: &str, id: i64) -> Vec<(String, String)> {
    c.prepare(&format!(
        "SELECT s.value, m.value FROM {table} c JOIN StringIds s ON s.id = c.symbol \
         JOIN StringIds m ON m.id = c.module WHERE c.id = ?1 ORDER BY c.stackDepth"
    ))
    .unwrap()
    .query_map([id], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })
    .unwrap()
    .map(|r| {
        let (f, m) = r.unwrap();
        let m = m.rsplit('/').next().unwrap_or(&m).to_string();
        (f, m)
    })
    .collect()
}

/// The call of `kind` that starts at `start` on the thread `global_tid` (API calls) or at
/// `start` with name `name` (OS runtime).
fn find_call(
    h: &Harness<'static, SightlineApp>,
    kind: EventKind,
    start: i64,
    name: &str,
) -> EventRef {
    let trace = h.state().trace().unwrap();
    let spans = match kind {
        EventKind::ApiCall => &trace.api_calls.spans,
        _ => &trace.osrt.spans,
    };
    let i = (0..spans.len())
        .find(|&i| spans.start_ns[i] == start && trace.str(spans.name[i]) == name)
        .expect("call in the trace");
    EventRef::new(kind, i)
}

/// Brings `event` on screen (zoom, expand, scroll) with nothing selected; returns where it is.
fn reveal(h: &mut Harness<'static, SightlineApp>, event: EventRef) -> egui::Rect {
    {
        let app = h.state_mut().tab_mut();
        let d = app.document.as_ref().unwrap();
        app.timeline.reveal(&d.trace, &d.model, event);
        app.timeline.selection = None;
    }
    h.step();
    h.step();
    let app = h.state();
    let d = app.tab().document.as_ref().unwrap();
    app.tab()
        .timeline
        .event_screen_rect(&d.trace, &d.model, event)
        .expect("call on screen")
}

/// Reveals `event` and clicks it as a person would, then takes the pointer away so that only
/// the details panel (no tooltip) shows its facts.
fn click_event(h: &mut Harness<'static, SightlineApp>, event: EventRef) {
    let rect = reveal(h, event);
    click_and_leave(h, event, rect.center());
}

fn click_and_leave(h: &mut Harness<'static, SightlineApp>, event: EventRef, pos: egui::Pos2) {
    click_at(h, pos);
    assert_eq!(h.state().tab().timeline.selection, Some(event));
    h.event(egui::Event::PointerGone);
    h.step();
    h.step();
}

/// Reveals `event`, zooms to `[from, to]` and clicks its row at time `t` (for a call with a
/// shorter call nested in it, which a click on the middle would pick).
fn click_event_at(
    h: &mut Harness<'static, SightlineApp>,
    event: EventRef,
    (from, to): (i64, i64),
    t: i64,
) {
    reveal(h, event);
    {
        let view = &mut h.state_mut().tab_mut().timeline.view;
        view.start_ns = from as f64;
        view.end_ns = to as f64;
    }
    h.step();
    h.step();
    let pos = {
        let app = h.state();
        let d = app.tab().document.as_ref().unwrap();
        let rect = app
            .tab()
            .timeline
            .event_screen_rect(&d.trace, &d.model, event)
            .expect("call on screen");
        let area = app.tab().timeline.last_event_area;
        let map = sightline::ui::timeline::TimeToX::new(
            &app.tab().timeline.view,
            area.left(),
            area.width(),
        );
        egui::Pos2::new(map.x(t), rect.center().y)
    };
    click_and_leave(h, event, pos);
}

/// The y of each frame's function label, matched in order (each below the one before), so the
/// frames are listed innermost first as `frames` orders them.
fn frames_listed_in_order(h: &Harness<'static, SightlineApp>, frames: &[(String, String)]) {
    let mut last_y = f32::NEG_INFINITY;
    for (k, (function, module)) in frames.iter().enumerate() {
        let y = h
            .query_all_by_label(function)
            .map(|n| n.rect().center().y)
            .filter(|&y| y > last_y)
            .fold(f32::INFINITY, f32::min);
        assert!(
            y.is_finite(),
            "frame {k} ({function}) listed below frame {}",
            k.max(1) - 1
        );
        last_y = y;
        assert!(
            h.query_all_by_label(module).next().is_some(),
            "module {module} of frame {k} listed"
        );
    }
}

#[test]
fn a_selected_cuda_call_lists_its_backtrace_innermost_first() {
    let c = conn();
    // The first kernel launch with a backtrace; its stack is CUDA_CALLCHAINS.id = callchainId + 1
    // (callchainId counts from 0, the callchain ids from 1: the stack at that id is the one whose
    // innermost named frame is this call's own API function).
    let (start, name, callchain): (i64, String, i64) = c
        .query_row(
            "SELECT r.start, s.value, r.callchainId FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
             JOIN StringIds s ON s.id = r.nameId \
             WHERE r.callchainId IS NOT NULL AND s.value LIKE 'cudaLaunchKernel%' \
             ORDER BY r.start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let frames = sql_frames(&c, "CUDA_CALLCHAINS", callchain + 1);
    assert!(frames.len() > 3);
    assert!(
        frames.iter().any(|(f, _)| name.starts_with(f.as_str())),
        "the call's own function is in its stack: {frames:?}"
    );

    // nsys 2023.4 records the runtime's versioned entry point (cudaLaunchKernel_v7000) as a
    // shorter call nested in this one: click between the two starts.
    let nested: i64 = c
        .query_row(
            "SELECT min(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start > ?1 AND globalTid = \
             (SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start = ?1)",
            [start],
            |r| r.get(0),
        )
        .unwrap();
    let gap = nested - start;
    assert!(gap > 0);

    let mut h = opened("cpu_side");
    let event = find_call(&h, EventKind::ApiCall, start, &name);
    let heading = format!("Call stack ({} frames, innermost first)", frames.len());
    assert!(h.query_by_label(&heading).is_none());
    click_event_at(&mut h, event, (start - gap, nested + gap), start + gap / 2);
    h.get_by_label(&heading);
    frames_listed_in_order(&h, &frames);
}

#[test]
fn a_selected_os_runtime_call_lists_its_backtrace() {
    let c = conn();
    // The deepest OS-runtime backtrace (OSRT_API.callchainId is OSRT_CALLCHAINS.id; 0 is none).
    let (start, name, callchain): (i64, String, i64) = c
        .query_row(
            "SELECT o.start, s.value, o.callchainId FROM OSRT_API o \
             JOIN StringIds s ON s.id = o.nameId \
             JOIN (SELECT id, count(*) AS n FROM OSRT_CALLCHAINS GROUP BY id) k \
             ON k.id = o.callchainId ORDER BY k.n DESC, o.start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let frames = sql_frames(&c, "OSRT_CALLCHAINS", callchain);
    assert!(frames.len() > 12, "{}", frames.len());

    let mut h = opened("cpu_side");
    let event = find_call(&h, EventKind::Osrt, start, &name);

    // Hovered (nothing selected): the tooltip lists the first 12 frames and how many more.
    let rect = reveal(&mut h, event);
    let more = format!("… {} more frames", frames.len() - 12);
    assert!(h.query_by_label(&more).is_none());
    h.ctx.all_styles_mut(|s| s.interaction.tooltip_delay = 0.0);
    h.hover_at(rect.center());
    h.step();
    h.step();
    h.get_by_label(&more);
    frames_listed_in_order(&h, &frames[..12]);

    click_event(&mut h, event);
    h.get_by_label(&format!(
        "Call stack ({} frames, innermost first)",
        frames.len()
    ));
    frames_listed_in_order(&h, &frames);
}

#[test]
fn a_call_without_a_backtrace_shows_no_call_stack() {
    let c = conn();
    let (start, name): (i64, String) = c
        .query_row(
            "SELECT r.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
             JOIN StringIds s ON s.id = r.nameId WHERE r.callchainId IS NULL \
             ORDER BY r.start LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut h = opened("cpu_side");
    let event = find_call(&h, EventKind::ApiCall, start, &name);
    click_event(&mut h, event);
    // The details are up (its correlation id is listed), and no call stack heading is.
    h.get_by_label("Correlation ID");
    assert!(
        h.query_all_by_label_contains("Call stack (")
            .next()
            .is_none(),
        "no call stack for a call without one"
    );
}

/// A click on the versioned entry point nsys 2023.4 records inside a launch
/// (`cudaLaunchKernel_v7000`, same correlationId) selects the launch the program made: the call
/// with the backtrace and the link to its kernel.
#[test]
fn a_click_on_the_nested_versioned_entry_selects_the_programs_call() {
    let c = conn();
    let (start, end, name, correlation, inner_start, inner_end): (i64, i64, String, i64, i64, i64) =
        c.query_row(
            "SELECT o.start, o.end, s.value, o.correlationId, i.start, i.end \
             FROM CUPTI_ACTIVITY_KIND_RUNTIME o JOIN CUPTI_ACTIVITY_KIND_RUNTIME i \
             ON i.correlationId = o.correlationId AND i.globalTid = o.globalTid \
             AND i.start > o.start AND i.end <= o.end \
             JOIN StringIds s ON s.id = o.nameId JOIN StringIds si ON si.id = i.nameId \
             WHERE o.callchainId IS NOT NULL AND s.value = 'cudaLaunchKernel' \
             AND si.value LIKE '%\\_v%' ESCAPE '\\' \
             ORDER BY o.start LIMIT 1",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
        .unwrap();
    let mut h = opened("cpu_side");
    let outer = find_call(&h, EventKind::ApiCall, start, &name);
    {
        let app = h.state();
        let trace = &app.tab().document.as_ref().unwrap().trace;
        assert_eq!(
            i64::from(trace.api_calls.correlation_id[outer.index as usize]),
            correlation
        );
    }
    // In the middle of the nested call, where a click used to pick it (the shorter one).
    click_event_at(
        &mut h,
        outer,
        (start - (end - start) / 4, end + (end - start) / 4),
        (inner_start + inner_end) / 2,
    );
    // Its kernel is the partner the details link to.
    let app = h.state();
    let d = app.tab().document.as_ref().unwrap();
    let partners = d.model.partners(&d.trace, outer);
    assert!(
        partners.iter().any(|p| p.kind == EventKind::Kernel),
        "{name} launched a kernel: {partners:?}"
    );
}

/// A search for `cudaLaunchKernel` steps through the launches the program made, not also through
/// the versioned entries nested in them (`cudaLaunchKernel_v7000`, same thread and
/// correlationId), whose record has neither the backtrace nor the kernel link: found in the
/// new-user pass, where every other Enter landed on one.
#[test]
fn search_steps_through_the_programs_calls_not_their_nested_versioned_entries() {
    let c = conn();
    let count =
        |sql: &str| -> usize { c.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap() as usize };
    let named = "SELECT r.* FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s \
                 ON s.id = r.nameId WHERE s.value LIKE '%cudaLaunchKernel%'";
    let all = count(&format!("SELECT count(*) FROM ({named})"));
    let nested = count(&format!(
        "SELECT count(*) FROM ({named}) i WHERE EXISTS (SELECT 1 FROM ({named}) o \
         WHERE o.correlationId = i.correlationId AND o.globalTid = i.globalTid \
         AND o.start <= i.start AND i.end <= o.end AND o.end - o.start > i.end - i.start)"
    ));
    assert!(nested > 0 && nested < all, "{nested} of {all}");

    let mut h = opened("cpu_side");
    h.state_mut().tab_mut().search.query = "cudaLaunchKernel".to_string();
    h.step();
    h.step();
    let app = h.state();
    let tab = app.tab();
    let trace = tab.trace().unwrap();
    let matches = &tab.search.matches;
    assert_eq!(matches.len(), all - nested);
    for e in matches {
        assert_eq!(e.kind, EventKind::ApiCall);
        let i = e.index as usize;
        // Each is the call the program made, with a kernel linked to it.
        assert_eq!(e.name(trace), "cudaLaunchKernel", "{e:?}");
        assert!(
            !tab.document
                .as_ref()
                .unwrap()
                .model
                .partners(trace, *e)
                .is_empty(),
            "call {i} has its kernel"
        );
    }
}
