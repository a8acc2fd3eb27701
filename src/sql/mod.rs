//! SQL over any trace: one set of views (`kernels`, `memcpy`, `memset`, `api`, `ranges`,
//! `threads`, `gpus`, `graph_executions` where present) whatever format or nsys version the trace
//! came in, queried read-only with a time limit.
//!
//! An nsys export is opened read-only and immutable and gets TEMP views over the file itself
//! ([`views`]); any other trace Sightline loads (a PyTorch profiler trace) is loaded into the
//! model and copied into an in-memory database with the same tables ([`model_db`]). Either way
//! [`guard`] is installed before the user's SQL runs, so only reads get through. A run of ranks
//! gets the same views with a `rank` column, every rank's rows on the run's clock ([`run_db`]).
//! A sibling of `analysis`: it knows the trace model and the loaders, never the UI.

pub mod computed;
pub mod guard;
mod lazy;
pub mod model_db;
pub mod run_db;
pub mod track;
pub mod views;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use rusqlite::types::{Value, ValueRef};

use crate::load::{self, LoadError};

/// What went wrong opening a trace for SQL or running a query.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{path}: could not make the SQL views: {detail}")]
    Views { path: PathBuf, detail: String },
    #[error("{0}")]
    Refused(String),
    #[error("the query ran longer than {0:.1?} and was stopped (raise --timeout, or narrow it)")]
    TimedOut(Duration),
    #[error("the query was cancelled")]
    Cancelled,
    #[error("SQL error: {0}")]
    Sql(String),
}

/// A query's answer: column names and rows, at most the limit asked for.
#[derive(Debug, Clone, Default)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
    /// True when more rows matched than the limit let through.
    pub truncated: bool,
}

/// A trace opened for SQL: a connection with the views and the read-only guard in place.
pub struct SqlTrace {
    conn: Connection,
    refusals: guard::Refusals,
    /// True when the views are over an nsys export itself (false: an in-memory copy of the model).
    pub over_file: bool,
    /// A run opened from its digests: the ranks whose event views are filled at the first
    /// query that reads them ([`SqlTrace::for_run_digests`]).
    pending_run: std::sync::Mutex<Option<Vec<run_db::RankTrace>>>,
    /// Tables made empty, filled at the first query that names them ([`Self::for_shared`]).
    unfilled: std::sync::Mutex<Option<lazy::Unfilled>>,
}

/// True when `path` starts with SQLite's file header.
fn is_sqlite_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

impl SqlTrace {
    /// Opens `path`: views over the file for an nsys export, else the loaded model in memory.
    pub fn open(path: &Path) -> Result<Self, SqlError> {
        if is_sqlite_file(path) {
            return Self::over_export(path);
        }
        let trace = load::load_file(path)?;
        Self::from_trace(&trace)
    }

    /// The views of a trace already loaded: over its file when it is an nsys export (read again
    /// from disk, so every column is there), else its model copied into memory.
    pub fn for_loaded(trace: &crate::trace::Trace) -> Result<Self, SqlError> {
        if Self::is_export(trace) {
            Self::over_export_with(&trace.path, Some(trace))
        } else {
            Self::from_trace(trace)
        }
    }

    /// True when `trace` was loaded from an nsys export still there to read views over.
    fn is_export(trace: &crate::trace::Trace) -> bool {
        trace.format == crate::trace::TraceFormat::NsysSqlite && is_sqlite_file(&trace.path)
    }

    /// [`Self::open`] for one query: an export whose query reads the computed views (`gaps`,
    /// `samples`) is loaded too, to compute them; others only get the views over the file.
    pub fn open_for_query(path: &Path, query: &str) -> Result<Self, SqlError> {
        let reads_computed = lazy::words(query).any(|w| w == "gaps" || w == "samples");
        if is_sqlite_file(path) && reads_computed {
            let trace = load::load_file(path)?;
            return Self::over_export_with(path, Some(&trace));
        }
        Self::open(path)
    }

