//! Readers for the OpenACC (`CUPTI_ACTIVITY_KIND_OPENACC_*`) and OpenMP (`OPENMP_EVENT_KIND_*`)
//! tables: every table of each family the export has, in name order, each in file order.

use super::connection::int;
use super::reader::{FileStrings, Reader, checked_span};
use crate::load::LoadError;
use crate::trace::{LoadWarnings, OpenAccEvents, OpenAccKind, OpenMpEvents, StringTable};

pub const OPENACC_PREFIX: &str = "CUPTI_ACTIVITY_KIND_OPENACC_";
pub const OPENMP_PREFIX: &str = "OPENMP_EVENT_KIND_";
const OPENACC_COLUMNS: &[&str] = &["start", "end", "nameId", "globalTid", "srcFile", "lineNo"];
const OPENMP_COLUMNS: &[&str] = &["start", "end", "nameId", "globalTid"];

pub fn read_openacc(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(OpenAccEvents, LoadWarnings), LoadError> {
    let mut events = OpenAccEvents::default();
    let mut warnings = LoadWarnings::default();
    let tables = r.schema.tables_with_prefix(OPENACC_PREFIX);
    events.has_tables = !tables.is_empty();
    for table in tables {
        let kind = match &table[OPENACC_PREFIX.len()..] {
            "DATA" => OpenAccKind::Data,
            "LAUNCH" => OpenAccKind::Launch,
            _ => OpenAccKind::Other,
        };
        let conn = r.open()?;
        let sql = format!("{} ORDER BY rowid", r.schema.select(table, OPENACC_COLUMNS));
        r.for_each_row(&conn, table, &sql, |row| {
            let Some((s, e)) = checked_span(int(row, 0), int(row, 1), table, &mut warnings) else {
                return;
            };
            let name = strings.get(int(row, 2)).unwrap_or(StringTable::EMPTY);
            events.spans.push(s, e, name);
            events.kind.push(kind);
            events.global_tid.push(int(row, 3).unwrap_or(0));
            events.source_file.push(strings.get(int(row, 4)));
            events.line.push(int(row, 5).unwrap_or(0));
        })?;
    }
    Ok((events, warnings))
}

pub fn read_openmp(
    r: &Reader,
    strings: &FileStrings,
) -> Result<(OpenMpEvents, LoadWarnings), LoadError> {
    let mut events = OpenMpEvents::default();
    let mut warnings = LoadWarnings::default();
    for (t, table) in r
        .schema
        .tables_with_prefix(OPENMP_PREFIX)
        .into_iter()
        .enumerate()
    {
        events.tables.push(table.to_string());
        let index = u16::try_from(t).unwrap_or(u16::MAX);
        let conn = r.open()?;
        let sql = format!("{} ORDER BY rowid", r.schema.select(table, OPENMP_COLUMNS));
        r.for_each_row(&conn, table, &sql, |row| {
            let Some((s, e)) = checked_span(int(row, 0), int(row, 1), table, &mut warnings) else {
                return;
            };
            let name = strings.get(int(row, 2)).unwrap_or(StringTable::EMPTY);
            events.spans.push(s, e, name);
            events.table.push(index);
            events.global_tid.push(int(row, 3).unwrap_or(0));
        })?;
    }
    Ok((events, warnings))
}
