//! The per-rank table (`sightline ranks`): each rank's GPU span, busy and idle time, kernel and
//! communication time, and how it fared in the collectives; and the table of collective
//! instances with each rank's arrival.

use super::Run;
use super::collectives::Collectives;
use crate::analysis::comm_overlap::{CommTimeline, DEFAULT_COMM_PATTERN, default_comm_regex};
use crate::analysis::filter::Filter;
use crate::analysis::gaps::{GpuOpKind, MeasureOver, measured_time};
use crate::analysis::intervals::{self, Interval};
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::Trace;

/// One rank's GPU time (all its devices together).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GpuTime {
    /// First GPU operation's start → last one's end.
    pub span_ns: i64,
    /// Union of its GPU operations (kernels, copies, sets, graph executions).
    pub busy_ns: i64,
    /// Union of its kernels (and graph executions).
    pub kernel_ns: i64,
    /// Union of its communication kernels, and the part of it no compute overlaps.
    pub comm_ns: i64,
    pub exposed_comm_ns: i64,
}

impl GpuTime {
    pub fn of(trace: &Trace) -> Self {
        let filter = Filter::all();
        let (mut busy, mut kernels): (Vec<Interval>, Vec<Interval>) = (Vec::new(), Vec::new());
        let (mut first, mut last) = (i64::MAX, i64::MIN);
        for device in trace.devices() {
            let m = measured_time(trace, &filter, device, None, MeasureOver::ActiveSpan);
            if let Some((s, e)) = m.window {
                (first, last) = (first.min(s), last.max(e));
            }
            busy.extend(m.busy(|_| true));
            kernels.extend(m.busy(|k| matches!(k, GpuOpKind::Kernel | GpuOpKind::Graph)));
        }
        let comm = CommTimeline::new(trace, DEFAULT_COMM_PATTERN, &default_comm_regex());
        Self {
            span_ns: (last - first).max(0),
            busy_ns: intervals::total_ns(&intervals::union(busy)),
            kernel_ns: intervals::total_ns(&intervals::union(kernels)),
            comm_ns: comm.devices.iter().map(|d| d.comm_ns).sum(),
            exposed_comm_ns: comm.devices.iter().map(|d| d.exposed_ns()).sum(),
        }
    }
}

pub const RANK_COLUMNS: [&str; 11] = [
    "Rank",
    "Trace",
    "Span (ns)",
    "Busy (ns)",
    "Idle (ns)",
    "Kernel Time (ns)",
    "Communication (ns)",
    "Exposed Communication (ns)",
    "Collectives",
    "Late Arrivals",
    "Wait (ns)",
];

/// One row per rank, by rank.
pub fn rank_table(run: &Run) -> Table {
    let times: Vec<GpuTime> = {
        use rayon::prelude::*;
        run.ranks.par_iter().map(|r| GpuTime::of(r.trace)).collect()
    };
    let rows: Vec<(u32, String, GpuTime)> = run
        .ranks
        .iter()
        .zip(times)
        .map(|(rank, t)| (rank.rank, file_name(&rank.trace.path), t))
        .collect();
    rank_table_of(&rows, &run.collectives)
}

/// A path's file name, as the table shows it.
pub fn file_name(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default()
}

/// [`rank_table`] from each rank's number, trace name and GPU time (by rank index) and the run's
/// collectives.
pub fn rank_table_of(rows: &[(u32, String, GpuTime)], c: &Collectives) -> Table {
    let mut table = Table::new(&RANK_COLUMNS);
    for (i, (rank, name, t)) in rows.iter().enumerate() {
        let taken = c
            .instances
            .iter()
            .filter(|inst| inst.arrivals.get(i).is_some_and(Option::is_some))
            .count();
        let wait: i64 = c.instances.iter().filter_map(|inst| inst.wait_ns(i)).sum();
        table.push(
            vec![
                Cell::Int(i64::from(*rank)),
                Cell::text(name.clone()),
                Cell::Int(t.span_ns),
                Cell::Int(t.busy_ns),
                Cell::Int(t.span_ns - t.busy_ns),
                Cell::Int(t.kernel_ns),
                Cell::Int(t.comm_ns),
                Cell::Int(t.exposed_comm_ns),
                Cell::Int(taken as i64),
                Cell::Int(c.late_arrivals(i) as i64),
                Cell::Int(wait),
            ],
            RowEvents::None,
        );
    }
    table
}

/// One row per collective instance, by first arrival: its name and occurrence, the last rank
/// (empty on a tie), the skew, and each rank's arrival on the run's clock.
pub fn instance_table(run: &Run) -> Table {
    let ranks: Vec<u32> = run.ranks.iter().map(|r| r.rank).collect();
    instance_table_of(&ranks, &run.collectives)
}

/// [`instance_table`] from the ranks' numbers (by rank index) and the run's collectives.
pub fn instance_table_of(ranks: &[u32], c: &Collectives) -> Table {
    let mut columns: Vec<String> = ["Collective", "Instance", "Last Rank", "Skew (ns)"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    columns.extend(ranks.iter().map(|r| format!("Rank {r} Arrival (ns)")));
    let mut table = Table::from_parts(columns, Vec::new());
    for inst in &c.instances {
        let mut cells = vec![
            Cell::text(inst.name.as_str()),
            Cell::Int(inst.ordinal as i64),
            Cell::opt_int(inst.last.and_then(|r| ranks.get(r)).map(|&r| i64::from(r))),
            Cell::Int(inst.skew_ns),
        ];
        cells.extend(inst.arrivals.iter().map(|a| Cell::opt_int(*a)));
        table.push(cells, RowEvents::None);
    }
    table
}
