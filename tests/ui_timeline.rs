//! The timeline window driven through `egui_kittest` exactly as a user drives it: open a fixture
//! (loaded on the background thread), zoom with the wheel and keys, pan by dragging, zoom on the
//! time axis, click a kernel and find its launching API call selected as partner, search, drop a
//! file and a bad file. No GPU adapter is needed: the tests run the app's frame loop and read its
//! state; nothing is rendered.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{DroppedPath, click_at, drag, harness, opened, wait_for_load};

use std::path::Path;
use std::sync::Arc;

use egui::{Event, Modifiers, MouseWheelUnit, Pos2, TouchPhase, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::trace::NO_INDEX;
use sightline::ui::SightlineApp;
use sightline::ui::timeline::{EventKind, EventRef, GroupId, RowKind};

fn drop_file(h: &mut Harness<'static, SightlineApp>, path: &Path) {
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedPath(path.to_path_buf())));
    wait_for_load(h);
}

#[test]
fn opening_a_fixture_loads_in_the_background_and_shows_the_whole_trace() {
    let h = opened("moe");
    let app = h.state();
    let trace = app.trace().expect("trace loaded");
    assert_eq!(trace.kernels.spans.len(), 355);
    // The first view fits where the GPU works (moe's start-up is most of its span).
    let view = &app.tab().timeline.view;
    let (gpu_first, gpu_last) = trace.gpu_span().expect("moe has GPU work");
    assert!(view.start_ns <= gpu_first as f64 && view.end_ns >= gpu_last as f64);
    assert!(view.span_ns() < (trace.last_ns - trace.first_ns) as f64);
    assert!(app.tab().timeline.last_events_drawn + app.tab().timeline.last_merged_drawn > 0);
    let model = &app.tab().document.as_ref().expect("document").model;
    assert_eq!(model.rows[0].title, trace.gpu_title(0));
    assert!(model.rows[0].title.starts_with("GPU 0 · "));
    // Every stream with work has a row, under its GPU.
    let stream_rows = model
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Stream { .. }))
        .count();
    assert_eq!(
        stream_rows,
        trace.streams.iter().filter(|s| s.op_count() > 0).count()
    );
    assert!(
        model
            .rows
            .iter()
            .any(|r| matches!(r.kind, RowKind::Memory { .. }))
    );
}

#[test]
fn wheel_zooms_at_the_pointer_and_keys_zoom_pan_and_reset() {
    let mut h = opened("moe");
    let area = h.state().tab().timeline.last_event_area;
    let pointer = Pos2::new(area.left() + area.width() * 0.75, area.top() + 30.0);
    let before = h.state().tab().timeline.view.clone();
    let t_under_pointer =
        before.start_ns + before.span_ns() * f64::from((pointer.x - area.left()) / area.width());
    h.event(Event::PointerMoved(pointer));
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Point,
        delta: Vec2::new(0.0, 200.0),
        phase: TouchPhase::Move,
        modifiers: Modifiers::NONE,
        source: egui::MouseWheelSource::Wheel,
    });
    h.step();
    let after = h.state().tab().timeline.view.clone();
    let expected_span = before.span_ns() * (-0.5f64).exp();
    assert!(
        (after.span_ns() - expected_span).abs() < 1.0,
        "{} vs {expected_span}",
        after.span_ns()
    );
    let t_after =
        after.start_ns + after.span_ns() * f64::from((pointer.x - area.left()) / area.width());
    assert!(
        (t_after - t_under_pointer).abs() < 1_000.0,
        "time under the pointer moved by {} ns",
        t_after - t_under_pointer
    );

    // W zooms in by 0.8 about the centre, S zooms back out.
    let span = h.state().tab().timeline.view.span_ns();
    h.key_press(egui::Key::W);
    h.step();
    assert!((h.state().tab().timeline.view.span_ns() - span * 0.8).abs() < 1.0);
    h.key_press(egui::Key::S);
    h.step();
    assert!((h.state().tab().timeline.view.span_ns() - span).abs() < 1.0);
    // D pans right by a tenth of the span, A back.
    let start = h.state().tab().timeline.view.start_ns;
    h.key_press(egui::Key::D);
    h.step();
    assert!((h.state().tab().timeline.view.start_ns - (start + span * 0.1)).abs() < 1.0);
    h.key_press(egui::Key::A);
    h.step();
    assert!((h.state().tab().timeline.view.start_ns - start).abs() < 1.0);
    // Home shows everything (the first view showed the GPUs' span).
    h.key_press(egui::Key::Home);
    h.step();
    let view = &h.state().tab().timeline.view;
    let (first, last) = {
        let t = h.state().trace().expect("trace");
        (t.first_ns as f64, t.last_ns as f64)
    };
    assert!(view.start_ns <= first && view.end_ns >= last);
    assert!(view.span_ns() > before.span_ns());
    // "?" opens the keys overlay.
    h.key_press(egui::Key::Questionmark);
    h.step();
    assert!(h.state().show_help);
    h.step();
    assert!(h.query_by_label("zoom at the pointer").is_some());
}

