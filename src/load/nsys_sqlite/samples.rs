//! Reader for CPU samples: `COMPOSITE_EVENTS` (one row per sample: id, time, thread) with the
//! call stack of each in `SAMPLING_CALLCHAINS` (same id). Rows come back in file order with the
//! `globalTid` of each; assembly sorts them by thread.

use super::callchains::{StacksRead, T_SAMPLING_CALLCHAINS, read_callchains};
use super::connection::int;
use super::reader::{FileStrings, Reader};
use crate::load::LoadError;
use crate::trace::{CallStacks, LoadWarnings, NO_STACK, StackId};

pub const T_SAMPLES: &str = "COMPOSITE_EVENTS";
pub const SAMPLE_COLUMNS: &[&str] = &["id", "start", "globalTid"];

/// The samples of a file, in file order, before they are sorted by thread.
#[derive(Debug, Default)]
pub struct SamplesRead {
    pub time_ns: Vec<i64>,
    pub global_tid: Vec<i64>,
    /// Stack ids into `stacks`.
    pub stack: Vec<StackId>,
    pub stacks: CallStacks,
}

pub fn read_samples(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(SamplesRead, LoadWarnings), LoadError> {
    let mut warnings = LoadWarnings::default();
    let mut out = SamplesRead::default();
    if !r.schema.has_table(T_SAMPLES) {
        return Ok((out, warnings));
    }
    let StacksRead { stacks, by_file_id } =
        read_callchains(r, strings, T_SAMPLING_CALLCHAINS, &mut warnings)?;
    let conn = r.open()?;
    let sql = format!(
        "{} ORDER BY rowid",
        r.schema.select(T_SAMPLES, SAMPLE_COLUMNS)
    );
    let (mut no_time, mut no_thread) = (0u64, 0u64);
    r.for_each_row(&conn, T_SAMPLES, &sql, |row| {
        let Some(time) = int(row, 1) else {
            no_time += 1;
            return;
        };
        let Some(tid) = int(row, 2) else {
            no_thread += 1;
            return;
        };
        let stack = int(row, 0)
            .and_then(|id| by_file_id.get(&id).copied())
            .unwrap_or(NO_STACK);
        out.time_ns.push(time);
        out.global_tid.push(tid);
        out.stack.push(stack);
    })?;
    out.stacks = stacks;
    warnings.skip(T_SAMPLES, "[has|have] no time (skipped)", no_time);
    warnings.skip(T_SAMPLES, "[has|have] no thread (skipped)", no_thread);
    Ok((out, warnings))
}
