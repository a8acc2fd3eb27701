//! The floor a loader is measured against: a bare scan of the same columns of the same tables the
//! readers read, touching every value and building nothing. `sightline bench` reports the load
//! time beside it.

use std::path::Path;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rusqlite::types::ValueRef;

use super::connection::{classify, open_read_only};
use super::schema::Schema;
use super::{callchains, cpu_calls, gpu_ops, nvtx, samples, sched, system};
use crate::load::LoadError;

/// What a bare scan read, and how long it took.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanStats {
    pub rows: u64,
    pub values: u64,
    /// Sum of every integer and text length read, so the work cannot be optimised away.
    pub checksum: u64,
    pub elapsed: Duration,
}

/// The (table, SELECT) pairs of the event tables the loader reads; the small system tables
/// (GPUs, processes, thread names, session) are left out, they are a few hundred rows.
pub fn scan_queries(schema: &Schema) -> Vec<(String, String)> {
    let mut tables: Vec<(&str, &[&str])> = vec![
        ("StringIds", &["id", "value"]),
        (gpu_ops::T_KERNEL, gpu_ops::KERNEL_COLUMNS),
        (gpu_ops::T_MEMCPY, gpu_ops::MEMCPY_COLUMNS),
        (gpu_ops::T_MEMSET, gpu_ops::MEMSET_COLUMNS),
        (gpu_ops::T_GRAPH, gpu_ops::GRAPH_COLUMNS),
        (gpu_ops::T_SYNC, gpu_ops::SYNC_COLUMNS),
        (gpu_ops::T_CUDA_EVENT, gpu_ops::CUDA_EVENT_COLUMNS),
        (nvtx::T_NVTX, nvtx::NVTX_COLUMNS),
        (cpu_calls::T_OSRT, cpu_calls::OSRT_COLUMNS),
        (system::T_MEMORY_USAGE, system::MEMORY_USAGE_COLUMNS),
        (samples::T_SAMPLES, samples::SAMPLE_COLUMNS),
        (sched::T_SCHED, sched::SCHED_COLUMNS),
        (
            callchains::T_SAMPLING_CALLCHAINS,
            callchains::CALLCHAIN_COLUMNS,
        ),
        (callchains::T_CUDA_CALLCHAINS, callchains::CALLCHAIN_COLUMNS),
        (callchains::T_OSRT_CALLCHAINS, callchains::CALLCHAIN_COLUMNS),
    ];
    for t in cpu_calls::API_TABLES {
        tables.push((t, cpu_calls::API_COLUMNS));
    }
    tables
        .into_iter()
        .filter(|(t, _)| schema.has_table(t))
        .map(|(t, cols)| (t.to_string(), schema.select(t, cols)))
        .collect()
}

/// Scans the tables of [`scan_queries`], each on its own read-only connection; in parallel on
/// rayon's pool like the loader when `parallel`, else one after another.
pub fn bare_scan(path: &Path, parallel: bool) -> Result<ScanStats, LoadError> {
    let t0 = Instant::now();
    let conn = open_read_only(path)?;
    let schema = Schema::read(&conn).map_err(|e| classify(path, "sqlite_master", e))?;
    drop(conn);
    let queries = scan_queries(&schema);
    let scan_one = |(table, sql): &(String, String)| scan_table(path, table, sql);
    let parts: Vec<Result<ScanStats, LoadError>> = if parallel {
        queries.par_iter().map(scan_one).collect()
    } else {
        queries.iter().map(scan_one).collect()
    };
    let mut total = ScanStats::default();
    for part in parts {
        let p = part?;
        total.rows += p.rows;
        total.values += p.values;
        total.checksum = total.checksum.wrapping_add(p.checksum);
    }
    total.elapsed = t0.elapsed();
    Ok(total)
}

fn scan_table(path: &Path, table: &str, sql: &str) -> Result<ScanStats, LoadError> {
    let err = |e| classify(path, table, e);
    let conn = open_read_only(path)?;
    let mut stmt = conn.prepare(sql).map_err(err)?;
    let columns = stmt.column_count();
    let mut rows = stmt.query([]).map_err(err)?;
    let mut out = ScanStats::default();
    while let Some(row) = rows.next().map_err(err)? {
        out.rows += 1;
        for i in 0..columns {
            out.values += 1;
            let v = match row.get_ref(i).map_err(err)? {
                ValueRef::Integer(v) => v as u64,
                ValueRef::Real(f) => f as u64,
                ValueRef::Text(t) | ValueRef::Blob(t) => t.len() as u64,
                ValueRef::Null => 0,
            };
            out.checksum = out.checksum.wrapping_add(v);
        }
    }
    Ok(out)
}
