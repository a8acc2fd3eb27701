//! The panel's CSV exports, kept apart from the save dialog so that tests (and the lead's
//! scripts) can call them with a path: the events of a selection, and a statistics table as the
//! panel shows it (its rows, in its order) in the columns `nsys stats --format csv` prints.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use crate::analysis::{Filter, Table};
use crate::export::events_csv::{self, EventKind};
use crate::export::nsys_csv;
use crate::trace::Trace;

/// Why an export failed, with the file it was writing.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot create {}: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {} failed: {source}", path.display())]
    Write { path: PathBuf, source: csv::Error },
    #[error("no event kind is chosen: tick at least one of kernel, memcpy, …")]
    NoKinds,
}

fn create(path: &Path) -> Result<BufWriter<File>, ExportError> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|source| ExportError::Create {
            path: path.to_path_buf(),
            source,
        })
}

/// Writes the events `filter` keeps, of the `kinds` given, to `path` (columns
/// [`events_csv::COLUMNS`]); returns how many events it wrote.
pub fn export_selection(
    path: &Path,
    trace: &Trace,
    filter: &Filter,
    kinds: &[EventKind],
) -> Result<usize, ExportError> {
    if kinds.is_empty() {
        return Err(ExportError::NoKinds);
    }
    let out = create(path)?;
    events_csv::write_events_csv(trace, filter, kinds, out).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `table` to `path` as `nsys stats --format csv` would print it; returns its row count.
pub fn export_table(path: &Path, table: &Table) -> Result<usize, ExportError> {
    let out = create(path)?;
    nsys_csv::write_table_csv(table, out).map_err(|source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(table.rows.len())
}
