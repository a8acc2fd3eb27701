//! Why a report came out empty, when the reason is damage: "no rows of this kind" (nsys's own
//! "does not contain CUDA kernel data") and "rows of this kind, none readable" are different
//! things to a user, and the second must say what was wrong with them ("has 52 kernel rows, none
//! readable (52 end before they start)"). Read from the per-table row counts the loader keeps.

use crate::trace::Trace;
use crate::trace::load_warnings::table_noun;

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
const DRIVER: &str = "CUPTI_ACTIVITY_KIND_DRIVER";

/// The export tables behind the data a report's `missing_data()` names ("CUDA kernel data").
/// Empty for data this module does not know, whose reports keep nsys's message.
pub fn tables_for(missing_data: &str) -> &'static [&'static str] {
    match missing_data {
        "CUDA kernel data" => &[KERNEL],
        "CUDA API data" | "CUDA trace data" => &[RUNTIME, DRIVER],
        "GPU memory data" => &[MEMCPY, MEMSET],
        "GPU kernel/memory operations data" | "CUDA kernel/memory operations data" => {
            &[KERNEL, MEMCPY, MEMSET]
        }
        "CUDA API, GPU kernel, nor memory operations data" => {
            &[RUNTIME, DRIVER, KERNEL, MEMCPY, MEMSET]
        }
        "NV Tools Extension (NVTX) data" => &["NVTX_EVENTS"],
        "OS Runtime trace data" => &["OSRT_API"],
        "GPU metrics data" => &["GPU_METRICS"],
        "thread scheduling data (SCHED_EVENTS)" => &["SCHED_EVENTS"],
        "CPU sample data with call stacks (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS)" => {
            &["COMPOSITE_EVENTS"]
        }
        "CUDA Unified Memory CPU page faults data" => &["CUDA_UM_CPU_PAGE_FAULT_EVENTS"],
        _ => &[],
    }
}

/// When the trace has rows of the kind `missing_data` names but the loader could keep none of
/// them: "has 52 kernel rows, none readable (52 end before they start)". `None` when the tables
/// have no rows (the report is rightly empty) or some rows were kept (it is empty for another
/// reason, e.g. the range).
pub fn none_readable(trace: &Trace, missing_data: &str) -> Option<String> {
    let warnings = &trace.warnings;
    let tables: Vec<_> = tables_for(missing_data)
        .iter()
        .filter_map(|t| warnings.table(t))
        .filter(|t| t.read > 0)
        .collect();
    if tables.is_empty() || tables.iter().any(|t| t.kept() > 0) {
        return None;
    }
    let had: Vec<String> = tables
        .iter()
        .map(|t| {
            let noun = table_noun(&t.table);
            let rows = if t.read == 1 { "row" } else { "rows" };
            format!("{} {noun} {rows}", t.read)
        })
        .collect();
    let reasons: Vec<String> = tables
        .iter()
        .flat_map(|t| warnings.skipped_in(&t.table))
        .map(|w| w.reason())
        .collect();
    let none = if had.len() == 1 && tables[0].read == 1 {
        "not readable"
    } else {
        "none readable"
    };
    Some(format!(
        "has {}, {none} ({})",
        had.join(" and "),
        reasons.join(", ")
    ))
}

/// What the command line and the window say after the report's name and the file when a report
/// is empty: "does not contain CUDA kernel data", or, when its rows are there but unreadable,
/// [`none_readable`]'s sentence.
pub fn empty_reason(trace: &Trace, missing_data: &str) -> String {
    none_readable(trace, missing_data).unwrap_or_else(|| format!("does not contain {missing_data}"))
}
