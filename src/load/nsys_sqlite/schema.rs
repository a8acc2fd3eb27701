//! What tables and columns this export has. Every reader asks here before it reads, so version
//! differences (columns added in 2022.x, tables renamed in 2023.x, ...) are decided in one place.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::pages::TableLayout;

/// Table → column names of one export.
#[derive(Debug, Default, Clone)]
pub struct Schema {
    tables: HashMap<String, HashSet<String>>,
    /// How each table's rows lie in the file, where the page reader can read them.
    layouts: HashMap<String, TableLayout>,
}

impl Schema {
    pub fn read(conn: &Connection) -> rusqlite::Result<Self> {
        let mut found = Vec::new();
        {
            let mut stmt = conn.prepare(
                "SELECT name, type, rootpage, sql FROM sqlite_master WHERE type IN ('table', 'view')",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                found.push((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)? == "table",
                    row.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    row.get::<_, Option<String>>(3)?.unwrap_or_default(),
                ));
            }
        }
        let mut tables = HashMap::new();
        let mut layouts = HashMap::new();
        for (name, is_table, root, sql) in found {
            let mut columns = Vec::new();
            let mut stmt = conn.prepare(&format!(
                "PRAGMA table_info(\"{}\")",
                name.replace('"', "\"\"")
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                columns.push((
                    row.get::<_, String>(1)?,
                    row.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    row.get::<_, Option<i64>>(5)?.unwrap_or(0),
                    row.get_ref(4)?.data_type() != rusqlite::types::Type::Null,
                ));
            }
            if is_table && let Some(layout) = TableLayout::new(root, &sql, &columns) {
                layouts.insert(name.clone(), layout);
            }
            tables.insert(name, columns.into_iter().map(|c| c.0).collect());
        }
        Ok(Self { tables, layouts })
    }

    /// How `table`'s rows lie in the file; `None` where the page reader does not read it.
    pub fn layout(&self, table: &str) -> Option<&TableLayout> {
        self.has_table(table).then(|| self.layouts.get(table))?
    }

    pub fn has_table(&self, table: &str) -> bool {
        self.tables.contains_key(table)
    }

    pub fn has_column(&self, table: &str, column: &str) -> bool {
        self.tables.get(table).is_some_and(|c| c.contains(column))
    }

    /// The tables whose name starts with `prefix` and goes on (a family such as nsys's
    /// `OPENMP_EVENT_KIND_*`), in name order.
    pub fn tables_with_prefix(&self, prefix: &str) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .tables
            .keys()
            .map(String::as_str)
            .filter(|t| t.len() > prefix.len() && t.starts_with(prefix))
            .collect();
        names.sort_unstable();
        names
    }

    /// The column itself when the table has it, else `NULL`, for building a SELECT list that
    /// reads the same positions whatever the version.
    pub fn column_or_null(&self, table: &str, column: &str) -> String {
        if column == "rowid" && self.has_table(table) {
            // Not in table_info, but every nsys table has one (none is WITHOUT ROWID).
            "rowid".to_string()
        } else if self.has_column(table, column) {
            format!("\"{column}\"")
        } else {
            "NULL".to_string()
        }
    }

    /// `SELECT <cols> FROM <table>` where missing columns read as NULL, and missing columns at
    /// the end are not selected at all: a row then reads them as absent, which the readers'
    /// helpers (`connection::int`, `connection::text`) take for NULL. A lean load leaves most of
    /// a wide table's columns out, and SQLite then makes no value for them.
    pub fn select(&self, table: &str, columns: &[&str]) -> String {
        let present = columns
            .iter()
            .rposition(|c| *c == "rowid" || self.has_column(table, c))
            .map_or(1, |last| last + 1);
        let list: Vec<String> = columns[..present.min(columns.len())]
            .iter()
            .map(|c| self.column_or_null(table, c))
            .collect();
        format!("SELECT {} FROM \"{table}\"", list.join(", "))
    }

    /// Forgets a table: readers then read it as absent.
    pub fn forget_table(&mut self, table: &str) {
        self.tables.remove(table);
    }

    /// Forgets the tables whose name starts with `prefix` (see [`Schema::tables_with_prefix`]).
    pub fn forget_tables_with_prefix(&mut self, prefix: &str) {
        self.tables
            .retain(|t, _| !(t.len() > prefix.len() && t.starts_with(prefix)));
    }

    /// Forgets a column: readers then read NULL in its place.
    pub fn forget_column(&mut self, table: &str, column: &str) {
        if let Some(columns) = self.tables.get_mut(table) {
            columns.remove(column);
        }
    }

    pub fn table_count(&self) -> usize {
        self.tables.len()
    }
}
