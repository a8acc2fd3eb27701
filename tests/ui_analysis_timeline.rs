//! The analysis side of the window driven as a user drives it: Shift+drag (or Ctrl+drag on the
//! axis) selects a range and the side panel's statistics follow it; Alt+click or "Select range"
//! selects an NVTX range's time; the warm-up checkbox shades the excluded time; rulers placed
//! with R and two clicks measure the time between event edges; Esc clears. The overlays' shapes
//! are checked headless against the trace's own numbers.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{click_at, click_with, drag, drag_with, opened, settle};
use egui::{Modifiers, Pos2, Rect, Shape};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::{
    self, Filter, GapOptions, NsysFormat, ReportInput, ReportOptions, Table, TimeRange, reports,
};
use sightline::load;
use sightline::trace::Trace;
use sightline::ui::SightlineApp;
use sightline::ui::theme::Palette;
use sightline::ui::timeline::{
    self, EventKind, EventRef, GapMark, OverlayInput, Overlays, RowKind, Ruler, TimeToX,
    TimelineModel, ViewState, build_shapes_with_overlays,
};

const KERNELS: &str = "cuda_gpu_kern_sum";

/// `cuda_gpu_kern_sum` over `range`, with the events of each row, as the panel computes it.
fn kernel_summary(trace: &Trace, range: TimeRange) -> Table {
    reports::find(KERNELS)
        .expect("registered report")
        .compute(&ReportInput {
            trace,
            filter: &Filter::range(range),
            options: &ReportOptions::default(),
            with_events: true,
            row_limit: None,
            nsys_format: NsysFormat::of_trace(trace),
            sink: None,
        })
}

/// Kernels a kernel summary counts: the sum of its "Instances" column.
fn instances(table: &Table) -> u64 {
    let c = table.column("Instances").expect("Instances column");
    table
        .rows
        .iter()
        .map(|r| r.cells[c].number().expect("a count") as u64)
        .sum()
}

#[test]
fn shift_drag_selects_a_range_and_the_panel_statistics_follow_it() {
    let mut h = opened("transformer");
    let area = h.state().tab().timeline.last_event_area;
    let (x0, x1) = (
        area.left() + area.width() * 0.55,
        area.left() + area.width() * 0.9,
    );
    let y = area.bottom() - 20.0;
    let view_before = h.state().tab().timeline.view.clone();
    drag_with(&mut h, Pos2::new(x0, y), Pos2::new(x1, y), Modifiers::SHIFT);
    settle(&mut h);
    let app = h.state();
    // Selecting does not pan.
    assert_eq!(app.tab().timeline.view.start_ns, view_before.start_ns);
    let map = TimeToX::new(&app.tab().timeline.view, area.left(), area.width());
    let (a, b) = app
        .tab()
        .timeline
        .range_selection
        .expect("a range is selected");
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
    let expected = kernel_summary(trace, TimeRange::new(a, b));
    let shown = app
        .tab()
        .analysis
        .report_table(KERNELS)
        .expect("kernel table");
    assert_eq!(shown, &expected);
    let all = kernel_summary(trace, TimeRange::ALL);
    assert!(instances(&expected) > 0 && instances(&expected) < instances(&all));
    // Esc clears the selection; the panel goes back to the whole trace.
    h.key_press(egui::Key::Escape);
    h.step();
    settle(&mut h);
    assert_eq!(h.state().tab().timeline.range_selection, None);
    assert_eq!(h.state().tab().analysis.report_table(KERNELS), Some(&all));
}

