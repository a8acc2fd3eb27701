//! Nsight Compute reports in the window, driven as a person would: a report dropped on an empty
//! window opens in the start tab as its kernel table (one row per profiled kernel), a click on
//! a kernel shows its Details page with ncu's sections and rule messages (checked against ncu's
//! own details page in `oracle/`), the Roofline page draws a point per kernel that has the
//! metrics (counted here from the metrics) or names the metrics a report lacks, the table sorts
//! and filters, and a baseline adds each metric's baseline value and change. Uses the real
//! reports in `../shared/traces/ncu`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use common::ui::DroppedPath;
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::ncu::kernels::KernelColumn;
use sightline::trace::ncu::NcuReport;
use sightline::ui::SightlineApp;
use sightline::ui::ncu::{NcuView, Page};

/// `../shared/traces/ncu/<name>`, or `None` (said loudly) when it is not there.
fn ncu_file(name: &str) -> Option<PathBuf> {
    let path = common::shared_traces()
        .map(|t| t.join("ncu").join(name))
        .filter(|p| p.is_file());
    if path.is_none() {
        println!("SKIPPED: ../shared/traces/ncu/{name} not present; nothing checked");
    }
    path
}

fn harness() -> Harness<'static, SightlineApp> {
    Harness::builder()
        .with_size(Vec2::new(1600.0, 1000.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::new(None),
        )
}

fn settle(h: &mut Harness<'static, SightlineApp>) {
    common::ui::settle_with(h, |app| app.is_loading());
}

/// An empty window with `path` dropped on it, loaded and drawn.
fn dropped(path: PathBuf) -> Harness<'static, SightlineApp> {
    let mut h = harness();
    settle(&mut h);
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedPath(path)));
    settle(&mut h);
    h
}

fn view<'a>(h: &'a Harness<'static, SightlineApp>) -> &'a NcuView {
    let tab = h.state().tab();
    assert!(tab.error.is_none(), "{:?}", tab.error);
    tab.ncu.as_deref().expect("the tab shows the report view")
}

fn view_mut<'a>(h: &'a mut Harness<'static, SightlineApp>) -> &'a mut NcuView {
    h.state_mut()
        .tab_mut()
        .ncu
        .as_deref_mut()
        .expect("report view")
}

