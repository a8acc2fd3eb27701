//! The `op_efficiency` report in the analysis panel's Statistics tab, driven through
//! `egui_kittest`: on kt_train it is listed, its table has TraceLens' 67 rows of ours and the
//! roofline chart under it names the GPU, its datasheet and how many operators have a point.
//! Expected values are computed here, apart from the panel. Nothing is rendered.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::ui::{PanelBench, panel_harness, settle_panel};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::op_efficiency::op_efficiency;
use sightline::analysis::{Filter, TimeRange, reports};
use sightline::load;

type Bench = Harness<'static, PanelBench>;

fn selector_text(report: &str) -> String {
    let r = reports::find(report).expect("registered report");
    format!("{} ({})", r.title(), r.name())
}

fn choose_report(h: &mut Bench, report: &str) {
    for _ in 0..5 {
        if h.query_by_label(&selector_text(report)).is_some() && h.state().panel.report != report {
            break;
        }
        h.get_by_role_and_label(Role::ComboBox, "Report").click();
        settle_panel(h);
    }
    h.get_by_label(&selector_text(report)).click();
    settle_panel(h);
    assert_eq!(h.state().panel.report, report);
}

#[test]
fn statistics_tab_shows_the_operators_and_their_roofline() {
    let Some(shared) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not there");
        return;
    };
    let path = shared.join("pytorch/kt_train.pt.trace.json.gz");
    if !path.is_file() {
        eprintln!("SKIPPED: {} is not there", path.display());
        return;
    }
    let trace = load::load_file(&path).expect("load kt_train");
    let rows = op_efficiency(&trace, &Filter::all());
    let with_points = rows
        .iter()
        .filter(|r| {
            r.flops_per_byte.is_some_and(|v| v > 0.0) && r.tflops_per_s.is_some_and(|v| v > 0.0)
        })
        .count();
    let mut h = panel_harness(trace, TimeRange::ALL);
    choose_report(&mut h, "op_efficiency");
    let label = format!(
        "Roofline of NVIDIA H100 80GB HBM3 (H100 SXM): {with_points} operators with FLOPs; point area by GPU time"
    );
    assert!(h.query_by_label(&label).is_some(), "no label {label:?}");
    // The table's first row is the report's first (kernel time descending): aten::addmm.
    assert!(h.query_all_by_label("aten::addmm").count() >= 1);
    eprintln!("{} rows, {with_points} points on the roofline", rows.len());
}

/// A row's events are its operator calls and the GPU work under them (what a chosen row
/// outlines on the timeline): the first row, `aten::addmm` ×36, has 36 calls and their kernels.
#[test]
fn a_row_brings_its_calls_and_their_gpu_work() {
    use sightline::analysis::{EventTable, NsysFormat, ReportInput, ReportOptions, RowEvents};
    let Some(shared) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not there");
        return;
    };
    let path = shared.join("pytorch/kt_train.pt.trace.json.gz");
    if !path.is_file() {
        eprintln!("SKIPPED: {} is not there", path.display());
        return;
    }
    let trace = load::load_file(&path).expect("load kt_train");
    let table = reports::find("op_efficiency")
        .unwrap()
        .compute(&ReportInput {
            trace: &trace,
            filter: &Filter::all(),
            options: &ReportOptions::default(),
            with_events: true,
            row_limit: None,
            nsys_format: NsysFormat::of_trace(&trace),
            sink: None,
        });
    let RowEvents::Events(events) = &table.rows[0].events else {
        panic!("no events");
    };
    let calls = events
        .iter()
        .filter(|e| e.table == EventTable::Nvtx)
        .count();
    let kernels = events
        .iter()
        .filter(|e| e.table == EventTable::Kernels)
        .count();
    assert_eq!(calls, 36);
    assert_eq!(kernels, 36, "one GEMM kernel per addmm");
}
