//! OpenMP events (`OPENMP_EVENT_KIND_*` tables, one per OMPT event kind, recorded with
//! `--trace=openmp`): parallel regions, barriers, tasks, locks, ..., read by `openmp_sum`.

use super::events::Spans;

/// Every OpenMP event, table by table (in table-name order), each table in file order;
/// `spans.name` is the event name.
#[derive(Debug, Default, Clone)]
pub struct OpenMpEvents {
    pub spans: Spans,
    /// Index into `tables` of the table the row came from.
    pub table: Vec<u16>,
    pub global_tid: Vec<i64>,
    /// The `OPENMP_EVENT_KIND_*` tables of the export, by name (also the empty ones).
    pub tables: Vec<String>,
}
