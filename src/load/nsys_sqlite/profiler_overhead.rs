//! Reader for `PROFILER_OVERHEAD` (every export version has it with `start`, `end`, `globalTid`
//! and `nameId`). The table is small (tens of rows), so it is read in one pass, in file order.

use super::connection::int;
use super::reader::{FileStrings, Reader, checked_span};
use crate::load::LoadError;
use crate::trace::{LoadWarnings, ProfilerOverhead, StringTable};

pub const T_OVERHEAD: &str = "PROFILER_OVERHEAD";
const COLUMNS: &[&str] = &["start", "end", "globalTid", "nameId"];

pub fn read_profiler_overhead(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(ProfilerOverhead, LoadWarnings), LoadError> {
    let mut table = ProfilerOverhead::default();
    let mut warnings = LoadWarnings::default();
    if !r.schema.has_table(T_OVERHEAD) {
        return Ok((table, warnings));
    }
    let conn = r.open()?;
    let sql = format!("{} ORDER BY rowid", r.schema.select(T_OVERHEAD, COLUMNS));
    r.for_each_row(&conn, T_OVERHEAD, &sql, |row| {
        let Some((s, e)) = checked_span(int(row, 0), int(row, 1), T_OVERHEAD, &mut warnings) else {
            return;
        };
        let name = strings.get(int(row, 3)).unwrap_or(StringTable::EMPTY);
        table.spans.push(s, e, name);
        table.global_tid.push(int(row, 2).unwrap_or(0));
    })?;
    Ok((table, warnings))
}
