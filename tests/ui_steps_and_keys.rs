//! Issue 25, items 2, 3, 4, 6, 7 and 8, driven with `egui_kittest` on the bundled exports as a
//! person would: a double-click on an NVTX range zooms to it and selects its span; a Shift+drag
//! snaps its edges to the edges of the event under the pointer; the right-click menu selects,
//! zooms, copies, shows the launch or the kernels and searches; the gap mark set from the Gaps
//! tab is drawn at its gap and Esc clears it; the details panel is a one-line hint while nothing
//! is selected (leftover c) and opens showing a kernel's whole record and keeps the height it is
//! dragged to; a search keeps the zoom (or centres the match with room around it); Ctrl+F and
//! `/` focus the search box; Z / Enter zoom to the selection, Backspace / Alt+Left go back
//! through the views, Ctrl+O opens, all listed by `?` and in the guide's keys table (docs/window.md); exports start in the
//! last export folder or the home folder, and the built-in browser makes new folders.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{
    app_with_size, click_at, double_click, drag_with, pause, press, right_click, settle_all,
    slow_drag,
};

use std::path::PathBuf;

use egui::{Event, Key, Modifiers, Pos2, Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::TimeRange;
use sightline::timeline::overlays::{events_near, overlay_shapes};
use sightline::trace::NO_INDEX;
use sightline::ui::SightlineApp;
use sightline::ui::app::HELP_KEYS;
use sightline::ui::details_dock;
use sightline::ui::file_dialog::{self, FileDialogs, FilePurpose, NO_SYSTEM_DIALOG};
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::panels::details;
use sightline::ui::panels::search::search_box_id;
use sightline::ui::timeline::reveal::MATCH_CONTEXT_LENGTHS;
use sightline::ui::timeline::{EventKind, EventRef, TimeToX};

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

/// Shows `[a, b)` and lets a frame lay it out.
fn show_span(h: &mut App, a: f64, b: f64) {
    h.state_mut().tab_mut().timeline.view.zoom_to(a, b);
    h.step();
    h.step();
}

fn x_of(h: &App, t_ns: i64) -> f32 {
    let tl = &h.state().tab().timeline;
    TimeToX::new(
        &tl.view,
        tl.last_event_area.left(),
        tl.last_event_area.width(),
    )
    .x(t_ns)
}

fn span_of(h: &App, e: EventRef) -> (i64, i64) {
    let trace = h.state().trace().unwrap();
    (e.start_ns(trace), e.end_ns(trace))
}

/// `e` on screen three times as wide as the view it fills, nothing selected; its rectangle.
fn on_screen(h: &mut App, e: EventRef) -> Rect {
    h.state_mut().reveal(e);
    h.state_mut().tab_mut().timeline.view.zoom_center(3.0);
    h.state_mut().tab_mut().timeline.selection = None;
    h.step();
    h.step();
    h.state().event_screen_rect(e).expect("event on screen")
}

fn view(h: &App) -> (f64, f64) {
    let v = &h.state().tab().timeline.view;
    (v.start_ns, v.end_ns)
}

fn assert_zoomed_to(h: &App, (s, e): (i64, i64)) {
    let (a, b) = view(h);
    assert!(a <= s as f64 && b >= e as f64, "view {a}–{b} holds {s}–{e}");
    assert!(
        b - a < 2.0 * (e - s).max(20) as f64,
        "view {a}–{b} close on {s}–{e}"
    );
}

/// A kernel with its launching CUDA call.
fn kernel_and_call(h: &App) -> (EventRef, EventRef) {
    let trace = h.state().trace().unwrap();
    let k = (0..trace.kernels.spans.len())
        .find(|&k| trace.kernels.api_call[k] != NO_INDEX)
        .expect("a kernel with a launching call");
    (
        EventRef::new(EventKind::Kernel, k),
        EventRef::new(EventKind::ApiCall, trace.kernels.api_call[k] as usize),
    )
}

// ---------------------------------------------------------------- item 2: selecting a step

#[test]
fn double_clicking_an_nvtx_range_zooms_to_it_and_selects_its_span() {
    let mut h = open("transformer");
    let range = {
        let trace = h.state().trace().unwrap();
        let n = &trace.nvtx.spans;
        let i = (0..n.len())
            .find(|&i| trace.str(n.name[i]) == "layer_1_forward")
            .expect("transformer's layer_1_forward, by SQL in the fixture");
        EventRef::new(EventKind::Nvtx, i)
    };
    let rect = on_screen(&mut h, range);
    assert_eq!(h.state().selection_range(), None);
    double_click(&mut h, rect.center());
    let span = span_of(&h, range);
    assert_eq!(h.state().selection(), Some(range));
    assert_eq!(h.state().selection_range(), Some(span));
    assert_zoomed_to(&h, span);
    // The statistics follow the span.
    settle_all(&mut h);
    assert_eq!(h.state().tab().panel_range, TimeRange::new(span.0, span.1));
}

/// A kernel alone on its row around its own length on either side, shown five times as wide
/// as it is: (kernel, its rectangle).
fn lone_kernel(h: &mut App) -> (EventRef, Rect) {
    let n = h.state().trace().unwrap().kernels.spans.len();
    for k in (0..n).step_by((n / 60).max(1)) {
        let e = EventRef::new(EventKind::Kernel, k);
        let (s, t) = span_of(h, e);
        if t - s < 2_000 {
            continue;
        }
        let d = (t - s) as f64;
        h.state_mut().reveal(e);
        show_span(h, s as f64 - 2.0 * d, t as f64 + 2.0 * d);
        let Some(rect) = h.state().event_screen_rect(e) else {
            continue;
        };
        let app = h.state();
        let tab = app.tab();
        let (trace, model) = (tab.trace().unwrap(), &tab.document.as_ref().unwrap().model);
        let tl = &tab.timeline;
        let near = |x: f32| {
            events_near(
                trace,
                model,
                &tl.view,
                &tl.last_rows,
                tl.last_event_area,
                Pos2::new(x, rect.center().y),
                12.0,
            )
        };
        if near(rect.left()) == vec![(s, t)] && near(rect.right()) == vec![(s, t)] {
            return (e, rect);
        }
    }
    panic!("no kernel of moe stands alone on its row");
}

#[test]
fn shift_drag_snaps_the_selection_to_the_edges_of_the_event_under_the_pointer() {
    let mut h = open("moe");
    let (kernel, rect) = lone_kernel(&mut h);
    let span = span_of(&h, kernel);
    let y = rect.center().y;
    // Four points inside each edge: the edges are taken.
    drag_with(
        &mut h,
        Pos2::new(rect.left() + 4.0, y),
        Pos2::new(rect.right() - 4.0, y),
        Modifiers::SHIFT,
    );
    assert_eq!(h.state().selection_range(), Some(span));
    // From the right to the left: the same.
    h.state_mut().set_selection_range(None);
    drag_with(
        &mut h,
        Pos2::new(rect.right() - 3.0, y),
        Pos2::new(rect.left() + 3.0, y),
        Modifiers::SHIFT,
    );
    assert_eq!(h.state().selection_range(), Some(span));
    // Thirty points inside: far from any edge, the pointer's own times.
    drag_with(
        &mut h,
        Pos2::new(rect.left() + 30.0, y),
        Pos2::new(rect.right() - 30.0, y),
        Modifiers::SHIFT,
    );
    let (a, b) = h.state().selection_range().expect("a range");
    assert!(
        a > span.0 && b < span.1,
        "{a}–{b} inside {span:?}, not snapped"
    );
}

#[test]
fn the_right_click_menu_selects_zooms_copies_shows_the_launch_and_searches() {
    let mut h = open("moe");
    let (kernel, call) = kernel_and_call(&h);
    let (name, span) = {
        let trace = h.state().trace().unwrap();
        (kernel.name(trace).to_string(), span_of(&h, kernel))
    };

    let rect = on_screen(&mut h, kernel);
    right_click(&mut h, rect.center());
    h.get_by_label("Zoom to").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(kernel));
    assert_zoomed_to(&h, span);

    let rect = on_screen(&mut h, kernel);
    right_click(&mut h, rect.center());
    h.get_by_label("Select span").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection_range(), Some(span));
    assert!(h.query_by_label("Select span").is_none(), "the menu closes");

    right_click(&mut h, rect.center());
    assert!(
        h.query_by_label("Show kernels").is_none(),
        "a kernel has a launch"
    );
    h.get_by_label("Show launch").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(call));
    let call_span = span_of(&h, call);
    let (a, b) = view(&h);
    assert!(
        a <= call_span.0 as f64 && b >= span.1 as f64,
        "call and kernel in view"
    );

    let rect = h
        .state()
        .event_screen_rect(call)
        .expect("the call on screen");
    right_click(&mut h, rect.center());
    h.get_by_label("Show kernels").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(kernel));

    let rect = on_screen(&mut h, kernel);
    right_click(&mut h, rect.center());
    h.get_by_label("Copy name").click();
    h.step();
    let copied = h
        .output()
        .platform_output
        .commands
        .iter()
        .any(|c| matches!(c, egui::OutputCommand::CopyText(t) if *t == name));
    assert!(copied, "{name} copied");
    h.step();

    right_click(&mut h, rect.center());
    h.get_by_label("Search this name").click();
    h.step();
    h.step();
    h.step();
    let search = &h.state().tab().search;
    assert_eq!(search.query, name);
    assert!(search.matches.contains(&kernel));
    assert!(
        h.ctx.memory(|m| m.has_focus(search_box_id())),
        "the box has the keyboard"
    );
}

