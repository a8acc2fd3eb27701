//! Reading a table of an export straight from the file's b-tree pages, for the few big event
//! tables whose full scan is most of a load: SQLite's own scan spends most of its time in its
//! virtual machine, stepping a row at a time, where the rows of a leaf page can be read in place.
//!
//! This follows SQLite's documented file format ("Database File Format": the header, table
//! b-tree pages, cells, overflow pages, records) and reads nothing else. A file or table it
//! does not read exactly as SQLite would (UTF-16 text, a WITHOUT ROWID table, a column with a
//! default or generated value) is left to SQLite, and so is a table whose pages turn out
//! damaged: the caller reads it again through SQLite, which says what is wrong as it always
//! has. The file is opened read-only, like every other read of an export; the journal and WAL
//! beside it are ignored, as SQLite ignores them for an export opened `immutable=1`.

mod record;

use std::fs::File;
use std::path::Path;

use record::{Record, varint};
use rusqlite::types::ValueRef;

/// Why pages could not be read as a table: the caller falls back to SQLite.
#[derive(Debug)]
pub struct PageError(pub String);

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<std::io::Error> for PageError {
    fn from(e: std::io::Error) -> Self {
        PageError(e.to_string())
    }
}

/// An export's file, read a page at a time.
pub struct PageFile {
    file: File,
    page_size: usize,
    /// Bytes of a page that hold content (the page size less the reserved bytes at its end).
    usable: usize,
    page_count: u32,
}

/// Where a requested column's value comes from in a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The record's column at this index.
    Column(usize),
    /// The row's rowid (asked for as `rowid`, or an `INTEGER PRIMARY KEY` column).
    Rowid,
    /// Absent from the table: NULL.
    Null,
}

/// A row as the scan hands it over: the values of the requested columns.
pub struct PageRow<'a> {
    payload: &'a [u8],
    record: &'a Record,
    rowid: i64,
    sources: &'a [Source],
}

impl PageRow<'_> {
    /// The `i`th requested column where it is stored as an integer; `None` otherwise (then
    /// [`PageRow::value`] says what it is).
    #[inline]
    pub fn integer(&self, i: usize) -> Option<i64> {
        match self.sources.get(i) {
            Some(Source::Column(c)) => self.record.integer(self.payload, *c),
            Some(Source::Rowid) => Some(self.rowid),
            _ => None,
        }
    }

    /// The `i`th requested column; past the end of the request, NULL.
    pub fn value(&self, i: usize) -> ValueRef<'_> {
        match self.sources.get(i) {
            Some(Source::Column(c)) => self.record.value(self.payload, *c),
            Some(Source::Rowid) => ValueRef::Integer(self.rowid),
            _ => ValueRef::Null,
        }
    }
}

/// How a table's rows are laid out, from its schema: where its b-tree starts and which record
/// column holds each named column.
#[derive(Clone, Debug)]
pub struct TableLayout {
    pub root: u32,
    /// Column names in record order.
    pub columns: Vec<String>,
    /// The `INTEGER PRIMARY KEY` column, stored as the rowid (NULL in the record).
    pub rowid_alias: Option<usize>,
}

impl TableLayout {
    /// The layout of a table whose schema is `sql`, with `columns` as `PRAGMA table_info`
    /// lists them (name, declared type, primary-key position, default value); `None` for a
    /// table this reader does not read as SQLite would.
    pub fn new(root: i64, sql: &str, columns: &[(String, String, i64, bool)]) -> Option<Self> {
        let upper = sql.to_ascii_uppercase();
        if upper.contains("WITHOUT ROWID") || upper.contains("GENERATED") || upper.contains(" AS (")
        {
            return None;
        }
        // A column added with a default reads that default where older rows lack it.
        if columns.iter().any(|c| c.3) {
            return None;
        }
        let keys: Vec<usize> = (0..columns.len()).filter(|&i| columns[i].2 > 0).collect();
        let rowid_alias = match keys[..] {
            [i] if columns[i].1.eq_ignore_ascii_case("INTEGER") => Some(i),
            _ => None,
        };
        Some(Self {
            root: u32::try_from(root).ok().filter(|&r| r > 0)?,
            columns: columns.iter().map(|c| c.0.clone()).collect(),
            rowid_alias,
        })
    }