#[test]
fn dragging_pans_and_dragging_on_the_axis_zooms_to_that_span() {
    let mut h = opened("moe");
    h.state_mut().tab_mut().timeline.view.zoom_center(0.25);
    h.step();
    let area = h.state().tab().timeline.last_event_area;
    let before = h.state().tab().timeline.view.clone();
    let ns_per_px = before.span_ns() / f64::from(area.width());
    let from = Pos2::new(area.center().x, area.top() + 10.0);
    drag(&mut h, from, from - Vec2::new(200.0, 0.0));
    let after = h.state().tab().timeline.view.clone();
    assert!((after.span_ns() - before.span_ns()).abs() < 1.0);
    let moved_px = (after.start_ns - before.start_ns) / ns_per_px;
    assert!((moved_px - 200.0).abs() < 2.0, "panned {moved_px} px");

    let axis = h.state().tab().timeline.last_axis_area;
    let x0 = axis.left() + 100.0;
    let x1 = axis.left() + 400.0;
    let view = h.state().tab().timeline.view.clone();
    let t = |x: f32| view.start_ns + view.span_ns() * f64::from((x - area.left()) / area.width());
    drag(
        &mut h,
        Pos2::new(x0, axis.center().y),
        Pos2::new(x1, axis.center().y),
    );
    let zoomed = &h.state().tab().timeline.view;
    assert!((zoomed.start_ns - t(x0)).abs() < ns_per_px * 2.0);
    assert!((zoomed.end_ns - t(x1)).abs() < ns_per_px * 2.0);
}

#[test]
fn clicking_a_kernel_selects_it_and_its_launching_api_call_is_its_partner() {
    let mut h = opened("moe");
    let (kernel, call) = {
        let trace = h.state().trace().expect("trace");
        let k = (0..trace.kernels.spans.len())
            .find(|&k| trace.kernels.api_call[k] != NO_INDEX)
            .expect("a kernel with a launching call");
        (
            EventRef::new(EventKind::Kernel, k),
            EventRef {
                kind: EventKind::ApiCall,
                index: trace.kernels.api_call[k],
            },
        )
    };
    // Bring the kernel on screen, clear the selection, then click it like a user.
    h.state_mut().reveal(kernel);
    h.state_mut().tab_mut().timeline.selection = None;
    h.step();
    h.step();
    let rect = h
        .state()
        .event_screen_rect(kernel)
        .expect("kernel on screen");
    click_at(&mut h, rect.center());
    assert_eq!(h.state().selection(), Some(kernel));
    assert_eq!(h.state().selection_partners(), vec![call]);
    // The partner is drawn too (highlighted and joined by a line).
    assert!(h.state().event_screen_rect(call).is_some());
    // The details panel names the kernel and links to the call; following the link selects it.
    let call_name = h
        .state()
        .trace()
        .expect("trace")
        .str(h.state().trace().expect("trace").api_calls.spans.name[call.index as usize])
        .to_string();
    let link = format!("CUDA API · {call_name}");
    h.get_by_label_contains(&link).click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(call));
    assert!(h.state().selection_partners().contains(&kernel));

    // Double-click zooms to the event.
    h.step();
    let rect = h
        .state()
        .event_screen_rect(kernel)
        .expect("kernel on screen");
    h.state_mut().tab_mut().timeline.view.zoom_center(3.0);
    h.step();
    let rect2 = h.state().event_screen_rect(kernel).unwrap_or(rect);
    // Let more than the double-click delay pass since the last click, so the next two clicks
    // count as a double click rather than a triple.
    h.run_steps(50);
    click_at(&mut h, rect2.center());
    click_at(&mut h, rect2.center());
    let trace = h.state().trace().expect("trace");
    let view = &h.state().tab().timeline.view;
    let (s, e) = (kernel.start_ns(trace) as f64, kernel.end_ns(trace) as f64);
    assert!(view.start_ns <= s && view.end_ns >= e);
    assert!(
        view.span_ns() < (e - s) * 2.0,
        "span {} for a kernel of {}",
        view.span_ns(),
        e - s
    );
}