// ---------------------------------------------------------------- item 3: the gap mark

#[test]
fn the_gap_mark_is_drawn_at_its_gap_and_esc_clears_it() {
    let mut h = open("moe");
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Gaps;
    settle_all(&mut h);
    h.get_by_label_contains("#1 GPU").click();
    h.step();
    h.step();
    settle_all(&mut h);
    let link = h
        .state()
        .overlays()
        .gap_link
        .expect("the gap's mark is set");
    assert!(h.state().tab().timeline.last_overlays_drawn.gap_link);
    // Its label sits at the gap's end (6 points right of it), as drawn headless from the
    // window's own layout.
    let label_x = |h: &App| {
        let app = h.state();
        let tab = app.tab();
        let (trace, model) = (tab.trace().unwrap(), &tab.document.as_ref().unwrap().model);
        let tl = &tab.timeline;
        let palette = sightline::ui::theme::Palette::dark();
        let shapes = overlay_shapes(
            trace,
            model,
            &tl.view,
            &tl.last_rows,
            tl.last_event_area,
            &palette,
            &tl.overlay_input(),
        );
        shapes
            .labels
            .iter()
            .find(|l| l.text.starts_with(link.cause.label()))
            .map(|l| l.anchor.x)
    };
    let at = label_x(&h).expect("the mark's label");
    assert!((at - (x_of(&h, link.end_ns) + 6.0)).abs() < 0.5);
    // 40 ms later the gap is out of view: no mark at the left edge.
    let end = link.end_ns as f64;
    show_span(&mut h, end + 40e6, end + 45e6);
    assert!(!h.state().tab().timeline.last_overlays_drawn.gap_link);
    assert_eq!(label_x(&h), None);
    // Back at the gap, then Esc.
    show_span(&mut h, end - 2e6, end + 1e6);
    assert!(h.state().tab().timeline.last_overlays_drawn.gap_link);
    let at = label_x(&h).expect("the mark's label");
    assert!((at - (x_of(&h, link.end_ns) + 6.0)).abs() < 0.5);
    press(&mut h, Modifiers::NONE, Key::Escape);
    assert_eq!(h.state().overlays().gap_link, None);
    assert!(!h.state().tab().timeline.last_overlays_drawn.gap_link);
}

