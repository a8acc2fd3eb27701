//! The statistics table of the analysis panel without the drawing: which columns a report shows,
//! which rows the name filter and the sort leave and in what order, the events behind a row (to
//! highlight them in the timeline) and the histogram of their durations (or sizes).

use std::cmp::Ordering;

use crate::analysis::{EventTable, Filter, Report, ReportTable, SummaryRow};
use crate::trace::{NvtxStyle, StringTable, Trace};

/// A column the table can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortColumn {
    /// Share of the report's total (the same order as `Total`).
    Percent,
    Total,
    Count,
    Avg,
    Median,
    Min,
    Max,
    StdDev,
    /// NVTX only: PushPop or StartEnd.
    Style,
    Name,
}

impl SortColumn {
    /// Text columns sort ascending on the first click, numbers descending (largest first).
    pub fn first_direction_descending(self) -> bool {
        !matches!(self, SortColumn::Style | SortColumn::Name)
    }

    pub fn is_text(self) -> bool {
        matches!(self, SortColumn::Style | SortColumn::Name)
    }
}

/// How the rows are ordered; `None` in the panel keeps the report's own (nsys) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sort {
    pub column: SortColumn,
    pub descending: bool,
}

/// The columns of `report` in display order, with their headers. The name comes first (nsys
/// prints it last) because the panel is narrow and the name is what a person looks for; the
/// values are shown in fitting units, so the headers carry none.
pub fn columns(report: Report) -> Vec<(SortColumn, &'static str)> {
    let count = match report {
        Report::Kernels | Report::Nvtx => "Instances",
        Report::CudaApi => "Calls",
        Report::MemoryTime | Report::MemorySize => "Count",
    };
    let name = match report {
        Report::Kernels | Report::CudaApi => "Name",
        Report::Nvtx => "Range",
        Report::MemoryTime | Report::MemorySize => "Operation",
    };
    let mut cols = vec![(SortColumn::Name, name)];
    if report == Report::Nvtx {
        cols.push((SortColumn::Style, "Style"));
    }
    if report != Report::MemorySize {
        cols.push((SortColumn::Percent, "Time (%)"));
    }
    cols.extend([
        (SortColumn::Total, "Total"),
        (SortColumn::Count, count),
        (SortColumn::Avg, "Avg"),
        (SortColumn::Median, "Med"),
        (SortColumn::Min, "Min"),
        (SortColumn::Max, "Max"),
        (SortColumn::StdDev, "StdDev"),
    ]);
    cols
}

fn compare(a: &SummaryRow, b: &SummaryRow, column: SortColumn) -> Ordering {
    let (x, y) = (&a.stats, &b.stats);
    match column {
        SortColumn::Percent => a.percent.total_cmp(&b.percent),
        SortColumn::Total => x.total.cmp(&y.total),
        SortColumn::Count => x.count.cmp(&y.count),
        SortColumn::Avg => x.avg.total_cmp(&y.avg),
        SortColumn::Median => x.median.total_cmp(&y.median),
        SortColumn::Min => x.min.cmp(&y.min),
        SortColumn::Max => x.max.cmp(&y.max),
        SortColumn::StdDev => x.stddev.total_cmp(&y.stddev),
        SortColumn::Style => a.style.cmp(&b.style),
        SortColumn::Name => a.name.cmp(&b.name),
    }
}

/// Indices into `table.rows` of the rows whose name contains `name_filter` (any case), ordered by
/// `sort` (ties keep the report's order), or in the report's order without one.
pub fn visible_rows(table: &ReportTable, name_filter: &str, sort: Option<Sort>) -> Vec<usize> {
    let needle = name_filter.trim().to_lowercase();
    let mut rows: Vec<usize> = (0..table.rows.len())
        .filter(|&i| needle.is_empty() || table.rows[i].name.to_lowercase().contains(&needle))
        .collect();
    if let Some(sort) = sort {
        rows.sort_by(|&i, &j| {
            let o = compare(&table.rows[i], &table.rows[j], sort.column);
            let o = if sort.descending { o.reverse() } else { o };
            o.then(i.cmp(&j))
        });
    }
    rows
}

