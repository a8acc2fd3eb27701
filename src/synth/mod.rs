//! Synthetic Nsight Systems exports for benchmarks and tests: `sightline gen-trace`.
//!
//! The file has the exact schema of a real `nsys export --type=sqlite` of Nsight Systems 2022.4.2
//! (schema 3.0.0): [`SCHEMA_SQL`] is every `CREATE TABLE` of `tests/fixtures/moe.sqlite`, copied
//! verbatim with the rows of its `ENUM_*` tables. It was made with
//! ```text
//! F=tests/fixtures/moe.sqlite
//! sqlite3 $F "select sql||';' from sqlite_master where type='table' and name not like 'ENUM_%' order by rowid"
//! sqlite3 $F ".dump 'ENUM_%'" | grep -v '^PRAGMA\|^BEGIN TRANSACTION\|^COMMIT'
//! ```
//! and `tests/gen_trace.rs` checks that it still equals the fixture's. moe was captured without
//! CPU sampling, so the three CPU-side tables (`COMPOSITE_EVENTS`, `SAMPLING_CALLCHAINS`,
//! `SCHED_EVENTS`) are copied from `../shared/traces/cpu_side.sqlite` (the SQL file says how).
//!
//! The rows model data-parallel training ([`workload`]): per CPU thread a `warmup` range, then
//! `step_N` ranges with nested `forward_pass` / `layer_K_*` / `backward_pass` / `optimizer_step`
//! ranges, kernels with Zipf-distributed names launched through `cudaLaunchKernel_v7000` with
//! matching correlation ids, copies of every direction, memsets, stream synchronisations and idle
//! gaps between steps. Each thread is also scheduled in and out and sampled with call stacks
//! ([`cpu_side`]), as `nsys profile` does by default on Linux. The same options and seed give the
//! same file, byte for byte.
//!
//! [`generate_inference`] writes the shape of a real LLM-inference export instead: one GPU,
//! millions of tiny kernels on four streams, deep NVTX nesting and CUDA graph replays
//! ([`inference`]). [`generate_kineto`] writes a PyTorch profiler trace ([`kineto`]).

/// Binds the values to `?1, ?2, ...` of a prepared insert and runs it (no per-row allocation).
macro_rules! insert {
    ($stmt:expr; $($v:expr),+ $(,)?) => {{
        let stmt: &mut ::rusqlite::Statement = &mut $stmt;
        let mut i = 0usize;
        $( i += 1; stmt.raw_bind_parameter(i, $v)?; )+
        stmt.raw_execute()?;
    }};
}

mod cpu_side;
mod inference;
pub mod kineto;
mod rng;
mod workload;

use std::path::{Path, PathBuf};

use rusqlite::Connection;

pub use cpu_side::DEFAULT_SAMPLING_PERIOD_NS;
pub use inference::DEFAULT_EVENTS as DEFAULT_INFERENCE_EVENTS;
pub use workload::GenCounts;

/// The DDL and ENUM rows of a real 2022.4.2 export (see the module documentation).
pub const SCHEMA_SQL: &str = include_str!("nsys_2022_4_schema.sql");

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// Timeline events to write: kernels + memcpys + memsets + CUDA API calls + NVTX ranges, the
    /// same count as [`crate::trace::Trace::event_count`]. Exact.
    pub events: u64,
    /// GPUs; with two or more, gradients travel peer-to-peer (copyKind 10) between them.
    pub gpus: u32,
    /// CUDA streams per GPU: 0 computes, 1 copies in, the last one communicates.
    pub streams: u32,
    /// CPU threads launching work; thread `t` drives GPU `t % gpus`.
    pub threads: u32,
    /// Running time of a thread between two of its CPU samples (ns), as nsys's
    /// `--sampling-period` (default 1,000,000: about 1 kHz); 0 writes no samples. Scheduling
    /// events are written either way.
    pub sampling_period_ns: u64,
    pub seed: u64,
}

impl Default for GenOptions {
    fn default() -> Self {
        Self {
            events: 1_000_000,
            gpus: 2,
            streams: 4,
            threads: 2,
            sampling_period_ns: DEFAULT_SAMPLING_PERIOD_NS,
            seed: 1,
        }
    }
}

/// Why a trace could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error("{path}: already exists (pass --force to replace it)")]
    Exists { path: PathBuf },
    #[error("{0}")]
    BadOptions(String),
    #[error("{path}: its folder does not exist")]
    NoFolder { path: PathBuf },
    #[error("{path}: cannot replace the file: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: writing the trace failed: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: writing the trace failed: {source}")]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

