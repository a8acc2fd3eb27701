//! SQL over a run of ranks: the views of one trace (`kernels`, `memcpy`, `memset`, `api`, `ranges`,
//! `threads`, `gpus`, and `graph_executions`, `gaps`, `samples` where a rank has them) with one more
//! column first, `rank`, holding every rank's rows in one in-memory database.
//!
//! Each rank's rows are read from that rank's own views ([`SqlTrace::for_loaded`]: over the export
//! file for an nsys export, the model copied into memory for a PyTorch trace), so a rank's rows are
//! exactly what `sightline sql` gives for its file, except that times (`start`, `end`, `ts`) are on
//! the run's clock: the rank's offset (as [`crate::analysis::ranks::Run`] aligns the ranks) added.
//! Durations and everything else are as the rank's trace has them. One export at a time is opened
//! (SQLite's limit of 10 attached databases does not apply), and the ranks' traces are asked for one
//! by one through a closure, so a run that does not hold a collapsed rank's trace can load it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rusqlite::Connection;
use rusqlite::types::Value;

use super::{SqlError, SqlTrace, views};
use crate::trace::Trace;

/// Columns that hold a time on the trace's clock (moved onto the run's clock).
const TIME_COLUMNS: &[&str] = &["start", "end", "ts"];

/// Tables a rank may lack: made in the run's database when the first rank has them.
const OPTIONAL: &[&str] = &["graph_executions", "gaps", "samples"];

/// One rank of the run as its database needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunRank {
    /// The rank's number (the `rank` column).
    pub rank: u32,
    /// Added to the rank's times to put them on the run's clock.
    pub offset_ns: i64,
}

/// A rank as the SQL thread gets it from a run's tab: its trace when the run holds it, else the
/// file to load it from (a run that loads ranks lazily keeps no trace for a collapsed rank).
#[derive(Clone)]
pub struct RankTrace {
    pub rank: RunRank,
    pub path: std::path::PathBuf,
    pub trace: Option<Arc<Trace>>,
    /// The size and modification time of the file its digest was made from, where the run
    /// was opened from digests: a file that differs now is not read (its rows would not be the
    /// run's).
    pub made_from: Option<(u64, i64)>,
}

impl SqlTrace {
    /// The run's views over `ranks`, each trace held or loaded from its file in turn (and let
    /// go once its rows are in); `cancel` stops the filling and the loading.
    pub fn for_run_traces(ranks: &[RankTrace], cancel: &AtomicBool) -> Result<Self, SqlError> {
        let list: Vec<RunRank> = ranks.iter().map(|r| r.rank).collect();
        Self::for_run_with(&list, |i| load_rank(&ranks[i], cancel), Some(cancel))
    }

    /// The run's views over ranks whose traces are held: `(rank, offset_ns, trace)`.
    pub fn for_run(ranks: &[(u32, i64, Arc<Trace>)]) -> Result<Self, SqlError> {
        let list: Vec<RunRank> = ranks
            .iter()
            .map(|(rank, offset_ns, _)| RunRank {
                rank: *rank,
                offset_ns: *offset_ns,
            })
            .collect();
        Self::for_run_with(&list, |i| Ok(ranks[i].2.clone()), None)
    }

    /// The run's views over `ranks`, asking `trace_of(i)` for the trace of `ranks[i]` (held, or
    /// loaded on the calling thread) one rank at a time. Setting `cancel` stops the filling.
    pub fn for_run_with(
        ranks: &[RunRank],
        trace_of: impl FnMut(usize) -> Result<Arc<Trace>, SqlError>,
        cancel: Option<&AtomicBool>,
    ) -> Result<Self, SqlError> {
        let conn = Connection::open_in_memory().map_err(|e| run_error(&e))?;
        create_event_views(&conn).map_err(|e| run_error(&e))?;
        fill_event_views(&conn, ranks, trace_of, cancel)?;
        Ok(Self::guarded(conn, false))
    }

    /// The run's database from what its digests hold: the run-level `tables` (ranks,
    /// collectives, steps, per-rank summaries) now, and the event views of `ranks` (their traces
    /// held or loaded from their files) at the first query that names one of them.
    pub fn for_run_digests(tables: &[RunTable], ranks: Vec<RankTrace>) -> Result<Self, SqlError> {
        let conn = Connection::open_in_memory().map_err(|e| run_error(&e))?;
        for t in tables {
            add_table(&conn, t).map_err(|e| run_error(&e))?;
        }
        create_event_views(&conn).map_err(|e| run_error(&e))?;
        let db = Self::guarded(conn, false);
        if let Ok(mut pending) = db.pending_run.lock() {
            *pending = Some(ranks);
        }
        Ok(db)
    }