/// Names a row across recomputations (the same name and style in the same report).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub report: Report,
    pub name: String,
    pub style: Option<NvtxStyle>,
}

impl RowKey {
    pub fn of(report: Report, row: &SummaryRow) -> Self {
        Self {
            report,
            name: row.name.clone(),
            style: row.style,
        }
    }

    /// The row of `table` this key names, if it is still there.
    pub fn find<'t>(&self, table: &'t ReportTable) -> Option<&'t SummaryRow> {
        if table.report != self.report {
            return None;
        }
        table
            .rows
            .iter()
            .find(|r| r.name == self.name && r.style == self.style)
    }
}

/// The events `filter` keeps that `row` of `report` summarises, in table order (kernels of a
/// kernel row, calls of an API row, memcpys then memsets of a memory row, ranges of an NVTX row).
pub fn row_events(
    trace: &Trace,
    report: Report,
    row: &SummaryRow,
    filter: &Filter,
) -> Vec<(EventTable, usize)> {
    let named = |table: EventTable, names: &[u32]| -> Vec<(EventTable, usize)> {
        filter
            .indices(trace, table)
            .into_iter()
            .filter(|&i| names.get(i) == Some(&row.name_id))
            .map(|i| (table, i))
            .collect()
    };
    match report {
        Report::Kernels => named(EventTable::Kernels, &trace.kernels.spans.name),
        Report::CudaApi => named(EventTable::ApiCalls, &trace.api_calls.spans.name),
        Report::MemoryTime | Report::MemorySize => {
            let mut events = named(EventTable::Memcpys, &trace.memcpys.spans.name);
            // As in `analysis::stats`: the report joins ENUM_CUDA_MEMCPY_OPER, whose ids stop at 13.
            events.retain(|&(_, i)| trace.memcpys.copy_kind.get(i).is_some_and(|k| k.0 <= 13));
            events.extend(named(EventTable::Memsets, &trace.memsets.spans.name));
            events
        }
        Report::Nvtx => {
            let n = &trace.nvtx;
            filter
                .indices(trace, EventTable::Nvtx)
                .into_iter()
                .filter(|&i| {
                    n.style.get(i).copied() == row.style
                        && nvtx_printed_name_is(trace, i, &row.name)
                })
                .map(|i| (EventTable::Nvtx, i))
                .collect()
        }
    }
}

/// Does NVTX event `i` print as `name` in the NVTX report (`domain:text`, or `text` without a
/// domain)? Compared piecewise so that no string is built per event.
fn nvtx_printed_name_is(trace: &Trace, i: usize, name: &str) -> bool {
    let n = &trace.nvtx;
    let (Some(&text), Some(&domain)) = (n.spans.name.get(i), n.domain.get(i)) else {
        return false;
    };
    if domain == StringTable::EMPTY {
        return trace.str(text) == name;
    }
    name.strip_prefix(trace.str(domain))
        .and_then(|rest| rest.strip_prefix(':'))
        .is_some_and(|rest| rest == trace.str(text))
}

/// The value a report sums for one event: its duration, or its size in bytes for the memory
/// size report.
pub fn event_value(trace: &Trace, report: Report, (table, i): (EventTable, usize)) -> i64 {
    let spans = match table {
        EventTable::Kernels => &trace.kernels.spans,
        EventTable::Memcpys => &trace.memcpys.spans,
        EventTable::Memsets => &trace.memsets.spans,
        EventTable::ApiCalls => &trace.api_calls.spans,
        EventTable::Nvtx => &trace.nvtx.spans,
        EventTable::Osrt => &trace.osrt.spans,
    };
    if report == Report::MemorySize {
        let bytes = match table {
            EventTable::Memcpys => trace.memcpys.bytes.get(i),
            EventTable::Memsets => trace.memsets.bytes.get(i),
            _ => None,
        };
        return bytes.map_or(0, |&b| i64::try_from(b).unwrap_or(i64::MAX));
    }
    match (spans.start_ns.get(i), spans.end_ns.get(i)) {
        (Some(&s), Some(&e)) => e - s,
        _ => 0,
    }
}