    /// Where each of `asked` comes from; `present` says whether a column is to be read (a
    /// column the schema has forgotten reads as NULL, as `Schema::select` reads it).
    pub fn sources(&self, asked: &[&str], present: impl Fn(&str) -> bool) -> Vec<Source> {
        asked
            .iter()
            .map(|&name| {
                if name == "rowid" {
                    return Source::Rowid;
                }
                if !present(name) {
                    return Source::Null;
                }
                match self.columns.iter().position(|c| c == name) {
                    Some(i) if Some(i) == self.rowid_alias => Source::Rowid,
                    Some(i) => Source::Column(i),
                    None => Source::Null,
                }
            })
            .collect()
    }
}

/// Interior and leaf pages of a table b-tree.
const INTERIOR: u8 = 0x05;
const LEAF: u8 = 0x0d;
/// A b-tree deeper than this is taken for a damaged one (SQLite's own limit is 20).
const MAX_DEPTH: usize = 40;

impl PageFile {
    /// Opens `path` for reading pages; `None` when its header says something this reader does
    /// not read as SQLite would (the caller then uses SQLite alone).
    pub fn open(path: &Path) -> Option<Self> {
        let file = File::open(path).ok()?;
        let mut header = [0u8; 100];
        read_exact_at(&file, &mut header, 0).ok()?;
        if &header[..16] != b"SQLite format 3\0" {
            return None;
        }
        let page_size = match u16::from_be_bytes([header[16], header[17]]) {
            1 => 65_536,
            n if n >= 512 && n.is_power_of_two() => usize::from(n),
            _ => return None,
        };
        let reserved = usize::from(header[20]);
        // UTF-8 text only: 1 (0 in a file with no schema yet).
        let encoding = u32::from_be_bytes([header[56], header[57], header[58], header[59]]);
        if encoding > 1 || page_size - reserved < 480 {
            return None;
        }
        let length = file.metadata().ok()?.len();
        let page_count = u32::try_from(length / page_size as u64).ok()?;
        Some(Self {
            file,
            page_size,
            usable: page_size - reserved,
            page_count,
        })
    }

    fn read_page(&self, number: u32, into: &mut Vec<u8>) -> Result<(), PageError> {
        if number == 0 || number > self.page_count {
            return Err(PageError(format!("page {number} is outside the file")));
        }
        into.resize(self.page_size, 0);
        read_exact_at(
            &self.file,
            into,
            u64::from(number - 1) * self.page_size as u64,
        )?;
        Ok(())
    }

    /// The leaf pages of the table whose b-tree starts at page `root`, in rowid order. A table
    /// b-tree has all its leaves at one depth, so only the interior pages above them are read
    /// here (a page that is not the leaf it should be stops [`PageFile::scan`]).
    pub fn leaves(&self, root: u32) -> Result<Vec<u32>, PageError> {
        let mut level = vec![root];
        let mut page = Vec::new();
        // Every page once: a damaged tree that points back into itself is refused.
        let mut seen = vec![0u64; (self.page_count as usize).div_ceil(64) + 1];
        let mut first_visit = |n: u32| {
            let (word, bit) = (n as usize / 64, 1u64 << (n % 64));
            let new = seen.get(word).is_some_and(|w| w & bit == 0);
            if let Some(w) = seen.get_mut(word) {
                *w |= bit;
            }
            new
        };
        for _ in 0..MAX_DEPTH {
            let mut below = Vec::new();
            for &number in &level {
                if !first_visit(number) {
                    return Err(PageError(format!("the b-tree at page {root} loops")));
                }
                self.read_page(number, &mut page)?;
                let h = if number == 1 { 100 } else { 0 };
                match page[h] {
                    LEAF if number == level[0] => {
                        if level[1..].iter().all(|&n| first_visit(n)) {
                            return Ok(level);
                        }
                        return Err(PageError(format!("the b-tree at page {root} loops")));
                    }
                    INTERIOR => {
                        let cells = usize::from(u16_at(&page, h + 3)?);
                        for c in 0..cells {
                            let at = usize::from(u16_at(&page, h + 12 + 2 * c)?);
                            below.push(u32_at(&page, at)?);
                        }
                        below.push(u32_at(&page, h + 8)?);
                    }
                    other => {
                        return Err(PageError(format!(
                            "page {number} is not a table b-tree interior page (type {other:#x})"
                        )));
                    }
                }
            }
            level = below;
        }
        Err(PageError(format!("the b-tree at page {root} is too deep")))
    }

