//! The `op_efficiency` report in the analysis panel's Statistics and Operators tabs, driven
//! through `egui_kittest`: on kt_train it is listed, its table has TraceLens' 67 rows of ours and
//! the roofline chart under it names the GPU, its datasheet and how many operators have a point;
//! the Operators tab is offered where operators have shapes (the emit_nvtx export too).
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

/// The Operators tab: offered for the emit_nvtx export (operators with shapes) and not for an
/// nsys export without them; it shows the op_efficiency table with the roofline under it, and
/// a click on a row outlines its calls; the Statistics tab keeps its own report meanwhile.
#[test]
fn operators_tab_shows_the_table_and_roofline_and_keeps_statistics_apart() {
    use sightline::ui::panels::analysis::{AnalysisTab, PanelAction};
    let plain = load::load_file(&common::fixture("moe")).expect("load moe");
    let mut h = panel_harness(plain, TimeRange::ALL);
    settle_panel(&mut h);
    assert!(h.query_by_label("Statistics").is_some());
    assert!(
        h.query_by_label("Operators").is_none(),
        "moe.sqlite has no operators with shapes"
    );

    let path = common::fixture("emit_nvtx/emit_nvtx_train");
    let trace = load::load_file(&path).expect("load the emit_nvtx export");
    let rows = op_efficiency(&trace, &Filter::all());
    assert!(!rows.is_empty());
    let mut h = panel_harness(trace, TimeRange::ALL);
    settle_panel(&mut h);
    let statistics_report = h.state().panel.report;
    h.get_by_label("Operators").click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.tab, AnalysisTab::Operators);
    let title = reports::find("op_efficiency").unwrap().title();
    assert!(h.query_by_label(title).is_some(), "no heading {title:?}");
    assert!(
        h.query_by_role_and_label(Role::ComboBox, "Report")
            .is_none(),
        "the Operators tab has no report selector"
    );
    // emit_nvtx records no data types: no bytes, so no point on the roofline; the caption says
    // how many operators have one.
    assert!(
        h.query_by_label_contains("no operator has both FLOPs and bytes moved")
            .is_some(),
        "roofline caption"
    );
    let first = &rows[0];
    h.get_all_by_label(&first.name).next().unwrap().click();
    settle_panel(&mut h);
    let outlined = h.state().actions.iter().rev().find_map(|a| match a {
        PanelAction::Highlight(events) => Some(events.len()),
        _ => None,
    });
    assert_eq!(
        outlined,
        Some(first.calls.len() + first.gpu_work.len()),
        "the row outlines its calls and their GPU work"
    );
    h.get_by_label("Statistics").click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.report, statistics_report);
    eprintln!(
        "emit_nvtx export: {} operator rows; {} the first row's calls and GPU work",
        rows.len(),
        first.calls.len() + first.gpu_work.len()
    );
}