#[test]
fn warmup_checkbox_shades_the_warmup_range_and_drops_its_kernels() {
    let mut h = opened("transformer");
    assert!(h.state().tab().timeline.overlays.excluded.is_empty());
    h.get_by_label("Exclude warm-up").click();
    h.step();
    settle(&mut h);
    let app = h.state();
    let trace = app.trace().expect("trace");
    // The shaded time is the NVTX range named "warmup".
    let warmup: Vec<(i64, i64)> = (0..trace.nvtx.spans.len())
        .filter(|&i| trace.str(trace.nvtx.spans.name[i]) == "warmup")
        .map(|i| (trace.nvtx.spans.start_ns[i], trace.nvtx.spans.end_ns[i]))
        .collect();
    assert_eq!(warmup.len(), 1);
    assert_eq!(app.tab().timeline.overlays.excluded, warmup);
    // Kernels counted: those whose launching API call started outside it.
    let (ws, we) = warmup[0];
    let kept = (0..trace.kernels.spans.len())
        .filter(|&k| {
            let api = trace.kernels.api_call[k] as usize;
            let t = trace.api_calls.spans.start_ns[api];
            !(ws..we).contains(&t)
        })
        .count() as u64;
    let table = app.tab().analysis.report_table(KERNELS).expect("table");
    assert_eq!(instances(table), kept);
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
    h.state_mut().tab_mut().timeline.view.zoom_to(
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
    assert!(h.state().tab().timeline.ruler.active);
    // Click 3 px inside each range's left edge: the ends snap to the edges.
    click_at(&mut h, Pos2::new(ra.left() + 3.0, ra.center().y));
    click_at(&mut h, Pos2::new(rb.left() + 3.0, rb.center().y));
    let ruler = h
        .state()
        .tab()
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
    assert_eq!(h.state().tab().timeline.selection, None);
    h.key_press(egui::Key::W);
    h.step();
    assert_eq!(h.state().tab().timeline.ruler.rulers.len(), 1);
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(h.state().tab().timeline.ruler.rulers.is_empty());
    assert!(!h.state().tab().timeline.ruler.active);
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
        .tab()
        .timeline
        .overlays
        .gaps
        .iter()
        .map(|g| (g.device, g.start_ns, g.end_ns))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(hatched, expected);
    // The GPU rows they are drawn on exist.
    let model = &app.tab().document.as_ref().expect("document").model;
    assert!(
        model
            .rows
            .iter()
            .any(|r| matches!(r.kind, RowKind::GpuSummary { device: 0 }))
    );
}

/// The time under `x` in the last frame's event area.
fn time_at(h: &Harness<'static, SightlineApp>, x: f32) -> f64 {
    let tl = &h.state().tab().timeline;
    TimeToX::new(
        &tl.view,
        tl.last_event_area.left(),
        tl.last_event_area.width(),
    )
    .t(x)
}

fn ns_per_px(h: &Harness<'static, SightlineApp>) -> f64 {
    let tl = &h.state().tab().timeline;
    TimeToX::new(
        &tl.view,
        tl.last_event_area.left(),
        tl.last_event_area.width(),
    )
    .ns_per_px()
}

#[test]
fn ctrl_drag_on_the_axis_selects_a_range_and_a_plain_axis_drag_still_zooms() {
    let mut h = opened("ws_streaming");
    let axis = h.state().tab().timeline.last_axis_area;
    let y = axis.center().y;
    // Right to left: the range comes out ordered.
    let (x0, x1) = (
        axis.left() + axis.width() * 0.7,
        axis.left() + axis.width() * 0.3,
    );
    let (t0, t1) = (time_at(&h, x1), time_at(&h, x0));
    let px = ns_per_px(&h);
    let view_before = h.state().tab().timeline.view.clone();
    drag_with(&mut h, Pos2::new(x0, y), Pos2::new(x1, y), Modifiers::CTRL);
    let (a, b) = h.state().selection_range().expect("a range is selected");
    assert!((a as f64 - t0).abs() <= px, "start {a} vs {t0}");
    assert!((b as f64 - t1).abs() <= px, "end {b} vs {t1}");
    assert_eq!(
        h.state().tab().timeline.view,
        view_before,
        "selecting must not zoom"
    );
    assert!(h.state().tab().timeline.last_overlays_drawn.range);

    // Shift+drag on the axis selects too.
    let (x2, x3) = (
        axis.left() + axis.width() * 0.1,
        axis.left() + axis.width() * 0.2,
    );
    let (t2, t3) = (time_at(&h, x2), time_at(&h, x3));
    drag_with(&mut h, Pos2::new(x2, y), Pos2::new(x3, y), Modifiers::SHIFT);
    let (a, b) = h.state().selection_range().expect("a range is selected");
    assert!((a as f64 - t2).abs() <= px && (b as f64 - t3).abs() <= px);
    assert_eq!(h.state().tab().timeline.view, view_before);

    // A plain drag on the axis zooms to the dragged span and leaves the selection alone.
    drag(&mut h, Pos2::new(x0, y), Pos2::new(x1, y));
    let view = &h.state().tab().timeline.view;
    assert!(
        (view.start_ns - t0).abs() <= px && (view.end_ns - t1).abs() <= px,
        "view {}..{} vs {t0}..{t1}",
        view.start_ns,
        view.end_ns
    );
    assert_eq!(h.state().selection_range(), Some((a, b)));
}

/// The first NVTX range named `name`, as (index, start, end).
fn nvtx_named(h: &Harness<'static, SightlineApp>, name: &str) -> (usize, i64, i64) {
    let trace = h.state().trace().expect("trace");
    let i = (0..trace.nvtx.spans.len())
        .find(|&i| trace.str(trace.nvtx.spans.name[i]) == name)
        .expect("range");
    (i, trace.nvtx.spans.start_ns[i], trace.nvtx.spans.end_ns[i])
}

#[test]
fn alt_click_on_an_nvtx_range_or_its_select_range_button_selects_its_time() {
    let mut h = opened("transformer");
    let (step3, s3, e3) = nvtx_named(&h, "step_3");
    let (step4, s4, e4) = nvtx_named(&h, "step_4");
    h.state_mut().tab_mut().timeline.view.zoom_to(
        s3 as f64 - (e4 - s3) as f64 * 0.2,
        e4 as f64 + (e4 - s3) as f64 * 0.2,
    );
    h.step();
    h.step();
    let r3 = h
        .state()
        .event_screen_rect(EventRef::new(EventKind::Nvtx, step3))
        .expect("on screen");
    click_with(&mut h, r3.center(), Modifiers::ALT);
    assert_eq!(h.state().selection_range(), Some((s3, e3)));
    // Alt+click selects time, not the event.
    assert_eq!(h.state().selection(), None);

    // A plain click selects the event only; the details panel offers its range.
    let r4 = h
        .state()
        .event_screen_rect(EventRef::new(EventKind::Nvtx, step4))
        .expect("on screen");
    click_at(&mut h, r4.center());
    assert_eq!(
        h.state().selection(),
        Some(EventRef::new(EventKind::Nvtx, step4))
    );
    assert_eq!(h.state().selection_range(), Some((s3, e3)));
    h.get_by_label("Select range").click();
    h.step();
    h.step();
    assert_eq!(h.state().selection_range(), Some((s4, e4)));

    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(h.state().selection_range(), None);
    assert!(!h.state().tab().timeline.last_overlays_drawn.range);
}

/// Two kernels one after the other on one stream with idle time between them, both longer
/// than `min_ns`: (first, second).
fn consecutive_kernels(trace: &Trace, min_ns: i64) -> (usize, usize) {
    let k = &trace.kernels.spans;
    for s in &trace.streams {
        let r = s.kernels.range.clone();
        for i in r.start..r.end.saturating_sub(1) {
            let j = i + 1;
            if k.end_ns[i] - k.start_ns[i] >= min_ns
                && k.end_ns[j] - k.start_ns[j] >= min_ns
                && k.start_ns[j] - k.end_ns[i] >= min_ns
            {
                return (i, j);
            }
        }
    }
    panic!("no two consecutive kernels with a gap");
}

#[test]
fn rulers_snap_to_kernel_edges_coexist_stay_anchored_in_time_and_esc_clears_them() {
    let mut h = opened("ws_streaming");
    let (first, second, end_a, start_b) = {
        let trace = h.state().trace().expect("trace");
        let (i, j) = consecutive_kernels(trace, 2_000);
        let k = &trace.kernels.spans;
        (i, j, k.end_ns[i], k.start_ns[j])
    };
    let (start_a, end_b) = {
        let k = &h.state().trace().expect("trace").kernels.spans;
        (k.start_ns[first], k.end_ns[second])
    };
    let pad = (end_b - start_a) as f64 * 0.3;
    h.state_mut()
        .tab_mut()
        .timeline
        .view
        .zoom_to(start_a as f64 - pad, end_b as f64 + pad);
    h.step();
    h.step();
    let rect = |h: &Harness<'static, SightlineApp>, i: usize| {
        h.state()
            .event_screen_rect(EventRef::new(EventKind::Kernel, i))
            .expect("kernel on screen")
    };
    let (ra, rb) = (rect(&h, first), rect(&h, second));
    assert!(
        rb.left() - ra.right() > 4.0 * timeline::SNAP_PX,
        "the gap is wide on screen"
    );
    // The toolbar button turns ruler mode on, like R.
    h.get_by_label("Ruler").click();
    h.step();
    assert!(h.state().ruler_active());
    // 2 px after the first kernel's end (in the idle gap), 3 px inside the second's start.
    click_at(&mut h, Pos2::new(ra.right() + 2.0, ra.center().y));
    click_at(&mut h, Pos2::new(rb.left() + 3.0, rb.center().y));
    assert_eq!(
        h.state().rulers(),
        &[Ruler {
            from_ns: end_a as f64,
            to_ns: start_b as f64
        }]
    );
    assert_eq!(h.state().rulers()[0].delta_ns(), (start_b - end_a) as f64);
    assert_eq!(
        h.state().rulers()[0].label(),
        format!("Δt {}", timeline::format_duration((start_b - end_a) as f64))
    );
    assert_eq!(h.state().selection(), None, "ruler clicks do not select");

    // A second ruler between two free points (below the rows: nothing to snap to).
    let area = h.state().tab().timeline.last_event_area;
    let (x0, x1) = (area.left() + 40.0, area.right() - 40.0);
    let (t0, t1) = (time_at(&h, x0), time_at(&h, x1));
    let px = ns_per_px(&h);
    let y = area.bottom() - 5.0;
    click_at(&mut h, Pos2::new(x0, y));
    click_at(&mut h, Pos2::new(x1, y));
    let rulers = h.state().rulers().to_vec();
    assert_eq!(rulers.len(), 2);
    assert!((rulers[1].from_ns - t0).abs() <= px && (rulers[1].to_ns - t1).abs() <= px);
    assert_eq!(h.state().tab().timeline.last_overlays_drawn.rulers, 2);

    // Zooming and panning move the view, not the rulers.
    let view_before = h.state().tab().timeline.view.clone();
    h.key_press(egui::Key::S);
    h.step();
    h.key_press(egui::Key::D);
    h.step();
    h.step();
    assert_ne!(h.state().tab().timeline.view, view_before);
    assert_eq!(h.state().rulers(), rulers.as_slice());
    assert_eq!(h.state().tab().timeline.last_overlays_drawn.rulers, 2);

    // Esc takes back the last thing placed, one at a time (issue 47, item 7): the range
    // selection placed after the rulers first, then each ruler, the last first; ruler mode ends
    // with the last one.
    h.state_mut().set_selection_range(Some((start_b, start_a)));
    assert_eq!(h.state().selection_range(), Some((start_a, start_b)));
    h.step();
    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(h.state().selection_range(), None);
    assert_eq!(h.state().rulers(), rulers.as_slice(), "the rulers stay");
    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(h.state().rulers(), &rulers[..1]);
    assert!(h.state().ruler_active());
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(h.state().rulers().is_empty());
    assert!(!h.state().ruler_active());
    assert_eq!(h.state().tab().timeline.last_overlays_drawn.rulers, 0);

    // A ruler placed after the range selection goes first, and the selection stays.
    h.state_mut().set_selection_range(Some((start_a, start_b)));
    h.step();
    h.key_press(egui::Key::R);
    h.step();
    click_at(&mut h, Pos2::new(x0, y));
    click_at(&mut h, Pos2::new(x1, y));
    assert_eq!(h.state().rulers().len(), 1);
    h.key_press(egui::Key::Escape);
    h.step();
    assert!(h.state().rulers().is_empty());
    assert_eq!(h.state().selection_range(), Some((start_a, start_b)));
    h.key_press(egui::Key::Escape);
    h.step();
    assert_eq!(h.state().selection_range(), None);
}

