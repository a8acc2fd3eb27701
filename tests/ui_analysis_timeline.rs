//! The analysis side of the window driven as a user drives it: Shift+drag selects a range and
//! the side panel's statistics follow it; the warm-up checkbox shades the excluded time; a ruler
//! placed with R and two clicks measures the time between two event edges; Esc clears.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{click_at, drag_with, opened};
use egui::{Modifiers, Pos2};
use egui_kittest::kittest::Queryable;
use sightline::analysis::{self, Filter, Report, TimeRange};
use sightline::ui::timeline::{EventKind, EventRef, RowKind, TimeToX};

#[test]
fn shift_drag_selects_a_range_and_the_panel_statistics_follow_it() {
    let mut h = opened("transformer");
    let area = h.state().timeline.last_event_area;
    let (x0, x1) = (
        area.left() + area.width() * 0.55,
        area.left() + area.width() * 0.9,
    );
    let y = area.bottom() - 20.0;
    let view_before = h.state().timeline.view.clone();
    drag_with(&mut h, Pos2::new(x0, y), Pos2::new(x1, y), Modifiers::SHIFT);
    let app = h.state();
    // Selecting does not pan.
    assert_eq!(app.timeline.view.start_ns, view_before.start_ns);
    let map = TimeToX::new(&app.timeline.view, area.left(), area.width());
    let (a, b) = app.timeline.range_selection.expect("a range is selected");
    let px = map.ns_per_px();
    assert!(
        (a as f64 - map.t(x0)).abs() <= px,
        "start {a} vs {}",
        map.t(x0)
    );
    assert!(
        (b as f64 - map.t(x1)).abs() <= px,
        "end {b} vs {}",
        map.t(x1)
    );
    let trace = app.trace().expect("trace");
    let expected = analysis::compute(trace, Report::Kernels, &Filter::range(TimeRange::new(a, b)));
    let shown = app
        .analysis
        .report_table(Report::Kernels)
        .expect("kernel table");
    assert_eq!(shown, &expected);
    let all = analysis::compute(trace, Report::Kernels, &Filter::all());
    let count = |t: &analysis::ReportTable| t.rows.iter().map(|r| r.stats.count).sum::<u64>();
    assert!(count(&expected) > 0 && count(&expected) < count(&all));
    // Esc clears the selection; the panel goes back to the whole trace.
    h.key_press(egui::Key::Escape);
    h.step();
    h.step();
    assert_eq!(h.state().timeline.range_selection, None);
    assert_eq!(h.state().analysis.report_table(Report::Kernels), Some(&all));
}

#[test]
fn warmup_checkbox_shades_the_warmup_range_and_drops_its_kernels() {
    let mut h = opened("transformer");
    assert!(h.state().timeline.overlays.excluded.is_empty());
    h.get_by_label("Exclude warm-up").click();
    h.step();
    h.step();
    let app = h.state();
    let trace = app.trace().expect("trace");
    // The shaded time is the NVTX range named "warmup".
    let warmup: Vec<(i64, i64)> = (0..trace.nvtx.spans.len())
        .filter(|&i| trace.str(trace.nvtx.spans.name[i]) == "warmup")
        .map(|i| (trace.nvtx.spans.start_ns[i], trace.nvtx.spans.end_ns[i]))
        .collect();
    assert_eq!(warmup.len(), 1);
    assert_eq!(app.timeline.overlays.excluded, warmup);
    // Kernels counted: those whose launching API call started outside it.
    let (ws, we) = warmup[0];
    let kept = (0..trace.kernels.spans.len())
        .filter(|&k| {
            let api = trace.kernels.api_call[k] as usize;
            let t = trace.api_calls.spans.start_ns[api];
            !(ws..we).contains(&t)
        })
        .count() as u64;
    let table = app.analysis.report_table(Report::Kernels).expect("table");
    assert_eq!(table.rows.iter().map(|r| r.stats.count).sum::<u64>(), kept);
    assert!(kept < trace.kernels.spans.len() as u64);
}

#[test]
fn ruler_between_two_event_edges_reads_their_time_difference() {
    let mut h = opened("transformer");
    // Zoom onto two consecutive NVTX step ranges so their edges are far apart on screen.
    let (first, second) = {
        let trace = h.state().trace().expect("trace");
        let step = |name: &str| {
            (0..trace.nvtx.spans.len())
                .find(|&i| trace.str(trace.nvtx.spans.name[i]) == name)
                .expect("step range")
        };
        (step("step_3"), step("step_4"))
    };
    let (a_start, b_start) = {
        let trace = h.state().trace().expect("trace");
        (
            trace.nvtx.spans.start_ns[first],
            trace.nvtx.spans.start_ns[second],
        )
    };
    h.state_mut().timeline.view.zoom_to(
        a_start as f64 - (b_start - a_start) as f64 * 0.5,
        b_start as f64 + (b_start - a_start) as f64 * 1.5,
    );
    h.step();
    h.step();
    let rect_of = |h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>, i: usize| {
        h.state()
            .event_screen_rect(EventRef::new(EventKind::Nvtx, i))
            .expect("on screen")
    };
    let (ra, rb) = (rect_of(&h, first), rect_of(&h, second));
    h.key_press(egui::Key::R);
    h.step();
    assert!(h.state().timeline.ruler.active);
    // Click 3 px inside each range's left edge: the ends snap to the edges.
    click_at(&mut h, Pos2::new(ra.left() + 3.0, ra.center().y));
    click_at(&mut h, Pos2::new(rb.left() + 3.0, rb.center().y));
    let ruler = h
        .state()
        .timeline
        .ruler
        .rulers
        .first()
        .copied()
        .expect("a ruler");
    assert_eq!(ruler.from_ns, a_start as f64);
    assert_eq!(ruler.to_ns, b_start as f64);
    assert_eq!(ruler.delta_ns(), (b_start - a_start) as f64);
    // Ruler clicks do not select events; the ruler stays while zooming.
    assert_eq!(h.state().timeline.selection, None);
    h.key_press(egui::Key::W);
    h.step();
    assert_eq!(h.state().timeline.ruler.rulers.len(), 1);
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(h.state().timeline.ruler.rulers.is_empty());
    assert!(!h.state().timeline.ruler.active);
}

#[test]
fn idle_gaps_of_the_panel_are_the_ones_the_timeline_hatches() {
    let mut h = opened("moe");
    h.step();
    let app = h.state();
    let trace = app.trace().expect("trace");
    let expected: Vec<(u32, i64, i64)> =
        analysis::gpu_idle_gaps(trace, &Filter::all(), &analysis::GapOptions::default())
            .iter()
            .map(|g| (g.device, g.start_ns, g.end_ns))
            .collect();
    let hatched: Vec<(u32, i64, i64)> = app
        .timeline
        .overlays
        .gaps
        .iter()
        .map(|g| (g.device, g.start_ns, g.end_ns))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(hatched, expected);
    // The GPU rows they are drawn on exist.
    let model = &app.document.as_ref().expect("document").model;
    assert!(
        model
            .rows
            .iter()
            .any(|r| matches!(r.kind, RowKind::GpuSummary { device: 0 }))
    );
}
