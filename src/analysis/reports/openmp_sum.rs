//! `openmp_sum` (OpenMP Summary), after Nsight Systems 2023.4.4's `reports/openmp_sum.py`: the
//! events of each `OPENMP_EVENT_KIND_*` table grouped by name, table by table (a name found in
//! two tables makes two rows), rows by total time descending.
//!
//! nsys unions the tables in the order of a Python set of table names, which is not fixed; rows
//! of equal total from different tables come here in table-name order.

use crate::trace::Needs;
use std::collections::HashMap;

use super::duration_summary::{Durations, Groups, header};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::table::{Cell, Table};
use crate::trace::StrId;

pub struct OpenmpSum;

impl StatsReport for OpenmpSum {
    fn name(&self) -> &'static str {
        "openmp_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::OPENMP
    }

    fn title(&self) -> &'static str {
        "OpenMP Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OpenMP event data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let omp = &trace.openmp;
        let mut by_table: HashMap<(u16, StrId), Durations> = HashMap::new();
        for i in 0..omp.spans.len() {
            if input.filter.range.contains(omp.spans.start_ns[i]) {
                by_table
                    .entry((omp.table[i], omp.spans.name[i]))
                    .or_default()
                    .push(omp.spans.duration_ns(i), None);
            }
        }
        // No event table to point into, so no events.
        let mut groups: Groups<(u16, StrId)> = Groups::new(false);
        groups.by_key = by_table;
        let (mut rows, grand_total) = groups.summarize();
        // ORDER BY total DESC; equal totals keep the union's order: table by table, each
        // grouped by name id (which string ids follow: they are interned in the file's id order).
        rows.sort_by(|a, b| b.stats.total.cmp(&a.stats.total).then(a.key.cmp(&b.key)));
        let mut table = Table::new(&header("Count", &["Name"]));
        for mut row in rows {
            let mut cells = row.leading_cells(grand_total, input.nsys_format);
            let events = row.take_events();
            cells.push(Cell::text(trace.shared_str(row.key.1)));
            table.push(cells, events);
        }
        table
    }
}
