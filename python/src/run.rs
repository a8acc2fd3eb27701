//! `sightline.ranks(paths_or_folder)`: the traces of one run's ranks on one clock, from their
//! digests (a folder of digests, the digest cache, or each trace read now), analysed by the
//! same `sightline::analysis::ranks` that `sightline ranks` prints.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use sightline::analysis::Table;
use sightline::analysis::ranks::digest::{DigestRun, RankDigest, analyse};
use sightline::analysis::ranks::{ClockChoice, collectives, table};
use sightline::digests::{self, cache::Cache, run_sql};
use sightline::sql::SqlTrace;

use crate::columns::{self, PyColumns};
use crate::{arg, capsule, error, function, handle, object, without_gil};

/// The capsule name of a run.
const NAME: &std::ffi::CStr = c"sightline.Run";

/// A run of ranks, aligned on one clock.
pub struct Run {
    run: DigestRun,
    /// The ranks' digests, in the order found (what `Run.sql`'s tables are made from).
    got: Vec<digests::Got>,
    /// The run's SQL database, made at the first query and kept for the next.
    sql: Mutex<Option<SqlTrace>>,
    /// The rank numbers, in the table's order.
    numbers: Vec<u32>,
    /// Each rank's trace, in the table's order.
    paths: Vec<PathBuf>,
    /// What the run's alignment rests on (`sightline ranks` says it on stderr).
    clock: String,
}

/// `sightline ranks PATHS…` without printing: `paths` are the traces of one run (or folders of
/// them, or one folder of their digests); `collectives` and `align` as the command's options;
/// `cache=False` is `--no-cache`.
/// Arguments: paths, the collectives pattern (None: the command's default), align, cache.
fn ranks(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let paths: Vec<PathBuf> = arg(args, 0)?;
    let collectives: String =
        arg::<Option<String>>(args, 1)?.unwrap_or_else(|| collectives::DEFAULT_PATTERN.to_string());
    let align: String = arg(args, 2)?;
    let cache: bool = arg(args, 3)?;
    let choice = match align.as_str() {
        "recorded" => ClockChoice::Recorded,
        "collective" => ClockChoice::Collective,
        other => {
            return Err(error(format!(
                "align takes 'recorded' or 'collective' (got '{other}')"
            )));
        }
    };
    let run = without_gil(py, "the run", || {
        let pattern = regex::Regex::new(&collectives)
            .map_err(|e| error(format!("collectives '{collectives}': {e}")))?;
        let cache = if cache { Cache::user() } else { None };
        let got = digests::of_run(&paths, &pattern, cache.as_ref())
            .map_err(|e| error(format!("{e:#}")))?;
        if got.len() < 2 {
            return Err(error("a run needs two traces or more (one per rank)"));
        }
        let given: Vec<(&RankDigest, i64)> = got.iter().map(|g| (&g.digest, 0)).collect();
        let run = analyse(&given, choice);
        if let Some(why) = run.alignment.refused() {
            return Err(error(format!("not one run: {why}")));
        }
        let numbers = run.ranks.iter().map(|r| r.rank).collect();
        let paths = run
            .ranks
            .iter()
            .map(|r| got[r.index].entry.source.clone())
            .collect();
        let clock = run.alignment.describe();
        Ok(Run {
            run,
            got,
            sql: Mutex::new(None),
            numbers,
            paths,
            clock,
        })
    })?;
    capsule(py, run, NAME)
}

fn table_columns(py: Python<'_>, table: &Table) -> PyResult<PyColumns> {
    columns::to_py(py, columns::encode_report_table(table))
}

fn table(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let run: &Run = handle(&item, NAME)?;
    object(args.py(), table_columns(args.py(), &run.run.table)?)
}

/// Every collective matched across ranks, with each rank's arrival (`ranks --instances`).
fn instances(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let run: &Run = handle(&item, NAME)?;
    let table = table::instance_table_of(&run.numbers, &run.run.collectives);
    object(args.py(), table_columns(args.py(), &table)?)
}

/// `Run.sql(query, limit, timeout_s)`: a read-only query over the run's tables and its ranks'
/// views, as `sightline sql --ranks PATHS… QUERY` runs it.
fn sql(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let item = args.get_item(0)?;
    let run: &Run = handle(&item, NAME)?;
    let query: String = arg(args, 1)?;
    let limit: Option<usize> = arg(args, 2)?;
    let timeout = crate::trace::timeout(arg(args, 3)?)?;
    let encoded = without_gil(py, "the query", || {
        let make = || run_sql::run_database(&run.run, &run.got).map_err(error);
        crate::trace::query_columns(&run.sql, make, &query, limit, timeout)
    })?;
    object(py, columns::to_py(py, encoded)?)
}

/// `digest(traces, out, shard, shards, collectives, force)`: `sightline digest TRACES… --out
/// OUT` run in this process by the command's own code (its progress and each failure on
/// stderr, as the command prints them); a trace that could not be digested raises.
fn digest(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let digest = sightline::cli::DigestArgs {
        traces: arg(args, 0)?,
        out: arg(args, 1)?,
        shard: arg(args, 2)?,
        shards: arg(args, 3)?,
        collectives: arg::<Option<String>>(args, 4)?
            .unwrap_or_else(|| collectives::DEFAULT_PATTERN.to_string()),
        force: arg(args, 5)?,
    };
    let out = digest.out.clone();
    let code = without_gil(py, "the digest", || {
        sightline::cli::run(sightline::cli::Command::Digest(digest))
            .map_err(|e| error(format!("{e:#}")))
    })?;
    if code != 0 {
        return Err(error(format!(
            "digest: some traces could not be digested into {} (each is named on stderr)",
            out.display()
        )));
    }
    object(py, out)
}

/// `(clock, [(rank, path)])`: how the ranks were put on one clock, in words, and each rank's
/// trace in the table's order.
fn info(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let run: &Run = handle(&item, NAME)?;
    let ranks: Vec<(u32, PathBuf)> = run
        .numbers
        .iter()
        .copied()
        .zip(run.paths.iter().cloned())
        .collect();
    object(args.py(), (run.clock.clone(), ranks))
}

/// `ranks(paths, collectives, align, cache)`, `run_table(r)`, `run_instances(r)`, `run_info(r)`,
/// `run_sql(r, query, limit, timeout_s)`, `digest(traces, out, shard, shards, collectives, force)`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    function(module, c"ranks", ranks)?;
    function(module, c"run_sql", sql)?;
    function(module, c"digest", digest)?;
    function(module, c"run_table", table)?;
    function(module, c"run_instances", instances)?;
    function(module, c"run_info", info)
}
