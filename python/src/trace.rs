//! `sightline.open(path)` and the trace it returns: loaded once with every format's loader
//! (`sightline::load`), then queried by the same SQL views as `sightline sql`, computed by the
//! same report registry as `sightline summary --report NAME`, and searched for the same idle gaps
//! as `sightline gaps`.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use sightline::analysis::reports;
use sightline::analysis::{GapOptions, MeasureOver, ReportInput, TimeRange};
use sightline::load::{self, LoadControl};
use sightline::sql::SqlTrace;
use sightline::trace::{Needs, Trace as Model, TraceFormat};

use crate::columns::{self, Value};
use crate::scope::Scope;
use crate::{arg, capsule, error, function, handle, object, without_gil};

/// The capsule name of a loaded trace.
pub(crate) const NAME: &std::ffi::CStr = c"sightline.Trace";

/// A loaded trace (`sightline.open`). Immutable; safe to share between threads.
pub struct Trace {
    pub(crate) model: Arc<Model>,
    /// The SQL views, made at the first query and kept for the next.
    sql: Mutex<Option<SqlTrace>>,
}

/// Loads `path` (an nsys export or report, a PyTorch trace, a JAX profile, an Nsight Compute
/// report) on a thread of its own, with the GIL released; Ctrl-C (a `KeyboardInterrupt`) stops
/// the load, which the loaders check between their phases.
fn open(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let path: PathBuf = arg(args, 0)?;
    let cancel = AtomicBool::new(false);
    let (done, mut finished) = mpsc::channel();
    let loaded = std::thread::scope(|s| {
        s.spawn(|| {
            let control = LoadControl {
                progress: &|_| {},
                cancel: &cancel,
                needs: Needs::ALL,
            };
            let loaded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                load::load_file_with(&path, &control)
            }));
            let _ = done.send(loaded);
        });
        loop {
            // Without the GIL, waking every 50 ms to let Python deliver a signal.
            let (rx, got) = py.detach(move || {
                let got = finished.recv_timeout(Duration::from_millis(50));
                (finished, got)
            });
            finished = rx;
            match got {
                Ok(Ok(loaded)) => return loaded.map_err(error),
                Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(error("loading failed inside Sightline; please report it"));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupted) = py.check_signals() {
                        // The scope waits for the loader, which stops at its next check.
                        cancel.store(true, Ordering::Relaxed);
                        return Err(interrupted);
                    }
                }
            }
        }
    })?;
    capsule(
        py,
        Trace {
            model: Arc::new(loaded),
            sql: Mutex::new(None),
        },
        NAME,
    )
}

/// `timeout_s` as a duration; refused unless a positive number of seconds.
pub(crate) fn timeout(timeout_s: f64) -> PyResult<Duration> {
    if !(timeout_s.is_finite() && timeout_s > 0.0) {
        return Err(error("timeout_s takes a positive number of seconds"));
    }
    Ok(Duration::from_secs_f64(timeout_s))
}

/// Runs `query` over the database in `slot` (a trace's views or a run's; made by `make` at the
/// first query and kept for the next) and encodes its result as columns: integers, reals and
/// text as they are, a blob as `sightline sql` prints it.
pub(crate) fn query_columns(
    slot: &Mutex<Option<SqlTrace>>,
    make: impl FnOnce() -> PyResult<SqlTrace>,
    query: &str,
    limit: Option<usize>,
    timeout: Duration,
) -> PyResult<Vec<(String, columns::Encoded)>> {
    let mut db = slot
        .lock()
        .map_err(|_| error("an earlier query failed inside Sightline"))?;
    let db = match db.as_mut() {
        Some(db) => db,
        None => db.insert(make()?),
    };
    let mut built = columns::RowColumns::default();
    let mut names = Vec::new();
    db.query_each(
        query,
        &[],
        limit,
        timeout,
        None,
        |n| names = n.to_vec(),
        |row| built.push(row),
    )
    .map_err(error)?;
    Ok(built.finish(names))
}

fn format_name(format: TraceFormat) -> &'static str {
    match format {
        TraceFormat::NsysSqlite => "nsys",
        TraceFormat::Kineto => "pytorch",
        TraceFormat::NsightCompute => "ncu",
        TraceFormat::XPlane => "xplane",
    }
}

