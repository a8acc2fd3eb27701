//! `gpu_gaps` (GPU Gaps), after Nsight Systems 2023.4.4's `rules/gpu_gaps.py`: the times a GPU
//! of a process sits idle for more than `gap=` ms (default 500) between the first and the last of
//! its operations, profiling overhead counted as busy ([`super::gpu_ops`]).
//!
//! nsys pairs the k-th start with the (k−1)-th end of the device's operations, each list sorted
//! on its own; where that end comes before that start, the time between is a gap. The gap reports
//! the process, device and context of the operation that ended it. Rows by duration descending,
//! then start.

use super::gpu_ops::device_ops;
use super::scope::{RuleScope, int_option};
use super::{Rule, RuleInput};
use crate::analysis::ReportOptions;
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::Needs;

pub struct GpuGaps;

/// `gap=` when absent, in ms.
pub const DEFAULT_GAP_MS: i64 = 500;

/// One idle time of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Gap {
    start_ns: i64,
    end_ns: i64,
    pid: u32,
    device: u32,
    context: u32,
}

impl Rule for GpuGaps {
    fn needs(&self, options: &ReportOptions) -> Needs {
        super::gpu_ops_needs(options)
    }

    fn name(&self) -> &'static str {
        "gpu_gaps"
    }

    fn title(&self) -> &'static str {
        "GPU Gaps"
    }

    // nsys fills in the `gap=` value; these read as nsys prints them for the default.
    fn advice(&self) -> &'static str {
        "The following are ranges where a GPU is idle for more than 500ms. Addressing these gaps \
         might improve application performance."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected with GPU utilization. GPU was not found to be idle for \
         more than 500ms."
    }

    fn options(&self) -> &'static [&'static str] {
        &["gap"]
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let scope = RuleScope::parse(input.trace, input.options)?;
        let gap_ms = int_option(input.options, "gap")?.unwrap_or(DEFAULT_GAP_MS);
        let threshold_ns = i128::from(gap_ms) * 1_000_000;
        let mut gaps = Vec::new();
        for device in device_ops(input, &scope) {
            let mut starts: Vec<i64> = device.ops.iter().map(|op| op.start_ns).collect();
            starts.sort_unstable();
            // Equal ends keep scan order, as the SQL window's sort does.
            let mut ends: Vec<(i64, u32)> = device
                .ops
                .iter()
                .map(|op| (op.end_ns, op.context))
                .collect();
            ends.sort_by_key(|e| e.0);
            for (&(end_ns, context), &start_ns) in ends.iter().zip(starts.iter().skip(1)) {
                let duration = i128::from(start_ns) - i128::from(end_ns);
                if duration > threshold_ns && end_ns < start_ns {
                    gaps.push(Gap {
                        start_ns: end_ns,
                        end_ns: start_ns,
                        pid: device.pid,
                        device: device.device,
                        context,
                    });
                }
            }
        }
        gaps.sort_by_key(|g| (std::cmp::Reverse(g.end_ns - g.start_ns), g.start_ns));
        // gpu_gaps.py also puts `LIMIT rows` inside the view the gaps come from, but SQLite does
        // not apply it there (nsys 2023.4.4 prints the longest `rows=` gaps of all).
        gaps.truncate(scope.limit(gaps.len()));
        let mut table = Table::new(&[
            "Row#",
            "Duration (ns)",
            "Start (ns)",
            "PID",
            "Device ID",
            "Context ID",
        ]);
        for (row, g) in gaps.iter().enumerate() {
            table.push(
                vec![
                    Cell::Int(row as i64 + 1),
                    Cell::Int(g.end_ns - g.start_ns),
                    Cell::Int(g.start_ns),
                    Cell::Int(i64::from(g.pid)),
                    Cell::Int(i64::from(g.device)),
                    Cell::Int(i64::from(g.context)),
                ],
                RowEvents::Span {
                    start_ns: g.start_ns,
                    end_ns: g.end_ns,
                    device: Some(g.device),
                },
            );
        }
        Ok(table)
    }
}
