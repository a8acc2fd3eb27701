//! `sightline bench`: how fast a trace opens and how light it sits in memory, with no window.
//!
//! One run measures, on the same file in the same process: the load time per phase and in total,
//! the floor (a bare SQLite scan of the same columns of the same tables, [`bare_scan`]; none for a
//! PyTorch profiler trace, which is JSON), the resident memory the loaded trace adds, the time of
//! the summary reports and rules, and the time to build one frame's shapes at full zoom-out and
//! four deeper zoom levels ([`frame`]).
//! The benchmark reports; it never fails on a number.

pub mod compare;
pub mod cpu_samples;
pub mod frame;
pub mod memory;
pub mod ncu;
mod print;
pub mod window_start;

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::analysis::{Filter, NsysFormat, ReportInput, ReportOptions, RuleInput};
use crate::load::nsys_sqlite::bare_scan;
use crate::load::{self, LoadControl, LoadError, LoadProgress};
use crate::trace::{Trace, TraceFormat};
use frame::{FrameBuilder, FrameView};

/// How to run the benchmark.
#[derive(Debug, Clone, Copy)]
pub struct BenchOptions {
    /// Width of the simulated timeline, in pixels.
    pub width_px: u32,
    /// Loads (and floor scans) to take the median of.
    pub runs: u32,
    /// Frames built per zoom level.
    pub frames: u32,
    /// Height of the simulated event area, in pixels.
    pub height_px: u32,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            width_px: 1920,
            runs: 3,
            frames: 100,
            height_px: 1000,
        }
    }
}

/// One phase of a load, in ms from the start of the load.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseTiming {
    pub phase: String,
    /// One of the table readers that run side by side after the string table.
    pub parallel: bool,
    pub from_ms: f64,
    pub to_ms: f64,
    pub ms: f64,
}

/// Frame-build times at one zoom level.
#[derive(Debug, Clone, Serialize)]
pub struct FrameTiming {
    /// How far zoomed in: 1 is the whole trace.
    pub zoom: u32,
    pub visible_ns: i64,
    pub shapes: usize,
    /// Events and merged blocks drawn.
    pub events: usize,
    pub rows: usize,
    pub median_ms: f64,
    pub p99_ms: f64,
}

/// Everything `sightline bench` prints.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub trace: String,
    pub file_bytes: u64,
    pub events: u64,
    pub kernels: u64,
    pub memcpys: u64,
    pub memsets: u64,
    pub api_calls: u64,
    pub nvtx_ranges: u64,
    pub osrt_calls: u64,
    pub threads: usize,
    pub runs: u32,
    /// Phases of the load whose total is the median.
    pub phases: Vec<PhaseTiming>,
    pub load_ms: f64,
    pub load_ms_runs: Vec<f64>,
    /// Bare scan of the same rows, one connection per table in parallel (as the loader reads);
    /// the floor fields are `None` (and the runs empty) for a PyTorch profiler trace.
    pub floor_ms: Option<f64>,
    pub floor_ms_runs: Vec<f64>,
    /// The same scan, one table after another on one thread.
    pub floor_sequential_ms: Option<f64>,
    pub floor_rows: Option<u64>,
    pub load_over_floor: Option<f64>,
    pub rss_before_bytes: u64,
    pub rss_after_bytes: u64,
    /// What the loaded trace added to the resident set.
    pub rss_added_bytes: u64,
    pub rss_peak_bytes: u64,
    pub bytes_per_event: f64,
    /// The memory target of issue 5: 64 B/event + 30 MiB.
    pub rss_budget_bytes: u64,
    /// Every registered `nsys stats` report over the whole trace, one after another.
    pub reports_ms: f64,
    pub reports: usize,
    /// Each report's and rule's own time, in registry order (reports, then rules).
    pub analysis_ms: Vec<(String, f64)>,
    /// Every `nsys analyze` rule over the whole trace (rows=-1).
    pub rules_ms: f64,
    pub rules: usize,
    /// UI-thread time of a range-selection change in the analysis panel (the longer of the frame
    /// starting the background jobs and the frame collecting them), median and maximum over
    /// several selections.
    pub selection_change_ui_ms: f64,
    pub selection_change_ui_max_ms: f64,
    /// The window's start: first interactive frame and panel settled ([`window_start`]).
    pub window_start: window_start::WindowStart,
    pub frame_builder: &'static str,
    pub width_px: u32,
    pub height_px: u32,
    pub frames: Vec<FrameTiming>,
    /// CPU samples: memory and aggregation times, when the trace has samples.
    pub cpu_samples: Option<cpu_samples::CpuSampleBench>,
}

