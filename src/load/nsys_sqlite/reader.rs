//! What every table reader shares: the file, its schema, its string ids, and a row loop that
//! checks for cancellation and turns SQLite errors into [`LoadError`]s naming the table.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::Connection;

use super::connection::{classify, open_read_only};
use super::schema::Schema;
use crate::load::{LoadControl, LoadError};
use crate::trace::{LoadWarnings, StrId, StringTable};

/// The export's `StringIds`, mapped into a [`StringTable`].
pub struct FileStrings {
    pub table: StringTable,
    dense: Vec<StrId>,
    sparse: HashMap<i64, StrId>,
}

const UNMAPPED: StrId = StrId::MAX;

impl FileStrings {
    pub fn read(reader: &Reader, warnings: &mut LoadWarnings) -> Result<Self, LoadError> {
        let mut table = StringTable::new();
        let mut pairs: Vec<(i64, StrId)> = Vec::new();
        if reader.schema.has_table("StringIds") {
            let conn = reader.open()?;
            let mut lossy = 0u64;
            reader.for_each_row(
                &conn,
                "StringIds",
                "SELECT id, value FROM StringIds",
                |row| {
                    let Some(id) = super::connection::int(row, 0) else {
                        return;
                    };
                    let bytes = super::connection::text(row, 1).unwrap_or_default();
                    let sid = match std::str::from_utf8(bytes) {
                        Ok(s) => table.intern(s),
                        Err(_) => {
                            lossy += 1;
                            table.intern(&String::from_utf8_lossy(bytes))
                        }
                    };
                    pairs.push((id, sid));
                },
            )?;
            warnings.add(
                "StringIds",
                "text that is not UTF-8 (shown with replacement characters)",
                lossy,
            );
        }
        let max_id = pairs.iter().map(|p| p.0).max().unwrap_or(-1);
        let dense_ok = max_id >= 0 && (max_id as usize) < pairs.len() * 2 + 1024;
        let mut dense = Vec::new();
        let mut sparse = HashMap::new();
        if dense_ok {
            dense = vec![UNMAPPED; max_id as usize + 1];
            for (id, sid) in pairs {
                if id >= 0 {
                    dense[id as usize] = sid;
                }
            }
        } else {
            sparse = pairs.into_iter().collect();
        }
        Ok(Self {
            table,
            dense,
            sparse,
        })
    }

    /// The [`StrId`] of a file string id; the empty string when missing.
    pub fn get(&self, file_id: Option<i64>) -> Option<StrId> {
        let id = file_id?;
        let sid = if !self.dense.is_empty() {
            *self.dense.get(usize::try_from(id).ok()?)?
        } else {
            *self.sparse.get(&id)?
        };
        (sid != UNMAPPED).then_some(sid)
    }

    pub fn text(&self, file_id: Option<i64>) -> Option<&str> {
        self.get(file_id).map(|s| self.table.get(s))
    }
}

/// Everything a table reader needs.
pub struct Reader<'a> {
    pub path: &'a Path,
    pub schema: &'a Schema,
    pub control: &'a LoadControl<'a>,
}

impl Reader<'_> {
    /// A connection of this reader's own: SQLite connections are not shared between threads.
    pub fn open(&self) -> Result<Connection, LoadError> {
        open_read_only(self.path)
    }

    /// Runs `sql` and calls `f` on each row, stopping early if the load is cancelled.
    pub fn for_each_row(
        &self,
        conn: &Connection,
        table: &str,
        sql: &str,
        mut f: impl FnMut(&rusqlite::Row),
    ) -> Result<(), LoadError> {
        let err = |e| classify(self.path, table, e);
        let mut stmt = conn.prepare(sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut n: u64 = 0;
        while let Some(row) = rows.next().map_err(err)? {
            f(row);
            n += 1;
            if n.is_multiple_of(65_536) && self.control.is_cancelled() {
                return Err(LoadError::Cancelled);
            }
        }
        Ok(())
    }

    /// Number of rows of a table (0 when absent), for sizing vectors up front.
    pub fn row_count(&self, conn: &Connection, table: &str) -> usize {
        if !self.schema.has_table(table) {
            return 0;
        }
        conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as usize)
        .unwrap_or(0)
    }
}

/// Checks a row's start and end: `None` (with the reason counted) for a row that cannot be placed
/// in time; a row with no end is kept as an instant.
pub fn checked_span(
    start: Option<i64>,
    end: Option<i64>,
    table: &str,
    warnings: &mut LoadWarnings,
) -> Option<(i64, i64)> {
    match (start, end) {
        (Some(s), Some(e)) if e >= s => Some((s, e)),
        (Some(_), Some(_)) => {
            warnings.add(table, "rows with end before start (skipped)", 1);
            None
        }
        (Some(s), None) => {
            warnings.add(table, "rows with no end (kept as instants)", 1);
            Some((s, s))
        }
        _ => {
            warnings.add(table, "rows with no start (skipped)", 1);
            None
        }
    }
}
