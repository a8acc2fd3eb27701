//! How soon the window is usable after it is asked to open a trace, without a window: the
//! load the window does (everything), the timeline's row model and view state, and the first
//! frame's shapes at full zoom-out — the **first interactive frame** — and then the work the
//! analysis panel starts on its worker threads once the trace is in (the default kernel
//! summary with its rows' events, every rule, the idle gaps and their causes), side by side on
//! the cores as the workers run them — **panel settled**.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::frame::{FrameBuilder, FrameView};
use super::{median, ms, timed_load};
use crate::analysis::{
    self, Filter, GapOptions, NsysFormat, ReportInput, ReportOptions, RuleInput,
};
use crate::load::LoadError;
use crate::trace::Trace;

#[derive(Debug, Clone, Serialize)]
pub struct WindowStart {
    /// Per run, ms from the open to the first interactive frame.
    pub first_interactive_ms_runs: Vec<f64>,
    pub first_interactive_ms: f64,
    /// Per run, ms from the open to the panel's first results all in.
    pub settled_ms_runs: Vec<f64>,
    pub settled_ms: f64,
}

pub fn measure(
    path: &Path,
    runs: u32,
    width_px: u32,
    height_px: u32,
) -> Result<WindowStart, LoadError> {
    let (mut first, mut settled) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let (trace, _, _) = timed_load(path)?;
        let mut frames = FrameBuilder::new(&trace);
        let view = FrameView {
            start_ns: trace.first_ns,
            end_ns: trace.last_ns.max(trace.first_ns + 1),
            width_px,
            height_px,
        };
        std::hint::black_box(frames.build_frame_shapes_headless(&trace, &view));
        first.push(ms(t0.elapsed()));
        panel_jobs(&trace);
        settled.push(ms(t0.elapsed()));
    }
    Ok(WindowStart {
        first_interactive_ms: median(&first),
        first_interactive_ms_runs: first,
        settled_ms: median(&settled),
        settled_ms_runs: settled,
    })
}

/// What the panel computes for a trace just opened, each job on its own worker.
fn panel_jobs(trace: &Trace) {
    let filter = Filter::all();
    let format = NsysFormat::of_trace(trace);
    rayon::join(
        || {
            if let Some(report) = analysis::reports::find("cuda_gpu_kern_sum") {
                std::hint::black_box(report.compute(&ReportInput {
                    trace,
                    filter: &filter,
                    options: &ReportOptions::default(),
                    with_events: true,
                    row_limit: Some(crate::ui::panels::analysis::PANEL_ROW_LIMIT),
                    nsys_format: format,
                    sink: None,
                }));
            }
        },
        || {
            rayon::join(
                || {
                    let options = ReportOptions {
                        values: vec![("rows".into(), "-1".into())],
                    };
                    for rule in analysis::RULES {
                        let _ = std::hint::black_box(rule.compute(&RuleInput {
                            trace,
                            filter: &filter,
                            options: &options,
                            nsys_format: format,
                        }));
                    }
                },
                || {
                    let gaps =
                        analysis::gaps::gpu_idle_gaps(trace, &filter, &GapOptions::default());
                    std::hint::black_box(analysis::gap_causes::gap_causes(trace, &gaps));
                },
            )
        },
    );
}