    /// About how many rows `leaves` hold: the first leaf's rows times their number (for sizing
    /// what the rows are read into).
    pub fn rows_about(&self, leaves: &[u32]) -> Result<u64, PageError> {
        let Some(&first) = leaves.first() else {
            return Ok(0);
        };
        let mut page = Vec::new();
        self.read_page(first, &mut page)?;
        let h = if first == 1 { 100 } else { 0 };
        let cells = u64::from(u16_at(&page, h + 3)?);
        Ok(cells * leaves.len() as u64)
    }

    /// Calls `f` on each row of `leaves` (from [`PageFile::leaves`]), with the columns that
    /// `sources` name, until `f` returns false.
    pub fn scan(
        &self,
        leaves: &[u32],
        sources: &[Source],
        mut f: impl FnMut(&PageRow) -> bool,
    ) -> Result<(), PageError> {
        let wanted = sources
            .iter()
            .filter_map(|s| match s {
                Source::Column(c) => Some(c + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let mut page = Vec::new();
        let mut spilled = Vec::new();
        let mut overflow = Vec::new();
        let mut record = Record::default();
        for &number in leaves {
            self.read_page(number, &mut page)?;
            let h = if number == 1 { 100 } else { 0 };
            if page[h] != LEAF {
                return Err(PageError(format!("page {number} is not a leaf")));
            }
            let cells = usize::from(u16::from_be_bytes([page[h + 3], page[h + 4]]));
            for c in 0..cells {
                let at = usize::from(u16_at(&page, h + 8 + 2 * c)?);
                let bad = || PageError(format!("page {number}: cell {c} is damaged"));
                let (size, n) = varint(&page[..self.usable], at).ok_or_else(bad)?;
                let (rowid, m) = varint(&page[..self.usable], at + n).ok_or_else(bad)?;
                let start = at + n + m;
                let size = usize::try_from(size).map_err(|_| bad())?;
                let payload: &[u8] = if size <= self.usable - 35 {
                    page.get(start..start + size).ok_or_else(bad)?
                } else {
                    self.gather(&page, start, size, &mut spilled, &mut overflow)
                        .map_err(|e| PageError(format!("page {number}: {e}")))?;
                    &spilled
                };
                record.parse(payload, wanted)?;
                let go_on = f(&PageRow {
                    payload,
                    record: &record,
                    rowid: rowid as i64,
                    sources,
                });
                if !go_on {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// A payload of `size` bytes that starts at `start` of `page` and goes on in overflow
    /// pages, gathered into `out`.
    fn gather(
        &self,
        page: &[u8],
        start: usize,
        size: usize,
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<(), PageError> {
        let u = self.usable;
        let (max_local, min_local) = (u - 35, (u - 12) * 32 / 255 - 23);
        let k = min_local + (size - min_local) % (u - 4);
        let local = if k <= max_local { k } else { min_local };
        let bad = || PageError("an overflow chain is damaged".into());
        out.clear();
        // The payload itself, not the file, bounds what is gathered: a damaged size cannot ask
        // for more than the file holds.
        if size as u64 > u64::from(self.page_count) * self.page_size as u64 {
            return Err(bad());
        }
        out.reserve(size);
        out.extend_from_slice(page.get(start..start + local).ok_or_else(bad)?);
        let mut next = u32_at(page, start + local)?;
        let mut hops = 0u32;
        while out.len() < size {
            hops += 1;
            if next == 0 || hops > self.page_count {
                return Err(bad());
            }
            self.read_page(next, scratch)?;
            let take = (size - out.len()).min(u - 4);
            out.extend_from_slice(&scratch[4..4 + take]);
            next = u32_at(scratch, 0)?;
        }
        Ok(())
    }
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Elsewhere pages are not read directly: SQLite reads every table.
#[cfg(not(unix))]
fn read_exact_at(_: &File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

fn u16_at(bytes: &[u8], at: usize) -> Result<u16, PageError> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or_else(|| PageError("a pointer runs past its page".into()))
}

fn u32_at(bytes: &[u8], at: usize) -> Result<u32, PageError> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| PageError("a pointer runs past its page".into()))
}
