//! The performance report people send: one self-contained HTML page of a run (`sightline
//! report`, File → Save report… in the window) — configuration, key metrics per GPU against the
//! guides' targets, findings ranked by time lost, top tables, pictures, and with a baseline the
//! two runs side by side — plus the same figures as JSON inside the page for scripts and CI.
//!
//! Everything is read from the analyses the panel and the command line use ([`metrics`] says
//! which); this module only gathers them ([`build`]) and writes the page ([`html`]).
//! A layer above [`crate::render`] (its pictures are the timeline drawn headlessly).

pub mod bounds;
pub mod config;
pub mod findings;
pub mod html;
pub mod iterations_chart;
pub mod json;
pub mod lost_time;
pub mod metrics;
pub mod ncu_charts;
pub mod ncu_dram;
pub mod op_roofline;
pub mod pictures;
mod sections;
pub mod tables;

use crate::analysis::align::{self, Alignment};
use crate::analysis::diff::HeadlineRow;
use crate::analysis::gap_causes::{self, totals_by_cause};
use crate::analysis::headline::{self, Figure, Iteration};
use crate::analysis::iterations::{self as iteration_analysis, FamilyChoice, Iterations};
use crate::analysis::sync_wait::{self, ThreadSyncWait};
use crate::analysis::{self, Filter, GapOptions, NsysFormat, TimeRange, WarmupExclusion};
use crate::trace::Trace;

pub use config::Config;
pub use findings::Finding;
pub use metrics::{Check, GpuFigures, Verdict};
pub use pictures::{CauseShare, Picture};
pub use tables::{TopDiff, TopTable};

/// One run to report on: the trace, the range and the warm-up exclusion that choose its events.
#[derive(Clone, Copy)]
pub struct RunInput<'a> {
    pub trace: &'a Trace,
    pub range: TimeRange,
    pub exclusion: Option<&'a WarmupExclusion>,
    /// Draw the timeline pictures (the slow part; tests of the figures leave them out).
    pub pictures: bool,
}

impl RunInput<'_> {
    fn filter(&self) -> Filter<'_> {
        Filter {
            range: self.range,
            excluded: self.exclusion.map(|e| &e.excluded),
        }
    }
}

/// Everything the page shows of one run.
pub struct RunReport {
    pub config: Config,
    pub gpus: Vec<GpuFigures>,
    pub threads: Vec<ThreadSyncWait>,
    pub idle_by_cause: Vec<CauseShare>,
    pub findings: Vec<Finding>,
    pub tops: Vec<TopTable>,
    /// PyTorch traces: the operators furthest from their roofline.
    pub op_roofline: op_roofline::OpRoofline,
    /// The compare view's whole-run figures.
    pub headline: Vec<Figure>,
    /// Whole run, then the worst gap zoomed; a picture that could not be drawn says why.
    pub pictures: Vec<Result<Picture, String>>,
    /// The default family's iterations (the `iterations` report's figures).
    pub iterations: Iterations,
    /// The critical path of each of `iterations`, in their order.
    pub critical_paths: Vec<crate::analysis::critical_path::CriticalPath>,
    /// The label of each thread with CPU time on a path (`Thread 578 (python3)`), by `globalTid`.
    pub path_threads: std::collections::HashMap<i64, String>,
    /// Where times count from in the page (session start, a PyTorch trace's first event).
    pub time_origin_ns: i64,
    /// With `--ncu`: the charts of the profiled kernels that took the most timeline time.
    pub ncu_kernels: Vec<ncu_charts::KernelCharts>,
}

/// The page's content: a run, and optionally the baseline it is compared with.
pub struct Report {
    pub run: RunReport,
    pub baseline: Option<RunReport>,
    /// With a baseline: the headline side by side (base, new).
    pub headline_rows: Vec<HeadlineRow>,
    /// With a baseline: the top tables' per-name diffs.
    pub diffs: Vec<TopDiff>,
}

