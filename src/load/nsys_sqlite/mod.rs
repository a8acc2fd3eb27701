//! Loader for `nsys export --type=sqlite` files, every version from before 2021.2 to 2026.x.
//!
//! The file is opened read-only and immutable. Its schema is read first ([`schema`]); each table
//! reader then reads only the columns that exist, on its own connection, in parallel (rayon).
//! [`assemble`] sorts the tables by track, links GPU work to the API calls that launched it and
//! builds the time indices.

mod assemble;
mod callchains;
pub mod capture_options;
pub(crate) mod connection;
mod cpu_calls;
mod gpu_links;
mod gpu_metrics;
mod gpu_ops;
mod needs;
mod nvtx;
mod openacc_openmp;
mod paged_read;
pub mod pages;
mod profiler_overhead;
mod reader;
mod samples;
mod scan;
mod sched;
mod schema;
mod system;
mod track_order;
mod unified_memory;

use std::path::Path;
use std::sync::Mutex;

use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::{LoadWarnings, Trace};
use reader::{FileStrings, Reader, RowProgress};
pub use scan::{ScanStats, bare_scan, scan_queries};
// The assembly other formats share (`load::kineto` fills the same parts).
pub(crate) use assemble::{Parts, assemble};
pub(crate) use callchains::StacksRead;
pub(crate) use gpu_ops::Read;
pub(crate) use nvtx::NvtxRead;
pub(crate) use samples::SamplesRead;
pub(crate) use sched::SchedRead;
pub use schema::Schema;
pub(crate) use system::Names;

/// Tables whose presence marks an Nsight Systems export.
const NSYS_TABLES: &[&str] = &[
    "StringIds",
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "NVTX_EVENTS",
    "OSRT_API",
    "ThreadNames",
    "TARGET_INFO_GPU",
];