    /// Fills the event views of a run opened from its digests when `sql` names one of them (a
    /// word of the query: `kernels`, `api`, …), loading the ranks' traces not held.
    pub(super) fn fill_run_if_asked(
        &self,
        sql: &str,
        cancel: Option<&AtomicBool>,
    ) -> Result<(), SqlError> {
        let names_event_view = super::lazy::words(sql)
            .any(|w| views::VIEWS.iter().any(|(n, _)| *n == w) || OPTIONAL.contains(&w.as_str()));
        if !names_event_view {
            return Ok(());
        }
        let Some(ranks) = self.pending_run.lock().ok().and_then(|mut p| p.take()) else {
            return Ok(());
        };
        let never = AtomicBool::new(false);
        let stop = cancel.unwrap_or(&never);
        let list: Vec<RunRank> = ranks.iter().map(|r| r.rank).collect();
        let filled = self.refusals.trusted(|| {
            fill_event_views(&self.conn, &list, |i| load_rank(&ranks[i], stop), cancel)
        });
        if filled.is_err()
            && let Ok(mut p) = self.pending_run.lock()
        {
            // Tried again at the next query (a cancelled load, a trace not reachable now).
            *p = Some(ranks);
        }
        filled
    }
}

/// A rank's trace: held, or loaded whole from its file (not when the file changed since the
/// rank's digest was made).
fn load_rank(r: &RankTrace, cancel: &AtomicBool) -> Result<Arc<Trace>, SqlError> {
    if let Some(t) = &r.trace {
        return Ok(t.clone());
    }
    let unreadable = |why: String| SqlError::Views {
        path: r.path.clone(),
        detail: format!(
            "the event views need rank {}'s trace, which {why}; the run's own tables (ranks, \
             collectives, steps, kernel_sums, api_sums) answer from its digests without it",
            r.rank.rank
        ),
    };
    if crate::digests::store::changed_since(&r.path, r.made_from) {
        return Err(unreadable(
            "changed since its digest was made (its size or time differ): digest the traces \
             again"
                .into(),
        ));
    }
    let control = crate::load::LoadControl {
        progress: &|_| {},
        cancel,
        needs: crate::trace::Needs::ALL,
    };
    let trace = crate::load::load_file_with(&r.path, &control).map_err(|e| {
        let text = e.to_string();
        let shown = format!("{}: ", r.path.display());
        unreadable(format!(
            "cannot be read here ({})",
            text.strip_prefix(&shown).unwrap_or(&text)
        ))
    })?;
    Ok(Arc::new(trace))
}

/// A table of the run made by its caller (from the run's digests), rows as SQLite values.
#[derive(Debug, Clone, Default)]
pub struct RunTable {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

fn add_table(conn: &Connection, t: &RunTable) -> rusqlite::Result<()> {
    let list: Vec<String> = t.columns.iter().map(|c| format!("\"{c}\"")).collect();
    conn.execute_batch(&format!(
        "CREATE TABLE \"{}\" ({})",
        t.name,
        list.join(", ")
    ))?;
    let marks = vec!["?"; t.columns.len()].join(", ");
    let tx = conn.unchecked_transaction()?;
    {
        let mut insert = tx.prepare(&format!("INSERT INTO \"{}\" VALUES ({marks})", t.name))?;
        for row in &t.rows {
            insert.execute(rusqlite::params_from_iter(row.iter()))?;
        }
    }
    tx.commit()
}

/// The event views (`kernels`, `api`, …) with a `rank` column first, empty.
fn create_event_views(conn: &Connection) -> rusqlite::Result<()> {
    for (name, columns) in views::VIEWS {
        create(conn, name, &columns.split(", ").collect::<Vec<_>>())?;
    }
    Ok(())
}

/// Copies every rank's rows of the event views into `conn` (made by [`create_event_views`]),
/// asking `trace_of(i)` for rank `i`'s trace one at a time.
fn fill_event_views(
    conn: &Connection,
    ranks: &[RunRank],
    mut trace_of: impl FnMut(usize) -> Result<Arc<Trace>, SqlError>,
    cancel: Option<&AtomicBool>,
) -> Result<(), SqlError> {
    let mut made: Vec<String> = Vec::new();
    for (i, r) in ranks.iter().enumerate() {
        if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(SqlError::Cancelled);
        }
        let trace = trace_of(i)?;
        let one = SqlTrace::for_loaded(&trace)?;
        let views_error = |e: rusqlite::Error| SqlError::Views {
            path: trace.path.clone(),
            detail: e.to_string(),
        };
        let tx = conn.unchecked_transaction().map_err(views_error)?;
        for (name, _) in views::VIEWS {
            copy_rows(&one.conn, &tx, name, *r, None).map_err(views_error)?;
        }
        for name in OPTIONAL {
            if one
                .conn
                .prepare(&format!("SELECT 1 FROM {name} LIMIT 0"))
                .is_err()
            {
                continue;
            }
            let fresh = !made.iter().any(|m| m == name);
            copy_rows(&one.conn, &tx, name, *r, Some(fresh)).map_err(views_error)?;
            if fresh {
                made.push(name.to_string());
            }
        }
        tx.commit().map_err(views_error)?;
    }
    Ok(())
}

