//! Opening an export read-only and reading typed values out of rows without allocating.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::pages::PageRow;
use crate::load::LoadError;

/// Opens `path` so that nothing can be written to it: read-only, and `immutable=1` so SQLite
/// creates no journal, WAL or shared-memory file beside it either.
pub fn open_read_only(path: &Path) -> Result<Connection, LoadError> {
    let uri = format!("file:{}?immutable=1", uri_escape(&path.to_string_lossy()));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags).map_err(|e| classify(path, "", e))?;
    // Temporary tables and sort spills go to memory, never next to the user's file.
    let _ = conn.execute_batch("PRAGMA temp_store = MEMORY;");
    Ok(conn)
}

fn uri_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '%' => out.push_str("%25"),
            '?' => out.push_str("%3f"),
            '#' => out.push_str("%23"),
            _ => out.push(c),
        }
    }
    out
}

/// Turns an SQLite error into the user-facing error for this file.
pub fn classify(path: &Path, table: &str, e: rusqlite::Error) -> LoadError {
    use rusqlite::ErrorCode;
    if let rusqlite::Error::SqliteFailure(f, ref msg) = e {
        match f.code {
            ErrorCode::NotADatabase => {
                return LoadError::NotSqlite {
                    path: path.to_path_buf(),
                };
            }
            ErrorCode::DatabaseCorrupt => {
                return LoadError::Corrupt {
                    path: path.to_path_buf(),
                    detail: msg
                        .clone()
                        .unwrap_or_else(|| "database disk image is malformed".into()),
                };
            }
            _ => {}
        }
    }
    if table.is_empty() {
        LoadError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }
    } else {
        LoadError::Table {
            path: path.to_path_buf(),
            table: table.to_string(),
            detail: e.to_string(),
        }
    }
}

/// A row of a table as a reader sees it: from SQLite, or read from the file's pages
/// ([`super::pages`]). Both give the same values for the same row.
#[derive(Clone, Copy)]
pub enum Row<'a, 'b> {
    Sqlite(&'a rusqlite::Row<'b>),
    Page(&'a PageRow<'b>),
}

impl<'a> Row<'a, '_> {
    /// Column `i`, `None` past the columns selected.
    pub fn get(&self, i: usize) -> Option<ValueRef<'a>> {
        match *self {
            Row::Sqlite(row) => row.get_ref(i).ok(),
            Row::Page(row) => Some(row.value(i)),
        }
    }
}

/// An integer column; reals are truncated, anything else is `None`.
#[inline]
pub fn int(row: &Row, i: usize) -> Option<i64> {
    if let Row::Page(page) = row
        && let Some(v) = page.integer(i)
    {
        return Some(v);
    }
    match row.get(i)? {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(f) => Some(f as i64),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A text column as bytes, `None` when NULL.
pub fn text<'r>(row: &Row<'r, '_>, i: usize) -> Option<&'r [u8]> {
    match row.get(i)? {
        ValueRef::Text(t) => Some(t),
        ValueRef::Blob(b) => Some(b),
        _ => None,
    }
}