#[test]
fn clicking_a_gpu_title_collapses_its_streams() {
    let mut h = opened("p2p_2gpu");
    let rows_before = h.state().tab().timeline.last_rows.len();
    let title_area = h.state().tab().timeline.last_title_area;
    let gpu_row = h.state().tab().timeline.last_rows[0];
    click_at(
        &mut h,
        Pos2::new(title_area.left() + 20.0, gpu_row.top + gpu_row.height / 2.0),
    );
    assert!(
        h.state()
            .tab()
            .timeline
            .view
            .collapsed
            .contains(&GroupId::Gpu(0))
    );
    let rows_after = h.state().tab().timeline.last_rows.len();
    let streams_of_gpu0 = h
        .state()
        .trace()
        .expect("trace")
        .streams
        .iter()
        .filter(|s| s.key.device == 0 && s.op_count() > 0)
        .count();
    // Its stream rows go, and the exposed-communication row of its peer-to-peer copies.
    let exposed_rows = h
        .state()
        .tab()
        .document
        .as_ref()
        .expect("document")
        .model
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::ExposedComm { device: 0 }))
        .count();
    assert_eq!(exposed_rows, 1, "p2p_2gpu's GPU 0 communicates");
    assert_eq!(rows_before - rows_after, streams_of_gpu0 + exposed_rows);
}

#[test]
fn search_counts_matches_and_next_previous_jump_to_them() {
    let mut h = opened("moe");
    let needle = "memcpy";
    h.state_mut().tab_mut().search.query = needle.to_string();
    h.step();
    let expected = {
        let trace = h.state().trace().expect("trace");
        let hit = |id: u32| trace.str(id).to_lowercase().contains(needle);
        let kernels = (0..trace.kernels.spans.len())
            .filter(|&i| hit(trace.kernels.spans.name[i]) || hit(trace.kernels.short_name[i]))
            .count();
        kernels
            + [
                &trace.memcpys.spans,
                &trace.memsets.spans,
                &trace.api_calls.spans,
                &trace.nvtx.spans,
                &trace.osrt.spans,
            ]
            .iter()
            .map(|s| s.name.iter().filter(|&&n| hit(n)).count())
            .sum::<usize>()
    };
    assert!(expected > 0);
    assert_eq!(h.state().tab().search.matches.len(), expected);
    assert!(h.query_by_label(&format!("{expected} matches")).is_some());

    h.get_by_label("Next").click();
    h.step();
    h.step();
    let first = h.state().tab().search.matches[0];
    assert_eq!(h.state().selection(), Some(first));
    {
        let trace = h.state().trace().expect("trace");
        let view = &h.state().tab().timeline.view;
        assert!(view.start_ns <= first.start_ns(trace) as f64);
        assert!(view.end_ns >= first.end_ns(trace) as f64);
    }
    assert!(
        h.query_by_label(&format!("1 / {expected} matches"))
            .is_some()
    );
    h.get_by_label("Prev").click();
    h.step();
    assert_eq!(
        h.state().selection(),
        h.state().tab().search.matches.last().copied()
    );

    // Regex mode.
    h.state_mut().tab_mut().search.use_regex = true;
    h.state_mut().tab_mut().search.query = "^cudaLaunchKernel".to_string();
    h.step();
    let launches = {
        let trace = h.state().trace().expect("trace");
        trace
            .api_calls
            .spans
            .name
            .iter()
            .filter(|&&n| trace.str(n).starts_with("cudaLaunchKernel"))
            .count()
    };
    assert!(launches > 0);
    assert_eq!(h.state().tab().search.matches.len(), launches);
    h.state_mut().tab_mut().search.query = "([unclosed".to_string();
    h.step();
    assert!(h.state().tab().search.error.is_some());
    assert!(h.state().tab().search.matches.is_empty());
}