impl Trace {
    /// The facts `repr` and the notebook show: format, span, GPUs and event counts.
    fn info(&self) -> Vec<(&'static str, String)> {
        let t = &self.model;
        let gpus: Vec<String> = t
            .gpus
            .iter()
            .map(|g| format!("{}: {}", g.device, g.name))
            .collect();
        vec![
            ("kind", format_name(t.format).to_string()),
            ("format", t.format.label().to_string()),
            ("path", t.path.display().to_string()),
            ("first_ns", (t.first_ns - t.time_origin_ns()).to_string()),
            ("span_ns", (t.last_ns - t.first_ns).to_string()),
            ("gpus", gpus.join(", ")),
            ("kernels", t.kernels.spans.len().to_string()),
            ("memcpy", t.memcpys.spans.len().to_string()),
            ("memset", t.memsets.spans.len().to_string()),
            ("api", t.api_calls.spans.len().to_string()),
            ("ranges", t.nvtx.spans.len().to_string()),
            ("events", t.event_count().to_string()),
        ]
    }

    /// Runs a read-only query over the views of `sightline sql` (`kernels`, `memcpy`, `api`,
    /// `ranges`, …); returns the columns (see `columns.rs`). `limit`: at most that many rows.
    fn sql_columns(
        &self,
        py: Python<'_>,
        query: &str,
        limit: Option<usize>,
        timeout_s: f64,
    ) -> PyResult<columns::PyColumns> {
        let timeout = timeout(timeout_s)?;
        let encoded = without_gil(py, "the query", || {
            let make = || SqlTrace::for_shared(self.model.clone()).map_err(error);
            query_columns(&self.sql, make, query, limit, timeout)
        })?;
        columns::to_py(py, encoded)
    }

    /// The report `spec` (`name[:option[=value]]…`, as `summary --report` takes it), computed as
    /// `summary --format csv` computes it, over `scope` (`--range`, warm-up exclusion,
    /// `--nsys-format`).
    /// Returns the columns; a report the trace has no data for has no rows.
    fn report_columns(
        &self,
        py: Python<'_>,
        spec: &str,
        scope: &Scope,
    ) -> PyResult<columns::PyColumns> {
        let (report, options) = reports::parse_spec(spec).map_err(error)?;
        if self.model.format == TraceFormat::NsightCompute {
            return Err(error(format!(
                "{}: an Nsight Compute report: its pages come from sightline.ncu(path), not \
                 Trace.report",
                self.model.path.display()
            )));
        }
        let encoded = without_gil(py, "the report", || {
            let trace = &*self.model;
            let exclusion = scope.exclusion(trace);
            let filter = scope.filter(exclusion.as_ref());
            let mut table = report.compute(&ReportInput {
                trace,
                filter: &filter,
                options: &options,
                with_events: false,
                row_limit: None,
                nsys_format: scope.nsys_format(trace),
                sink: None,
            });
            // What `summary` prints nothing for (NVTX reports over a PyTorch trace's own ranges).
            if reports::format_lacks(report, trace) {
                table.rows.clear();
            }
            Ok(columns::encode_report_table(&table))
        })?;
        columns::to_py(py, encoded)
    }

    /// The rule `spec` (`name[:option=value]…`, as `analyze --rule` takes it) over `scope`, as
    /// `analyze --format csv` computes it; no rows where it finds nothing.
    fn rule_columns(
        &self,
        py: Python<'_>,
        spec: &str,
        scope: &Scope,
    ) -> PyResult<columns::PyColumns> {
        let (rule, options) = sightline::analysis::rules::parse_spec(spec).map_err(error)?;
        let encoded = without_gil(py, "the rule", || {
            let trace = &*self.model;
            let exclusion = scope.exclusion(trace);
            let filter = scope.filter(exclusion.as_ref());
            let table = rule
                .compute(&sightline::analysis::RuleInput {
                    trace,
                    filter: &filter,
                    options: &options,
                    nsys_format: scope.nsys_format(trace),
                })
                .map_err(|e| error(format!("{}: {e}", rule.name())))?;
            Ok(columns::encode_report_table(&table))
        })?;
        columns::to_py(py, encoded)
    }