/// Esc clears the selected event as well as the marks: a click on an event selects it (details
/// and launch link shown), Esc deselects it (the details strip's hint back), as a click on empty
/// timeline does.
#[test]
fn esc_deselects_the_clicked_event() {
    let mut h = open("moe");
    let (kernel, _) = kernel_and_call(&h);
    let rect = on_screen(&mut h, kernel);
    common::ui::click_at(&mut h, rect.center());
    h.step();
    assert_eq!(h.state().tab().timeline.selection, Some(kernel));
    let launched_by = |h: &App| h.query_all_by_label("Launched by").count();
    assert!(launched_by(&h) > 0, "the details show the kernel");
    press(&mut h, Modifiers::NONE, Key::Escape);
    h.step();
    h.step();
    assert_eq!(h.state().tab().timeline.selection, None);
    assert_eq!(launched_by(&h), 0, "no details after Esc");
}

/// The colour legend fits the top bar: at 1600 px with a search's match count showing, the full
/// names do not (a new user saw "Communi…" cut at the edge), so nsys's short names show, every
/// one inside the window, each with its full name on hover; a wide window shows the full names.
#[test]
fn the_legend_fits_the_top_bar_with_short_names_when_narrow() {
    let mut h = open("moe");
    h.state_mut().tab_mut().search.query = "gemm_tiled".into();
    press(&mut h, Modifiers::COMMAND, Key::F);
    h.step();
    press(&mut h, Modifiers::NONE, Key::Enter);
    h.step();
    h.step();
    for short in [
        "HtoD",
        "DtoH",
        "DtoD",
        "PtoP",
        "memset",
        "UM migration",
        "Comm",
    ] {
        let right = h.get_by_label(short).rect().right();
        assert!(
            right <= WINDOW.x,
            "{short} ends at {right}, inside {}",
            WINDOW.x
        );
    }
    assert!(h.query_by_label("Communication").is_none());

    let mut wide = app_with_size(vec![common::fixture("moe")], Vec2::new(2600.0, 1000.0));
    wide.step();
    for full in [
        "Host to Device",
        "Device to Host",
        "Peer to Peer",
        "Communication",
    ] {
        assert!(wide.query_by_label(full).is_some(), "{full} at 2600 px");
    }
}

