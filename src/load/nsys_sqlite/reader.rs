//! What every table reader shares: the file, its schema, its string ids, and a row loop that
//! checks for cancellation and turns SQLite errors into [`LoadError`]s naming the table.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use rusqlite::Connection;

use super::connection::{Row, classify, open_read_only};
use super::pages::PageFile;
use super::schema::Schema;
use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::{LoadWarnings, StrId, StringTable};

/// The export's `StringIds`, mapped into a [`StringTable`].
pub struct FileStrings {
    pub table: StringTable,
    dense: Vec<StrId>,
    sparse: HashMap<i64, StrId>,
    /// File ids that events name but `StringIds` lacks, each with the id it was given beyond the
    /// end of `table`; [`FileStrings::finish`] names them `<unknown name #ID>`.
    unknown: Mutex<UnknownNames>,
}

#[derive(Default)]
struct UnknownNames {
    ids: Vec<i64>,
    given: HashMap<i64, StrId>,
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
                "[is|are] not UTF-8 (shown with replacement characters)",
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
            unknown: Mutex::default(),
        })
    }

    /// The [`StrId`] of a name column: the string when `StringIds` has it, else (when the row
    /// has an id that points at no string: its row deleted, or the whole table) an id that
    /// [`FileStrings::finish`] turns into `<unknown name #ID>`, counted in `unknown`. `None` for
    /// NULL: the row names nothing.
    pub fn name_or_unknown(&self, file_id: Option<i64>, unknown: &mut u64) -> Option<StrId> {
        let id = file_id?;
        if let Some(sid) = self.get(Some(id)) {
            return Some(sid);
        }
        *unknown += 1;
        let mut names = self.unknown.lock().ok()?;
        let next = StrId::try_from(self.table.len() + names.ids.len()).ok()?;
        let UnknownNames { ids, given } = &mut *names;
        Some(*given.entry(id).or_insert_with(|| {
            ids.push(id);
            next
        }))
    }

    /// The string table with the `<unknown name #ID>` of every missing id handed out.
    pub fn finish(self) -> StringTable {
        let mut table = self.table;
        let ids = self.unknown.into_inner().map(|u| u.ids).unwrap_or_default();
        // Each is new unless StringIds itself holds that very text, which no export does; the
        // ids handed out were len(), len() + 1, … in this order.
        for id in ids {
            table.intern(&unknown_name(id));
        }
        table
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

    /// [`FileStrings::text`] as a reference to the table's own text, for another table to share.
    pub fn shared_text(&self, file_id: Option<i64>) -> Option<std::sync::Arc<str>> {
        self.get(file_id).map(|s| self.table.shared(s))
    }
}

/// How a name that points at a missing string is shown.
pub fn unknown_name(file_id: i64) -> String {
    format!("<unknown name #{file_id}>")
}

/// The subject of the warning that counts names pointing at missing strings, e.g.
/// "kernel [name points|names point]".
pub fn names_of(noun: &str) -> String {
    format!("{noun} [name points|names point]")
}

/// What is wrong with such names and what was done.
pub const AT_MISSING_STRINGS: &str = "at missing strings (shown as <unknown name #ID>)";

/// Everything a table reader needs.
pub struct Reader<'a> {
    pub path: &'a Path,
    pub schema: &'a Schema,
    pub control: &'a LoadControl<'a>,
    pub rows: &'a RowProgress,
    /// Connections a reader has finished with, for the next: opening one parses the export's
    /// schema again (about half a millisecond), which the dozen small tables would each pay.
    pub idle: Mutex<Vec<Connection>>,
    /// The file read a page at a time, for the big tables ([`pages`]); `None` where SQLite reads
    /// everything.
    pub pages: Option<PageFile>,
}

/// A connection of one reader at a time, handed back to [`Reader::idle`] when dropped.
pub struct Pooled<'r> {
    conn: std::mem::ManuallyDrop<Connection>,
    idle: &'r Mutex<Vec<Connection>>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        // SAFETY: `conn` is taken once, here, and not touched again.
        let conn = unsafe { std::mem::ManuallyDrop::take(&mut self.conn) };
        if let Ok(mut idle) = self.idle.lock() {
            idle.push(conn);
        }
    }
}