pub fn load(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    (control.progress)(&LoadProgress {
        phase: "reading schema",
        fraction: 0.0,
    });
    let conn = connection::open_read_only(path)?;
    let mut schema =
        Schema::read(&conn).map_err(|e| connection::classify(path, "sqlite_master", e))?;
    if !NSYS_TABLES.iter().any(|t| schema.has_table(t)) {
        return Err(LoadError::NotNsys {
            path: path.to_path_buf(),
            expected: NSYS_TABLES.join(", "),
        });
    }
    // Only what was asked for is read: the rest reads as an export without it.
    let loaded = control.needs.closed();
    needs::narrow(&mut schema, loaded);
    // Rows to read, for the progress bar: the rowid span of each event table (two seeks each).
    let total: u64 = scan_queries(&schema)
        .iter()
        .filter_map(|(table, _)| reader::rowid_bounds(&conn, table))
        .map(|(lo, hi)| hi.abs_diff(lo).saturating_add(1))
        .sum();
    drop(conn);
    let rows = RowProgress {
        done: Default::default(),
        total,
        per_table: Default::default(),
    };
    let reader = Reader {
        path,
        schema: &schema,
        control,
        rows: &rows,
        idle: Mutex::default(),
        // SIGHTLINE_SQLITE_PAGES=0 leaves every table to SQLite (to compare the two readers).
        pages: if std::env::var_os("SIGHTLINE_SQLITE_PAGES").is_some_and(|v| v == "0") {
            None
        } else {
            pages::PageFile::open(path)
        },
    };
    let mut warnings = LoadWarnings::default();
    (control.progress)(&LoadProgress {
        phase: "string table",
        fraction: 0.02,
    });
    let strings = FileStrings::read(&reader, &mut warnings)?;
    (control.progress)(&LoadProgress {
        phase: "reading tables",
        fraction: 0.05,
    });

    let collector = Collector {
        reader: &reader,
        first_error: Mutex::new(None),
    };
    let (mut kernels, mut memcpys, mut memsets, mut api, mut nvtx_read) =
        (None, None, None, None, None);
    let mut graphs = None;
    let (mut osrt, mut syncs, mut gpus, mut names, mut session, mut memory) =
        (None, None, None, None, None, None);
    let (mut overhead, mut unified_memory, mut openacc, mut openmp) = (None, None, None, None);
    let (mut metrics, mut samples_read, mut sched_read, mut backtraces) = (None, None, None, None);
    // The kernels go first and the next biggest tables last: a worker steals the oldest job
    // while the thread that spawns them takes the newest, so on two cores one reads the kernels
    // and then the small tables while the other reads NVTX and the CUDA calls.
    rayon::scope(|s| {
        let (r, st) = (&reader, &strings);
        let c = &collector;
        s.spawn(|_| kernels = c.keep(gpu_ops::read_kernels(r, st), "kernels"));
        s.spawn(|_| memsets = c.keep(gpu_ops::read_memsets(r), "memory sets"));
        s.spawn(|_| graphs = c.keep(gpu_ops::read_graphs(r), "CUDA graph executions"));
        s.spawn(|_| osrt = c.keep(cpu_calls::read_osrt(r, st), "OS runtime calls"));
        s.spawn(|_| syncs = c.keep(gpu_ops::read_syncs(r), "synchronization"));
        s.spawn(|_| gpus = c.keep(system::read_gpus(r), "GPUs"));
        s.spawn(|_| names = c.keep(system::read_names(r, st), "thread names"));
        s.spawn(|_| session = c.keep(system::read_session(r), "session"));
        s.spawn(|_| memory = c.keep(system::read_memory_usage(r), "GPU memory usage"));
        s.spawn(|_| {
            overhead = c.keep(
                profiler_overhead::read_profiler_overhead(r, st),
                "profiler overhead",
            )
        });
        s.spawn(|_| {
            unified_memory = c.keep(unified_memory::read_unified_memory(r, st), "unified memory")
        });
        s.spawn(|_| openacc = c.keep(openacc_openmp::read_openacc(r, st), "OpenACC"));
        s.spawn(|_| openmp = c.keep(openacc_openmp::read_openmp(r, st), "OpenMP"));
        s.spawn(|_| metrics = c.keep(gpu_metrics::read_gpu_metrics(r), "GPU metrics"));
        s.spawn(|_| samples_read = c.keep(samples::read_samples(r, st), "CPU samples"));
        s.spawn(|_| sched_read = c.keep(sched::read_sched(r), "thread scheduling"));
        s.spawn(|_| backtraces = c.keep(callchains::read_backtraces(r, st), "backtraces"));
        s.spawn(|_| memcpys = c.keep(gpu_ops::read_memcpys(r), "memory copies"));
        s.spawn(|_| api = c.keep(cpu_calls::read_api_calls(r, st), "CUDA API calls"));
        s.spawn(|_| nvtx_read = c.keep(nvtx::read_nvtx(r, st), "NVTX ranges"));
    });
    if control.is_cancelled() {
        return Err(LoadError::Cancelled);
    }
    if let Some(e) = collector.first_error.into_inner().ok().flatten() {
        return Err(e);
    }
    let missing = || LoadError::Cancelled;
    (control.progress)(&LoadProgress {
        phase: "building tracks",
        fraction: 0.9,
    });
    let parts = assemble::Parts {
        strings: strings.finish(),
        kernels: kernels.ok_or_else(missing)?,
        memcpys: memcpys.ok_or_else(missing)?,
        memsets: memsets.ok_or_else(missing)?,
        graphs: graphs.ok_or_else(missing)?,
        api: api.ok_or_else(missing)?,
        nvtx: nvtx_read.ok_or_else(missing)?,
        osrt: osrt.ok_or_else(missing)?,
        syncs: syncs.ok_or_else(missing)?,
        gpus: gpus.ok_or_else(missing)?,
        names: names.ok_or_else(missing)?,
        session: session.ok_or_else(missing)?,
        memory: memory.ok_or_else(missing)?,
        profiler_overhead: overhead.ok_or_else(missing)?,
        unified_memory: unified_memory.ok_or_else(missing)?,
        openacc: openacc.ok_or_else(missing)?,
        openmp: openmp.ok_or_else(missing)?,
        gpu_metrics: metrics.ok_or_else(missing)?,
        samples: samples_read.ok_or_else(missing)?,
        sched: sched_read.ok_or_else(missing)?,
        backtraces: backtraces.ok_or_else(missing)?,
        warnings,
        loaded,
    };
    let mut trace = assemble::assemble(parts);
    trace.path = path.to_path_buf();
    if let Ok(per_table) = rows.per_table.into_inner() {
        trace.warnings.extend(per_table);
    }
    (control.progress)(&LoadProgress {
        phase: "done",
        fraction: 1.0,
    });
    Ok(trace)
}

/// Gathers the results of the parallel readers: reports each finished one to the progress bar and
/// keeps the first error.
struct Collector<'a> {
    reader: &'a Reader<'a>,
    first_error: Mutex<Option<LoadError>>,
}

impl Collector<'_> {
    fn keep<T>(&self, result: Result<T, LoadError>, phase: &'static str) -> Option<T> {
        self.reader.report(phase);
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                if let Ok(mut slot) = self.first_error.lock()
                    && slot.is_none()
                {
                    *slot = Some(e);
                }
                None
            }
        }
    }
}