// ---------------------------------------------------------------- item 4: details height

#[test]
fn the_details_panel_shows_a_whole_record_and_keeps_the_height_it_is_dragged_to() {
    let mut h = open("moe");
    let (kernel, _) = kernel_and_call(&h);
    let panel_top = |h: &App| h.state().tab().timeline.last_event_area.bottom();
    // Nothing selected: a one-line strip with the hint (leftover c: it was a big empty block),
    // its text inside it.
    let hint_top = panel_top(&h);
    let strip = WINDOW.y - hint_top;
    assert!(
        (16.0..48.0).contains(&strip),
        "the hint's strip is {strip} tall"
    );
    let hint = h.get_by_label(details_dock::HINT).rect();
    assert!(
        hint.top() >= hint_top && hint.bottom() <= WINDOW.y,
        "{hint:?}"
    );
    let rect = on_screen(&mut h, kernel);
    click_at(&mut h, rect.center());
    h.step();
    assert_eq!(h.state().selection(), Some(kernel));
    let opened_at = panel_top(&h);
    assert!(opened_at < hint_top - 200.0, "{hint_top} → {opened_at}");
    let facts = {
        let app = h.state();
        let tab = app.tab();
        let d = tab.document.as_ref().unwrap();
        details::describe(&d.trace, &d.model, kernel)
    };
    assert!(facts.len() >= 15, "{} facts", facts.len());
    // Every line of the record is inside the panel, the last one included.
    for (key, _) in &facts {
        let shown = h
            .get_all_by_label(key)
            .any(|n| n.rect().top() >= panel_top(&h) && n.rect().bottom() <= WINDOW.y);
        let rects: Vec<Rect> = h.get_all_by_label(key).map(|n| n.rect()).collect();
        assert!(
            shown,
            "{key} inside the panel from {}: {rects:?}; {facts:?}",
            panel_top(&h)
        );
    }
    // Nothing selected again: the strip; selected again: the record at its height.
    let select = |h: &mut App, e: Option<EventRef>| {
        h.state_mut().tab_mut().timeline.selection = e;
        h.step();
        h.step();
    };
    select(&mut h, None);
    assert_eq!(panel_top(&h), hint_top);
    select(&mut h, Some(kernel));
    assert_eq!(panel_top(&h), opened_at);
    // Drag its splitter 120 points up: it stays there, also after the selection is cleared
    // and made again.
    let x = h.state().tab().timeline.last_event_area.center().x;
    let top = panel_top(&h);
    slow_drag(&mut h, Pos2::new(x, top + 1.0), Pos2::new(x, top - 119.0));
    let dragged = panel_top(&h);
    assert!((dragged - (top - 120.0)).abs() < 8.0, "{top} → {dragged}");
    select(&mut h, None);
    assert_eq!(panel_top(&h), hint_top);
    select(&mut h, Some(kernel));
    assert_eq!(panel_top(&h), dragged);
}

