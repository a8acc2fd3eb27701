//! The report's findings: the `nsys analyze` rules ([`crate::analysis::rules::RULES`], as the
//! Findings tab runs them) and the causes of the GPU's idle gaps
//! ([`crate::analysis::gap_causes`]), one finding per rule with results and per (GPU, cause),
//! ranked by the time they cost.
//!
//! Time lost: a rule's rows each carry a `Duration (ns)` — a synchronous call's or a gap's
//! length — and lose all of it, except `gpu_time_util`'s chunks, which lose the part the GPU
//! was not in use (`Duration × (100 − In-Use %) / 100`); a gap cause loses its gaps' total.
//! The time range shown is the costliest row's (the longest gap of a cause).

use serde::Serialize;

use crate::analysis::gap_causes::{GapCause, GapCauseInfo, totals_by_cause};
use crate::analysis::rules::RULES;
use crate::analysis::{Filter, IdleGap, NsysFormat, ReportOptions, RuleInput};
use crate::trace::Trace;

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule's name (`cuda_memcpy_sync`) or `idle_causes`.
    pub source: String,
    pub title: String,
    pub advice: String,
    /// Rows of the rule, or gaps of the cause.
    pub count: usize,
    pub lost_ns: i64,
    /// The costliest row's span, in trace time.
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
    pub device: Option<u32>,
}

/// What to do about idle time of each cause.
fn cause_advice(cause: GapCause) -> &'static str {
    match cause {
        GapCause::LaunchLate => {
            "Keep the launching thread launching: move CPU work (data loading, pre-processing, \
             host syncs) off it or ahead of the GPU, or capture the steady part in a CUDA graph."
        }
        GapCause::LaunchOverhead => {
            "The launch calls themselves took the time: fuse small kernels, or launch them as a \
             CUDA graph to pay the launch cost once."
        }
        GapCause::Dependency => {
            "Work was queued but waited on an event, another stream or a host callback: look at \
             the cross-stream waits and callbacks before these gaps."
        }
        GapCause::UntracedGraph => {
            "The GPU most likely ran a CUDA graph this export does not show: capture with \
             --cuda-graph-trace=node or a newer nsys to measure it."
        }
        GapCause::Unknown => {
            "No call in the trace launched the work after these gaps (e.g. unified-memory \
             migrations): prefetch managed memory or find what started it."
        }
    }
}

/// The rules' findings and the idle-gap causes, costliest first.
pub fn findings(
    trace: &Trace,
    filter: &Filter,
    gaps: &[IdleGap],
    causes: &[GapCauseInfo],
) -> Vec<Finding> {
    let mut out = Vec::new();
    // Every row counts: a rule lists 50 rows by default (as `nsys analyze` does), but a finding's
    // count and time lost are over all of them (`rows=-1`, nsys's "no limit").
    let options = ReportOptions {
        values: vec![("rows".to_string(), "-1".to_string())],
    };
    for rule in RULES {
        let input = RuleInput {
            trace,
            filter,
            options: &options,
            nsys_format: NsysFormat::of_trace(trace),
        };
        let Ok(table) = rule.compute(&input) else {
            continue;
        };
        if table.rows.is_empty() {
            continue;
        }
        let (Some(dur), Some(start)) = (table.column("Duration (ns)"), table.column("Start (ns)"))
        else {
            continue;
        };
        let in_use = table.column("In-Use (%)");
        let number = |row: &crate::analysis::Row, c: usize| {
            row.cells
                .get(c)
                .and_then(crate::analysis::Cell::number)
                .unwrap_or(0.0)
        };
        let lost_of = |row: &crate::analysis::Row| {
            let d = number(row, dur);
            match in_use {
                Some(u) => d * (100.0 - number(row, u)).max(0.0) / 100.0,
                None => d,
            }
        };
        let lost: f64 = table.rows.iter().map(lost_of).sum();
        let worst = table
            .rows
            .iter()
            .max_by(|a, b| lost_of(a).total_cmp(&lost_of(b)));
        let (start_ns, end_ns) = match worst {
            Some(w) => {
                let s = number(w, start) as i64;
                (Some(s), Some(s + number(w, dur) as i64))
            }
            None => (None, None),
        };
        let device = table.column("Device ID").and_then(|c| {
            worst
                .and_then(|w| w.cells.get(c))
                .and_then(crate::analysis::Cell::number)
                .map(|d| d as u32)
        });
        out.push(Finding {
            source: rule.name().to_string(),
            title: rule.title().to_string(),
            advice: rule.advice().to_string(),
            count: table.rows.len(),
            lost_ns: lost.round() as i64,
            start_ns,
            end_ns,
            device,
        });
    }
    for total in totals_by_cause(gaps, causes) {
        let longest = gaps
            .iter()
            .zip(causes)
            .filter(|(g, c)| g.device == total.device && c.cause == total.cause)
            .map(|(g, _)| g)
            .max_by_key(|g| g.duration_ns());
        out.push(Finding {
            source: "idle_causes".to_string(),
            title: format!(
                "GPU {} idle: {} ({})",
                total.device,
                total.cause.label(),
                total.cause.explanation()
            ),
            advice: cause_advice(total.cause).to_string(),
            count: total.gaps,
            lost_ns: total.total_ns,
            start_ns: longest.map(|g| g.start_ns),
            end_ns: longest.map(|g| g.end_ns),
            device: Some(total.device),
        });
    }
    out.sort_by(|a, b| {
        b.lost_ns
            .cmp(&a.lost_ns)
            .then_with(|| a.title.cmp(&b.title))
    });
    out
}