#[test]
fn dropping_a_file_opens_a_tab_and_a_bad_file_shows_its_error_in_its_tab() {
    let mut h = opened("moe");
    assert_eq!(h.state().trace().expect("trace").devices(), vec![0]);
    drop_file(&mut h, &common::fixture("p2p_2gpu"));
    assert!(h.state().tab().error.is_none());
    let trace = h.state().trace().expect("trace");
    assert!(trace.path.ends_with("p2p_2gpu.sqlite"));
    assert_eq!(trace.devices(), vec![0, 1]);
    // The first trace stays open in its own tab.
    assert_eq!(h.state().tabs.len(), 2);
    assert!(
        h.state().tabs[0]
            .trace()
            .expect("first tab keeps its trace")
            .path
            .ends_with("moe.sqlite")
    );

    let dir = common::scratch_dir("ui-drop");
    let bad = dir.join("notes.sqlite");
    std::fs::write(&bad, "not a database\n".repeat(50)).expect("write");
    drop_file(&mut h, &bad);
    let error = h
        .state()
        .tab()
        .error
        .clone()
        .expect("an error for the bad file");
    assert!(
        error.contains("notes.sqlite") && error.contains("not a trace Sightline reads"),
        "{error}"
    );
    assert!(
        h.query_by_label_contains("not a trace Sightline reads")
            .is_some()
    );
    // The error is that tab's only: the other tabs keep their traces and stay usable.
    assert_eq!(h.state().tabs.len(), 3);
    assert!(
        h.state().tabs[..2]
            .iter()
            .all(|t| t.error.is_none() && t.document.is_some())
    );
    h.get_by_label("p2p_2gpu.sqlite").click();
    h.step();
    h.step();
    assert_eq!(h.state().active, 1);
    assert!(
        h.query_by_label_contains("not a trace Sightline reads")
            .is_none()
    );
    let span = h.state().tab().timeline.view.span_ns();
    h.key_press(egui::Key::W);
    h.step();
    assert!(h.state().tab().timeline.view.span_ns() < span);

    // A folder opens as a run of the traces in it (tests/ui_ranks.rs); one with none says so. A
    // .nsys-rep without nsys gives its own message.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    drop_file(&mut h, &empty);
    let error = h.state().tab().error.clone().unwrap_or_default();
    assert!(error.contains("no trace in"), "{error}");
    let rep = dir.join("run.nsys-rep");
    std::fs::write(&rep, b"NSYS-REP not sqlite").expect("write");
    // With no nsys on PATH the message says what command to run.
    if sightline::ui::loader::find_on_path("nsys").is_none() {
        drop_file(&mut h, &rep);
        let error = h.state().tab().error.clone().unwrap_or_default();
        assert!(error.contains("nsys export --type=sqlite"), "{error}");
    } else {
        eprintln!("nsys is on PATH: skipping the no-nsys message check");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hovering_a_file_shows_the_drop_hint_without_opening_it() {
    let mut h = opened("moe");
    h.input_mut().hovered_files.push(egui::HoveredFile {
        path: Some(common::fixture("p2p_2gpu")),
        mime: String::new(),
    });
    h.step();
    assert!(!h.state().is_loading());
    assert!(
        h.state()
            .trace()
            .expect("trace")
            .path
            .ends_with("moe.sqlite")
    );
}

#[test]
fn a_second_open_while_loading_opens_its_own_tab() {
    let mut h = harness(None);
    h.state_mut().open(common::fixture("stress"), None);
    h.state_mut().open(common::fixture("moe"), None);
    wait_for_load(&mut h);
    assert!(
        h.state()
            .trace()
            .expect("trace")
            .path
            .ends_with("moe.sqlite")
    );
    assert!(h.state().tab().error.is_none());
    assert_eq!(h.state().tabs.len(), 2);
}