// ---------------------------------------------------------------- item 6: search

#[test]
fn search_keeps_the_zoom_when_the_match_is_in_view_and_centres_it_with_room_otherwise() {
    let mut h = open("moe");
    h.state_mut().tab_mut().search.query = "GeLU".to_string();
    h.step();
    h.step();
    let matches = h.state().tab().search.matches.clone();
    assert!(matches.len() > 10, "{} matches", matches.len());
    // Match 5 in a view of 4 ms around it: Next from match 4 keeps that view.
    let (s5, e5) = span_of(&h, matches[5]);
    show_span(&mut h, s5 as f64 - 2e6, e5 as f64 + 2e6);
    let before = view(&h);
    h.state_mut().tab_mut().search.current = Some(4);
    h.get_by_label("Next").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(matches[5]));
    assert_eq!(view(&h), before, "the match was in view: the zoom stays");
    // The last match, far from this view: centred, the view as wide as it was.
    let last = matches.len() - 1;
    let (s, e) = span_of(&h, matches[last]);
    assert!(s as f64 > before.1, "the last match is out of view");
    h.state_mut().tab_mut().search.current = Some(last - 1);
    h.get_by_label("Next").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(matches[last]));
    let (a, b) = view(&h);
    let width = before.1 - before.0;
    assert!(((b - a) - width).abs() < 1.0, "span {} kept {width}", b - a);
    assert!(
        ((a + b) / 2.0 - (s + e) as f64 / 2.0).abs() < width * 0.01,
        "centred"
    );
    assert!(b - a >= MATCH_CONTEXT_LENGTHS * (e - s) as f64);
    // A match wider than the view: the view widens to show what ran around it.
    show_span(&mut h, 0.0, 1_000.0);
    h.state_mut().tab_mut().search.current = Some(4);
    h.get_by_label("Next").click();
    h.step();
    h.step();
    let (a, b) = view(&h);
    assert!((b - a) >= MATCH_CONTEXT_LENGTHS * (e5 - s5) as f64 - 1.0);
    assert!(a < s5 as f64 && b > e5 as f64);
}

#[test]
fn ctrl_f_and_slash_focus_the_search_box() {
    let mut h = open("moe");
    let focused = |h: &App| h.ctx.memory(|m| m.has_focus(search_box_id()));
    assert!(!focused(&h));
    press(&mut h, Modifiers::COMMAND, Key::F);
    h.step();
    assert!(focused(&h), "Ctrl+F");
    // Esc leaves the box; `/` comes back to it and is not typed in it.
    press(&mut h, Modifiers::NONE, Key::Escape);
    h.step();
    assert!(!focused(&h));
    key_down(&mut h, Key::Slash, Modifiers::NONE);
    h.event(Event::Text("/".into()));
    h.step();
    h.step();
    assert!(focused(&h), "/");
    assert_eq!(h.state().tab().search.query, "");
    // Typed in the box, `/` is text.
    h.event(Event::Text("a/b".into()));
    h.step();
    assert_eq!(h.state().tab().search.query, "a/b");
    // Shift+/ is `?`: the keys, not the search box.
    press(&mut h, Modifiers::NONE, Key::Escape);
    h.step();
    assert!(!focused(&h));
    key_down(&mut h, Key::Slash, Modifiers::SHIFT);
    h.event(Event::Text("?".into()));
    h.step();
    h.step();
    assert!(!focused(&h), "? is not /");
    assert!(h.state().show_help, "? shows the keys");
}

