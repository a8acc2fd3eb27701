//! The report tables of the analysis panel without the drawing: which rows the name filter and
//! the sort leave and in what order, the events behind a row (to outline them in the timeline),
//! and the histogram of their durations.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use crate::analysis::{Cell, EventRef, EventTable, Row, RowEvents, Table};
use crate::trace::Trace;

/// How the rows are ordered; `None` in the panel keeps the report's own (nsys) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sort {
    /// Index into the table's columns.
    pub column: usize,
    pub descending: bool,
}

/// Is column `c` of `table` numeric (every non-empty cell of its first rows a number)?
pub fn is_numeric_column(table: &Table, c: usize) -> bool {
    table
        .rows
        .iter()
        .take(256)
        .filter_map(|r| r.cells.get(c))
        .filter(|cell| **cell != Cell::Null)
        .all(|cell| cell.number().is_some())
}

/// How a table is shown, computed off the UI thread whenever the table, the name filter or the
/// sort changes: the rows and their order, which columns are numbers, which is the name (drawn
/// first), how wide each column is in characters, and, per text column, the texts that keep their
/// end when cut to fit (see [`crate::export::elide::keeps_end_each`]; among the first
/// [`KEEPS_END_ROWS`] rows shown, others keep their start).
#[derive(Debug, Clone, PartialEq)]
pub struct TableLayout {
    pub order: RowOrder,
    pub numeric: Vec<bool>,
    pub name_column: Option<usize>,
    pub width_chars: Vec<usize>,
    pub keeps_end: Vec<HashSet<String>>,
    /// For the name column's texts (among the first [`KEEPS_END_ROWS`] rows shown), where each
    /// starts to differ from the one most like it (see [`crate::export::elide::differs_at_each`]).
    pub name_differs_at: HashMap<String, usize>,
}

/// Rows whose texts decide where each is cut (see [`TableLayout::keeps_end`]).
pub const KEEPS_END_ROWS: usize = 10_000;