/// `[start, end)` of an event.
pub fn event_bounds(trace: &Trace, (table, i): (EventTable, usize)) -> Option<(i64, i64)> {
    let spans = match table {
        EventTable::Kernels => &trace.kernels.spans,
        EventTable::Memcpys => &trace.memcpys.spans,
        EventTable::Memsets => &trace.memsets.spans,
        EventTable::ApiCalls => &trace.api_calls.spans,
        EventTable::Nvtx => &trace.nvtx.spans,
        EventTable::Osrt => &trace.osrt.spans,
    };
    Some((*spans.start_ns.get(i)?, *spans.end_ns.get(i)?))
}

/// Equal-width bins over `[min, max]` of some values.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// Left edge of the first bin.
    pub start: i64,
    /// Width of each bin (at least 1).
    pub bin_width: f64,
    /// Number of values in each bin; the last bin includes `max`.
    pub counts: Vec<u64>,
}

impl Histogram {
    /// Bins `values` into ⌈√n⌉ bins, at most `max_bins`; a single bin when all are equal.
    pub fn of(values: &[i64], max_bins: usize) -> Histogram {
        let (Some(&min), Some(&max)) = (values.iter().min(), values.iter().max()) else {
            return Histogram {
                start: 0,
                bin_width: 1.0,
                counts: Vec::new(),
            };
        };
        let span = (max - min) as f64;
        let bins = if span <= 0.0 {
            1
        } else {
            ((values.len() as f64).sqrt().ceil() as usize).clamp(1, max_bins.max(1))
        };
        let bin_width = (span / bins as f64).max(1.0);
        let mut counts = vec![0u64; bins];
        for &v in values {
            let b = (((v - min) as f64 / bin_width) as usize).min(bins - 1);
            counts[b] += 1;
        }
        Histogram {
            start: min,
            bin_width,
            counts,
        }
    }

    /// Centre of bin `b`.
    pub fn centre(&self, b: usize) -> f64 {
        self.start as f64 + (b as f64 + 0.5) * self.bin_width
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Summary;

    fn row(name: &str, values: &mut [i64]) -> SummaryRow {
        SummaryRow {
            name: name.into(),
            style: None,
            stats: Summary::of(values),
            percent: 0.0,
            name_id: 0,
        }
    }

    #[test]
    fn filters_by_name_and_sorts_with_ties_in_report_order() {
        let table = ReportTable {
            report: Report::Kernels,
            rows: vec![
                row("gemm_a", &mut [10, 30]),
                row("Softmax", &mut [5]),
                row("gemm_b", &mut [40]),
                row("relu", &mut [1, 1, 1]),
            ],
        };
        assert_eq!(visible_rows(&table, "", None), vec![0, 1, 2, 3]);
        assert_eq!(visible_rows(&table, " GEMM", None), vec![0, 2]);
        let by = |column, descending| Some(Sort { column, descending });
        assert_eq!(
            visible_rows(&table, "", by(SortColumn::Max, true)),
            vec![2, 0, 1, 3]
        );
        assert_eq!(
            visible_rows(&table, "", by(SortColumn::Count, false)),
            vec![1, 2, 0, 3]
        );
        assert_eq!(
            visible_rows(&table, "", by(SortColumn::Name, false)),
            vec![1, 0, 2, 3]
        );
    }

    #[test]
    fn histogram_bins_every_value_once() {
        let values: Vec<i64> = (0..100).map(|v| v * v).collect();
        let h = Histogram::of(&values, 40);
        assert_eq!(h.counts.len(), 10);
        assert_eq!(h.counts.iter().sum::<u64>(), 100);
        assert_eq!(h.start, 0);
        // The last bin holds the maximum.
        assert!(h.counts[9] > 0);
        let same = Histogram::of(&[7, 7, 7], 40);
        assert_eq!((same.start, same.counts.clone()), (7, vec![3]));
        assert!(Histogram::of(&[], 40).counts.is_empty());
    }
}
