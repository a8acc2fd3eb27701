//! A command loads only what its reports, rules, gaps or export kinds declare they read
//! (`Needs`): every output computed on such a narrowed load must equal the same output computed
//! on the whole trace, on every fixture and shared export, and the narrowed load must say no
//! warning the whole load does not.

// A broken fixture fails the test, which is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use sightline::analysis::gap_causes::{self, gap_causes};
use sightline::analysis::{
    Filter, GapOptions, NsysFormat, REPORTS, RULES, ReportInput, ReportOptions, RuleInput,
    StatsReport, Table, TimeRange, gpu_idle_gaps, reports,
};
use sightline::export::{events_csv, nsys_csv};
use sightline::load::{self, LoadControl};
use sightline::trace::{Needs, Trace};

fn load_with(path: &Path, needs: Needs) -> Trace {
    let cancel = AtomicBool::new(false);
    let control = LoadControl {
        progress: &|_| {},
        cancel: &cancel,
        needs,
    };
    load::load_file_with(path, &control).expect("load")
}

fn csv(table: &Table) -> String {
    let mut out = Vec::new();
    nsys_csv::write_table_csv(table, &mut out).expect("csv");
    String::from_utf8(out).expect("utf-8")
}

fn report_csv(trace: &Trace, report: &dyn StatsReport, options: &ReportOptions) -> String {
    let filter = Filter::range(TimeRange::ALL);
    if reports::format_lacks(report, trace) {
        return String::new();
    }
    csv(&report.compute(&ReportInput {
        trace,
        filter: &filter,
        options,
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::of_trace(trace),
        sink: None,
    }))
}

fn gaps_text(trace: &Trace) -> String {
    let filter = Filter::range(TimeRange::ALL);
    let options = GapOptions {
        min_ns: 0,
        per_stream: false,
        ..GapOptions::default()
    };
    let gaps = gpu_idle_gaps(trace, &filter, &options);
    let causes = gap_causes(trace, &gaps);
    gaps.iter()
        .zip(&causes)
        .map(|(g, c)| {
            format!(
                "{} {:?} {} {} {} {} {} {:?}\n",
                g.device,
                g.stream,
                g.start_ns,
                g.end_ns,
                g.before_name(trace),
                g.after_name(trace),
                c.cause.label(),
                c.host
            )
        })
        .collect()
}

fn export_text(trace: &Trace, kind: events_csv::EventKind) -> String {
    let filter = Filter::range(TimeRange::ALL);
    let mut out = Vec::new();
    events_csv::write_events_csv_with(
        trace,
        &filter,
        &[kind],
        events_csv::CsvOptions { backtraces: true },
        &mut out,
    )
    .expect("export");
    String::from_utf8(out).expect("utf-8")
}

/// Option sets that change what a report reads.
fn option_sets(report: &dyn StatsReport) -> Vec<ReportOptions> {
    let mut sets = vec![ReportOptions::default()];
    for flag in ["base", "mangled", "nvtx-name"] {
        if report.options().contains(&flag) {
            sets.push(ReportOptions {
                values: vec![(flag.to_string(), String::new())],
            });
        }
    }
    sets
}

fn traces() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(common::fixtures())
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    paths.sort();
    paths.extend(common::shared_exports());
    paths
}

#[test]
fn narrowed_loads_give_the_same_outputs() {
    let paths = traces();
    let (mut outputs, mut loads) = (0usize, 0usize);
    let mut failures: Vec<String> = Vec::new();
    for path in &paths {
        let whole = load_with(path, Needs::ALL);
        let whole_warnings = whole.warnings.messages();
        let mut narrowed: HashMap<Needs, Trace> = HashMap::new();
        let mut check = |needs: Needs, what: &str, output: &dyn Fn(&Trace) -> String| {
            let trace = narrowed.entry(needs).or_insert_with(|| {
                loads += 1;
                load_with(path, needs)
            });
            for w in trace.warnings.messages() {
                if !whole_warnings.contains(&w) {
                    failures.push(format!(
                        "{}: {what}: a narrowed load warns \"{w}\", the whole load does not",
                        path.display()
                    ));
                }
            }
            if output(trace) != output(&whole) {
                failures.push(format!(
                    "{}: {what} differs when only {needs:?} is loaded",
                    path.display()
                ));
            }
            outputs += 1;
        };
        for &report in REPORTS {
            for options in option_sets(report) {
                check(report.needs(&options), report.name(), &|t| {
                    report_csv(t, report, &options)
                });
            }
        }
        for &rule in RULES {
            let options = ReportOptions {
                values: vec![("rows".to_string(), "-1".to_string())],
            };
            check(rule.needs(&options), rule.name(), &|t| {
                let filter = Filter::range(TimeRange::ALL);
                let input = RuleInput {
                    trace: t,
                    filter: &filter,
                    options: &options,
                    nsys_format: NsysFormat::of_trace(t),
                };
                match rule.compute(&input) {
                    Ok(table) => csv(&table),
                    Err(e) => e,
                }
            });
        }
        check(gap_causes::NEEDS, "gaps", &gaps_text);
        for kind in events_csv::EventKind::NAMED {
            check(kind.needs() | Needs::BACKTRACES, kind.name(), &|t| {
                export_text(t, kind)
            });
        }
    }
    println!(
        "{} traces: {outputs} outputs compared, {loads} narrowed loads",
        paths.len()
    );
    assert!(outputs > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_five_classic_reports_read_five_tables() {
    let path = common::fixture("stress");
    let needs = [
        "cuda_api_sum",
        "cuda_gpu_kern_sum",
        "cuda_gpu_mem_time_sum",
        "nvtx_sum",
    ]
    .iter()
    .map(|n| reports::find(n).expect("report"))
    .fold(Needs::NONE, |n, r| n | r.needs(&ReportOptions::default()));
    let trace = load_with(&path, needs);
    assert!(!trace.kernels.spans.is_empty() && !trace.api_calls.spans.is_empty());
    assert!(!trace.nvtx.spans.is_empty() && !trace.memcpys.spans.is_empty());
    // What no report asked for is not read: OS runtime calls, links, launch configuration.
    assert!(trace.osrt.spans.is_empty());
    let whole = load_with(&path, Needs::ALL);
    assert!(!whole.osrt.spans.is_empty(), "stress has OS runtime calls");
    assert!(
        trace
            .kernels
            .api_call
            .iter()
            .all(|&a| a == sightline::trace::NO_INDEX)
    );
    assert!(trace.kernels.grid.iter().all(|g| *g == [0; 3]));
    assert!(whole.kernels.grid.iter().any(|g| *g != [0; 3]));
}

/// A command that reads the CUDA calls and the GPU work still says what the load found about them
/// (stress's 50 graph launches with no GPU work); one that reads neither says nothing of them.
#[test]
fn commands_warn_about_the_tables_they_read() {
    let stress = common::fixture("stress");
    let stderr = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(args)
            .output()
            .expect("run sightline");
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let whole = load_with(&stress, Needs::ALL);
    let graph_warning = whole
        .warnings
        .messages()
        .into_iter()
        .find(|m| m.contains("cudaGraphLaunch"))
        .expect("stress has graph launches with no GPU work");
    let path = stress.to_str().expect("utf-8 path");
    assert!(stderr(&["gaps", path]).contains(&graph_warning));
    assert!(stderr(&["summary", path, "--report", "cuda_gpu_trace"]).contains(&graph_warning));
    assert!(!stderr(&["summary", path, "--report", "nvtx_sum"]).contains("cudaGraphLaunch"));
}
