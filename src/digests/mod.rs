//! Digests of a run's ranks as files: what a run keeps of each rank ([`RankDigest`]: busy time,
//! collectives, steps, the per-rank table's numbers) plus the rank's kernel and CUDA API
//! summaries, written as Parquet tables ([`columns`], [`tables`]) into a folder per trace
//! ([`store`]). `sightline digest` writes them where the traces are, one shard per task of the
//! engine that runs it ([`shard`]); `sightline ranks DIGESTS/` and the window open a run from
//! them without opening a trace; and a run of traces opened locally keeps them in the user's
//! cache ([`cache`]) so that its second open reads no trace.

pub mod cache;
pub mod columns;
pub mod run_sql;
pub mod shard;
pub mod store;
pub mod tables;

use std::path::{Path, PathBuf};

use anyhow::Result;
use regex::Regex;

use crate::analysis::ranks::digest::{DIGEST_NEEDS, RankDigest};
use crate::analysis::reports::classic::{CudaApiSum, CudaGpuKernSum};
use crate::analysis::{Filter, NsysFormat, ReportInput, ReportOptions, StatsReport, Table};
use crate::trace::{Needs, Trace};
pub use store::Entry;

/// What a trace is loaded with to be digested: the digest's parts and what the kernel and CUDA
/// API summaries read.
pub fn write_needs() -> Needs {
    let options = ReportOptions::default();
    DIGEST_NEEDS
        .union(CudaGpuKernSum.needs(&options))
        .union(CudaApiSum.needs(&options))
}

/// A rank's digest with its summaries and entry, ready to be written ([`store::write_rank`]).
pub struct Made {
    pub entry: Entry,
    pub digest: RankDigest,
    pub kernels: Table,
    pub cuda_api: Table,
}

impl Made {
    pub fn files(&self) -> store::RankFiles<'_> {
        store::RankFiles {
            digest: &self.digest,
            kernels: &self.kernels,
            cuda_api: &self.cuda_api,
            entry: &self.entry,
        }
    }
}

fn summary(report: &dyn StatsReport, trace: &Trace) -> Table {
    report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &ReportOptions::default(),
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::of_trace(trace),
        sink: None,
    })
}

/// The absolute form of `path` (made absolute against the current folder where it cannot be
/// resolved).
pub fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The digest of `trace` (loaded from `source` with [`write_needs`]), trace `index` of its run,
/// to be kept in `folder`. The digest names the trace by its absolute path.
pub fn make(
    trace: &Trace,
    source: &Path,
    (index, folder): (usize, String),
    pattern: &Regex,
) -> Result<Made> {
    let source = absolute(source);
    let (size, mtime_ns) = store::stamp(&source)?;
    let mut digest = RankDigest::of(trace, pattern);
    digest.hints.path = source.clone();
    digest.source_stamp = Some((size, mtime_ns));
    let entry = Entry {
        format: store::ENTRY_FORMAT.to_string(),
        version: store::VERSION,
        folder,
        index,
        total: 0,
        source,
        size,
        mtime_ns,
        collectives_pattern: pattern.as_str().to_string(),
        rank_distributed: digest.hints.distributed,
        rank_environment: digest.hints.environment,
        utc_origin_ns: digest.utc_origin,
        first_ns: digest.first_ns,
        last_ns: digest.last_ns,
        events: digest.events,
        warnings: trace.warnings.messages(),
    };
    Ok(Made {
        kernels: summary(&CudaGpuKernSum, trace),
        cuda_api: summary(&CudaApiSum, trace),
        entry,
        digest,
    })
}

/// Loads `source` with [`write_needs`] (always: a digest's first and last times are those of
/// the parts read, so every digest reads the same parts) and makes its digest ([`make`]);
/// `progress` is told how far the load is, `cancel` stops it.
pub fn load_and_make(
    source: &Path,
    place: (usize, String),
    pattern: &Regex,
    progress: &(dyn Fn(&crate::load::LoadProgress) + Sync),
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Made> {
    let control = crate::load::LoadControl {
        progress,
        cancel,
        needs: write_needs(),
    };
    // The loader's errors name the trace.
    let trace = crate::load::load_file_with(source, &control)?;
    make(&trace, source, place, pattern)
}

/// `f(0..n)` on `workers` threads of their own (not rayon's: a load blocks on its own rayon
/// work), the results in order.
pub fn on_workers<T: Send>(n: usize, workers: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, n.max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    let out = f(i);
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(out);
                    }
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// The machine's cores (at least 1): how many traces are digested at once.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Where each digest of a run came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A folder of digests (`sightline digest`).
    Folder,
    /// The cache of local opens.
    Cache,
    /// The trace, read now.
    Trace,
}