/// Writes a synthetic trace to `path`; `replace` allows overwriting an existing file.
pub fn generate(path: &Path, options: &GenOptions, replace: bool) -> Result<GenCounts, GenError> {
    if options.gpus == 0 || options.streams == 0 || options.threads == 0 {
        return Err(GenError::BadOptions(
            "--gpus, --streams and --threads must be at least 1".into(),
        ));
    }
    if options.gpus > 64 || options.streams > 256 || options.threads > 4096 {
        return Err(GenError::BadOptions(
            "at most 64 GPUs, 256 streams per GPU and 4096 threads".into(),
        ));
    }
    check_sampling_period(options.sampling_period_ns)?;
    if options.events > u64::from(u32::MAX) {
        return Err(GenError::BadOptions(format!(
            "at most {} events (correlation ids are 32-bit)",
            u32::MAX
        )));
    }
    write_export(path, replace, &[SCHEMA_SQL], |tx| {
        workload::write(tx, options)
    })
}

/// What to generate in the inference shape ([`inference`]): one GPU, four streams, two threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InferenceOptions {
    /// Timeline events, exactly, as [`crate::trace::Trace::event_count`] counts them (graph
    /// executions included).
    pub events: u64,
    /// As [`GenOptions::sampling_period_ns`]; the default is 0 (no samples), as in the real
    /// export this shape follows.
    pub sampling_period_ns: u64,
    pub seed: u64,
}

impl Default for InferenceOptions {
    fn default() -> Self {
        Self {
            events: DEFAULT_INFERENCE_EVENTS,
            sampling_period_ns: 0,
            seed: 1,
        }
    }
}

/// Writes a synthetic trace in the shape of a real LLM-inference export ([`inference`]) to
/// `path`; `replace` allows overwriting an existing file.
pub fn generate_inference(
    path: &Path,
    options: &InferenceOptions,
    replace: bool,
) -> Result<GenCounts, GenError> {
    check_sampling_period(options.sampling_period_ns)?;
    if options.events > u64::from(u32::MAX) {
        return Err(GenError::BadOptions(format!(
            "at most {} events (correlation ids are 32-bit)",
            u32::MAX
        )));
    }
    let sql = [SCHEMA_SQL, inference::GRAPH_TRACE_SQL];
    write_export(path, replace, &sql, |tx| {
        inference::write(tx, options.events, options.sampling_period_ns, options.seed)
    })
}

fn check_sampling_period(period_ns: u64) -> Result<(), GenError> {
    if period_ns != 0 && period_ns < 1_000 {
        return Err(GenError::BadOptions(
            "--sampling-period must be 0 (no samples) or at least 1000 ns".into(),
        ));
    }
    Ok(())
}

/// Creates the export at `path` with the tables of `schema` and fills it with `write`, in one
/// transaction.
fn write_export(
    path: &Path,
    replace: bool,
    schema: &[&str],
    write: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<GenCounts>,
) -> Result<GenCounts, GenError> {
    make_room(path, replace)?;
    let sql_err = |source| GenError::Sqlite {
        path: path.to_path_buf(),
        source,
    };
    let mut conn = Connection::open(path).map_err(sql_err)?;
    // Nothing to recover if generation dies half-way: no journal, no fsync.
    conn.execute_batch(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536;",
    )
    .map_err(sql_err)?;
    let tx = conn.transaction().map_err(sql_err)?;
    for sql in schema {
        tx.execute_batch(sql).map_err(sql_err)?;
    }
    let counts = write(&tx).map_err(sql_err)?;
    tx.commit().map_err(sql_err)?;
    Ok(counts)
}

/// Checks that `path`'s folder exists and removes an old file there if `replace` allows it.
fn make_room(path: &Path, replace: bool) -> Result<(), GenError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(GenError::NoFolder {
            path: path.to_path_buf(),
        });
    }
    if path.exists() {
        if !replace {
            return Err(GenError::Exists {
                path: path.to_path_buf(),
            });
        }
        std::fs::remove_file(path).map_err(|source| GenError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// Writes a synthetic PyTorch profiler trace of about `events` events to `path`, gzipped when
/// the name ends in `.gz` (as `kineto_workloads.py` saves them, level 6).
pub fn generate_kineto(
    path: &Path,
    events: u64,
    seed: u64,
    replace: bool,
) -> Result<kineto::KinetoCounts, GenError> {
    make_room(path, replace)?;
    let write_err = |source| GenError::Write {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::create(path).map_err(write_err)?;
    let gzip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    // The file name as `export_chrome_trace` was given it, before the trace was gzipped.
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(&name).to_string();
    let buffered = |file| std::io::BufWriter::with_capacity(1 << 20, file);
    if gzip {
        let encoder = flate2::write::GzEncoder::new(buffered(file), flate2::Compression::new(6));
        let mut out = std::io::BufWriter::with_capacity(1 << 20, encoder);
        let counts = kineto::write(&mut out, events, seed, &name).map_err(write_err)?;
        let encoder = out.into_inner().map_err(|e| write_err(e.into_error()))?;
        encoder
            .finish()
            .map_err(write_err)?
            .into_inner()
            .map_err(|e| write_err(e.into_error()))?;
        Ok(counts)
    } else {
        let mut out = buffered(file);
        let counts = kineto::write(&mut out, events, seed, &name).map_err(write_err)?;
        out.into_inner().map_err(|e| write_err(e.into_error()))?;
        Ok(counts)
    }
}