    /// TEMP views over an nsys export, opened read-only and immutable.
    pub fn over_export(path: &Path) -> Result<Self, SqlError> {
        Self::over_export_with(path, None)
    }

    /// [`Self::over_export`], with the computed views (`gaps`, `samples`) of `trace` (the same
    /// file, loaded) as TEMP tables.
    pub fn over_export_with(
        path: &Path,
        trace: Option<&crate::trace::Trace>,
    ) -> Result<Self, SqlError> {
        let conn = Self::export_views(path)?;
        if let Some(trace) = trace {
            computed::add(&conn, trace, true).map_err(|e| SqlError::Views {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        Ok(Self::guarded(conn, true))
    }

    /// An export opened read-only and immutable, with the TEMP views over it.
    fn export_views(path: &Path) -> Result<Connection, SqlError> {
        let conn = load::nsys_sqlite::connection::open_read_only(path)?;
        let views_error = |e: rusqlite::Error| SqlError::Views {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let schema = load::nsys_sqlite::Schema::read(&conn).map_err(views_error)?;
        for statement in views::create_statements(&schema) {
            conn.execute_batch(&statement).map_err(views_error)?;
        }
        Ok(conn)
    }

    /// An in-memory database filled from a loaded trace.
    pub fn from_trace(trace: &crate::trace::Trace) -> Result<Self, SqlError> {
        let views_error = |e: rusqlite::Error| SqlError::Views {
            path: trace.path.clone(),
            detail: e.to_string(),
        };
        let mut conn = Connection::open_in_memory().map_err(views_error)?;
        model_db::fill(&mut conn, trace).map_err(views_error)?;
        computed::add(&conn, trace, false).map_err(views_error)?;
        Ok(Self::guarded(conn, false))
    }

    /// `conn` with the read-only guard installed: from now on a user's SQL only reads it.
    fn guarded(conn: Connection, over_file: bool) -> Self {
        let refusals = guard::install(&conn);
        Self {
            conn,
            refusals,
            over_file,
            pending_run: Default::default(),
            unfilled: Default::default(),
        }
    }

    /// The names of the views (or tables) a query can read, in documentation order.
    pub fn view_names(&self) -> Vec<String> {
        let mut names: Vec<String> = views::VIEWS.iter().map(|(n, _)| n.to_string()).collect();
        for extra in [
            "graph_executions",
            "gaps",
            "samples",
            "ranks",
            "collectives",
            "steps",
            "kernel_sums",
            "api_sums",
        ] {
            let sql = format!("SELECT 1 FROM {extra} LIMIT 0");
            if self.conn.prepare(&sql).is_ok() {
                names.push(extra.into());
            }
        }
        names
    }

    /// Runs `sql` and returns up to `limit` rows; stops at `timeout` or when `cancel` is set.
    pub fn query(
        &self,
        sql: &str,
        limit: Option<usize>,
        timeout: Duration,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<QueryResult, SqlError> {
        self.query_with(sql, &[], limit, timeout, cancel)
    }

    /// [`Self::query`] with named parameters (`:sel_start` → `("sel_start", ns)`); a parameter
    /// the query names but `params` lacks is an error that lists the ones there are.
    pub fn query_with(
        &self,
        sql: &str,
        params: &[(&str, i64)],
        limit: Option<usize>,
        timeout: Duration,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<QueryResult, SqlError> {
        let mut columns = Vec::new();
        let mut rows: Vec<Vec<Value>> = Vec::new();
        let truncated = self.query_each(
            sql,
            params,
            limit,
            timeout,
            cancel,
            |names| columns = names.to_vec(),
            |row| rows.push(row.iter().map(|&v| Value::from(v)).collect()),
        )?;
        Ok(QueryResult {
            columns,
            rows,
            truncated,
        })
    }

    /// [`Self::query_with`] handing the column names to `on_columns`, then each row to `on_row`
    /// as values borrowed from SQLite (no copy per cell: for callers that build columns of their
    /// own). Returns true when more rows matched than `limit` let through.
    #[allow(clippy::too_many_arguments)]
    pub fn query_each(
        &self,
        sql: &str,
        params: &[(&str, i64)],
        limit: Option<usize>,
        timeout: Duration,
        cancel: Option<Arc<AtomicBool>>,
        on_columns: impl FnOnce(&[String]),
        on_row: impl FnMut(&[ValueRef<'_>]),
    ) -> Result<bool, SqlError> {
        let started = Instant::now();
        self.fill_run_if_asked(sql, cancel.as_deref())?;
        self.fill_named(sql)?;
        let _ = self.refusals.take();
        let timed_out = Arc::new(AtomicBool::new(false));
        let flag = timed_out.clone();
        // Called every few thousand virtual-machine steps: returning true interrupts the query.
        self.conn.progress_handler(
            10_000,
            Some(move || {
                if cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return true;
                }
                if started.elapsed() > timeout {
                    flag.store(true, Ordering::Relaxed);
                    return true;
                }
                false
            }),
        );
        let result = self.run(sql, params, limit, on_columns, on_row);
        self.conn.progress_handler(0, None::<fn() -> bool>);
        result.map_err(|e| self.explain(e, &timed_out, timeout))
    }

    fn run(
        &self,
        sql: &str,
        params: &[(&str, i64)],
        limit: Option<usize>,
        on_columns: impl FnOnce(&[String]),
        mut on_row: impl FnMut(&[ValueRef<'_>]),
    ) -> rusqlite::Result<bool> {
        let mut stmt = self.conn.prepare(sql)?;
        for i in 1..=stmt.parameter_count() {
            let asked = stmt.parameter_name(i).unwrap_or("?").to_string();
            let bare = asked.trim_start_matches([':', '@', '$']);
            match params.iter().find(|(name, _)| *name == bare) {
                Some(&(_, value)) => stmt.raw_bind_parameter(i, value)?,
                None => {
                    let known: Vec<String> = params.iter().map(|(n, _)| format!(":{n}")).collect();
                    return Err(rusqlite::Error::InvalidParameterName(format!(
                        "{asked} (the parameters are {})",
                        if known.is_empty() {
                            "none here".to_string()
                        } else {
                            known.join(", ")
                        }
                    )));
                }
            }
        }
        let columns: Vec<String> = stmt.column_names().iter().map(|c| c.to_string()).collect();
        let n = columns.len();
        on_columns(&columns);
        let mut rows = stmt.raw_query();
        let mut seen = 0usize;
        while let Some(row) = rows.next()? {
            if limit.is_some_and(|l| seen >= l) {
                return Ok(true);
            }
            seen += 1;
            let values = (0..n)
                .map(|i| row.get_ref(i))
                .collect::<rusqlite::Result<Vec<ValueRef<'_>>>>()?;
            on_row(&values);
        }
        Ok(false)
    }

    fn explain(&self, e: rusqlite::Error, timed_out: &AtomicBool, timeout: Duration) -> SqlError {
        if let Some(reason) = self.refusals.take() {
            return SqlError::Refused(reason);
        }
        if let rusqlite::Error::SqliteFailure(f, _) = &e
            && f.code == rusqlite::ErrorCode::OperationInterrupted
        {
            return if timed_out.load(Ordering::Relaxed) {
                SqlError::TimedOut(timeout)
            } else {
                SqlError::Cancelled
            };
        }
        if let rusqlite::Error::SqliteFailure(f, _) = &e
            && f.code == rusqlite::ErrorCode::ReadOnly
        {
            return SqlError::Refused(format!(
                "refused: {e}. Sightline's SQL only reads the trace"
            ));
        }
        SqlError::Sql(e.to_string())
    }
}

/// A cell as text: NULL empty, reals as SQLite prints them, blobs in hex.
pub fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => f.to_string(),
        Value::Text(t) => t.clone(),
        Value::Blob(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
    }
}
