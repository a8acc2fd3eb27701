//! Readers for call-stack tables: `SAMPLING_CALLCHAINS` (CPU samples), `CUDA_CALLCHAINS`
//! (`--cudabacktrace`) and `OSRT_CALLCHAINS`. Each holds one row per frame, keyed by
//! (id, stackDepth), depth 0 the innermost frame; a stack is interned once however many events
//! share it.

use std::collections::HashMap;

use super::connection::int;
use super::reader::{AT_MISSING_STRINGS, FileStrings, Reader, names_of};
use crate::load::LoadError;
use crate::trace::{CallStacks, CallStacksBuilder, Frame, LoadWarnings, StackId, StringTable};

pub const T_SAMPLING_CALLCHAINS: &str = "SAMPLING_CALLCHAINS";
pub const T_CUDA_CALLCHAINS: &str = "CUDA_CALLCHAINS";
pub const T_OSRT_CALLCHAINS: &str = "OSRT_CALLCHAINS";
pub const CALLCHAIN_COLUMNS: &[&str] = &["id", "symbol", "module", "stackDepth"];

/// The stacks of one callchain table and the stack of each file id.
#[derive(Debug, Default)]
pub struct StacksRead {
    pub stacks: CallStacks,
    pub by_file_id: HashMap<i64, StackId>,
}

/// Reads a callchain table: rows by (id, stackDepth), one stack per id.
pub fn read_callchains(
    r: &Reader,
    strings: &FileStrings,
    table: &str,
    warnings: &mut LoadWarnings,
) -> Result<StacksRead, LoadError> {
    let mut out = StacksRead::default();
    if !r.schema.has_table(table) {
        return Ok(out);
    }
    let conn = r.open()?;
    let sql = format!(
        "{} ORDER BY 1, 4",
        r.schema.select(table, CALLCHAIN_COLUMNS)
    );
    let mut builder = CallStacksBuilder::default();
    let mut current: Option<i64> = None;
    let mut frames: Vec<Frame> = Vec::new();
    let (mut no_id, mut unnamed) = (0u64, 0u64);
    let mut flush = |id: Option<i64>, frames: &mut Vec<Frame>, out: &mut StacksRead| {
        if let Some(id) = id
            && !frames.is_empty()
        {
            let stack = builder.intern(frames);
            out.by_file_id.insert(id, stack);
        }
        frames.clear();
    };
    r.for_each_row(&conn, table, &sql, |row| {
        let Some(id) = int(row, 0) else {
            no_id += 1;
            return;
        };
        if current != Some(id) {
            flush(current, &mut frames, &mut out);
            current = Some(id);
        }
        let mut name = |col| {
            strings
                .name_or_unknown(int(row, col), &mut unnamed)
                .unwrap_or(StringTable::EMPTY)
        };
        let function = name(1);
        let module = name(2);
        frames.push(Frame { function, module });
    })?;
    flush(current, &mut frames, &mut out);
    out.stacks = builder.finish();
    warnings.skip(table, "[has|have] no id (skipped)", no_id);
    let noun = crate::trace::load_warnings::table_noun(table);
    warnings.add_about(table, &names_of(noun), AT_MISSING_STRINGS, unnamed);
    Ok(out)
}

/// The backtraces of CUDA calls (`CUDA_CALLCHAINS`) and of OS-runtime calls (`OSRT_CALLCHAINS`).
pub fn read_backtraces(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(StacksRead, StacksRead, LoadWarnings), LoadError> {
    let mut warnings = LoadWarnings::default();
    let cuda = read_callchains(r, strings, T_CUDA_CALLCHAINS, &mut warnings)?;
    let osrt = read_callchains(r, strings, T_OSRT_CALLCHAINS, &mut warnings)?;
    Ok((cuda, osrt, warnings))
}
