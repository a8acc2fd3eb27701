//! The report's findings: the `nsys analyze` rules ([`crate::analysis::rules::RULES`], as the
//! Findings tab runs them) and the causes of the GPU's idle gaps
//! ([`crate::analysis::gap_causes`]), one finding per rule with results and per (GPU, cause),
//! ranked by the time they cost.
//!
//! Time lost (`lost_ns`) is the GPU idle time a finding explains, each idle instant counted once
//! ([`super::lost_time`]), so the findings' lost time adds up to no more than the GPUs' idle
//! time (active span less busy time). Each row of a finding points at spans of time on GPUs:
//! - a gap cause: its gaps, on their GPU;
//! - `gpu_gaps`, `gpu_time_util`: the gap or the low-utilisation region, on its GPU (a region
//!   loses only the idle time inside it, not its length);
//! - `cuda_memcpy_sync`, `cuda_memset_sync`, `cuda_memcpy_async`: the call and its operation, on
//!   the operation's GPU;
//! - `cuda_api_sync`: the synchronising call, on the GPUs its thread launched work on (every GPU
//!   when it launched none in range).
//!
//! Where explanations overlap, the more specific one keeps the time. Precedence:
//! 1. rules whose rows are calls (`cuda_api_sync`, the memcpy and memset rules, in
//!    [`RULES`] order): the call is what to change, and the GPU idle while it ran is its doing;
//! 2. the gap causes: why the GPU waited, for every gap of 100 µs or more (one cause per gap);
//! 3. rules whose rows only locate idle time (`gpu_gaps`, then `gpu_time_util`): they keep the
//!    idle time no cause explains, such as gaps under 100 µs inside a low-utilisation region.
//!
//! `rows_ns` keeps what the rows themselves add up to, as `nsys analyze` lists them: the calls',
//! gaps' or regions' lengths. The time range shown is that of the row that explains the most
//! idle time (the longest row among equals).

use std::collections::HashMap;

use serde::Serialize;

use super::lost_time::{IdleLeft, Pointer};
use crate::analysis::gap_causes::{GapCause, GapCauseInfo, totals_by_cause};
use crate::analysis::rules::RULES;
use crate::analysis::sync_wait::ThreadSyncWait;
use crate::analysis::{
    Cell, EventTable, Filter, IdleGap, NsysFormat, ReportOptions, Row, RowEvents, RuleInput, Table,
};
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
    /// The GPU idle time it explains that no finding before it in precedence explained.
    pub lost_ns: i64,
    /// Its rows' own total: calls', gaps' or regions' lengths.
    pub rows_ns: i64,
    /// The span of the row that explains the most, in trace time.
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

/// One row of a finding: where it points, its own length, and the span and GPU the page shows.
struct RowPointer {
    pointer: Pointer,
    own_ns: i64,
    shown: (i64, i64),
    device: Option<u32>,
}

/// A finding before its lost time is known.
struct Candidate {
    /// Precedence level (see the module comment); lower takes idle time first.
    level: u8,
    finding: Finding,
    rows: Vec<RowPointer>,
}

/// Where the report's findings look: the trace, its GPUs' idle time, and which GPUs each
/// launching thread used.
struct Context<'a> {
    trace: &'a Trace,
    all_devices: Vec<u32>,
    devices_of_thread: HashMap<i64, &'a [u32]>,
}

impl Context<'_> {
    fn number(row: &Row, column: Option<usize>) -> Option<f64> {
        column.and_then(|c| row.cells.get(c)).and_then(Cell::number)
    }

    /// Where a rule's row points ([`Pointer`]) and whether it is a call.
    fn row_pointer(&self, table: &Table, row: &Row) -> (RowPointer, bool) {
        let start = Self::number(row, table.column("Start (ns)")).map(|v| v as i64);
        let dur = Self::number(row, table.column("Duration (ns)")).map_or(0, |v| v as i64);
        let mut spans = Vec::new();
        if let Some(s) = start {
            spans.push((s, s + dur));
        }
        let mut devices: Vec<u32> = Self::number(row, table.column("Device ID"))
            .map(|d| vec![d as u32])
            .unwrap_or_default();
        let mut is_call = false;
        match &row.events {
            RowEvents::Span {
                start_ns,
                end_ns,
                device,
            } => {
                spans.push((*start_ns, *end_ns));
                if let Some(d) = device {
                    devices = vec![*d];
                }
            }
            RowEvents::Events(events) => {
                let calls = &self.trace.api_calls;
                for e in events.iter().filter(|e| e.table == EventTable::ApiCalls) {
                    let i = e.index as usize;
                    if i >= calls.spans.len() {
                        continue;
                    }
                    is_call = true;
                    spans.push((calls.spans.start_ns[i], calls.spans.end_ns[i]));
                    if table.column("Device ID").is_none()
                        && let Some(d) = self.devices_of_thread.get(&calls.global_tid[i])
                    {
                        devices.extend_from_slice(d);
                    }
                }
            }
            RowEvents::None => {}
        }
        devices.sort_unstable();
        devices.dedup();
        let device = match devices.as_slice() {
            [d] => Some(*d),
            _ => None,
        };
        if devices.is_empty() {
            devices.clone_from(&self.all_devices);
        }
        let shown = start.map_or_else(
            || spans.first().copied().unwrap_or_default(),
            |s| (s, s + dur),
        );
        let pointer = RowPointer {
            pointer: Pointer { devices, spans },
            own_ns: dur,
            shown,
            device: Self::number(row, table.column("Device ID"))
                .map(|d| d as u32)
                .or(device),
        };
        (pointer, is_call)
    }
}

