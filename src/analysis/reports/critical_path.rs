//! `critical_path` and `critical_path_segments` (Sightline's own reports, issue #34): what bounds
//! each iteration ([`crate::analysis::critical_path`]). The iterations are those of the
//! `iterations` report (`family=` / `--family` chooses the family).
//!
//! `critical_path`: one row per iteration, `Iteration,Name,Start (ns),Duration (ns),Path (ns)`,
//! then the path's time per part (CPU, kernels, copies by direction, memset, communication,
//! launch latency, GPU idle, unattributed); the parts sum to Path, which is the Duration: the
//! path runs from the iteration's start to its end through every thread of its process.
//! `critical_path_segments`: one row per stretch of each path, in path order:
//! `Iteration,Part,Row,Start (ns),End (ns),Event`.

use std::sync::Arc;

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::critical_path::{CriticalPath, Part, PathRow, step_paths};
use crate::analysis::iterations::{self, FamilyChoice, Iterations};
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::{Needs, Trace};

/// Both reports: one row per iteration, or (`segments`) one row per stretch of each path.
pub struct CriticalPathReport {
    pub segments: bool,
}

pub const CRITICAL_PATH: CriticalPathReport = CriticalPathReport { segments: false };
pub const CRITICAL_PATH_SEGMENTS: CriticalPathReport = CriticalPathReport { segments: true };

pub const COLUMNS: [&str; 15] = [
    "Iteration",
    "Name",
    "Start (ns)",
    "Duration (ns)",
    "Path (ns)",
    "CPU (ns)",
    "Kernels (ns)",
    "Copies H2D (ns)",
    "Copies D2H (ns)",
    "Copies Other (ns)",
    "Memset (ns)",
    "Communication (ns)",
    "Launch Latency (ns)",
    "GPU Idle (ns)",
    "Unattributed (ns)",
];

pub const SEGMENT_COLUMNS: [&str; 6] = [
    "Iteration",
    "Part",
    "Row",
    "Start (ns)",
    "End (ns)",
    "Event",
];

/// The iterations `input` asks for and the critical path of each.
pub fn iteration_paths(input: &ReportInput) -> Option<(Iterations, Vec<CriticalPath>)> {
    let trace = input.trace;
    let choice = match input.options.value("family") {
        Some(text) => FamilyChoice::parse(trace, text).ok()?,
        None => FamilyChoice::Default,
    };
    let found = iterations::iterations(trace, input.filter.range, &choice, input.filter.excluded);
    let paths = step_paths(trace, &found.iterations);
    Some((found, paths))
}

/// A row's title as the timeline names it: `GPU 0 · Stream 7`, `Thread 527`.
pub fn row_label(trace: &Trace, row: PathRow) -> String {
    match row {
        PathRow::Stream(k) => format!("GPU {} · Stream {}", k.device, k.stream),
        PathRow::Thread(gtid) => {
            let name = trace
                .threads
                .iter()
                .find(|t| t.global_tid == gtid)
                .map(|t| (t.tid, trace.str(t.name)));
            match name {
                Some((tid, n)) if !n.is_empty() => format!("Thread {tid} ({n})"),
                Some((tid, _)) => format!("Thread {tid}"),
                None => format!("Thread {gtid}"),
            }
        }
    }
}

fn check_family(options: &ReportOptions) -> Result<(), String> {
    match options.value("family") {
        Some(v) => regex::Regex::new(v)
            .map(|_| ())
            .map_err(|e| format!("family={v} is not a valid regex: {e}")),
        None => Ok(()),
    }
}

fn needs() -> Needs {
    Needs::NVTX
        .union(Needs::GPU_WORK)
        .union(Needs::API_CALLS)
        .union(Needs::GPU_LINKS)
        .union(Needs::SYNCS)
        .union(Needs::OSRT)
}

impl StatsReport for CriticalPathReport {
    fn name(&self) -> &'static str {
        if self.segments {
            "critical_path_segments"
        } else {
            "critical_path"
        }
    }

    fn title(&self) -> &'static str {
        if self.segments {
            "Critical path segments"
        } else {
            "What bounds each step (critical path)"
        }
    }

    fn missing_data(&self) -> &'static str {
        "repeated NVTX ranges or PyTorch annotations"
    }

    /// `critical_path_segments` has a row per stretch of each path (8,000 lines on moe).
    fn row_dump(&self) -> bool {
        self.segments
    }

    fn options(&self) -> &'static [&'static str] {
        &["family"]
    }

    fn check_options(&self, options: &ReportOptions) -> Result<(), String> {
        check_family(options)
    }

    fn needs(&self, _options: &ReportOptions) -> Needs {
        needs()
    }

    fn compute(&self, input: &ReportInput) -> Table {
        if self.segments {
            segments_table(input)
        } else {
            paths_table(input)
        }
    }
}

/// One row per iteration.
fn paths_table(input: &ReportInput) -> Table {
    let mut table = Table::new(&COLUMNS).limited(input.row_limit);
    let Some((found, paths)) = iteration_paths(input) else {
        return table;
    };
    for (n, (it, path)) in found.iterations.iter().zip(&paths).enumerate() {
        let mut cells = vec![
            Cell::Int(n as i64),
            Cell::text(Arc::clone(&it.name)),
            Cell::Int(it.start_ns),
            Cell::Int(it.duration_ns()),
            Cell::Int(path.path_ns()),
        ];
        cells.extend(Part::ALL.iter().map(|&p| Cell::Int(path.part_ns(p))));
        table.push(cells, RowEvents::None);
    }
    table
}

/// One row per segment of each iteration's path.
fn segments_table(input: &ReportInput) -> Table {
    let mut table = Table::new(&SEGMENT_COLUMNS).limited(input.row_limit);
    let Some((_, paths)) = iteration_paths(input) else {
        return table;
    };
    for (n, path) in paths.iter().enumerate() {
        for s in &path.segments {
            table.push(
                vec![
                    Cell::Int(n as i64),
                    Cell::text(s.part.label()),
                    Cell::text(row_label(input.trace, s.row)),
                    Cell::Int(s.start_ns),
                    Cell::Int(s.end_ns),
                    Cell::text(Arc::clone(&s.event)),
                ],
                RowEvents::None,
            );
        }
    }
    table
}
