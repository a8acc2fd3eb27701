//! Issue 36 item 10, the smaller points, driven with `egui_kittest`: a long kernel name in the
//! details header stays left of the analysis panel with its "Launched by … @ time" link whole;
//! a copy's name cut to its column keeps its direction as a whole word (`[…Device-to-Host]`,
//! not `[C…y Device-to-Host]`); Run in an empty SQL editor runs the example shown there.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::time::{Duration, Instant};

use common::ui::{app_with_size, settle_all};
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::trace::NO_INDEX;
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::AnalysisTab;
use sightline::ui::timeline::{EventKind, EventRef, format_duration};

type App = Harness<'static, SightlineApp>;

/// The analysis panel's left edge: its first widget, flush with its margin.
fn panel_left(h: &App) -> f32 {
    h.get_by_label("Exclude warm-up").rect().left() - 12.0
}

fn select(h: &mut App, event: EventRef) {
    h.state_mut().tab_mut().timeline.selection = Some(event);
    h.run();
}

#[test]
fn a_long_kernel_name_stays_left_of_the_panel_and_keeps_the_launch_link_whole() {
    let window = Vec2::new(1500.0, 900.0);
    let mut h = app_with_size(
        vec![common::fixtures().join("kt_pair.pt.trace.json.gz")],
        window,
    );
    let (kernel, call, name, api) = {
        let trace = h.state().trace().unwrap();
        let k = (0..trace.kernels.spans.len())
            .filter(|&k| trace.kernels.api_call[k] != NO_INDEX)
            .max_by_key(|&k| trace.str(trace.kernels.spans.name[k]).len())
            .expect("a launched kernel");
        (
            EventRef::new(EventKind::Kernel, k),
            EventRef::new(EventKind::ApiCall, trace.kernels.api_call[k] as usize),
            trace.str(trace.kernels.spans.name[k]).to_string(),
            trace
                .str(trace.api_calls.spans.name[trace.kernels.api_call[k] as usize])
                .to_string(),
        )
    };
    assert!(name.len() > 120, "a long name: {name}");
    let left = panel_left(&h);
    select(&mut h, kernel);
    let header = h
        .get_by_label_contains(&format!("Kernel · {}", &name[..16]))
        .rect();
    assert!(
        header.right() <= left + 1.0,
        "header {header:?}, panel at {left}"
    );
    let launch_text = format!("CUDA API · {api} @ ");
    let launched = h.get_by_label_contains(&launch_text);
    let text = launched.accesskit_node().label().unwrap_or_default();
    assert!(
        launched.rect().right() <= left + 1.0,
        "'{text}' at {:?}",
        launched.rect()
    );
    // The time is on the axis's clock, as Start reads, not in epoch seconds.
    let at = {
        let trace = h.state().trace().unwrap();
        format_duration((call.start_ns(trace) - trace.time_origin_ns()) as f64)
    };
    assert!(text.ends_with(&format!(" @ {at}")), "'{text}', not at {at}");
    // The call's link to the kernel: the name gives way, " @ time" stays in the dock.
    select(&mut h, call);
    let link = h.get_by_label_contains("Kernel · ");
    let text = link.accesskit_node().label().unwrap_or_default();
    assert!(
        link.rect().right() <= left + 1.0,
        "'{text}' at {:?}",
        link.rect()
    );
    assert!(
        text.starts_with("Kernel · ") && text.contains(" @ "),
        "{text}"
    );
}

#[test]
fn a_copy_cut_to_its_column_keeps_its_direction_as_a_whole_word() {
    let window = Vec2::new(1100.0, 800.0);
    let mut h = app_with_size(vec![common::fixture("moe")], window);
    h.state_mut().tab_mut().analysis.report = "cuda_gpu_mem_time_sum";
    settle_all(&mut h);
    h.run();
    let mut cut = 0;
    for direction in ["Host-to-Device", "Device-to-Host", "Device-to-Device"] {
        let full = format!("[CUDA memcpy {direction}]");
        let Some(node) = h.query_by_label(&full) else {
            continue;
        };
        let shown = node.value().unwrap_or_default();
        if let Some((head, tail)) = shown.split_once('…') {
            cut += 1;
            assert_eq!(tail, format!("{direction}]"), "'{shown}'");
            assert!(["[", "[CUDA", "[CUDA memcpy"].contains(&head), "'{shown}'");
        }
    }
    assert!(cut > 0, "no copy name was cut at {window:?}");
}

#[test]
fn run_in_an_empty_sql_editor_runs_the_example_it_shows() {
    let mut h = app_with_size(vec![common::fixture("moe")], Vec2::new(1500.0, 900.0));
    h.state_mut().tab_mut().analysis.tab = AnalysisTab::Sql;
    h.state_mut().tab_mut().analysis.sql_mut().query.clear();
    h.run();
    h.get_by_label("Run").click();
    h.step();
    let started = Instant::now();
    while h.state().tab().analysis.sql().is_running() {
        assert!(started.elapsed() < Duration::from_secs(30), "no answer");
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.step();
    let sql = h.state().tab().analysis.sql();
    assert!(sql.query.contains("FROM kernels"), "{}", sql.query);
    let answer = sql.answer().expect("an answer");
    let rows = answer.result.as_ref().expect("the example runs").rows.len();
    assert!(rows >= 4, "{rows} kernel names");
}
