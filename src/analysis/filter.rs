//! Which events an analysis counts: those whose start lies in a time range and that are not
//! excluded (e.g. by warm-up exclusion).

use super::range::TimeRange;
use crate::trace::Trace;

/// The event tables an analysis can filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventTable {
    Kernels,
    Memcpys,
    Memsets,
    ApiCalls,
    Nvtx,
    Osrt,
}

/// Per-table exclusion flags, indexed like the trace's tables.
#[derive(Debug, Clone, Default)]
pub struct Excluded {
    pub kernels: Vec<bool>,
    pub memcpys: Vec<bool>,
    pub memsets: Vec<bool>,
    pub api_calls: Vec<bool>,
    pub nvtx: Vec<bool>,
    pub osrt: Vec<bool>,
}

impl Excluded {
    pub fn is_excluded(&self, table: EventTable, i: usize) -> bool {
        let v = match table {
            EventTable::Kernels => &self.kernels,
            EventTable::Memcpys => &self.memcpys,
            EventTable::Memsets => &self.memsets,
            EventTable::ApiCalls => &self.api_calls,
            EventTable::Nvtx => &self.nvtx,
            EventTable::Osrt => &self.osrt,
        };
        v.get(i).copied().unwrap_or(false)
    }
}

/// A time range plus optional exclusions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    pub range: TimeRange,
    pub excluded: Option<&'a Excluded>,
}

impl<'a> Filter<'a> {
    pub fn all() -> Self {
        Self::default()
    }

    pub fn range(range: TimeRange) -> Self {
        Self {
            range,
            excluded: None,
        }
    }

    /// Does event `i` of `table`, starting at `start_ns`, count?
    pub fn keeps(&self, table: EventTable, i: usize, start_ns: i64) -> bool {
        self.range.contains(start_ns) && !self.excluded.is_some_and(|e| e.is_excluded(table, i))
    }

    /// Indices of the events of `table` this filter keeps.
    pub fn indices(&self, trace: &Trace, table: EventTable) -> Vec<usize> {
        let starts = match table {
            EventTable::Kernels => &trace.kernels.spans.start_ns,
            EventTable::Memcpys => &trace.memcpys.spans.start_ns,
            EventTable::Memsets => &trace.memsets.spans.start_ns,
            EventTable::ApiCalls => &trace.api_calls.spans.start_ns,
            EventTable::Nvtx => &trace.nvtx.spans.start_ns,
            EventTable::Osrt => &trace.osrt.spans.start_ns,
        };
        (0..starts.len())
            .filter(|&i| self.keeps(table, i, starts[i]))
            .collect()
    }
}