/// ncu's details page of a report, as it printed it for a terminal.
fn oracle_details(name: &str) -> String {
    let path = common::shared_traces()
        .unwrap()
        .join("ncu/oracle")
        .join(format!("{name}.details.txt.gz"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// Whitespace runs as one space (ncu wraps its messages to the terminal's width).
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The FP32 points a roofline can draw, counted from the metrics as ncu's roofline section
/// reads them: every achieved metric present, work and DRAM traffic above zero.
fn kernels_with_fp32_point(report: &NcuReport) -> usize {
    report
        .workloads
        .iter()
        .filter(|w| {
            let n = |m: &str| report.number(w, m);
            let p = "smsp__sass_thread_inst_executed_op_";
            let (Some(add), Some(mul), Some(fma), Some(clock), Some(traffic)) = (
                n(&format!("{p}fadd_pred_on.sum.per_cycle_elapsed")),
                n(&format!("{p}fmul_pred_on.sum.per_cycle_elapsed")),
                n(&format!("{p}ffma_pred_on.sum.per_cycle_elapsed")),
                n("smsp__cycles_elapsed.avg.per_second"),
                n("dram__bytes.sum.per_second"),
            ) else {
                return false;
            };
            (add + mul + 2.0 * fma) * clock > 0.0 && traffic > 0.0
        })
        .count()
}

#[test]
fn a_dropped_report_shows_its_kernels_their_details_and_the_roofline() {
    let Some(path) = ncu_file("ncu_moe_full.ncu-rep.gz") else {
        return;
    };
    let mut h = dropped(path);
    let app = h.state();
    // The empty start tab took the report: one tab, titled by the file.
    assert_eq!(app.tabs.len(), 1);
    assert_eq!(app.tab().title(), "ncu_moe_full.ncu-rep.gz");
    let v = view(&h);
    assert_eq!(v.report.workloads.len(), 113);
    assert_eq!(v.table.rows.len(), 113);
    assert_eq!(v.table.order.len(), 113);
    h.get_by_label("113 of 113 kernels shown");
    // The report view, not an empty timeline: no timeline controls or legend in the top bar.
    h.get_by_label("Nsight Compute report");
    for timeline_only in ["Launch arrows", "Ruler", "HtoD"] {
        assert!(
            h.query_by_label(timeline_only).is_none(),
            "`{timeline_only}` on a report's tab"
        );
    }

    // Kernel 1 clicked, then kernel 0: its Details page. The table names kernels as ncu does.
    let name0 = v.table.rows[0].name.clone();
    let name1 = v.table.rows[1].name.clone();
    h.get_all_by_label(&name1).next().unwrap().click();
    h.run();
    assert_eq!(view(&h).selected, Some(1));
    h.get_all_by_label(&name0).next().unwrap().click();
    h.run();
    assert_eq!(view(&h).selected, Some(0));
    for section in [
        "GPU Speed Of Light Throughput",
        "Launch Statistics",
        "Occupancy",
        "Memory Workload Analysis",
    ] {
        assert!(h.query_by_label(section).is_some(), "section {section}");
    }
    // Header metrics with ncu's labels, values and units (ncu prints "Duration us 20.16",
    // "Registers Per Thread register/thread 80").
    assert!(
        h.query_all_by_label("Duration").count() >= 2,
        "header and section"
    );
    h.get_by_label("20.16");
    // Launch Statistics' header, and the occupancy line charts drawn as charts (not as the
    // sums of their points that ncu's page prints), each marking the launch's own value.
    assert!(h.query_all_by_label("Registers Per Thread").count() >= 1);
    let report = &view(&h).report;
    let regs = report.number(&report.workloads[0], "launch__registers_per_thread");
    let block = report.number(&report.workloads[0], "launch__block_size");
    let (regs, block) = (regs.expect("registers"), block.expect("block size"));
    for mark in [
        format!("This kernel — Registers Per Thread: {regs}"),
        format!("This kernel — Block Size: {block}"),
    ] {
        assert!(
            h.query_all_by_label(&mark).count() >= 1,
            "no chart marks `{mark}`"
        );
    }
    assert!(
        h.query_all_by_label_contains("This kernel — Shared Memory")
            .count()
            >= 1
    );
    // The chart's legend names its line and the kernel's point on it.
    assert!(
        h.query_all_by_label("% Occupancy Per Block Size (this kernel)")
            .count()
            >= 1
    );
    // The roofline sections drawn as charts: every ceiling of the single-precision hierarchical
    // chart (DRAM, L2, L1, as `tests/ncu_hierarchical_roofline.rs` checks them against ncu's
    // page) in the legend, and the kernel's achieved point at each level.
    let charts = sightline::analysis::ncu::hierarchical::of_workload(report, &report.workloads[0]);
    let single = charts
        .iter()
        .find(|c| c.title.ends_with("(Single Precision)"))
        .expect("the single-precision hierarchical roofline");
    assert_eq!(single.ceilings.len(), 3, "{single:?}");
    for c in &single.ceilings {
        let si = sightline::ui::ncu::roofline::si;
        let legend = format!(
            "{} ({}op/s, {}B/s)",
            c.label,
            si(c.peak_work),
            si(c.peak_traffic)
        );
        assert!(h.query_all_by_label(&legend).count() >= 1, "no `{legend}`");
    }
    assert!(
        h.query_all_by_label_contains("DRAM Achieved Value (6.5 % of its roof)")
            .count()
            >= 1
    );
    // The NVLink topology of an H200 with no NVLink connections: ncu's note.
    h.get_by_label("The system does not have any NVLink connections.");
    // The memory tables and chart: a line per metric of their lists, as ncu's details page
    // prints kernel 0's (`n/a` for a metric the H200 lacks); the NUMA table's GPU.
    let details_csv = common::shared_traces()
        .unwrap()
        .join("ncu/oracle/ncu_moe_full.details.csv.gz");
    let mut details = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(details_csv).unwrap())
        .read_to_string(&mut details)
        .unwrap();
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(details.as_bytes());
    let memory: Vec<(String, String)> = reader
        .records()
        .map(|r| r.unwrap())
        .filter(|r| r.len() > 15 && &r[0] == "0")
        .filter(|r| r[11].starts_with("Memory Workload Analysis") && !r[12].is_empty())
        .map(|r| (r[13].to_string(), r[15].to_string()))
        .collect();
    assert!(memory.len() > 500, "{} rows", memory.len());
    for (metric, value) in &memory {
        let shown = h.query_all_by_label(metric).next().is_some();
        assert!(shown, "memory table row {metric}");
        if value == "n/a" {
            assert!(h.query_all_by_label("n/a").next().is_some());
        }
    }
    assert!(memory.iter().any(|(_, v)| v == "n/a"));
    assert!(
        h.query_all_by_label("NUMA ID by Memory Affinity")
            .next()
            .is_some()
    );
    // Its row for the H200, as ncu's page prints it: `"0","NVIDIA H200","0","0-15","0"`.
    assert!(details.contains("\"0\",\"NVIDIA H200\",\"0\",\"0-15\",\"0\"\n"));
    assert!(h.query_all_by_label("NVIDIA H200").next().is_some());
    assert!(h.query_all_by_label("0-15").next().is_some());
    // The tensor roofline's operation tables: only the operations ncu prints for the kernel
    // (none of another architecture's, which the kernel has no metrics of).
    let printed: std::collections::HashSet<&str> = details
        .lines()
        .filter(|l| l.starts_with("\"0\"") && l.contains("(Tensor Core)\",\"\","))
        .filter_map(|l| l.split("(Tensor Core)\",\"\",\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .filter(|l| l.starts_with("Op:") || l.starts_with("Src:"))
        .collect();
    let report = &view(&h).report;
    let grid_labels: std::collections::BTreeSet<&str> = report
        .sections
        .iter()
        .filter(|s| s.display_name.ends_with("(Tensor Core)"))
        .flat_map(|s| &s.bodies)
        .flat_map(|b| &b.items)
        .filter(|i| i.kind == sightline::trace::ncu::BodyItemKind::OperationGrid)
        .flat_map(|i| i.metrics.iter().map(|m| m.label.as_str()))
        .filter(|l| l.starts_with("Op:") || l.starts_with("Src:"))
        .collect();
    let lacking: Vec<&&str> = grid_labels
        .iter()
        .filter(|l| !printed.contains(**l))
        .collect();
    assert!(
        !printed.is_empty() && !lacking.is_empty(),
        "{printed:?} {lacking:?}"
    );
    for label in &printed {
        assert!(
            h.query_all_by_label(label).next().is_some(),
            "operation {label}"
        );
    }
    for label in lacking {
        assert!(h.query_by_label(label).is_none(), "operation {label} shown");
    }
    // The throughput breakdowns: a line per metric with ncu's label (its details page prints
    // "SM: Issue Active"), never the label's template or the metric list itself.
    assert!(
        details.contains("\"Compute Throughput Breakdown\",\"SM: Issue Active\",\"%\",\"10.71\""),
        "the oracle has it"
    );
    // SM Throughput in the header, the chart and the breakdown.
    assert!(h.query_all_by_label("10.71").count() >= 3);
    h.get_by_label("SM: Issue Active");
    assert!(h.query_by_label_contains("{UNIT}").is_none());
    assert!(h.query_by_label_contains("{COMPOUND_NAME}").is_none());
    // Rule messages of kernel 0, as ncu's details page prints them.
    let oracle = squeeze(&oracle_details("ncu_moe_full"));
    for message in [
        "This kernel grid is too small to fill the available resources on this device, resulting in only 0.0 full waves across all SMs. Look at Launch Statistics for more details.",
        "All compute pipelines are under-utilized. Either this workload is very small or it doesn't issue enough warps per scheduler. Check the Launch Statistics and Scheduler Statistics sections for further details.",
    ] {
        assert!(oracle.contains(message), "the oracle has: {message}");
        assert!(
            h.query_by_label(message).is_some(),
            "rule message on screen: {message}\n{:?}",
            view(&h).report.workloads[0]
                .rules
                .iter()
                .flat_map(|r| r.messages.iter().map(|m| m.text.clone()))
                .collect::<Vec<_>>()
        );
    }
    assert!(h.query_all_by_label("OPT").count() >= 5);
    h.get_by_label("Est. Local Speedup: 93.44%");
    h.get_by_label("Est. Speedup: 51.52%");

    // The Roofline page: a point per kernel with FP32 work (counted here from the metrics).
    let expected = kernels_with_fp32_point(&view(&h).report);
    assert!(expected > 10 && expected < 113, "{expected}");
    h.get_by_label("Roofline").click();
    h.run();
    assert_eq!(view(&h).page, Page::Roofline);
    let drawn = view(&h)
        .roofline
        .fp32
        .iter()
        .filter(|a| a.is_drawable())
        .count();
    assert_eq!(drawn, expected);
    h.get_by_label_contains(&format!("{expected} kernels with FP32 work"));
}

#[test]
fn the_kernel_table_sorts_and_filters_on_its_columns() {
    let Some(path) = ncu_file("ncu_moe_full.ncu-rep.gz") else {
        return;
    };
    let mut h = dropped(path);
    // Duration, largest first.
    h.get_by_role_and_label(egui::accesskit::Role::Button, "Duration")
        .click();
    h.run();
    let v = view(&h);
    let durations: Vec<f64> = v
        .table
        .order
        .iter()
        .map(|&i| v.table.rows[i].duration_ns.unwrap())
        .collect();
    assert!(durations.windows(2).all(|d| d[0] >= d[1]), "{durations:?}");
    let max = v
        .report
        .workloads
        .iter()
        .filter_map(|w| v.report.number(w, "gpu__time_duration.sum"))
        .fold(0.0, f64::max);
    assert_eq!(durations[0], max);

    // Names containing "gemm", counted here.
    let gemms = v
        .report
        .workloads
        .iter()
        .filter(|w| w.display_name().to_lowercase().contains("gemm"))
        .count();
    assert!(gemms > 0 && gemms < 113);
    h.get_by_label("Filter Name").click();
    h.run();
    h.get_by_label("Filter Name").type_text("gemm");
    h.run();
    assert_eq!(view(&h).table.filters[1], "gemm");
    assert_eq!(view(&h).table.order.len(), gemms);
    h.get_by_label(&format!("{gemms} of 113 kernels shown"));

    // A numeric filter on registers, counted here.
    let many = {
        let v = view(&h);
        v.report
            .workloads
            .iter()
            .filter(|w| w.display_name().to_lowercase().contains("gemm"))
            .filter(|w| {
                v.report
                    .number(w, "launch__registers_per_thread")
                    .is_some_and(|r| r > 100.0)
            })
            .count()
    };
    view_mut(&mut h)
        .table
        .set_filter(KernelColumn::Registers, ">100");
    h.run();
    assert_eq!(view(&h).table.order.len(), many);
}

#[test]
fn a_baseline_adds_each_metrics_baseline_value_and_change() {
    let Some(path) = ncu_file("ncu_moe_full.ncu-rep.gz") else {
        return;
    };
    let mut h = dropped(path);
    // Kernel 0 selected at first: set it as the baseline, then look at kernel 1.
    h.get_by_label("Set as baseline").click();
    h.run();
    assert_eq!(view(&h).baseline.as_ref().map(|b| b.workload), Some(0));
    let name1 = view(&h).table.rows[1].name.clone();
    h.get_all_by_label(&name1).next().unwrap().click();
    h.run();
    assert_eq!(view(&h).selected, Some(1));
    assert!(h.query_all_by_label("Baseline").count() >= 5);
    assert!(h.query_all_by_label("Change").count() >= 5);
    // Duration's change, computed here from the two kernels' durations.
    let v = view(&h);
    let d = |i: usize| {
        v.report
            .number(&v.report.workloads[i], "gpu__time_duration.sum")
            .unwrap()
    };
    let change = (d(1) - d(0)) / d(0) * 100.0;
    h.get_by_label(&format!("{change:+.2}%"));
    h.get_by_label_contains("Clear baseline").click();
    h.run();
    assert!(view(&h).baseline.is_none());
}

#[test]
fn a_report_of_two_metrics_lists_956_kernels_and_names_the_roofline_metrics_it_lacks() {
    let Some(path) = ncu_file("ncu_moe_dram.ncu-rep.gz") else {
        return;
    };
    let mut h = dropped(path);
    let v = view(&h);
    assert_eq!(v.table.rows.len(), 956);
    h.get_by_label("956 of 956 kernels shown");
    // Missing metrics are empty cells, never 0.
    assert!(v.table.rows.iter().all(|r| r.compute_pct.is_none()));
    assert_eq!(v.table.rows[0].text(KernelColumn::Compute), "");
    assert_eq!(kernels_with_fp32_point(&v.report), 0);
    h.get_by_label("Roofline").click();
    h.run();
    h.get_by_label("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained");
    h.get_by_label("smsp__cycles_elapsed.avg.per_second");
    assert!(
        h.query_by_label("dram__bytes.sum.per_second").is_none(),
        "the report has that one"
    );
}