#[test]
fn overlays_set_on_the_app_are_drawn_in_the_window() {
    let mut h = opened("ws_streaming");
    let (gaps, kernels) = {
        let trace = h.state().trace().expect("trace");
        // ws_streaming keeps its GPU busy: its gaps are all under the 100 µs default.
        let options = GapOptions {
            min_ns: 10_000,
            ..GapOptions::default()
        };
        let gaps = analysis::gpu_idle_gaps(trace, &Filter::all(), &options);
        (Overlays::gaps_from(&gaps, &[]), trace.kernels.spans.len())
    };
    assert!(!gaps.is_empty());
    let (first, last) = {
        let t = h.state().trace().expect("trace");
        (t.first_ns, t.last_ns)
    };
    // Without the side panel, which would put its own (empty, at 100 µs) gap list back.
    h.state_mut().show_analysis = false;
    h.step();
    // The first view fits the GPUs' span; the veil is over the start of the whole trace.
    h.key_press(egui::Key::Home);
    h.step();
    h.state_mut().set_overlays(Overlays {
        excluded: vec![(first, first + (last - first) / 4)],
        gaps,
        highlighted: (0..kernels.min(5))
            .map(|i| EventRef::new(EventKind::Kernel, i))
            .collect(),
        gap_link: None,
        highlighted_samples: Vec::new(),
    });
    h.step();
    h.step();
    let drawn = h.state().tab().timeline.last_overlays_drawn;
    assert_eq!(drawn.veils, 1);
    assert!(drawn.hatched > 0);
    assert_eq!(drawn.outlined, kernels.min(5));
    h.state_mut().set_overlays(Overlays::default());
    h.step();
    assert_eq!(
        h.state().tab().timeline.last_overlays_drawn,
        timeline::OverlayCounts::default()
    );
}

