//! The page reader's side of [`Reader::read_parts`]: a table read from the file's pages
//! ([`super::pages`]) into one state, split into a further state only where another core is
//! free to read the rest. The leaves are halved again and again; the second half of each split
//! is offered to the other workers (`rayon::join_context`) and, when none takes it, is read by
//! the same worker into the same state, so a table read while the other cores are busy with
//! other tables costs no join of parts, and one read alone uses every core.

use std::sync::atomic::{AtomicU64, Ordering};

use super::connection::Row;
use super::pages::{PageFile, Source};
use super::reader::{ROWS_PER_REPORT, Reader};
use crate::load::LoadError;

/// Leaves (about 50 to 100 rows each at 4 KiB pages) below which a part is not split again.
const SMALLEST_PART: usize = 128;

/// Why a paged read stopped before the end.
enum Stop {
    Cancelled,
    /// A page is not what the b-tree says it is: SQLite reads the table instead.
    Damaged,
}

struct Job<'a, S, M, F> {
    reader: &'a Reader<'a>,
    file: &'a PageFile,
    sources: &'a [Source],
    make: &'a M,
    fill: &'a F,
    rows_per_leaf: usize,
    rows: AtomicU64,
    _state: std::marker::PhantomData<fn() -> S>,
}

impl Reader<'_> {
    /// Reads `columns` of `table` from the pages; `None` when SQLite is to read the table
    /// instead: the file or table is not one the page reader reads, or its pages are damaged
    /// (SQLite then reads it again from the start, and says what is wrong as it always has).
    pub(super) fn read_pages<S: Send>(
        &self,
        table: &str,
        columns: &[&str],
        make: &(impl Fn(usize) -> S + Sync),
        fill: &(impl Fn(&mut S, &Row) + Sync),
    ) -> Option<Result<Vec<S>, LoadError>> {
        let file = self.pages.as_ref()?;
        let layout = self.schema.layout(table)?;
        let sources = layout.sources(columns, |c| self.schema.has_column(table, c));
        let leaves = file.leaves(layout.root).ok()?;
        let rows = file.rows_about(&leaves).ok()?;
        let job = Job {
            reader: self,
            file,
            sources: &sources,
            make,
            fill,
            rows_per_leaf: usize::try_from(rows / leaves.len().max(1) as u64).unwrap_or(0),
            rows: AtomicU64::new(0),
            _state: std::marker::PhantomData,
        };
        match job.run(&leaves, make(usize::try_from(rows).unwrap_or(0))) {
            Ok(states) => {
                if let Ok(mut per_table) = self.rows.per_table.lock() {
                    per_table.add_rows_read(table, job.rows.load(Ordering::Relaxed));
                }
                Some(Ok(states))
            }
            Err(Stop::Cancelled) => Some(Err(LoadError::Cancelled)),
            Err(Stop::Damaged) => None,
        }
    }
}

impl<S, M, F> Job<'_, S, M, F>
where
    S: Send,
    M: Fn(usize) -> S + Sync,
    F: Fn(&mut S, &Row) + Sync,
{
    /// Reads `leaves` into `state` and, where another worker took a later part, into the
    /// states after it: the rows of `leaves` in order across the states returned.
    fn run(&self, leaves: &[u32], mut state: S) -> Result<Vec<S>, Stop> {
        if leaves.len() < 2 * SMALLEST_PART {
            self.scan(leaves, &mut state)?;
            return Ok(vec![state]);
        }
        let (first, second) = leaves.split_at(leaves.len() / 2);
        let (read, taken) = rayon::join_context(
            |_| self.run(first, state),
            |ctx| {
                ctx.migrated()
                    .then(|| self.run(second, (self.make)(second.len() * self.rows_per_leaf)))
            },
        );
        let mut states = read?;
        match taken {
            Some(more) => states.extend(more?),
            None => {
                if let Some(last) = states.pop() {
                    states.extend(self.run(second, last)?);
                }
            }
        }
        Ok(states)
    }

    fn scan(&self, leaves: &[u32], state: &mut S) -> Result<(), Stop> {
        let r = self.reader;
        let mut n: u64 = 0;
        let mut cancelled = false;
        self.file
            .scan(leaves, self.sources, |row| {
                (self.fill)(state, &Row::Page(row));
                n += 1;
                if n.is_multiple_of(ROWS_PER_REPORT) {
                    if r.control.is_cancelled() {
                        cancelled = true;
                        return false;
                    }
                    r.rows.done.fetch_add(ROWS_PER_REPORT, Ordering::Relaxed);
                    r.report("reading tables");
                }
                true
            })
            .map_err(|_| Stop::Damaged)?;
        if cancelled {
            return Err(Stop::Cancelled);
        }
        r.rows
            .done
            .fetch_add(n % ROWS_PER_REPORT, Ordering::Relaxed);
        self.rows.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }
}
