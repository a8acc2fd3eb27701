//! The keys the panel's caches and jobs are looked up by: which trace ([`TraceKey`]), what every
//! range analysis depends on ([`InputsKey`]), a table's layout ([`LayoutKey`]) and a statistics row
//! across recomputations ([`RowKey`]).

use super::*;

/// Which trace the caches were computed for. The address alone could be reused by the next
/// trace after the app drops the old one, so the key adds what tells two traces apart cheaply.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct TraceKey {
    addr: usize,
    path: PathBuf,
    events: usize,
    first_ns: i64,
    last_ns: i64,
}

impl TraceKey {
    pub(super) fn of(trace: &Trace) -> Self {
        Self {
            addr: std::ptr::from_ref(trace) as usize,
            path: trace.path.clone(),
            events: trace.event_count(),
            first_ns: trace.first_ns,
            last_ns: trace.last_ns,
        }
    }

    /// Checked every frame, so it compares without building a key.
    pub(super) fn matches(&self, trace: &Trace) -> bool {
        self.addr == std::ptr::from_ref(trace) as usize
            && self.events == trace.event_count()
            && self.first_ns == trace.first_ns
            && self.last_ns == trace.last_ns
            && self.path == trace.path
    }
}

/// What every range analysis depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputsKey {
    pub(super) trace_generation: u64,
    pub(super) selection: TimeRange,
    pub(super) exclusion_generation: u64,
    /// Whose output the reports and rules copy.
    pub(super) nsys_format: NsysFormat,
}

/// What a table's layout depends on: the table (by its inputs and report), the name filter and
/// the sort.
/// The table's inputs and report, the name filter, the sort, and the attached Nsight Compute
/// report the kernel summary took its columns from (its address; 0: none).
pub(super) type LayoutKey = (InputsKey, &'static str, String, Option<Sort>, usize);

/// Names a row across recomputations: its report and its text cells (name, style, …), and where
/// it was when chosen, which tells apart rows whose text is the same (the rows of a dump, one
/// kernel launched from two threads).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RowKey {
    pub report: &'static str,
    pub text: Vec<String>,
    pub index: usize,
}

/// The text cells of a row.
fn row_text(row: &analysis::Row) -> impl Iterator<Item = &analysis::table::CellText> {
    row.cells.iter().filter_map(|c| match c {
        analysis::Cell::Text(t) => Some(t),
        _ => None,
    })
}

impl RowKey {
    pub fn of(report: &'static str, row: &analysis::Row, index: usize) -> Self {
        Self {
            report,
            text: row_text(row).map(ToString::to_string).collect(),
            index,
        }
    }

    fn names(&self, row: &analysis::Row) -> bool {
        row_text(row).map(|t| t.as_str()).eq(self
            .text
            .iter()
            .map(|s| std::borrow::Cow::Borrowed(s.as_str())))
    }

    /// The row of `table` this key names: the one at its index when that one still has its
    /// text, else the first with its text (after a new selection the rows move).
    pub fn find<'t>(&self, table: &'t Table) -> Option<&'t analysis::Row> {
        table
            .rows
            .get(self.index)
            .filter(|r| self.names(r))
            .or_else(|| table.rows.iter().find(|r| self.names(r)))
    }
}