/// Gathers one run's figures; `iteration` names the headline's iteration range.
fn run_report(
    input: RunInput,
    iteration: Option<&Iteration>,
    nsys_format: NsysFormat,
) -> RunReport {
    let trace = input.trace;
    let filter = input.filter();
    let gaps = analysis::gpu_idle_gaps(trace, &filter, &GapOptions::default());
    let causes = gap_causes::gap_causes(trace, &gaps);
    let threads = sync_wait::sync_wait(trace, &filter);
    let gpus = metrics::gpu_figures(trace, &filter, &gaps, &threads);
    let totals = totals_by_cause(&gaps, &causes);
    let mut pictures = Vec::new();
    if input.pictures {
        let whole = pictures::whole_run_range(trace, input.range);
        pictures.push(
            pictures::timeline_png(trace, whole).map(|data_uri| Picture {
                caption: "The whole run (the GPU work), as sightline render draws it".into(),
                data_uri,
            }),
        );
        // Gaps come longest first.
        if let Some(g) = gaps.first() {
            pictures.push(
                pictures::timeline_png(trace, pictures::around(g.start_ns, g.end_ns)).map(
                    |data_uri| Picture {
                        caption: format!(
                            "The longest idle gap: GPU {}, {} at {}",
                            g.device,
                            headline::format_ns(g.duration_ns() as f64),
                            headline::format_ns((g.start_ns - trace.time_origin_ns()) as f64)
                        ),
                        data_uri,
                    },
                ),
            );
        }
    }
    let iterations = iteration_analysis::iterations(
        trace,
        input.range,
        &FamilyChoice::Default,
        input.exclusion.map(|e| &e.excluded),
    );
    let critical_paths = crate::analysis::critical_path::step_paths(trace, &iterations.iterations);
    // The critical path of the first steady iteration, drawn as `render --critical-path` draws it.
    if input.pictures
        && let Some((it, path)) = iterations
            .iterations
            .iter()
            .zip(&critical_paths)
            .find(|(it, p)| !it.warmup && !it.outlier && !p.segments.is_empty())
    {
        let margin = (it.duration_ns() / 50).max(1);
        let range = TimeRange::new(it.start_ns - margin, it.end_ns + margin);
        pictures.push(
            pictures::timeline_png_with(trace, range, Some(path)).map(|data_uri| Picture {
                caption: format!(
                    "The critical path of {} (outlined, arrows where it changes rows), as sightline render --critical-path draws it",
                    it.name
                ),
                data_uri,
            }),
        );
    }
    let path_threads = critical_paths
        .iter()
        .flat_map(|p| p.cpu_by_thread.iter().map(|&(t, _)| t))
        .map(|t| {
            let row = crate::analysis::critical_path::PathRow::Thread(t);
            (
                t,
                crate::analysis::reports::critical_path::row_label(trace, row),
            )
        })
        .collect();
    RunReport {
        critical_paths,
        path_threads,
        iterations,
        config: Config::of(trace, input.range, input.exclusion),
        findings: findings::findings(trace, &filter, &gaps, &causes, &threads),
        tops: tables::top_tables(trace, &filter, nsys_format),
        op_roofline: op_roofline::gather(trace, &filter),
        headline: headline::headline(trace, &filter, iteration),
        idle_by_cause: pictures::idle_by_cause(&totals),
        gpus,
        threads,
        pictures,
        time_origin_ns: trace.time_origin_ns(),
        ncu_kernels: Vec::new(),
    }
}

/// The headline's iteration range: the outermost repeated NVTX range both runs have, as the
/// compare view and `sightline diff` choose it.
fn iteration_of(base: &Trace, new: &Trace) -> Option<Iteration> {
    let Alignment::Nvtx { name, .. } = align::default_alignment(base, new) else {
        return None;
    };
    let regex = align::instance_regex(&name)?;
    Some(Iteration { label: name, regex })
}

/// Gathers the report of `run`, compared with `baseline` when given.
pub fn build(run: RunInput, baseline: Option<RunInput>) -> Report {
    let traces: Vec<&Trace> = std::iter::once(run.trace)
        .chain(baseline.map(|b| b.trace))
        .collect();
    let nsys_format = NsysFormat::of_traces(&traces);
    let base_trace = baseline.map_or(run.trace, |b| b.trace);
    let iteration = iteration_of(base_trace, run.trace);
    let new = run_report(run, iteration.as_ref(), nsys_format);
    let Some(b) = baseline else {
        return Report {
            run: new,
            baseline: None,
            headline_rows: Vec::new(),
            diffs: Vec::new(),
        };
    };
    let base = run_report(b, iteration.as_ref(), nsys_format);
    let headline_rows = headline::headline_rows(&base.headline, &new.headline);
    let diffs = tables::top_diffs(&base.tops, &new.tops, b.trace.format, run.trace.format);
    Report {
        run: new,
        baseline: Some(base),
        headline_rows,
        diffs,
    }
}