/// Enter goes on to the next match with the box keeping the keyboard, Shift+Enter back — Shift
/// as the key event had it, even when it was let go within the frame.
#[test]
fn enter_steps_through_the_matches_and_shift_enter_steps_back() {
    let mut h = open("moe");
    let focused = |h: &App| h.ctx.memory(|m| m.has_focus(search_box_id()));
    press(&mut h, Modifiers::COMMAND, Key::F);
    h.step();
    h.event(Event::Text("cudaLaunchKernel".into()));
    h.step();
    h.step();
    assert!(h.state().tab().search.matches.len() > 3);
    for want in 0..3 {
        press(&mut h, Modifiers::NONE, Key::Enter);
        assert_eq!(
            h.state().tab().search.current,
            Some(want),
            "Enter #{}",
            want + 1
        );
        assert!(
            focused(&h),
            "the box keeps the keyboard after Enter #{}",
            want + 1
        );
    }
    key_down(&mut h, Key::Enter, Modifiers::SHIFT);
    h.step();
    h.step();
    assert_eq!(
        h.state().tab().search.current,
        Some(1),
        "Shift+Enter goes back"
    );
}

// ---------------------------------------------------------------- item 7: keys

#[test]
fn z_and_enter_zoom_to_the_selection_and_backspace_and_alt_left_go_back() {
    let mut h = open("moe");
    let (kernel, _) = kernel_and_call(&h);
    let span = span_of(&h, kernel);
    let first = view(&h);
    h.state_mut().set_selection_range(Some(span));
    pause(&mut h);
    press(&mut h, Modifiers::NONE, Key::Z);
    assert_zoomed_to(&h, span);
    let zoomed = view(&h);
    press(&mut h, Modifiers::NONE, Key::Backspace);
    assert_eq!(view(&h), first, "back to the first view");
    pause(&mut h);
    press(&mut h, Modifiers::NONE, Key::Enter);
    assert_eq!(view(&h), zoomed, "Enter zooms as Z does");
    // A wheel-free gesture: three W presses close together are one view.
    pause(&mut h);
    for _ in 0..3 {
        press(&mut h, Modifiers::NONE, Key::W);
    }
    let zoomed_in = view(&h);
    assert!(zoomed_in.1 - zoomed_in.0 < zoomed.1 - zoomed.0);
    // A double-click elsewhere is a jump of its own.
    let rect = on_screen(&mut h, kernel);
    let before_double = view(&h);
    double_click(&mut h, rect.center());
    assert_zoomed_to(&h, span);
    // Back through them: before the double-click, the three W as one, Enter's, the first.
    for (expected, what) in [
        (before_double, "before the double-click"),
        (
            zoomed_in,
            "after the W presses (on_screen's jump came between two frames)",
        ),
        (zoomed, "before the W presses: three presses are one step"),
        (first, "the first view"),
    ] {
        press(&mut h, Modifiers::ALT, Key::ArrowLeft);
        assert_eq!(view(&h), expected, "{what}");
    }
}

#[test]
fn ctrl_o_opens_and_every_new_key_is_listed_by_help_and_the_readme() {
    let mut h = open("moe");
    file_dialog::install(&h.ctx, FileDialogs::builtin(NO_SYSTEM_DIALOG));
    press(&mut h, Modifiers::COMMAND, Key::O);
    h.step();
    let browsing = file_dialog::with(&h.ctx, |d| d.browsing().cloned());
    assert_eq!(browsing, Some(FilePurpose::OpenTrace));
    h.get_by_label("Cancel").click();
    h.step();
    h.step();

    h.get_by_label("?").click();
    h.step();
    h.step();
    // The keys table lives in the user guide's window chapter.
    let guide =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/window.md"))
            .unwrap();
    for key in [
        "Z or Enter",
        "Backspace or Alt+Left",
        "Ctrl+O",
        "Ctrl+F or /",
        "Right-click",
        "Double-click",
    ] {
        assert!(
            HELP_KEYS.iter().any(|(k, _)| *k == key),
            "{key} in HELP_KEYS"
        );
        assert!(h.query_by_label(key).is_some(), "{key} in the ? window");
        assert!(
            guide
                .to_lowercase()
                .contains(&format!("| {}", key.to_lowercase())),
            "{key} in the keys table of docs/window.md"
        );
    }
    // Esc closes the window.
    press(&mut h, Modifiers::NONE, Key::Escape);
    h.step();
    h.step();
    assert!(
        h.query_by_label("Backspace or Alt+Left").is_none(),
        "Esc closes ?"
    );
}

