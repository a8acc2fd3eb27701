//! `thread_states` (Sightline's own report, issue #13): per thread, how long it ran on a CPU
//! according to the scheduling events (`SCHED_EVENTS`, `--cpuctxsw`), as the running intervals of
//! [`crate::trace::ThreadStates`] define it (a sched-in paired with the next scheduling event of
//! the thread when that is a sched-out).
//!
//! Columns `PID,TID,Thread,Running (ns),Running (%),Switches`, one row per thread with at least one
//! running interval: Running is the summed length of its intervals, Switches their number, and
//! Running (%) = Running ÷ (last − first scheduling event of the thread), rounded to 0.1 as nsys
//! rounds. Rows by Running descending, then TID (then PID).
//!
//! Under a time range (`--range`, the panel's selection) the parts of the intervals inside the
//! range count: Running is clipped to the range, Switches counts the intervals that overlap it (a
//! zero-length interval counts when its instant lies in the range), and the denominator of the %
//! is the thread's scheduling span clipped to the range. Warm-up exclusion flags events of the
//! span tables only; it does not reach scheduling, so this report follows the range alone.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::rounding::sqlite_round;
use crate::analysis::table::{Cell, Table};
use crate::trace::Needs;

pub struct ThreadStatesReport;

pub const COLUMNS: [&str; 6] = [
    "PID",
    "TID",
    "Thread",
    "Running (ns)",
    "Running (%)",
    "Switches",
];

/// One thread's row before formatting.
struct ThreadRow {
    pid: u32,
    tid: u32,
    thread: usize,
    running_ns: i64,
    span_ns: i64,
    switches: u64,
}

impl StatsReport for ThreadStatesReport {
    fn name(&self) -> &'static str {
        "thread_states"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::THREAD_STATES
    }

    fn title(&self) -> &'static str {
        "Thread Running Time"
    }

    fn missing_data(&self) -> &'static str {
        "thread scheduling data (SCHED_EVENTS)"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let states = &trace.thread_states;
        let range = input.filter.range;
        let t0 = range.start_ns.unwrap_or(i64::MIN);
        let t1 = range.end_ns.unwrap_or(i64::MAX);
        let mut rows: Vec<ThreadRow> = Vec::new();
        for (thread, t) in trace.threads.iter().enumerate() {
            let r = t.running.range.clone();
            let (Some(starts), Some(ends)) = (states.start_ns.get(r.clone()), states.end_ns.get(r))
            else {
                continue;
            };
            let mut running_ns = 0i64;
            let mut switches = 0u64;
            // Intervals of one thread are disjoint and sorted: those overlapping [t0, t1) are
            // contiguous.
            let lo = ends.partition_point(|&e| e < t0);
            for (&s, &e) in starts[lo..].iter().zip(&ends[lo..]) {
                if s >= t1 {
                    break;
                }
                let part = e.min(t1).saturating_sub(s.max(t0));
                if part > 0 || (s == e && range.contains(s)) {
                    running_ns += part.max(0);
                    switches += 1;
                }
            }
            if switches == 0 {
                continue;
            }
            let span_ns = t.sched_span.map_or(0, |(first, last)| {
                last.min(t1).saturating_sub(first.max(t0))
            });
            rows.push(ThreadRow {
                pid: t.pid,
                tid: t.tid,
                thread,
                running_ns,
                span_ns,
                switches,
            });
        }
        rows.sort_by(|a, b| {
            b.running_ns
                .cmp(&a.running_ns)
                .then(a.tid.cmp(&b.tid))
                .then(a.pid.cmp(&b.pid))
        });
        let mut table = Table::new(&COLUMNS);
        for row in rows {
            let percent = if row.span_ns > 0 {
                Cell::Fixed(
                    sqlite_round(row.running_ns as f64 * 100.0 / row.span_ns as f64, 1),
                    1,
                )
            } else {
                Cell::Null
            };
            let name = trace
                .threads
                .get(row.thread)
                .map_or("", |t| trace.str(t.name));
            table.push(
                vec![
                    Cell::Int(i64::from(row.pid)),
                    Cell::Int(i64::from(row.tid)),
                    Cell::text(name),
                    Cell::Int(row.running_ns),
                    percent,
                    Cell::Int(row.switches as i64),
                ],
                Default::default(),
            );
        }
        table
    }
}