/// The rules' candidates, in [`RULES`] order.
fn rule_candidates(ctx: &Context, filter: &Filter) -> Vec<Candidate> {
    let mut out = Vec::new();
    // Every row counts: a rule lists 50 rows by default (as `nsys analyze` does), but a finding's
    // count and time lost are over all of them (`rows=-1`, nsys's "no limit").
    let options = ReportOptions {
        values: vec![("rows".to_string(), "-1".to_string())],
    };
    for rule in RULES {
        let input = RuleInput {
            trace: ctx.trace,
            filter,
            options: &options,
            nsys_format: NsysFormat::of_trace(ctx.trace),
        };
        let Ok(table) = rule.compute(&input) else {
            continue;
        };
        if table.rows.is_empty() || table.column("Duration (ns)").is_none() {
            continue;
        }
        let mut calls = false;
        let rows: Vec<RowPointer> = table
            .rows
            .iter()
            .map(|row| {
                let (p, is_call) = ctx.row_pointer(&table, row);
                calls |= is_call;
                p
            })
            .collect();
        out.push(Candidate {
            level: if calls { 0 } else { 2 },
            finding: Finding {
                source: rule.name().to_string(),
                title: rule.title().to_string(),
                advice: rule.advice().to_string(),
                count: rows.len(),
                lost_ns: 0,
                rows_ns: rows.iter().map(|r| r.own_ns).sum(),
                start_ns: None,
                end_ns: None,
                device: None,
            },
            rows,
        });
    }
    out
}

/// One candidate per (GPU, cause), its gaps as rows.
fn cause_candidates(gaps: &[IdleGap], causes: &[GapCauseInfo]) -> Vec<Candidate> {
    totals_by_cause(gaps, causes)
        .into_iter()
        .map(|total| {
            let rows: Vec<RowPointer> = gaps
                .iter()
                .zip(causes)
                .filter(|(g, c)| g.device == total.device && c.cause == total.cause)
                .map(|(g, _)| RowPointer {
                    pointer: Pointer {
                        devices: vec![g.device],
                        spans: vec![(g.start_ns, g.end_ns)],
                    },
                    own_ns: g.duration_ns(),
                    shown: (g.start_ns, g.end_ns),
                    device: Some(g.device),
                })
                .collect();
            Candidate {
                level: 1,
                finding: Finding {
                    source: "idle_causes".to_string(),
                    title: format!(
                        "GPU {} idle: {} ({})",
                        total.device,
                        total.cause.label(),
                        total.cause.explanation()
                    ),
                    advice: cause_advice(total.cause).to_string(),
                    count: total.gaps,
                    lost_ns: 0,
                    rows_ns: total.total_ns,
                    start_ns: None,
                    end_ns: None,
                    device: Some(total.device),
                },
                rows,
            }
        })
        .collect()
}

/// The rules' findings and the idle-gap causes, costliest first; `threads` are the report's
/// launching threads (which GPUs a synchronising call's thread used).
pub fn findings(
    trace: &Trace,
    filter: &Filter,
    gaps: &[IdleGap],
    causes: &[GapCauseInfo],
    threads: &[ThreadSyncWait],
) -> Vec<Finding> {
    let mut idle = IdleLeft::of(trace, filter);
    let ctx = Context {
        trace,
        all_devices: idle.devices(),
        devices_of_thread: threads
            .iter()
            .map(|t| (t.global_tid, t.devices.as_slice()))
            .collect(),
    };
    let mut candidates = rule_candidates(&ctx, filter);
    candidates.extend(cause_candidates(gaps, causes));
    // Stable: within a level, rules in RULES order, causes by device and cause.
    candidates.sort_by_key(|c| c.level);
    let mut out = Vec::with_capacity(candidates.len());
    for Candidate {
        mut finding, rows, ..
    } in candidates
    {
        let worst = rows.iter().max_by_key(|r| {
            (
                idle.inside(&r.pointer),
                r.own_ns,
                std::cmp::Reverse(r.shown),
            )
        });
        if let Some(w) = worst {
            finding.start_ns = Some(w.shown.0);
            finding.end_ns = Some(w.shown.1);
            finding.device = finding.device.or(w.device);
        }
        let pointers: Vec<Pointer> = rows.into_iter().map(|r| r.pointer).collect();
        finding.lost_ns = idle.take(&pointers);
        out.push(finding);
    }
    out.sort_by(|a, b| {
        b.lost_ns
            .cmp(&a.lost_ns)
            .then_with(|| b.rows_ns.cmp(&a.rows_ns))
            .then_with(|| a.title.cmp(&b.title))
    });
    out
}
