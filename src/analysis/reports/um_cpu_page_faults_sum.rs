//! `um_cpu_page_faults_sum` (Unified Memory CPU Page Faults Summary), after Nsight Systems
//! 2023.4.4's `reports/um_cpu_page_faults_sum.py`: CPU page faults on managed memory counted by
//! the function of the faulting instruction, most first.

use std::collections::HashMap;

use super::{ReportInput, StatsReport};
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::StrId;

pub struct UmCpuPageFaultsSum;

impl StatsReport for UmCpuPageFaultsSum {
    fn name(&self) -> &'static str {
        "um_cpu_page_faults_sum"
    }

    fn title(&self) -> &'static str {
        "Unified Memory CPU Page Faults Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let faults = &trace.unified_memory.cpu_page_faults;
        let mut counts: HashMap<StrId, i64> = HashMap::new();
        for i in 0..faults.spans.len() {
            if input.filter.range.contains(faults.spans.start_ns[i]) {
                *counts.entry(faults.spans.name[i]).or_default() += 1;
            }
        }
        let mut rows: Vec<(StrId, i64)> = counts.into_iter().collect();
        // ORDER BY count DESC; equal counts keep the GROUP BY order (the instruction's string
        // id, which string ids follow: they are interned in the file's id order).
        rows.sort_by_key(|&(name, n)| (std::cmp::Reverse(n), name));
        let mut table = Table::new(&["CPU Page Faults", "CPU Instruction Address"]);
        for (name, n) in rows {
            table.push(
                vec![Cell::Int(n), Cell::text(trace.str(name))],
                RowEvents::None,
            );
        }
        table
    }
}
