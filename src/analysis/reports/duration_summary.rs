//! What the duration summaries (`cuda_gpu_sum`, `cuda_api_gpu_sum`, `cuda_gpu_kern_gb_sum`,
//! `osrt_sum`, `cuda_gpu_kern_sum` with options) share: groups of durations with the events behind
//! them, and the eight leading columns nsys's scripts compute for each group — `Time (%)` as
//! `round(total * 100.0 / grand_total, 1)`, the total, the count, then avg/med/min/max/stddev
//! with avg, median and the sample stddev rounded to 0.1 ([`Summary::of`]).

use std::collections::HashMap;
use std::hash::Hash;

use crate::analysis::NsysFormat;
use crate::analysis::stats::Summary;
use crate::analysis::table::{Cell, EventRef, RowEvents};

/// The durations of one group, and its events when the caller wants them.
#[derive(Debug, Default)]
pub struct Durations {
    pub values: Vec<i64>,
    pub events: Vec<EventRef>,
}

impl Durations {
    pub fn push(&mut self, duration_ns: i64, event: Option<EventRef>) {
        self.values.push(duration_ns);
        if let Some(e) = event {
            self.events.push(e);
        }
    }

    pub fn extend(&mut self, mut other: Durations) {
        self.values.append(&mut other.values);
        self.events.append(&mut other.events);
    }
}

/// Durations grouped by a key.
pub struct Groups<K> {
    pub by_key: HashMap<K, Durations>,
    with_events: bool,
}

impl<K: Hash + Eq> Groups<K> {
    pub fn new(with_events: bool) -> Self {
        Self {
            by_key: HashMap::new(),
            with_events,
        }
    }

    /// Adds one event's duration to the group of `key`; `event` is kept only when events are
    /// wanted, so the closure costs nothing otherwise.
    pub fn add(&mut self, key: K, duration_ns: i64, event: impl FnOnce() -> EventRef) {
        let ev = self.with_events.then(event);
        self.by_key.entry(key).or_default().push(duration_ns, ev);
    }

    /// Re-keys the groups with `f`, merging groups that map to the same new key (e.g. ids that
    /// print the same name).
    pub fn map_keys<L: Hash + Eq>(self, mut f: impl FnMut(K) -> L) -> Groups<L> {
        let mut by_key: HashMap<L, Durations> = HashMap::with_capacity(self.by_key.len());
        for (k, d) in self.by_key {
            match by_key.entry(f(k)) {
                std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().extend(d),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(d);
                }
            }
        }
        Groups {
            by_key,
            with_events: self.with_events,
        }
    }

    /// Moves every group of `other` into `self`, merging equal keys.
    pub fn merge(&mut self, other: Groups<K>) {
        for (k, d) in other.by_key {
            self.by_key.entry(k).or_default().extend(d);
        }
    }

    /// One summarised row per group, in no particular order, with the sum of all totals.
    pub fn summarize(self) -> (Vec<SummaryRow<K>>, i64) {
        let rows: Vec<SummaryRow<K>> = self
            .by_key
            .into_iter()
            .map(|(key, mut d)| SummaryRow {
                stats: Summary::of(&mut d.values),
                key,
                events: d.events,
            })
            .collect();
        let grand_total = rows
            .iter()
            .fold(0i64, |sum, r| sum.saturating_add(r.stats.total));
        (rows, grand_total)
    }
}

/// One group, summarised.
pub struct SummaryRow<K> {
    pub key: K,
    pub stats: Summary,
    pub events: Vec<EventRef>,
}

impl<K> SummaryRow<K> {
    /// `Time (%)`, `Total Time (ns)`, count, `Avg`, `Med`, `Min`, `Max`, `StdDev (ns)`.
    pub fn leading_cells(&self, grand_total: i64, format: NsysFormat) -> Vec<Cell> {
        let s = &self.stats;
        let round = |x: f64| Cell::Float(format.round(x, 1));
        // SQLite divides by a zero total to NULL.
        let percent = if grand_total == 0 {
            Cell::Null
        } else {
            round(s.total as f64 * 100.0 / grand_total as f64)
        };
        let mut cells = vec![percent, Cell::Int(s.total), Cell::Int(s.count as i64)];
        cells.extend(spread_cells(s, format));
        cells
    }

    /// The row's events for the panel (none when they were not collected).
    pub fn take_events(&mut self) -> RowEvents {
        if self.events.is_empty() {
            RowEvents::None
        } else {
            RowEvents::Events(std::mem::take(&mut self.events))
        }
    }
}

/// `Avg`, `Med`, `Min`, `Max`, `StdDev` of a summary as nsys prints them: the averages and the
/// deviation rounded to 0.1 in SQL (by `format`'s SQLite), the extremes exact.
pub fn spread_cells(s: &Summary, format: NsysFormat) -> [Cell; 5] {
    let round = |x: f64| Cell::Float(format.round(x, 1));
    [
        round(s.avg),
        round(s.median),
        Cell::Int(s.min),
        Cell::Int(s.max),
        round(s.stddev),
    ]
}

/// The header of a duration summary: the eight leading columns (`count` names the third),
/// then `tail`.
pub fn header<'a>(count: &'a str, tail: &[&'a str]) -> Vec<&'a str> {
    let mut h = vec![
        "Time (%)",
        "Total Time (ns)",
        count,
        "Avg (ns)",
        "Med (ns)",
        "Min (ns)",
        "Max (ns)",
        "StdDev (ns)",
    ];
    h.extend_from_slice(tail);
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::filter::EventTable;

    #[test]
    fn merges_groups_and_rounds_as_sqlite() {
        let mut g: Groups<u32> = Groups::new(true);
        g.add(1, 10, || EventRef::new(EventTable::Kernels, 0));
        g.add(2, 20, || EventRef::new(EventTable::Kernels, 1));
        g.add(3, 5, || EventRef::new(EventTable::Kernels, 2));
        let (mut rows, total) = g.map_keys(|k| k.min(2)).summarize();
        rows.sort_by_key(|r| r.key);
        assert_eq!(total, 35);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].stats.count, 2);
        assert_eq!(rows[1].events.len(), 2);
        let cells = rows[0].leading_cells(total, NsysFormat::V2023_4);
        assert_eq!(cells[0], Cell::Float(28.6));
        assert_eq!(rows[0].leading_cells(0, NsysFormat::V2023_4)[0], Cell::Null);
    }
}
