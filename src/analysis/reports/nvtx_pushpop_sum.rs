//! `nvtx_pushpop_sum` (NVTX Push/Pop Range Summary), after Nsight Systems 2023.4.4
//! `nvtx_pushpop_sum.py`: the push/pop ranges grouped by printed name (`domain:text`), with the
//! duration columns of every duration summary; rows by total time, descending, ties by name.
//! [`summary_of_style`] is shared with `nvtx_startend_sum`, whose script differs only in the style.

use super::duration_summary::{Groups, header};
use super::nvtx_tree::printed_name;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, Table};
use crate::trace::Needs;
use crate::trace::NvtxStyle;

pub struct NvtxPushpopSum;

impl StatsReport for NvtxPushpopSum {
    fn name(&self) -> &'static str {
        "nvtx_pushpop_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX
    }

    fn title(&self) -> &'static str {
        "NVTX Push/Pop Range Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        summary_of_style(input, NvtxStyle::PushPop)
    }
}

/// The ranges of one style the filter keeps, summarised by printed name. Durations use the end
/// the loader gives an unclosed range (the largest NVTX timestamp), as these scripts do.
pub fn summary_of_style(input: &ReportInput, style: NvtxStyle) -> Table {
    let trace = input.trace;
    let n = &trace.nvtx;
    let mut groups = Groups::new(input.with_events);
    for i in input.filter.indices(trace, EventTable::Nvtx) {
        if n.style.get(i) != Some(&style) {
            continue;
        }
        groups.add(
            (n.domain[i], n.spans.name[i]),
            n.spans.duration_ns(i),
            || EventRef::new(EventTable::Nvtx, i),
        );
    }
    // Different (domain, text) pairs can print alike ("a:b" + "c", "a" + "b:c"); nsys groups by
    // the printed name.
    let (mut rows, grand_total) = groups
        .map_keys(|(domain, text)| printed_name(trace, domain, text, input.nsys_format))
        .summarize();
    rows.sort_by(|a, b| {
        b.stats
            .total
            .cmp(&a.stats.total)
            .then_with(|| a.key.cmp(&b.key))
    });
    let mut table = Table::new(&header("Instances", &["Range"]));
    for mut row in rows {
        let mut cells = row.leading_cells(grand_total, input.nsys_format);
        cells.push(row.key.take().map_or(Cell::Null, Cell::text));
        let events = row.take_events();
        table.push(cells, events);
    }
    table
}
