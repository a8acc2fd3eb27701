//! `openacc_sum` (OpenACC Summary), after Nsight Systems 2023.4.4's `reports/openacc_sum.py`:
//! the OpenACC events of every `CUPTI_ACTIVITY_KIND_OPENACC_*` table grouped by name — with
//! `@file:line` when the event names its source file — rows by total time descending.
//!
//! nsys looks for tables with that prefix; an export without any (such as the pre-2021.2 one of
//! an OpenACC program in ../shared/traces, whose OpenACC work is only driver calls and kernels)
//! has no OpenACC event data, and the report is empty.

use super::duration_summary::{Groups, header};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::table::{Cell, Table};
use crate::trace::Needs;

pub struct OpenaccSum;

impl StatsReport for OpenaccSum {
    fn name(&self) -> &'static str {
        "openacc_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::OPENACC
    }

    fn title(&self) -> &'static str {
        "OpenACC Summary"
    }

    fn missing_data(&self) -> &'static str {
        "OpenACC event data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let acc = &trace.openacc;
        // Grouped by the printed name; no event table to point into, so no events.
        let mut groups: Groups<String> = Groups::new(false);
        for i in 0..acc.spans.len() {
            if !input.filter.range.contains(acc.spans.start_ns[i]) {
                continue;
            }
            let name = trace.str(acc.spans.name[i]);
            let key = match acc.source_file[i] {
                Some(file) => format!("{name}@{}:{}", trace.str(file), acc.line[i]),
                None => name.to_string(),
            };
            groups
                .by_key
                .entry(key)
                .or_default()
                .push(acc.spans.duration_ns(i), None);
        }
        let (mut rows, grand_total) = groups.summarize();
        // ORDER BY total DESC; equal totals keep the GROUP BY order (the name).
        rows.sort_by(|a, b| b.stats.total.cmp(&a.stats.total).then(a.key.cmp(&b.key)));
        let mut table = Table::new(&header("Num Calls", &["Name"]));
        for mut row in rows {
            let mut cells = row.leading_cells(grand_total, input.nsys_format);
            let events = row.take_events();
            cells.push(Cell::text(row.key.as_str()));
            table.push(cells, events);
        }
        table
    }
}
