//! `cpu_samples_sum` (Sightline's own report, issue #13): the hot functions of the CPU samples
//! (`COMPOSITE_EVENTS` with their `SAMPLING_CALLCHAINS`), the bottom-up table of
//! [`crate::analysis::cpu_samples::profile`].
//!
//! Columns `Self Samples,Self (%),Total Samples,Total (%),Function,Module`, one row per (function,
//! module): Self = samples whose innermost frame it is, Total = samples with it in any frame
//! (counted once per sample however deep it recurses); the percentages are of all the samples that
//! have a call stack (samples without one are left out), rounded to 0.1 as nsys rounds. Rows by
//! Self descending, Total descending, Function, Module.
//!
//! Under a time range the samples taken inside it count (a sample is an instant). Warm-up
//! exclusion flags events of the span tables only; it does not reach samples, so this report
//! follows the range alone.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::cpu_samples;
use crate::analysis::rounding::sqlite_round;
use crate::analysis::table::{Cell, Table};
use crate::trace::Needs;

pub struct CpuSamplesSum;

pub const COLUMNS: [&str; 6] = [
    "Self Samples",
    "Self (%)",
    "Total Samples",
    "Total (%)",
    "Function",
    "Module",
];

impl StatsReport for CpuSamplesSum {
    fn name(&self) -> &'static str {
        "cpu_samples_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::CPU_SAMPLES
    }

    fn title(&self) -> &'static str {
        "CPU Sample Hot Functions"
    }

    fn missing_data(&self) -> &'static str {
        "CPU sample data with call stacks (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS)"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let range = input.filter.range;
        let samples = cpu_samples::samples_in(
            trace,
            range.start_ns.unwrap_or(i64::MIN),
            range.end_ns.unwrap_or(i64::MAX),
            None,
        );
        let profile = cpu_samples::profile(trace, &samples);
        let percent = |n: u64| Cell::Fixed(sqlite_round(profile.percent(n), 1), 1);
        let mut table = Table::new(&COLUMNS);
        for f in &profile.bottom_up {
            table.push(
                vec![
                    Cell::Int(f.self_samples as i64),
                    percent(f.self_samples),
                    Cell::Int(f.total_samples as i64),
                    percent(f.total_samples),
                    Cell::text(trace.shared_str(f.frame.function)),
                    Cell::text(trace.shared_str(f.frame.module)),
                ],
                Default::default(),
            );
        }
        table
    }
}
