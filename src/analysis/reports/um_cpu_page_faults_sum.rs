//! `um_cpu_page_faults_sum` (Unified Memory CPU Page Faults Summary), after Nsight Systems
//! 2023.4.4's `reports/um_cpu_page_faults_sum.py`: CPU page faults on managed memory counted by
//! the function of the faulting instruction, most first. Nsight Systems 2025.3.1's script adds
//! the instruction's `Source File` and `Source Line` and groups by them too (an export without
//! those columns prints them empty).

use crate::trace::Needs;
use std::collections::HashMap;

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::NsysFormat;
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::{StrId, StringTable};

pub struct UmCpuPageFaultsSum;

/// What the faults are grouped by: the instruction, then (2025.3) its source file and line.
type FaultKey = (StrId, StrId, Option<i64>);

impl StatsReport for UmCpuPageFaultsSum {
    fn name(&self) -> &'static str {
        "um_cpu_page_faults_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::UNIFIED_MEMORY
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
        let with_source = input.nsys_format == NsysFormat::V2025_3;
        let mut counts: HashMap<FaultKey, i64> = HashMap::new();
        for i in 0..faults.spans.len() {
            if !input.filter.range.contains(faults.spans.start_ns[i]) {
                continue;
            }
            let key = if with_source {
                (
                    faults.spans.name[i],
                    faults
                        .source_file
                        .get(i)
                        .copied()
                        .unwrap_or(StringTable::EMPTY),
                    faults.source_line.get(i).copied().flatten(),
                )
            } else {
                (faults.spans.name[i], StringTable::EMPTY, None)
            };
            *counts.entry(key).or_default() += 1;
        }
        let mut rows: Vec<(FaultKey, i64)> = counts.into_iter().collect();
        // ORDER BY count DESC; equal counts keep the GROUP BY order (the string ids, which
        // string ids follow: they are interned in the file's id order; NULL first).
        rows.sort_by_key(|&(key, n)| (std::cmp::Reverse(n), key));
        let mut columns = vec!["CPU Page Faults", "CPU Instruction Address"];
        if with_source {
            columns.extend(["Source File", "Source Line"]);
        }
        let mut table = Table::new(&columns);
        for ((name, file, line), n) in rows {
            let mut cells = vec![Cell::Int(n), Cell::text(trace.shared_str(name))];
            if with_source {
                cells.push(if file == StringTable::EMPTY {
                    Cell::Null
                } else {
                    Cell::text(trace.shared_str(file))
                });
                cells.push(Cell::opt_int(line));
            }
            table.push(cells, RowEvents::None);
        }
        table
    }
}
