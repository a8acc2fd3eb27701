//! A database over a loaded trace whose large tables are filled when a query first names them:
//! the event tables of the in-memory copy of a PyTorch trace (`kernels`, `api`, `ranges`, …) and
//! the computed `gaps` / `samples` beside an export's views. A notebook's
//! `select * from kernels` then copies the kernels only, not every API call and operator, and
//! no gap is computed until a query reads `gaps`.

use std::sync::Arc;

use rusqlite::Connection;

use super::{SqlError, SqlTrace, computed, model_db};
use crate::trace::Trace;

/// Tables made empty, with the trace that fills them.
pub(super) struct Unfilled {
    trace: Arc<Trace>,
    /// `(table, computed)`: computed tables are filled by [`computed::fill_table`], the others
    /// by [`model_db::fill_table`].
    tables: Vec<(&'static str, bool)>,
}

/// The lowercase words of a query (identifiers and keywords; quotes and punctuation split them).
pub(super) fn words(sql: &str) -> impl Iterator<Item = String> + '_ {
    sql.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
}

impl SqlTrace {
    /// [`Self::for_loaded`] for a trace shared with the caller, filling each large table at the
    /// first query that names it (a word of the query: `kernels`, `gaps`, …) rather than now.
    pub fn for_shared(trace: Arc<Trace>) -> Result<Self, SqlError> {
        let views_error = |e: rusqlite::Error| SqlError::Views {
            path: trace.path.clone(),
            detail: e.to_string(),
        };
        let (conn, over_file, events) = if Self::is_export(&trace) {
            let conn = Self::export_views(&trace.path)?;
            (conn, true, Vec::new())
        } else {
            let conn = Connection::open_in_memory().map_err(views_error)?;
            let events = model_db::create(&conn, &trace).map_err(views_error)?;
            (conn, false, events)
        };
        let computed = computed::create(&conn, &trace, over_file).map_err(views_error)?;
        let mut tables: Vec<(&'static str, bool)> =
            events.into_iter().map(|t| (t, false)).collect();
        tables.extend(computed.into_iter().map(|t| (t, true)));
        let db = Self::guarded(conn, over_file);
        if let Ok(mut u) = db.unfilled.lock() {
            *u = Some(Unfilled { trace, tables });
        }
        Ok(db)
    }

    /// Fills the tables `sql` names that are still empty (see [`Self::for_shared`]).
    pub(super) fn fill_named(&self, sql: &str) -> Result<(), SqlError> {
        let Ok(mut guard) = self.unfilled.lock() else {
            return Ok(());
        };
        let Some(unfilled) = guard.as_mut() else {
            return Ok(());
        };
        let named: Vec<String> = words(sql).collect();
        let trace = unfilled.trace.clone();
        let views_error = |e: rusqlite::Error| SqlError::Views {
            path: trace.path.clone(),
            detail: e.to_string(),
        };
        let mut fill = Vec::new();
        unfilled.tables.retain(|&(table, computed)| {
            let asked = named.iter().any(|w| w == table);
            if asked {
                fill.push((table, computed));
            }
            !asked
        });
        if fill.is_empty() {
            return Ok(());
        }
        let filled = self.refusals.trusted(|| -> rusqlite::Result<()> {
            let tx = self.conn.unchecked_transaction()?;
            for &(table, computed) in &fill {
                match computed {
                    true => computed::fill_table(&tx, &trace, table)?,
                    false => model_db::fill_table(&tx, &trace, table)?,
                }
            }
            tx.commit()
        });
        if let Err(e) = filled {
            // Left to be tried again at the next query that names them.
            unfilled.tables.extend(fill);
            return Err(views_error(e));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::sql::QueryResult;

    fn all_rows(db: &SqlTrace, table: &str) -> QueryResult {
        let sql = format!("SELECT * FROM \"{table}\"");
        match db.query(&sql, None, Duration::from_secs(60), None) {
            Ok(r) => r,
            Err(e) => panic!("{sql}: {e}"),
        }
    }

    fn unfilled(db: &SqlTrace) -> Vec<&'static str> {
        let guard = db.unfilled.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .as_ref()
            .map(|u| u.tables.iter().map(|&(t, _)| t).collect())
            .unwrap_or_default()
    }

    /// Every table a lazily filled database answers equals the one filled at once, and a query
    /// fills only the tables it names.
    #[test]
    fn lazy_tables_equal_the_tables_filled_at_once() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut compared = 0;
        for name in ["kt_pair.pt.trace.json.gz", "moe.sqlite", "cpu_side.sqlite"] {
            let trace = match crate::load::load_file(&root.join(name)) {
                Ok(t) => Arc::new(t),
                Err(e) => panic!("{name}: {e}"),
            };
            let eager = SqlTrace::for_loaded(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
            let lazy = SqlTrace::for_shared(trace.clone()).unwrap_or_else(|e| panic!("{e}"));
            let before = unfilled(&lazy);
            assert!(!before.is_empty(), "{name}: nothing left to fill");
            // A query naming the first table (`kernels`; over an export, `gaps`) fills it alone.
            let first = before[0];
            let n = lazy.query(
                &format!("select count(*) from {first}"),
                None,
                Duration::from_secs(60),
                None,
            );
            assert!(n.is_ok(), "{name}: {n:?}");
            let after = unfilled(&lazy);
            assert!(!after.contains(&first), "{name}: {first} still unfilled");
            assert_eq!(
                after.len() + 1,
                before.len(),
                "{name}: {before:?} -> {after:?}"
            );
            assert_eq!(lazy.view_names(), eager.view_names(), "{name}");
            for table in eager.view_names() {
                let (a, b) = (all_rows(&eager, &table), all_rows(&lazy, &table));
                assert_eq!(a.columns, b.columns, "{name}: {table}");
                assert_eq!(a.rows, b.rows, "{name}: {table}");
                compared += a.rows.len();
            }
            assert!(unfilled(&lazy).is_empty(), "{name}: {:?}", unfilled(&lazy));
        }
        assert!(compared > 10_000, "{compared} rows compared");
    }
}