/// The filled rectangles of `shapes` with colour `color`.
fn filled_rects(shapes: &[Shape], color: egui::Color32) -> Vec<Rect> {
    shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Rect(r) if r.fill == color => Some(r.rect),
            _ => None,
        })
        .collect()
}

#[test]
fn overlays_add_veils_hatching_outlines_band_and_rulers_to_the_headless_frame() {
    let trace = load::load_file(&common::fixture("moe")).expect("load");
    let model = TimelineModel::new(&trace);
    let view = ViewState::new(trace.first_ns, trace.last_ns, &model);
    let rect = Rect::from_min_size(Pos2::new(250.0, 26.0), egui::vec2(1350.0, 5_000.0));
    let palette = Palette::dark();
    let map = TimeToX::new(&view, rect.left(), rect.width());
    let none = Overlays::default();
    let plain = build_shapes_with_overlays(
        &trace,
        &model,
        &view,
        rect,
        &palette,
        &OverlayInput {
            overlays: &none,
            range: None,
            rulers: &[],
            path: None,
        },
    );
    assert!(plain.overlay.shapes.is_empty() && plain.overlay.labels.is_empty());
    let base = plain.shapes.len();

    // The longest whole-GPU idle gap, and the number of rows of its GPU on screen.
    let gaps = analysis::gpu_idle_gaps(&trace, &Filter::all(), &GapOptions::default());
    let gap = gaps
        .iter()
        .max_by_key(|g| g.duration_ns())
        .expect("moe has idle gaps");
    let gpu_rows: Vec<_> = plain
        .rows
        .iter()
        .filter(|p| match model.rows[p.row].kind {
            RowKind::GpuSummary { device } => device == gap.device,
            RowKind::Stream { stream } => trace.streams[stream].key.device == gap.device,
            _ => false,
        })
        .copied()
        .collect();
    assert!(gpu_rows.len() >= 2, "summary and stream rows");
    let span = trace.last_ns - trace.first_ns;
    let excluded = (trace.first_ns + span / 10, trace.first_ns + span / 5);
    let kernels: Vec<EventRef> = (0..3)
        .map(|i| EventRef::new(EventKind::Kernel, i))
        .collect();
    let overlays = Overlays {
        excluded: vec![excluded],
        gaps: vec![GapMark::from(gap)],
        highlighted: kernels.clone(),
        gap_link: None,
        highlighted_samples: Vec::new(),
    };
    let range = (trace.first_ns + span / 2, trace.first_ns + span * 3 / 4);
    let rulers = [Ruler {
        from_ns: range.0 as f64,
        to_ns: range.1 as f64,
    }];
    let frame = build_shapes_with_overlays(
        &trace,
        &model,
        &view,
        rect,
        &palette,
        &OverlayInput {
            overlays: &overlays,
            range: Some(range),
            rulers: &rulers,
            path: None,
        },
    );
    // The events underneath are the same; the overlays come on top.
    assert_eq!(frame.shapes.len(), base);
    let o = &frame.overlay;
    assert_eq!(o.counts.veils, 1);
    assert_eq!(o.counts.hatched, gpu_rows.len());
    assert_eq!(o.counts.outlined, 3);
    assert!(o.counts.range);
    assert_eq!(o.counts.rulers, 1);

    // The veil covers exactly the excluded time, over the whole height.
    let veils = filled_rects(&o.shapes, palette.excluded_veil);
    assert_eq!(veils.len(), 1);
    assert!((veils[0].left() - map.x(excluded.0)).abs() < 0.01);
    assert!((veils[0].right() - map.x(excluded.1)).abs() < 0.01);
    assert_eq!(veils[0].y_range(), rect.y_range());

    // One tinted area per GPU row, spanning the gap, each with its hatching lines.
    let tinted = filled_rects(&o.shapes, palette.gap_hatch.gamma_multiply(0.25));
    assert_eq!(tinted.len(), gpu_rows.len());
    let (gx0, gx1) = (
        map.x(gap.start_ns),
        map.x(gap.end_ns).max(map.x(gap.start_ns) + 1.0),
    );
    for (r, p) in tinted.iter().zip(&gpu_rows) {
        assert!((r.left() - gx0).abs() < 0.01 && (r.right() - gx1).abs() < 0.01);
        assert_eq!((r.top(), r.bottom()), (p.top, p.top + p.height));
    }
    let hatch_lines: usize = tinted
        .iter()
        .map(|r| {
            sightline::timeline::overlays::hatch_lines(
                *r,
                sightline::timeline::overlays::HATCH_STEP_PX,
            )
            .len()
        })
        .sum();
    assert!(hatch_lines > 0);

    // Outlines around the highlighted kernels' bars.
    let outlines: Vec<Rect> = o
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Rect(r) if r.stroke.color == palette.highlight => Some(r.rect),
            _ => None,
        })
        .collect();
    let expected: Vec<Rect> = kernels
        .iter()
        .map(|&k| {
            timeline::event_rect(&trace, &model, &view, &frame.rows, rect, k)
                .expect("kernel row on screen")
                .expand(1.0)
        })
        .collect();
    assert_eq!(outlines, expected);

    // Band (1) + its edges (2); ruler: two verticals, the measured line and two end ticks (5).
    let band = filled_rects(&o.shapes, palette.range_band);
    assert_eq!(band.len(), 1);
    assert!((band[0].left() - map.x(range.0)).abs() < 0.01);
    assert!((band[0].right() - map.x(range.1)).abs() < 0.01);
    assert_eq!(
        o.shapes.len(),
        1 + gpu_rows.len() + hatch_lines + 3 + 3 + 5,
        "veil + tinted gaps + hatching + outlines + band and edges + ruler"
    );
    let labels: Vec<&str> = o.labels.iter().map(|l| l.text.as_str()).collect();
    let d = timeline::format_duration((range.1 - range.0) as f64);
    assert_eq!(labels, [format!("selection {d}"), format!("Δt {d}")]);

    // A per-stream gap is hatched on its stream's row only, not on the GPU's summary row.
    let stream_gaps = analysis::gpu_idle_gaps(
        &trace,
        &Filter::all(),
        &GapOptions {
            per_stream: true,
            ..GapOptions::default()
        },
    );
    let sg = stream_gaps.first().expect("per-stream gaps");
    assert!(sg.stream.is_some());
    let overlays = Overlays {
        gaps: vec![GapMark::from(sg)],
        ..Overlays::default()
    };
    let frame = build_shapes_with_overlays(
        &trace,
        &model,
        &view,
        rect,
        &palette,
        &OverlayInput {
            overlays: &overlays,
            range: None,
            rulers: &[],
            path: None,
        },
    );
    assert_eq!(frame.overlay.counts.hatched, 1);
}
