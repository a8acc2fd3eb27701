//! `idle_causes` (Sightline's own report, issue #10): per GPU, the idle gaps of at least `min=`
//! (default 100 µs, as `sightline gaps`) by cause — `launch-late`, `launch-overhead`,
//! `dependency`, `unknown`, defined in [`crate::analysis::gap_causes`] — with their count, total
//! idle time and share of the device's listed idle time (%, rounded to 0.1 as nsys rounds).
//! Rows by device, then total time descending, then cause order.

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::gap_causes;
use crate::analysis::gaps::{self, DEFAULT_MIN_GAP_NS, GapOptions};
use crate::analysis::range::parse_time_ns;
use crate::analysis::rounding::sqlite_round;
use crate::analysis::table::{Cell, Table};
use crate::trace::Needs;

pub struct IdleCauses;

pub const COLUMNS: [&str; 5] = ["Device", "Cause", "Gaps", "Total (ns)", "Share (%)"];

/// `min=` (ns, or with a unit: `100us`, `1.5ms`); the default when absent or unreadable.
fn min_gap_ns(options: &ReportOptions) -> i64 {
    options
        .value("min")
        .and_then(|v| parse_time_ns(v).ok())
        .filter(|&n| n >= 0)
        .unwrap_or(DEFAULT_MIN_GAP_NS)
}

impl StatsReport for IdleCauses {
    fn name(&self) -> &'static str {
        "idle_causes"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        crate::analysis::gap_causes::NEEDS
    }

    fn title(&self) -> &'static str {
        "GPU Idle Gaps by Cause"
    }

    fn missing_data(&self) -> &'static str {
        "GPU idle gaps of the minimum length (min=, default 100 µs)"
    }

    fn options(&self) -> &'static [&'static str] {
        &["min"]
    }

    fn check_options(&self, options: &ReportOptions) -> Result<(), String> {
        match options.value("min") {
            Some(v) => match parse_time_ns(v) {
                Ok(n) if n >= 0 => Ok(()),
                Ok(_) => Err(format!("min={v}: must not be negative")),
                Err(e) => Err(format!("min={v}: {e}")),
            },
            None => Ok(()),
        }
    }

    fn rows_depend_on_threshold(&self) -> bool {
        true
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let options = GapOptions {
            min_ns: min_gap_ns(input.options),
            ..GapOptions::default()
        };
        let gaps = gaps::gpu_idle_gaps(trace, input.filter, &options);
        let causes = gap_causes::gap_causes(trace, &gaps);
        let mut totals = gap_causes::totals_by_cause(&gaps, &causes);
        totals.sort_by(|a, b| {
            (a.device, std::cmp::Reverse(a.total_ns), a.cause).cmp(&(
                b.device,
                std::cmp::Reverse(b.total_ns),
                b.cause,
            ))
        });
        let mut table = Table::new(&COLUMNS);
        for t in &totals {
            let device_total: i64 = totals
                .iter()
                .filter(|o| o.device == t.device)
                .map(|o| o.total_ns)
                .sum();
            let share = if device_total > 0 {
                Cell::Fixed(
                    sqlite_round(t.total_ns as f64 * 100.0 / device_total as f64, 1),
                    1,
                )
            } else {
                Cell::Null
            };
            table.push(
                vec![
                    Cell::Int(i64::from(t.device)),
                    Cell::text(t.cause.label()),
                    Cell::Int(t.gaps as i64),
                    Cell::Int(t.total_ns),
                    share,
                ],
                Default::default(),
            );
        }
        table
    }
}
