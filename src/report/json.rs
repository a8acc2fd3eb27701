//! The report's figures as JSON, for the `<script type="application/json"
//! id="sightline-metrics">` block that scripts and CI read: `{"gpus": [...], "host_threads":
//! [...], "idle_by_cause": [...], "findings": [...], "headline": [...], "config": {...},
//! "baseline": {the same shape}, "comparison": [...]}`. Times in ns of trace time, shares in
//! percent, `null` where a figure cannot be measured.

use serde::Serialize;

use super::{Config, Finding, GpuFigures, Report, RunReport};
use crate::analysis::headline::Figure;
use crate::analysis::iterations::Iterations;
use crate::analysis::sync_wait::ThreadSyncWait;

#[derive(Serialize)]
struct HostThread<'a> {
    pid: u32,
    tid: u32,
    name: &'a str,
    devices: &'a [u32],
    launches: usize,
    active_ns: i64,
    sync_wait_ns: i64,
    sync_wait_pct: Option<f64>,
}

impl<'a> From<&'a ThreadSyncWait> for HostThread<'a> {
    fn from(t: &'a ThreadSyncWait) -> Self {
        HostThread {
            pid: t.pid,
            tid: t.tid,
            name: &t.name,
            devices: &t.devices,
            launches: t.launches,
            active_ns: t.active_ns,
            sync_wait_ns: t.sync_ns,
            sync_wait_pct: t.sync_percent(),
        }
    }
}

#[derive(Serialize)]
struct HeadlineFigure<'a> {
    metric: &'a str,
    value: f64,
}

#[derive(Serialize)]
struct IterationJson<'a> {
    name: &'a str,
    start_ns: i64,
    duration_ns: i64,
    gpu_time_ns: i64,
    kernels: usize,
    warmup: bool,
    outlier: bool,
}

#[derive(Serialize)]
struct IterationsJson<'a> {
    family: &'a str,
    median_ns: Option<f64>,
    outlier_threshold_ns: Option<i64>,
    items: Vec<IterationJson<'a>>,
}

impl<'a> IterationsJson<'a> {
    fn of(its: &'a Iterations) -> Self {
        IterationsJson {
            family: &its.family,
            median_ns: super::iterations_chart::steady_median_ns(its),
            outlier_threshold_ns: its.outlier_threshold_ns,
            items: its
                .iterations
                .iter()
                .map(|i| IterationJson {
                    name: &i.name,
                    start_ns: i.start_ns,
                    duration_ns: i.duration_ns(),
                    gpu_time_ns: i.gpu_time_ns,
                    kernels: i.kernels,
                    warmup: i.warmup,
                    outlier: i.outlier,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct RunJson<'a> {
    config: &'a Config,
    gpus: &'a [GpuFigures],
    host_threads: Vec<HostThread<'a>>,
    idle_by_cause: &'a [super::CauseShare],
    findings: &'a [Finding],
    headline: Vec<HeadlineFigure<'a>>,
    iterations: IterationsJson<'a>,
}

impl<'a> RunJson<'a> {
    fn of(run: &'a RunReport) -> Self {
        RunJson {
            config: &run.config,
            gpus: &run.gpus,
            host_threads: run.threads.iter().map(HostThread::from).collect(),
            idle_by_cause: &run.idle_by_cause,
            findings: &run.findings,
            iterations: IterationsJson::of(&run.iterations),
            headline: run
                .headline
                .iter()
                .map(|f: &Figure| HeadlineFigure {
                    metric: &f.metric,
                    value: f.value,
                })
                .collect(),
        }
    }
}

#[derive(Serialize)]
struct Comparison<'a> {
    metric: &'a str,
    base: Option<f64>,
    new: Option<f64>,
    delta: Option<f64>,
}

#[derive(Serialize)]
struct ReportJson<'a> {
    sightline_version: &'static str,
    #[serde(flatten)]
    run: RunJson<'a>,
    baseline: Option<RunJson<'a>>,
    comparison: Vec<Comparison<'a>>,
}

/// The report's figures as a JSON document.
pub fn to_json(report: &Report) -> String {
    let doc = ReportJson {
        sightline_version: env!("CARGO_PKG_VERSION"),
        run: RunJson::of(&report.run),
        baseline: report.baseline.as_ref().map(RunJson::of),
        comparison: report
            .headline_rows
            .iter()
            .map(|r| Comparison {
                metric: &r.metric,
                base: r.base,
                new: r.new,
                delta: r.base.zip(r.new).map(|(b, n)| n - b),
            })
            .collect(),
    };
    // Serializing plain structs of numbers and strings cannot fail; an empty object is the
    // harmless answer if it ever did.
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".to_string())
}

/// `json` made safe inside a `<script>` element: every `<` (only ever inside a JSON string)
/// written `\u003c`, so no `</script>` or `<!--` can end it early.
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
}