    /// The GPU's idle gaps of at least `min_ns`, longest first, as `sightline gaps --format csv`
    /// lists them (with `causes`, its cause columns too).
    fn gaps_columns(
        &self,
        py: Python<'_>,
        min_ns: i64,
        per_stream: bool,
        causes: bool,
        scope: &Scope,
    ) -> PyResult<columns::PyColumns> {
        if min_ns < 0 {
            return Err(error(format!("min_ns must not be negative (got {min_ns})")));
        }
        let encoded = without_gil(py, "the gaps", || {
            let trace = &*self.model;
            let exclusion = scope.exclusion(trace);
            let filter = scope.filter(exclusion.as_ref());
            let options = GapOptions {
                min_ns,
                per_stream,
                over: MeasureOver::Range,
            };
            let gaps = sightline::analysis::gpu_idle_gaps(trace, &filter, &options);
            let why = causes.then(|| sightline::analysis::gap_causes::gap_causes(trace, &gaps));
            let mut names: Vec<String> = sightline::cli::GAP_COLUMNS
                .iter()
                .map(|c| c.to_string())
                .collect();
            // Only a range has edges to cut gaps (as `gaps --range` adds the column).
            let with_edges = scope.range != TimeRange::ALL;
            if with_edges {
                names.push("Edge".to_string());
            }
            if causes {
                names.extend(sightline::cli::CAUSE_COLUMNS.iter().map(|c| c.to_string()));
            }
            let inside: Vec<String> = why
                .as_ref()
                .map(|w| w.iter().map(|c| c.inside_line(trace)).collect())
                .unwrap_or_default();
            Ok(columns::encode_table(&names, gaps.len(), |r, c| {
                let g = &gaps[r];
                let c = match c {
                    7 if with_edges => {
                        let edge = g.edge.map_or("", sightline::analysis::SelectionEdge::label);
                        return Value::Text(Cow::Borrowed(edge));
                    }
                    c if with_edges && c > 7 => c - 1,
                    c => c,
                };
                let host = why.as_ref().and_then(|w| w[r].host.as_ref());
                let host_ns = |f: fn(&sightline::analysis::gap_causes::HostBreakdown) -> i64| {
                    host.map_or(Value::Null, |h| Value::Int(f(h)))
                };
                match c {
                    0 => Value::Int(i64::from(g.device)),
                    1 => g
                        .stream
                        .map_or(Value::Null, |s| Value::Int(i64::from(s.stream))),
                    2 => Value::Int(g.start_ns),
                    3 => Value::Int(g.end_ns),
                    4 => Value::Int(g.duration_ns()),
                    5 => Value::Text(Cow::Borrowed(g.before_name(trace))),
                    6 => Value::Text(Cow::Borrowed(g.after_name(trace))),
                    7 => why.as_ref().map_or(Value::Null, |w| {
                        Value::Text(Cow::Borrowed(w[r].cause.label()))
                    }),
                    8 => host_ns(|h| h.sync_ns),
                    9 => host_ns(|h| h.cuda_api_ns),
                    10 => host_ns(|h| h.osrt_ns),
                    11 => host_ns(|h| h.untraced_ns),
                    _ => Value::Text(Cow::Borrowed(inside[r].as_str())),
                }
            }))
        })?;
        columns::to_py(py, encoded)
    }
}

fn info(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, NAME)?;
    object(args.py(), (t.info(), t.model.warnings.messages()))
}

fn sql(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, NAME)?;
    let query: String = arg(args, 1)?;
    let columns = t.sql_columns(args.py(), &query, arg(args, 2)?, arg(args, 3)?)?;
    object(args.py(), columns)
}

fn report(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, NAME)?;
    let spec: String = arg(args, 1)?;
    let columns = t.report_columns(args.py(), &spec, &Scope::from_args(args, 2)?)?;
    object(args.py(), columns)
}

fn rule(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, NAME)?;
    let spec: String = arg(args, 1)?;
    let columns = t.rule_columns(args.py(), &spec, &Scope::from_args(args, 2)?)?;
    object(args.py(), columns)
}

fn gaps(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, NAME)?;
    let scope = Scope::from_args(args, 4)?;
    let columns = t.gaps_columns(
        args.py(),
        arg(args, 1)?,
        arg(args, 2)?,
        arg(args, 3)?,
        &scope,
    )?;
    object(args.py(), columns)
}

/// `open(path)`, `trace_info(t)`, `trace_sql(t, query, limit, timeout_s)`,
/// `trace_report(t, spec, *scope)`, `trace_rule(t, spec, *scope)`,
/// `trace_gaps(t, min_ns, per_stream, causes, *scope)`; `scope` is [`Scope::from_args`]'s six.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    function(module, c"open", open)?;
    function(module, c"trace_info", info)?;
    function(module, c"trace_sql", sql)?;
    function(module, c"trace_report", report)?;
    function(module, c"trace_rule", rule)?;
    function(module, c"trace_gaps", gaps)
}