/// Rows read so far by all readers together, against the rows the event tables hold, so the
/// progress bar moves while the big tables are read rather than only when a reader finishes.
#[derive(Debug, Default)]
pub struct RowProgress {
    pub done: AtomicU64,
    pub total: u64,
    /// Rows each table's queries returned, for telling "no rows" from "rows, none readable".
    pub per_table: Mutex<LoadWarnings>,
}

/// How many rows a reader reads between two looks at the cancel flag and the progress bar.
pub(super) const ROWS_PER_REPORT: u64 = 65_536;

/// Share of the progress bar the table readers fill (after the schema and string table).
const READ_FROM: f32 = 0.05;
const READ_TO: f32 = 0.85;

impl Reader<'_> {
    /// A connection of this reader's own (SQLite connections are not shared between threads):
    /// one another reader has finished with, else a new one.
    pub fn open(&self) -> Result<Pooled<'_>, LoadError> {
        let reused = self.idle.lock().ok().and_then(|mut idle| idle.pop());
        let conn = match reused {
            Some(conn) => conn,
            None => open_read_only(self.path)?,
        };
        Ok(Pooled {
            conn: std::mem::ManuallyDrop::new(conn),
            idle: &self.idle,
        })
    }

    /// Runs `sql` and calls `f` on each row, stopping early if the load is cancelled.
    pub fn for_each_row(
        &self,
        conn: &Connection,
        table: &str,
        sql: &str,
        mut f: impl FnMut(&Row),
    ) -> Result<(), LoadError> {
        let err = |e| classify(self.path, table, e);
        let mut stmt = conn.prepare(sql).map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        let mut n: u64 = 0;
        while let Some(row) = rows.next().map_err(err)? {
            f(&Row::Sqlite(row));
            n += 1;
            if n.is_multiple_of(ROWS_PER_REPORT) {
                if self.control.is_cancelled() {
                    return Err(LoadError::Cancelled);
                }
                self.rows.done.fetch_add(ROWS_PER_REPORT, Ordering::Relaxed);
                self.report("reading tables");
            }
        }
        self.rows
            .done
            .fetch_add(n % ROWS_PER_REPORT, Ordering::Relaxed);
        if let Ok(mut per_table) = self.rows.per_table.lock() {
            per_table.add_rows_read(table, n);
        }
        Ok(())
    }

    /// Reports `phase` with the fraction of all rows read so far.
    pub fn report(&self, phase: &'static str) {
        let done = self.rows.done.load(Ordering::Relaxed) as f32;
        let share = (done / self.rows.total.max(1) as f32).min(1.0);
        (self.control.progress)(&LoadProgress {
            phase,
            fraction: READ_FROM + (READ_TO - READ_FROM) * share,
        });
    }

    /// Reads `columns` of `table` (as [`Schema::select`] names them) and returns one state per
    /// chunk, in file order. On a machine with cores to spare ([`chunk_count`]) a big table is
    /// read in parts side by side, so it does not leave cores idle at the end of a load.
    /// `make(rows)` creates a chunk's state sized for `rows`: the first chunk is sized for the
    /// whole table, so the others can be appended to it without reallocating.
    pub fn read_in_chunks<S: Send>(
        &self,
        table: &str,
        columns: &[&str],
        make: impl Fn(usize) -> S + Sync,
        fill: impl Fn(&mut S, &Row) + Sync,
    ) -> Result<Vec<S>, LoadError> {
        let threads = rayon::current_num_threads();
        self.read_parts(
            table,
            columns,
            |rows| chunk_count(rows, threads),
            make,
            fill,
        )
    }

    /// [`Reader::read_in_chunks`] with the number of parts chosen by `parts(rows)` where SQLite
    /// reads the table: in rowid ranges, each on its own connection. Where the page reader
    /// reads it, a part is made only when a core is free to read it
    /// (`paged_read`), and `parts` is not asked.
    pub fn read_parts<S: Send>(
        &self,
        table: &str,
        columns: &[&str],
        parts: impl Fn(u64) -> u64,
        make: impl Fn(usize) -> S + Sync,
        fill: impl Fn(&mut S, &Row) + Sync,
    ) -> Result<Vec<S>, LoadError> {
        if let Some(read) = self.read_pages(table, columns, &make, &fill) {
            return read;
        }
        let sql = self.schema.select(table, columns);
        let conn = self.open()?;
        let bounds = rowid_bounds(&conn, table);
        let rows: u64 = bounds.map_or(0, |(lo, hi)| hi.abs_diff(lo).saturating_add(1));
        let chunks = parts(rows).max(1);
        let (Some((lo, hi)), true) = (bounds, chunks > 1) else {
            let mut state = make(rows as usize);
            self.for_each_row(&conn, table, &sql, |row| fill(&mut state, row))?;
            return Ok(vec![state]);
        };
        drop(conn);
        let step = rows.div_ceil(chunks);
        (0..chunks)
            .into_par_iter()
            .map(|c| {
                let from = lo.saturating_add_unsigned(c * step);
                let to = if c + 1 == chunks {
                    hi
                } else {
                    from.saturating_add_unsigned(step - 1)
                };
                let conn = self.open()?;
                let mut state = make(if c == 0 { rows as usize } else { step as usize });
                let sql = format!("{sql} WHERE rowid BETWEEN {from} AND {to}");
                self.for_each_row(&conn, table, &sql, |row| fill(&mut state, row))?;
                Ok(state)
            })
            .collect()
    }
}

