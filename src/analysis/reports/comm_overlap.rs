//! `comm_overlap` (Sightline's own report, issue #10 part 3): per GPU that communicates, the
//! communication time, compute time, their overlap, the exposed communication and the share of
//! communication hidden under compute (%, rounded to 0.1 as nsys rounds), as defined in
//! [`crate::analysis::comm_overlap`]. Option `comm=REGEX`: the kernels that are communication
//! (default `nccl`, case-insensitive); peer-to-peer copies always are. Rows by device.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::comm_overlap::{self, DEFAULT_COMM_PATTERN};
use crate::analysis::rounding::sqlite_round;
use crate::analysis::table::{Cell, Table};
use crate::trace::Needs;

pub struct CommOverlap;

pub const COLUMNS: [&str; 6] = [
    "Device",
    "Comm Time (ns)",
    "Compute Time (ns)",
    "Overlap Time (ns)",
    "Exposed Comm (ns)",
    "Comm Hidden (%)",
];

/// The `comm=` pattern, or the default.
pub fn comm_pattern(options: &ReportOptions) -> &str {
    options.value("comm").unwrap_or(DEFAULT_COMM_PATTERN)
}

impl StatsReport for CommOverlap {
    fn name(&self) -> &'static str {
        "comm_overlap"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::GPU_WORK
    }

    fn title(&self) -> &'static str {
        "Communication/Compute Overlap"
    }

    fn missing_data(&self) -> &'static str {
        "communication (kernels matching the comm regex, or peer-to-peer copies)"
    }

    fn options(&self) -> &'static [&'static str] {
        &["comm"]
    }

    fn check_options(&self, options: &ReportOptions) -> Result<(), String> {
        let pattern = comm_pattern(options);
        comm_overlap::comm_regex(pattern)
            .map(|_| ())
            .map_err(|e| format!("comm={pattern}: not a valid regex: {e}"))
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let mut table = Table::new(&COLUMNS);
        // check_options refused a bad pattern on the command line; a report cannot fail, so
        // one that slips through (the panel) computes nothing.
        let Ok(regex) = comm_overlap::comm_regex(comm_pattern(input.options)) else {
            return table;
        };
        for d in comm_overlap::comm_compute_overlap(input.trace, input.filter, &regex) {
            if d.comm_ns <= 0 {
                continue;
            }
            let hidden = d
                .hidden_percent()
                .map_or(Cell::Null, |p| Cell::Fixed(sqlite_round(p, 1), 1));
            table.push(
                vec![
                    Cell::Int(i64::from(d.device)),
                    Cell::Int(d.comm_ns),
                    Cell::Int(d.compute_ns),
                    Cell::Int(d.overlap_ns),
                    Cell::Int(d.exposed_ns()),
                    hidden,
                ],
                Default::default(),
            );
        }
        table
    }
}
