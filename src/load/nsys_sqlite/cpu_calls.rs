//! Readers for CPU-side calls: the CUDA runtime and driver API (`CUPTI_ACTIVITY_KIND_RUNTIME`, and
//! `CUPTI_ACTIVITY_KIND_DRIVER` where an export splits them) and OS runtime calls (`OSRT_API`).
//! Rows come back in file order; the `globalTid` of each row says which thread track it joins.

use super::connection::int;
use super::reader::{AT_MISSING_STRINGS, FileStrings, Reader, checked_span as span, names_of};
use crate::load::LoadError;
use crate::trace::{ApiCalls, LoadWarnings, NO_STACK, OsrtCalls, StringTable};

pub const API_TABLES: [&str; 2] = ["CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER"];
pub const T_OSRT: &str = "OSRT_API";
// What every load reads comes first: a lean load selects only those (see `Schema::select`).
pub const API_COLUMNS: &[&str] = &[
    "start",
    "end",
    "nameId",
    "globalTid",
    "correlationId",
    "returnValue",
    "callchainId",
];
pub const OSRT_COLUMNS: &[&str] = &[
    "start",
    "end",
    "globalTid",
    "nameId",
    "eventClass",
    "callchainId",
];

/// A file `callchainId` as stored until assembly maps it to a stack ([`NO_STACK`] when NULL).
fn callchain_id(v: Option<i64>) -> u32 {
    v.and_then(|v| u32::try_from(v).ok()).unwrap_or(NO_STACK)
}

pub fn read_api_calls(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(ApiCalls, LoadWarnings), LoadError> {
    let mut calls = ApiCalls::default();
    let mut warnings = LoadWarnings::default();
    for table in API_TABLES {
        if !r.schema.has_table(table) {
            continue;
        }
        // Columns a command left out (see `needs`) read as NULL: skip them rather than read each.
        let has = |c: &str| r.schema.has_column(table, c);
        let [has_tid, has_links, has_result, has_stack] =
            ["globalTid", "correlationId", "returnValue", "callchainId"].map(has);
        let make = |rows: usize| {
            let mut part = ApiCalls::default();
            part.reserve(rows);
            (part, LoadWarnings::default(), 0u64)
        };
        let chunks = r.read_in_chunks(
            table,
            API_COLUMNS,
            make,
            |(part, warnings, unnamed), row| {
                let Some((s, e)) = span(int(row, 0), int(row, 1), table, warnings) else {
                    return;
                };
                let name = strings
                    .name_or_unknown(int(row, 2), unnamed)
                    .unwrap_or_else(|| {
                        warnings.add(table, "[has|have] no name (shown unnamed)", 1);
                        StringTable::EMPTY
                    });
                part.spans.push(s, e, name);
                let read = |present: bool, i: usize| if present { int(row, i) } else { None };
                part.global_tid.push(read(has_tid, 3).unwrap_or(0));
                part.correlation_id
                    .push(read(has_links, 4).unwrap_or(0).clamp(0, u32::MAX as i64) as u32);
                part.return_value
                    .push(read(has_result, 5).map_or(ApiCalls::NO_RESULT, |v| {
                        v.clamp(ApiCalls::NO_RESULT as i64 + 1, i32::MAX as i64) as i32
                    }));
                part.callchain.push(callchain_id(read(has_stack, 6)));
            },
        )?;
        let first_of_table = calls.spans.len();
        let mut unnamed_total = 0u64;
        for (mut part, part_warnings, unnamed) in chunks {
            if calls.spans.is_empty() {
                // The first chunk was sized for the whole table: keep its vectors.
                std::mem::swap(&mut calls, &mut part);
            }
            calls.append(&mut part);
            warnings.extend(part_warnings);
            unnamed_total += unnamed;
        }
        let noun = crate::trace::load_warnings::table_noun(table);
        warnings.add_about(table, &names_of(noun), AT_MISSING_STRINGS, unnamed_total);
        let order = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        calls
            .file_order
            .extend((first_of_table..calls.spans.len()).map(order));
        if table == API_TABLES[1] && calls.spans.len() > first_of_table {
            calls.driver_rows_from = Some(order(first_of_table));
        }
    }
    Ok((calls, warnings))
}

/// OS runtime calls and the `globalTid` of each.
pub fn read_osrt(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(OsrtCalls, Vec<i64>, LoadWarnings), LoadError> {
    let mut calls = OsrtCalls::default();
    let mut tids = Vec::new();
    let mut warnings = LoadWarnings::default();
    if !r.schema.has_table(T_OSRT) {
        return Ok((calls, tids, warnings));
    }
    let conn = r.open()?;
    let sql = r.schema.select(T_OSRT, OSRT_COLUMNS);
    let mut unnamed = 0u64;
    r.for_each_row(&conn, T_OSRT, &sql, |row| {
        let Some((s, e)) = span(int(row, 0), int(row, 1), T_OSRT, &mut warnings) else {
            return;
        };
        let name = strings
            .name_or_unknown(int(row, 3), &mut unnamed)
            .unwrap_or(StringTable::EMPTY);
        calls.spans.push(s, e, name);
        tids.push(int(row, 2).unwrap_or(0));
        // Without the column every row is taken for a call.
        let class = int(row, 4).unwrap_or(OsrtCalls::CALL as i64);
        calls.event_class.push(class.clamp(0, u8::MAX as i64) as u8);
        calls.callchain.push(callchain_id(int(row, 5)));
    })?;
    warnings.add_about(T_OSRT, &names_of("OS runtime"), AT_MISSING_STRINGS, unnamed);
    Ok((calls, tids, warnings))
}
