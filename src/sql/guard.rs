//! The read-only guard: an SQLite authorizer that lets a query read and nothing else.
//!
//! Installed after Sightline has made its own TEMP views (or filled its in-memory tables), so a
//! user's statement can only SELECT: writes, schema changes, ATTACH/DETACH, PRAGMAs that set
//! anything, transactions and `load_extension` are refused when the statement is prepared, and
//! the refusal names what was refused. It is SQLite's own parse that decides (an authorizer, not
//! string matching), so `WITH … INSERT` or a write hidden in a trigger-like form is caught too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};

/// PRAGMAs that only report: allowed with or without an argument (`table_info(kernels)`).
const READ_ONLY_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "database_list",
    "function_list",
    "collation_list",
    "compile_options",
    "pragma_list",
];

/// Functions that reach outside the query: never callable from a user's SQL.
const REFUSED_FUNCTIONS: &[&str] = &["load_extension", "fts3_tokenizer"];

/// The last refusal's reason, read back to turn SQLite's bare "not authorized" into a message;
/// and whether Sightline itself is writing (a run's event views filled at their first query),
/// which the guard lets through.
#[derive(Clone, Default)]
pub struct Refusals(Arc<Mutex<Option<(String, bool)>>>, Arc<AtomicBool>);

impl Refusals {
    /// Lets Sightline's own statements through while `f` runs (never a user's: the SQL thread
    /// runs one thing at a time).
    pub fn trusted<T>(&self, f: impl FnOnce() -> T) -> T {
        self.1.store(true, Ordering::Relaxed);
        let out = f();
        self.1.store(false, Ordering::Relaxed);
        out
    }

    /// Takes the reason of the last refusal, if any.
    pub fn take(&self) -> Option<String> {
        self.0
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .map(|(reason, _)| reason)
    }

    /// Keeps the first refusal of a statement, except that the edit of `sqlite_master` that SQLite
    /// asks about before `CREATE TABLE` / `DROP VIEW` gives way to the statement's own name.
    fn record(&self, reason: String, schema_row: bool) {
        if let Ok(mut r) = self.0.lock()
            && r.as_ref().is_none_or(|(_, weak)| *weak && !schema_row)
        {
            *r = Some((reason, schema_row));
        }
    }
}

/// Installs the guard on `conn`; from now on only reads are allowed.
pub fn install(conn: &Connection) -> Refusals {
    let refusals = Refusals::default();
    let record = refusals.clone();
    conn.authorizer(Some(move |ctx: AuthContext<'_>| {
        if record.1.load(Ordering::Relaxed) {
            return Authorization::Allow;
        }
        match refusal(&ctx.action) {
            None => Authorization::Allow,
            Some(reason) => {
                record.record(reason, edits_schema_table(&ctx.action));
                Authorization::Deny
            }
        }
    }));
    refusals
}

/// An INSERT, UPDATE or DELETE of SQLite's own schema table: what a CREATE or DROP implies.
fn edits_schema_table(action: &AuthAction<'_>) -> bool {
    let table = match action {
        AuthAction::Insert { table_name }
        | AuthAction::Delete { table_name }
        | AuthAction::Update { table_name, .. } => *table_name,
        _ => return false,
    };
    matches!(
        table,
        "sqlite_master" | "sqlite_temp_master" | "sqlite_schema" | "sqlite_temp_schema"
    )
}

/// Why `action` is refused, `None` when it only reads.
pub fn refusal(action: &AuthAction<'_>) -> Option<String> {
    let what = match action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => return None,
        AuthAction::Function { function_name } => {
            let lower = function_name.to_ascii_lowercase();
            if REFUSED_FUNCTIONS.contains(&lower.as_str()) {
                format!("calling {function_name}()")
            } else {
                return None;
            }
        }
        AuthAction::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let lower = pragma_name.to_ascii_lowercase();
            if READ_ONLY_PRAGMAS.contains(&lower.as_str()) {
                return None;
            }
            match pragma_value {
                Some(v) => format!("PRAGMA {pragma_name} = {v}"),
                None => format!(
                    "PRAGMA {pragma_name} (only table_info and other listing PRAGMAs are read)"
                ),
            }
        }
        _ if edits_schema_table(action) => "a schema change (CREATE, DROP or ALTER)".to_string(),
        AuthAction::Insert { table_name } => format!("INSERT into {table_name}"),
        AuthAction::Update { table_name, .. } => format!("UPDATE of {table_name}"),
        AuthAction::Delete { table_name } => format!("DELETE from {table_name}"),
        AuthAction::Attach { filename } => format!("ATTACH of {filename}"),
        AuthAction::Detach { database_name } => format!("DETACH of {database_name}"),
        AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => {
            "a transaction statement".to_string()
        }
        AuthAction::CreateIndex { index_name, .. }
        | AuthAction::CreateTempIndex { index_name, .. } => format!("CREATE INDEX {index_name}"),
        AuthAction::CreateTable { table_name } | AuthAction::CreateTempTable { table_name } => {
            format!("CREATE TABLE {table_name}")
        }
        AuthAction::CreateView { view_name } | AuthAction::CreateTempView { view_name } => {
            format!("CREATE VIEW {view_name}")
        }
        AuthAction::CreateTrigger { trigger_name, .. }
        | AuthAction::CreateTempTrigger { trigger_name, .. } => {
            format!("CREATE TRIGGER {trigger_name}")
        }
        AuthAction::CreateVtable { table_name, .. } => format!("CREATE VIRTUAL TABLE {table_name}"),
        AuthAction::DropTable { table_name } | AuthAction::DropTempTable { table_name } => {
            format!("DROP TABLE {table_name}")
        }
        AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => {
            format!("DROP VIEW {view_name}")
        }
        AuthAction::DropIndex { index_name, .. } | AuthAction::DropTempIndex { index_name, .. } => {
            format!("DROP INDEX {index_name}")
        }
        AuthAction::DropTrigger { trigger_name, .. }
        | AuthAction::DropTempTrigger { trigger_name, .. } => {
            format!("DROP TRIGGER {trigger_name}")
        }
        AuthAction::DropVtable { table_name, .. } => format!("DROP TABLE {table_name}"),
        AuthAction::AlterTable { table_name, .. } => format!("ALTER TABLE {table_name}"),
        AuthAction::Reindex { index_name } => format!("REINDEX {index_name}"),
        AuthAction::Analyze { table_name } => format!("ANALYZE {table_name}"),
        _ => "this statement".to_string(),
    };
    Some(format!(
        "refused: {what}. Sightline's SQL only reads the trace (SELECT and WITH … SELECT)"
    ))
}
