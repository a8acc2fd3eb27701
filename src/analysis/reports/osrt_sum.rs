//! `osrt_sum` (OS Runtime Summary), after nsys 2023.4.4's `osrt_sum.py`: OS runtime calls
//! (`eventClass` 27 only; the profiling start/stop instants are not calls) grouped by name, rows
//! by total time descending.

use super::duration_summary::{Groups, header};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, Table};
use crate::trace::Needs;
use crate::trace::{OsrtCalls, StrId};

pub struct OsrtSum;

impl StatsReport for OsrtSum {
    fn name(&self) -> &'static str {
        "osrt_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::OSRT
    }

    fn title(&self) -> &'static str {
        "OS Runtime Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OS Runtime trace data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let osrt = &trace.osrt;
        let mut groups: Groups<StrId> = Groups::new(input.with_events);
        for i in input.filter.indices(trace, EventTable::Osrt) {
            if osrt.event_class.get(i).copied() != Some(OsrtCalls::CALL) {
                continue;
            }
            groups.add(osrt.spans.name[i], osrt.spans.duration_ns(i), || {
                EventRef::new(EventTable::Osrt, i)
            });
        }
        let (mut rows, grand_total) = groups.summarize();
        // ORDER BY total DESC; equal totals keep the GROUP BY order (nameId, which string ids
        // follow: they are interned in the file's id order).
        rows.sort_by(|a, b| b.stats.total.cmp(&a.stats.total).then(a.key.cmp(&b.key)));
        let mut table = Table::new(&header("Num Calls", &["Name"]));
        for mut row in rows {
            let mut cells = row.leading_cells(grand_total, input.nsys_format);
            let events = row.take_events();
            cells.push(Cell::text(trace.shared_str(row.key)));
            table.push(cells, events);
        }
        table
    }
}