impl TableLayout {
    pub fn of(table: &Table, name_filter: &str, sort: Option<Sort>) -> TableLayout {
        let order = RowOrder::of(table, name_filter, sort);
        let columns = table.columns.len();
        let numeric: Vec<bool> = (0..columns).map(|c| is_numeric_column(table, c)).collect();
        // The widest text of each column among the first rows shown.
        let widest: Vec<usize> = (0..columns)
            .map(|c| {
                order
                    .slice(0..order.len().min(200))
                    .filter_map(|i| table.rows.get(i)?.cells.get(c))
                    .map(|cell| cell.csv_text().chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        // The name is the text column titled `Name` (`Kernel Name`, …) — op_efficiency's
        // Input Dims are longer than its names —, else the one with the longest texts (a
        // kernel or range name, not a style or a kind); ties go to the leftmost.
        let titled_name = (0..columns).find(|&c| {
            let title = table.columns[c].as_str();
            !numeric[c] && (title == "Name" || title.ends_with(" Name"))
        });
        let name_column = titled_name.or_else(|| {
            (0..columns)
                .filter(|&c| !numeric[c])
                .max_by_key(|&c| (widest[c], std::cmp::Reverse(c)))
        });
        let width_chars = (0..columns)
            .map(|c| widest[c].max(table.columns[c].chars().count()))
            .collect();
        // The texts of column `c` in the first rows shown, which decide how its names elide.
        let top_texts = |c: usize| -> Vec<String> {
            order
                .slice(0..order.len().min(KEEPS_END_ROWS))
                .filter_map(|i| table.rows.get(i)?.cells.get(c))
                .map(Cell::csv_text)
                .collect()
        };
        let keeps_end = (0..columns)
            .map(|c| {
                if numeric[c] {
                    return HashSet::new();
                }
                let texts = top_texts(c);
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let ends = crate::export::elide::keeps_end_each(&refs);
                texts
                    .iter()
                    .zip(ends)
                    .filter(|(_, end)| *end)
                    .map(|(t, _)| t.clone())
                    .collect()
            })
            .collect();
        let name_differs_at = name_column
            .map(|c| {
                let texts = top_texts(c);
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let at = crate::export::elide::differs_at_each(&refs);
                texts.into_iter().zip(at).collect()
            })
            .unwrap_or_default();
        TableLayout {
            order,
            numeric,
            name_column,
            width_chars,
            keeps_end,
            name_differs_at,
        }
    }
}

fn compare(a: &Row, b: &Row, column: usize) -> Ordering {
    match (a.cells.get(column), b.cells.get(column)) {
        (Some(x), Some(y)) => match (x.number(), y.number()) {
            (Some(p), Some(q)) => p.total_cmp(&q),
            (Some(_), None) => Ordering::Greater,
            (None, Some(_)) => Ordering::Less,
            (None, None) => x.csv_text().cmp(&y.csv_text()),
        },
        _ => Ordering::Equal,
    }
}

/// Does any text cell of `row` contain `needle` (already lower case)?
pub fn row_matches(row: &Row, needle: &str) -> bool {
    needle.is_empty()
        || row.cells.iter().any(|c| match c {
            Cell::Text(t) => t.as_str().to_lowercase().contains(needle),
            _ => false,
        })
}

/// The rows shown and their order: every row in the report's order (no work, however long the
/// table), or the indices the name filter and the sort left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowOrder {
    All(usize),
    Some(Vec<usize>),
}

impl RowOrder {
    /// The rows `name_filter` and `sort` leave (see [`visible_rows`]); with neither, all of them
    /// without building an index.
    pub fn of(table: &Table, name_filter: &str, sort: Option<Sort>) -> RowOrder {
        if name_filter.trim().is_empty() && sort.is_none() {
            RowOrder::All(table.rows.len())
        } else {
            RowOrder::Some(visible_rows(table, name_filter, sort))
        }
    }

    pub fn len(&self) -> usize {
        match self {
            RowOrder::All(n) => *n,
            RowOrder::Some(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The table row shown at position `k`.
    pub fn get(&self, k: usize) -> Option<usize> {
        match self {
            RowOrder::All(n) => (k < *n).then_some(k),
            RowOrder::Some(v) => v.get(k).copied(),
        }
    }

    /// The table rows shown at positions `range`.
    pub fn slice(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = usize> + '_ {
        range.filter_map(move |k| self.get(k))
    }
}

/// Indices into `table.rows` of the rows with a text cell containing `name_filter` (any case),
/// ordered by `sort` (ties keep the report's order), or in the report's order without one.
pub fn visible_rows(table: &Table, name_filter: &str, sort: Option<Sort>) -> Vec<usize> {
    let needle = name_filter.trim().to_lowercase();
    let mut rows: Vec<usize> = (0..table.rows.len())
        .filter(|&i| row_matches(&table.rows[i], &needle))
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

/// The events a row stands for (none for a span or a total).
pub fn row_events(row: &Row) -> Vec<(EventTable, usize)> {
    match &row.events {
        RowEvents::Events(events) => events
            .iter()
            .map(|e: &EventRef| (e.table, e.index as usize))
            .collect(),
        RowEvents::None | RowEvents::Span { .. } => Vec::new(),
    }
}

/// A number as the panel shows it: times (columns headed `… (ns)`) in fitting units, other
/// numbers as nsys prints them.
pub fn pretty_number(column: &str, cell: &Cell, duration: impl Fn(f64) -> String) -> String {
    match cell.number() {
        Some(v) if column.ends_with("(ns)") => duration(v),
        _ => cell.csv_text(),
    }
}

/// Duration of an event.
pub fn event_duration(trace: &Trace, event: (EventTable, usize)) -> i64 {
    event_bounds(trace, event).map_or(0, |(s, e)| e - s)
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

    fn row(name: &str, total: i64, count: i64) -> Row {
        Row::new(vec![Cell::Int(total), Cell::Int(count), Cell::text(name)])
    }

    #[test]
    fn filters_by_text_and_sorts_with_ties_in_report_order() {
        let mut table = Table::new(&["Total", "Count", "Name"]);
        table.rows = vec![
            row("gemm_a", 40, 2),
            row("Softmax", 5, 1),
            row("gemm_b", 40, 1),
            row("relu", 3, 3),
        ];
        assert_eq!(visible_rows(&table, "", None), vec![0, 1, 2, 3]);
        assert_eq!(visible_rows(&table, " GEMM", None), vec![0, 2]);
        let by = |column, descending| Some(Sort { column, descending });
        assert_eq!(visible_rows(&table, "", by(0, true)), vec![0, 2, 1, 3]);
        assert_eq!(visible_rows(&table, "", by(1, false)), vec![1, 2, 0, 3]);
        assert_eq!(visible_rows(&table, "", by(2, false)), vec![1, 0, 2, 3]);
        assert!(is_numeric_column(&table, 0));
        assert!(!is_numeric_column(&table, 2));
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
