//! Issue 36 item 7: zoomed out on n25_graphs (195–407 ms visible), the NVTX ranges after the first
//! "warmup" (three more warm-ups, then step_0, step_1, …) are bars too narrow for their names that
//! touch one another in the same grey: they read as one bar carrying "warmup" up to 8.06 s, though
//! warm-up ends at 7.99 s. A run of such bars is labelled with its count ("29 ranges"), so it no
//! longer reads as part of the named bar before it. Checked on the painter's shapes, headless.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::{Pos2, Rect, vec2};
use sightline::timeline::{Palette, RowKind, TimeToX, TimelineModel, ViewState, build_shapes};

/// Event area of a 1280-px-wide window (the row titles take 250 px).
const EVENT_AREA_WIDTH_PX: f32 = 1030.0;

#[test]
fn ranges_after_the_named_warmup_bar_are_labelled_as_a_run_not_as_warmup() {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not there (n25_graphs.sqlite)");
        return;
    };
    let trace = sightline::load::load_file(&dir.join("n25_graphs.sqlite")).unwrap();
    let model = TimelineModel::new(&trace);
    let nvtx = &trace.nvtx.spans;
    let warmups: Vec<usize> = (0..nvtx.len())
        .filter(|&i| trace.str(nvtx.name[i]) == "warmup")
        .collect();
    assert!(warmups.len() > 1, "n25_graphs warms up in several ranges");
    let first_warmup = warmups[0];
    let warmup_end_ns = warmups.iter().map(|&i| nvtx.end_ns[i]).max().unwrap();
    let thread = trace
        .threads
        .iter()
        .position(|t| {
            t.nvtx_levels
                .first()
                .is_some_and(|l| l.range.contains(&first_warmup))
        })
        .expect("the thread of the warmup ranges");
    let level = &trace.threads[thread].nvtx_levels[0];
    let row = model
        .row_index(RowKind::Nvtx { thread, depth: 0 })
        .expect("its NVTX depth 0 row");

    for span_ms in [195.0, 300.0, 407.0] {
        let mut view = ViewState::new(trace.first_ns, trace.last_ns, &model);
        view.collapsed.clear();
        let from = nvtx.start_ns[first_warmup] as f64 - 20e6;
        view.zoom_to(from, from + span_ms * 1e6);
        let area = Rect::from_min_size(Pos2::new(250.0, 26.0), vec2(EVENT_AREA_WIDTH_PX, 4000.0));
        let frame = build_shapes(&trace, &model, &view, area, &Palette::dark());
        let map = TimeToX::new(&view, area.left(), area.width());
        let placed = frame.rows.iter().find(|p| p.row == row).expect("row shown");
        let in_row =
            |r: &Rect| r.center().y > placed.top && r.center().y < placed.top + placed.height;

        // The first warmup is wide enough for its name, and its label stays on its own bar.
        let warmup_labels: Vec<Rect> = frame
            .labels
            .iter()
            .filter(|l| in_row(&l.rect) && trace.str(l.text) == "warmup")
            .map(|l| l.rect)
            .collect();
        assert!(
            !warmup_labels.is_empty(),
            "{span_ms} ms: the warmup bar is named"
        );
        for r in &warmup_labels {
            assert!(
                r.right() <= map.x(warmup_end_ns) + 1.0,
                "{span_ms} ms: a \"warmup\" label reaches past the end of warm-up: {r:?}"
            );
        }

        // The bars after it: one run, labelled with the count of the ranges it covers.
        let after = nvtx.end_ns[first_warmup];
        let run = frame
            .run_labels
            .iter()
            .filter(|l| in_row(&l.rect))
            .find(|l| (l.rect.left() - map.x(after)).abs() < 1.5)
            .unwrap_or_else(|| {
                panic!(
                    "{span_ms} ms: no run label where the first warmup ends (x {}); run labels: {:?}",
                    map.x(after),
                    frame.run_labels
                )
            });
        let covered = level
            .range
            .clone()
            .filter(|&i| {
                map.x(nvtx.start_ns[i]) >= run.rect.left() - 0.5
                    && map.x(nvtx.end_ns[i]).max(map.x(nvtx.start_ns[i]) + 1.0)
                        <= run.rect.right() + 0.5
            })
            .count();
        assert!(covered >= 2, "{span_ms} ms: {run:?}");
        assert_eq!(run.text, format!("{covered} ranges"), "{span_ms} ms");
        // It runs past warm-up into the steps, and says so by not naming any one range.
        assert!(
            run.rect.right() > map.x(warmup_end_ns),
            "{span_ms} ms: {run:?}"
        );
        eprintln!(
            "{span_ms} ms visible: \"warmup\" on {:?}, then \"{}\" over x {:.0}–{:.0}",
            warmup_labels[0].x_range(),
            run.text,
            run.rect.left(),
            run.rect.right()
        );
    }
}
