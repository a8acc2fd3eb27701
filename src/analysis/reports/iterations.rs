//! `iterations` (Sightline's own report, issue #23): the iterations of a family of repeated
//! ranges side by side, one row each in start order ([`crate::analysis::iterations`]):
//! its number, the range's own text, start, duration, the union of the GPU time of the work its
//! process launched in it (every thread, copies and memsets included) and its kernel count, and
//! whether it is warm-up or an outlier. `family=` (or `--family`) chooses the
//! family: a name as the trace's families are listed (`step_*`, `ProfilerStep*`), else a regex
//! over the range text; by default the outermost repeated one. Iterations starting in the range
//! are listed; warm-up ones (those the exclusion in force drops, else those inside a range named
//! warmup) are marked rather than left out, so that they can be told apart.
//!
//! On a JAX / XLA profile two more columns give XProf's step of each iteration
//! ([`crate::analysis::xla_steps`]): its step time (the span of the GPU work XProf groups into
//! the step, ns rounded down from its picoseconds) and whether XProf's overview lists it (not the
//! first or last, incomplete, step).

use std::sync::Arc;

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::iterations::{self, FamilyChoice};
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::Needs;

pub struct IterationsReport;

pub const COLUMNS: [&str; 8] = [
    "Iteration",
    "Name",
    "Start (ns)",
    "Duration (ns)",
    "GPU Time (ns)",
    "Kernels",
    "Warm-up",
    "Outlier",
];

/// The columns a JAX / XLA profile adds.
pub const XLA_COLUMNS: [&str; 2] = ["XProf Step Time (ns)", "In XProf"];

impl StatsReport for IterationsReport {
    fn name(&self) -> &'static str {
        "iterations"
    }

    fn title(&self) -> &'static str {
        "Iterations"
    }

    fn missing_data(&self) -> &'static str {
        "repeated NVTX ranges or PyTorch annotations"
    }

    fn options(&self) -> &'static [&'static str] {
        &["family"]
    }

    fn check_options(&self, options: &ReportOptions) -> Result<(), String> {
        match options.value("family") {
            Some(v) => regex::Regex::new(v)
                .map(|_| ())
                .map_err(|e| format!("family={v} is not a valid regex: {e}")),
            None => Ok(()),
        }
    }

    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX.union(Needs::GPU_LINKS)
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let choice = match input.options.value("family") {
            Some(text) => match FamilyChoice::parse(trace, text) {
                Ok(choice) => choice,
                Err(_) => return Table::new(&COLUMNS),
            },
            None => FamilyChoice::Default,
        };
        let found =
            iterations::iterations(trace, input.filter.range, &choice, input.filter.excluded);
        let xla_steps = trace
            .xla
            .is_some()
            .then(|| crate::analysis::xla_steps::xla_steps(trace));
        let columns: Vec<&str> = match &xla_steps {
            Some(_) => COLUMNS.iter().chain(&XLA_COLUMNS).copied().collect(),
            None => COLUMNS.to_vec(),
        };
        let mut table = Table::new(&columns).limited(input.row_limit);
        let yes_no = |b: bool| Cell::text(if b { "yes" } else { "no" });
        for (n, it) in found.iterations.iter().enumerate() {
            let events = if input.with_events {
                RowEvents::Events(vec![EventRef::new(EventTable::Nvtx, it.nvtx)])
            } else {
                RowEvents::None
            };
            let mut cells = vec![
                Cell::Int(n as i64),
                Cell::text(Arc::clone(&it.name)),
                Cell::Int(it.start_ns),
                Cell::Int(it.duration_ns()),
                Cell::Int(it.gpu_time_ns),
                Cell::Int(it.kernels as i64),
                yes_no(it.warmup),
                yes_no(it.outlier),
            ];
            if let Some(steps) = &xla_steps {
                match steps.iter().find(|s| s.nvtx == it.nvtx) {
                    Some(s) => {
                        cells.push(Cell::Int(s.duration_ps().div_euclid(1000)));
                        cells.push(yes_no(s.complete));
                    }
                    None => cells.extend([Cell::Null, Cell::Null]),
                }
            }
            table.push(cells, events);
        }
        table
    }
}