/// One rank's digest as a run gets it.
pub struct Got {
    pub entry: Entry,
    pub digest: RankDigest,
    pub origin: Origin,
    /// The folder holding its tables (a folder of digests' or the cache's), if any.
    pub folder: Option<PathBuf>,
    /// Its kernel and CUDA API summaries when made now and not written anywhere.
    pub held: Option<(columns::Columns, columns::Columns)>,
}

impl Got {
    /// Its kernel and CUDA API summaries: held, or read from its folder.
    pub fn summaries(&self) -> Option<(columns::Columns, columns::Columns)> {
        self.held
            .clone()
            .or_else(|| self.folder.as_deref().and_then(run_sql::summaries_in))
    }
}

/// A run's digests, in the order of its traces: from a folder of digests when `paths` is one,
/// else from each trace (folders expanded), through `cache` where given (read from it when
/// current, written to it when not).
pub fn of_run(
    paths: &[PathBuf],
    pattern: &Regex,
    cache: Option<&cache::Cache>,
) -> Result<Vec<Got>> {
    if let [dir] = paths
        && store::is_digests(dir)
    {
        let run = store::read_run(dir)?;
        if let Some((_, e)) = run
            .iter()
            .find(|(_, e)| e.collectives_pattern != pattern.as_str())
        {
            anyhow::bail!(
                "{} was digested with --collectives '{}', not '{}': digest the traces again, or \
                 give that pattern",
                e.source.display(),
                e.collectives_pattern,
                pattern.as_str()
            );
        }
        let read = on_workers(run.len(), workers(), |i| {
            store::read_digest(&run[i].0, &run[i].1)
        });
        let got = read
            .into_iter()
            .zip(run)
            .map(|(digest, (folder, entry))| {
                Ok(Got {
                    entry,
                    digest: digest?,
                    origin: Origin::Folder,
                    folder: Some(folder),
                    held: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        for g in &got {
            if store::changed_since(&g.entry.source, g.digest.source_stamp) {
                eprintln!(
                    "note: {} changed since it was digested: these numbers are its digest's \
                     (digest the traces again to see it as it is now)",
                    g.entry.source.display()
                );
            }
        }
        return Ok(got);
    }
    if let Some(d) = paths.iter().find(|p| store::is_digests(p)) {
        anyhow::bail!(
            "{} is a folder of digests: give it alone, not with traces or other folders",
            d.display()
        );
    }
    let files = crate::load::folder::run_traces(paths).map_err(|e| anyhow::anyhow!(e))?;
    let names = store::folder_names(&files);
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let made = on_workers(files.len(), workers(), |i| {
        let source = absolute(&files[i]);
        if let Some((entry, digest, folder)) =
            cache.and_then(|c| c.lookup(&source, pattern.as_str()))
        {
            return Ok(Got {
                entry,
                digest,
                origin: Origin::Cache,
                folder: Some(folder),
                held: None,
            });
        }
        let made = load_and_make(&files[i], (i, names[i].clone()), pattern, &|_| {}, &cancel)?;
        let folder = match cache {
            Some(c) => match c.store(&made) {
                Ok(folder) => Some(folder),
                Err(e) => {
                    eprintln!(
                        "note: the digest of {} was not cached: {e:#}",
                        source.display()
                    );
                    None
                }
            },
            None => None,
        };
        let held = folder.is_none().then(|| {
            (
                tables::report_columns(&made.kernels),
                tables::report_columns(&made.cuda_api),
            )
        });
        Ok(Got {
            entry: made.entry,
            digest: made.digest,
            origin: Origin::Trace,
            folder,
            held,
        })
    });
    if let Some(c) = cache {
        c.trim();
    }
    made.into_iter().collect()
}