// ---------------------------------------------------------------- item 8: export

#[test]
fn exports_start_in_the_home_folder_then_the_last_export_folder_and_can_make_a_folder() {
    let home = std::env::home_dir()
        .filter(|d| d.is_dir())
        .expect("a home folder");
    let scratch = common::scratch_dir("export-folder");
    let mut h = open("moe");
    file_dialog::install(&h.ctx, FileDialogs::builtin(NO_SYSTEM_DIALOG));
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Export;
    h.step();
    h.step();
    let export = |h: &mut App| {
        h.get_by_label("Export selection to CSV…").click();
        h.step();
        h.step();
        assert_eq!(
            file_dialog::with(&h.ctx, |d| d.browsing().cloned()),
            Some(FilePurpose::SaveSelectionCsv)
        );
    };
    let folder = |h: &App| h.get_by_label("Folder").value().unwrap_or_default();
    export(&mut h);
    assert_eq!(
        folder(&h),
        home.display().to_string(),
        "not beside the trace"
    );
    // Saved elsewhere (a whole path typed as the name)…
    let first = scratch.join("first.csv");
    h.get_by_label("File name")
        .set_text_value_accesskit(&first.display().to_string());
    h.step();
    h.get_by_label("Save").click();
    h.step();
    h.step();
    assert!(first.is_file(), "{} written", first.display());
    // …the next export starts there, and a new folder is made and entered.
    export(&mut h);
    assert_eq!(folder(&h), scratch.display().to_string());
    make_folder(&mut h, "runs");
    let runs = scratch.join("runs");
    assert!(runs.is_dir());
    assert_eq!(folder(&h), runs.display().to_string());
    assert_eq!(
        h.get_by_label("File name").value().as_deref(),
        Some("selection.csv")
    );
    h.get_by_label("Save").click();
    h.step();
    h.step();
    let written = runs.join("selection.csv");
    assert!(written.is_file(), "{} written", written.display());
    // Making it again says why not, in the window.
    export(&mut h);
    h.get_by_label("Up").click();
    h.step();
    make_folder(&mut h, "runs");
    assert!(h.query_by_label_contains("exists already").is_some());
    h.get_by_label("Cancel").click();
    h.step();
    h.step();
    // The last export folder is in the settings (saved between runs) and given to the dialogs
    // of the next run.
    assert_eq!(h.state().settings.last_export_folder, Some(runs.clone()));
    file_dialog::install(&h.ctx, FileDialogs::builtin(NO_SYSTEM_DIALOG));
    h.step();
    export(&mut h);
    assert_eq!(folder(&h), runs.display().to_string());
    std::fs::remove_dir_all(&scratch).ok();
}

/// New folder → its name → Create, in the built-in file browser.
fn make_folder(h: &mut App, name: &str) {
    h.get_by_label("New folder").click();
    h.step();
    h.step();
    h.get_by_label("Folder name").set_text_value_accesskit(name);
    h.step();
    h.get_by_label("Create").click();
    h.step();
    h.step();
}

/// A key-down event alone, with `modifiers` as the event carries them (the frame's modifier
/// state unchanged), as a quick keystroke can arrive.
fn key_down(h: &mut App, key: Key, modifiers: Modifiers) {
    h.event(Event::Key {
        key,
        pressed: true,
        modifiers,
        repeat: false,
        physical_key: None,
    });
}