/// The smallest and largest rowid of a table: two b-tree seeks, where `count(*)` would read
/// every page (so would `min(rowid), max(rowid)` in one SELECT: SQLite only optimises a lone
/// min or max). `None` when the table is empty or has no rowid.
pub fn rowid_bounds(conn: &Connection, table: &str) -> Option<(i64, i64)> {
    let end = |order: &str| -> Option<i64> {
        let sql = format!("SELECT rowid FROM \"{table}\" ORDER BY rowid {order} LIMIT 1");
        conn.query_row(&sql, [], |r| r.get::<_, i64>(0)).ok()
    };
    Some((end("ASC")?, end("DESC")?)).filter(|(lo, hi)| lo <= hi)
}

/// Rows per chunk when a big table is read on several connections at once.
pub const ROWS_PER_CHUNK: u64 = 1 << 19;

/// How many rowid ranges to read a table of `rows` rows in, with `threads` worker threads.
///
/// Kernels, API calls and NVTX are the three big tables of a training trace and are already read
/// side by side, so splitting pays only where there are more cores than that: on the 2-core
/// machine of BENCHMARKS.md, splitting the 10M-event trace's tables cost about 10% more CPU time
/// and 20% more peak memory (joining the chunks copies them) for no steady gain in wall time.
pub fn chunk_count(rows: u64, threads: usize) -> u64 {
    let most = (threads / 2).max(1) as u64;
    rows.div_ceil(ROWS_PER_CHUNK).clamp(1, most)
}

/// Why a row whose end is before its start is left out.
pub const END_BEFORE_START: &str = "[ends|end] before [it starts|they start] (skipped)";

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
            warnings.skip(table, END_BEFORE_START, 1);
            None
        }
        (Some(s), None) => {
            warnings.add(table, "[has|have] no end time (kept as instants)", 1);
            Some((s, s))
        }
        _ => {
            warnings.skip(table, "[has|have] no start time (skipped)", 1);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_tables_split_only_with_cores_to_spare() {
        assert_eq!(chunk_count(0, 8), 1);
        assert_eq!(chunk_count(10_000_000, 1), 1);
        assert_eq!(chunk_count(10_000_000, 2), 1);
        assert_eq!(chunk_count(10_000_000, 3), 1);
        assert_eq!(chunk_count(10_000_000, 4), 2);
        assert_eq!(chunk_count(10_000_000, 64), 20);
        assert_eq!(chunk_count(ROWS_PER_CHUNK + 1, 8), 2);
        assert_eq!(chunk_count(ROWS_PER_CHUNK, 8), 1);
    }
}
