//! OpenACC activity (`CUPTI_ACTIVITY_KIND_OPENACC_DATA`, `_LAUNCH`, `_OTHER`, recorded with
//! `--trace=openacc`): the directives' data movements, kernel launches and other runtime events,
//! read by `openacc_sum`.

use super::events::Spans;
use super::strings::StrId;

/// Which `CUPTI_ACTIVITY_KIND_OPENACC_*` table a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpenAccKind {
    Data,
    Launch,
    Other,
}

/// Every OpenACC event, table by table in file order; `spans.name` is the event name
/// (`acc_enqueue_launch`, ...).
#[derive(Debug, Default, Clone)]
pub struct OpenAccEvents {
    pub spans: Spans,
    pub kind: Vec<OpenAccKind>,
    pub global_tid: Vec<i64>,
    /// Source file of the directive, when the export names one (`srcFile`).
    pub source_file: Vec<Option<StrId>>,
    /// Line of the directive in it (`lineNo`).
    pub line: Vec<i64>,
    /// The export has at least one `CUPTI_ACTIVITY_KIND_OPENACC_*` table (nsys's `openacc_sum`
    /// runs only then).
    pub has_tables: bool,
}