/// Milliseconds, to the microsecond.
pub(crate) fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Loads `path`, recording when each progress phase was reported.
pub(crate) fn timed_load(path: &Path) -> Result<(Trace, Duration, Vec<PhaseTiming>), LoadError> {
    let marks: Mutex<Vec<(&'static str, Duration)>> = Mutex::new(Vec::new());
    let cancel = AtomicBool::new(false);
    let t0 = Instant::now();
    let progress = |p: &LoadProgress| {
        if let Ok(mut m) = marks.lock() {
            m.push((p.phase, t0.elapsed()));
        }
    };
    let trace = load::load_file_with(
        path,
        &LoadControl {
            progress: &progress,
            cancel: &cancel,
            needs: crate::trace::Needs::ALL,
        },
    )?;
    let total = t0.elapsed();
    let marks = marks.into_inner().unwrap_or_default();
    Ok((trace, total, phases_of(&marks)))
}

/// Turns the loader's progress marks into phases. "reading schema", "string table",
/// "reading tables", "reading events" (a PyTorch trace's) and "building tracks" start a phase
/// (the first time they come: the readers repeat "reading tables" and "reading events" as rows
/// go by); every other mark ends one: the parallel table readers each end when they report, all
/// having started at "reading tables".
fn phases_of(marks: &[(&'static str, Duration)]) -> Vec<PhaseTiming> {
    const STARTS: [&str; 5] = [
        "reading schema",
        "string table",
        "reading tables",
        "reading events",
        "building tracks",
    ];
    let mut out = Vec::new();
    let mut open: Option<(&str, Duration)> = None;
    let mut readers_from = Duration::ZERO;
    let mut started: Vec<&str> = Vec::new();
    for &(phase, at) in marks {
        if STARTS.contains(&phase) {
            if started.contains(&phase) {
                continue;
            }
            started.push(phase);
        }
        if STARTS.contains(&phase) || phase == "done" {
            if let Some((name, from)) = open.take()
                && name != "reading tables"
            {
                out.push(PhaseTiming {
                    phase: name.to_string(),
                    parallel: false,
                    from_ms: ms(from),
                    to_ms: ms(at),
                    ms: ms(at - from),
                });
            }
            if phase == "reading tables" {
                readers_from = at;
            }
            if phase != "done" {
                open = Some((phase, at));
            }
        } else {
            out.push(PhaseTiming {
                phase: phase.to_string(),
                parallel: true,
                from_ms: ms(readers_from),
                to_ms: ms(at),
                ms: ms(at.saturating_sub(readers_from)),
            });
        }
    }
    out
}

/// Runs the whole benchmark on `path`.
pub fn run(path: &Path, options: &BenchOptions) -> Result<BenchReport, LoadError> {
    let runs = options.runs.max(1);
    // Read the file once so every timed pass starts from the same (warm) page cache.
    let file_bytes = warm_page_cache(path);

    let rss_before = memory::resident().unwrap_or_default();
    let (trace, first_total, first_phases) = timed_load(path)?;
    let rss_after = memory::resident().unwrap_or_default();
    // The floor is a bare SQLite scan: a PyTorch profiler trace (JSON) has none.
    let has_floor = trace.format != TraceFormat::Kineto;
    let floor = |parallel| bare_scan(path, parallel).map(Some);
    let no_floor = |_| Ok(None);
    let scan: &dyn Fn(bool) -> Result<_, LoadError> = if has_floor { &floor } else { &no_floor };
    let mut loads = vec![(first_total, first_phases)];
    let mut floors = Vec::new();
    floors.extend(scan(true)?.map(|s| s.elapsed));
    for _ in 1..runs {
        let (again, total, phases) = timed_load(path)?;
        drop(again);
        loads.push((total, phases));
        floors.extend(scan(true)?.map(|s| s.elapsed));
    }
    let sequential = scan(false)?;

    let load_ms_runs: Vec<f64> = loads.iter().map(|l| ms(l.0)).collect();
    let floor_ms_runs: Vec<f64> = floors.iter().map(|&d| ms(d)).collect();
    let load_ms = median(&load_ms_runs);
    let floor_ms = has_floor.then(|| median(&floor_ms_runs));
    let phases = loads
        .iter()
        .min_by(|a, b| {
            (ms(a.0) - load_ms)
                .abs()
                .total_cmp(&(ms(b.0) - load_ms).abs())
        })
        .map(|l| l.1.clone())
        .unwrap_or_default();

    let no_options = ReportOptions::default();
    let mut analysis_ms = Vec::new();
    let t = Instant::now();
    for report in crate::analysis::REPORTS {
        let one = Instant::now();
        std::hint::black_box(report.compute(&ReportInput {
            trace: &trace,
            filter: &Filter::all(),
            options: &no_options,
            with_events: false,
            row_limit: None,
            nsys_format: NsysFormat::of_trace(&trace),
            sink: None,
        }));
        analysis_ms.push((report.name().to_string(), ms(one.elapsed())));
    }
    let reports_ms = ms(t.elapsed());
    let rule_options = ReportOptions {
        values: vec![("rows".into(), "-1".into())],
    };
    let t = Instant::now();
    for rule in crate::analysis::RULES {
        let one = Instant::now();
        let _ = std::hint::black_box(rule.compute(&RuleInput {
            trace: &trace,
            filter: &Filter::all(),
            options: &rule_options,
            nsys_format: NsysFormat::of_trace(&trace),
        }));
        analysis_ms.push((format!("rule {}", rule.name()), ms(one.elapsed())));
    }
    let rules_ms = ms(t.elapsed());

    let frames = time_frames(&trace, options);
    let events = trace.event_count() as u64;
    let kernels = trace.kernels.spans.len() as u64;
    let memcpys = trace.memcpys.spans.len() as u64;
    let memsets = trace.memsets.spans.len() as u64;
    let api_calls = trace.api_calls.spans.len() as u64;
    let nvtx_ranges = trace.nvtx.spans.len() as u64;
    let osrt_calls = trace.osrt.spans.len() as u64;
    let cpu_samples = cpu_samples::measure(&trace, runs);
    // After the other timings, each run a fresh load as the window does it.
    let window_start = window_start::measure(path, runs, options.width_px, options.height_px)?;
    let selection_changes = selection_change_times(trace);
    let selection_change_ui_ms = median(&selection_changes);
    let selection_change_ui_max_ms = selection_changes.iter().copied().fold(0.0, f64::max);
    let rss_added = rss_after.now_bytes.saturating_sub(rss_before.now_bytes);
    Ok(BenchReport {
        trace: path.display().to_string(),
        file_bytes,
        events,
        kernels,
        memcpys,
        memsets,
        api_calls,
        nvtx_ranges,
        osrt_calls,
        threads: rayon::current_num_threads(),
        runs,
        phases,
        load_ms,
        load_ms_runs,
        floor_ms,
        floor_ms_runs,
        floor_sequential_ms: sequential.as_ref().map(|s| ms(s.elapsed)),
        floor_rows: sequential.as_ref().map(|s| s.rows),
        load_over_floor: floor_ms.filter(|&f| f > 0.0).map(|f| load_ms / f),
        rss_before_bytes: rss_before.now_bytes,
        rss_after_bytes: rss_after.now_bytes,
        rss_added_bytes: rss_added,
        rss_peak_bytes: rss_after.peak_bytes,
        bytes_per_event: if events > 0 {
            rss_added as f64 / events as f64
        } else {
            0.0
        },
        rss_budget_bytes: 64 * events + 30 * 1024 * 1024,
        reports_ms,
        reports: crate::analysis::REPORTS.len(),
        analysis_ms,
        rules_ms,
        rules: crate::analysis::RULES.len(),
        selection_change_ui_ms,
        selection_change_ui_max_ms,
        window_start,
        frame_builder: "timeline::build_shapes, default rows",
        width_px: options.width_px,
        height_px: options.height_px,
        frames,
        cpu_samples,
    })
}

/// UI-thread time of each of several range-selection changes in the analysis panel: the longer
/// of the frame that starts the background jobs (`AnalysisPanel::sync` with a new selection) and
/// the frame that collects their results. Each change waits for the previous jobs, so that every
/// one starts fresh jobs as a person's would.
fn selection_change_times(trace: Trace) -> Vec<f64> {
    use crate::analysis::TimeRange;
    use crate::ui::panels::analysis::AnalysisPanel;
    let trace = std::sync::Arc::new(trace);
    let mut panel = AnalysisPanel::new();
    let mut actions = Vec::new();
    panel.sync(&trace, TimeRange::ALL, &mut actions);
    panel.wait_for_jobs();
    let (first, last) = (trace.first_ns, trace.last_ns.max(trace.first_ns + 20));
    let span = last - first;
    (1..=10)
        .map(|i| {
            let start = first + span * i / 40;
            let end = last - span * i / 40;
            // The frame that starts the jobs, then the frame that collects their results (and
            // starts the follow-ups): both run on the UI thread.
            let t = Instant::now();
            panel.sync(&trace, TimeRange::new(start, end), &mut actions);
            let started = t.elapsed();
            panel.wait_for_jobs();
            let t = Instant::now();
            panel.sync(&trace, TimeRange::new(start, end), &mut actions);
            let collected = t.elapsed();
            panel.wait_for_jobs();
            ms(started.max(collected))
        })
        .collect()
}

pub(crate) fn warm_page_cache(path: &Path) -> u64 {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(path) else {
        return 0;
    };
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    while let Ok(n) = f.read(&mut buf) {
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    total
}

/// Frame builds at zoom 1, 10, 100, 1000 and 10000 around the middle of the trace, panning a
/// little between frames as a user scrolling would.
fn time_frames(trace: &Trace, options: &BenchOptions) -> Vec<FrameTiming> {
    let (first, last) = (trace.first_ns, trace.last_ns.max(trace.first_ns + 1));
    let full = last - first;
    let middle = first + full / 2;
    let mut builder = FrameBuilder::new(trace);
    [1u32, 10, 100, 1_000, 10_000]
        .into_iter()
        .map(|zoom| {
            let visible = (full / i64::from(zoom)).max(1);
            let frames = options.frames.max(1);
            let mut times = Vec::with_capacity(frames as usize);
            let mut drawn = Default::default();
            for f in 0..frames {
                // Pan across a tenth of the visible span over the frames (none at zoom 1).
                let pan = if zoom == 1 {
                    0
                } else {
                    (visible / 10) * i64::from(f) / i64::from(frames)
                };
                let start = (middle - visible / 2 + pan).max(first);
                let view = FrameView {
                    start_ns: start,
                    end_ns: start + visible,
                    width_px: options.width_px,
                    height_px: options.height_px,
                };
                let t = Instant::now();
                drawn = builder.build_frame_shapes_headless(trace, &view);
                times.push(ms(t.elapsed()));
            }
            times.sort_by(f64::total_cmp);
            FrameTiming {
                zoom,
                visible_ns: visible,
                shapes: drawn.shapes,
                events: drawn.events,
                rows: drawn.rows,
                median_ms: median(&times),
                p99_ms: percentile(&times, 99.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&[3.0], 99.0), 3.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn phases_come_from_progress_marks() {
        let d = Duration::from_millis;
        let marks = [
            ("reading schema", d(0)),
            ("string table", d(2)),
            ("reading tables", d(5)),
            ("reading tables", d(20)),
            ("kernels", d(40)),
            ("NVTX ranges", d(30)),
            ("building tracks", d(41)),
            ("done", d(60)),
        ];
        let p = phases_of(&marks);
        let names: Vec<&str> = p.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(
            names,
            [
                "reading schema",
                "string table",
                "kernels",
                "NVTX ranges",
                "building tracks"
            ]
        );
        assert_eq!(p[2].ms, 35.0);
        assert!(p[2].parallel && !p[4].parallel);
        assert_eq!(p[4].ms, 19.0);
    }

    #[test]
    fn a_pytorch_traces_repeated_progress_is_one_phase() {
        let d = Duration::from_millis;
        let marks = [
            ("reading events", d(0)),
            ("reading events", d(300)),
            ("reading events", d(900)),
            ("building tracks", d(1000)),
            ("done", d(1200)),
        ];
        let p = phases_of(&marks);
        let names: Vec<&str> = p.iter().map(|p| p.phase.as_str()).collect();
        assert_eq!(names, ["reading events", "building tracks"]);
        assert_eq!((p[0].ms, p[1].ms), (1000.0, 200.0));
        assert!(!p[0].parallel);
    }
}