fn run_error(e: &rusqlite::Error) -> SqlError {
    SqlError::Views {
        path: "the run's database".into(),
        detail: e.to_string(),
    }
}

/// `CREATE TABLE name (rank, columns…)`.
fn create(conn: &Connection, name: &str, columns: &[&str]) -> rusqlite::Result<()> {
    let list: Vec<String> = std::iter::once("rank")
        .chain(columns.iter().copied())
        .map(|c| format!("\"{c}\""))
        .collect();
    conn.execute_batch(&format!("CREATE TABLE \"{name}\" ({})", list.join(", ")))
}

/// Copies every row of `name` in `from` (one rank's views) into `to`, with the rank first and
/// times moved by its offset; `create_first` is `Some(true)` when the table is to be made first.
fn copy_rows(
    from: &Connection,
    to: &Connection,
    name: &str,
    rank: RunRank,
    create_first: Option<bool>,
) -> rusqlite::Result<()> {
    let mut select = from.prepare(&format!("SELECT * FROM \"{name}\""))?;
    let columns: Vec<String> = select
        .column_names()
        .iter()
        .map(|c| c.to_string())
        .collect();
    if create_first == Some(true) {
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        create(to, name, &names)?;
    }
    let shifted: Vec<bool> = columns
        .iter()
        .map(|c| TIME_COLUMNS.contains(&c.as_str()))
        .collect();
    let marks = vec!["?"; columns.len() + 1].join(", ");
    let mut insert = to.prepare(&format!("INSERT INTO \"{name}\" VALUES ({marks})"))?;
    let mut rows = select.raw_query();
    let mut values: Vec<Value> = Vec::with_capacity(columns.len() + 1);
    while let Some(row) = rows.next()? {
        values.clear();
        values.push(Value::Integer(i64::from(rank.rank)));
        for (i, &shift) in shifted.iter().enumerate() {
            let v = match row.get::<_, Value>(i)? {
                Value::Integer(t) if shift => Value::Integer(t.saturating_add(rank.offset_ns)),
                Value::Real(t) if shift => Value::Real(t + rank.offset_ns as f64),
                other => other,
            };
            values.push(v);
        }
        insert.execute(rusqlite::params_from_iter(values.iter()))?;
    }
    Ok(())
}

/// The rows of a run's `result` that belong to `rank` (every row when it has no `rank` column),
/// their times (`start`, `end`, `ts`) moved back from the run's clock onto the rank's own: how a
/// result pinned on a run's tab is drawn on each rank's rows.
pub fn rows_of_rank(result: &super::QueryResult, rank: u32, offset_ns: i64) -> super::QueryResult {
    let rank_col = result.columns.iter().position(|c| c == "rank");
    let shifted: Vec<bool> = result
        .columns
        .iter()
        .map(|c| TIME_COLUMNS.contains(&c.as_str()))
        .collect();
    let rows = result
        .rows
        .iter()
        .filter(|row| rank_col.is_none_or(|c| row.get(c) == Some(&Value::Integer(i64::from(rank)))))
        .map(|row| {
            row.iter()
                .zip(&shifted)
                .map(|(v, &shift)| match v {
                    Value::Integer(t) if shift => Value::Integer(t.saturating_sub(offset_ns)),
                    Value::Real(t) if shift => Value::Real(t - offset_ns as f64),
                    other => other.clone(),
                })
                .collect()
        })
        .collect();
    super::QueryResult {
        columns: result.columns.clone(),
        rows,
        truncated: result.truncated,
    }
}
