//! Loaders: one module per input format, each producing a [`Trace`]: the SQLite export of
//! Nsight Systems (`nsys export --type=sqlite`), Nsight Systems reports (`.nsys-rep`), which
//! [`nsys_rep`] converts to that export first, PyTorch profiler traces ([`kineto`]) and JAX / XLA
//! profiles ([`xplane`]). The format is told by the file's first bytes, not its name, except an
//! XPlane's (a bare protobuf has no signature): by its name, `.xplane.pb`.

pub mod folder;
pub mod kineto;
pub mod ncu_csv;
pub mod ncu_rep;
pub mod nsys_rep;
pub mod nsys_sqlite;
pub mod xplane;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::trace::{Needs, Trace};

/// Why a file could not be loaded. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{path}: file not found")]
    NotFound { path: PathBuf },
    #[error("{path}: is a directory, not a trace file")]
    IsDirectory { path: PathBuf },
    #[error("{path}: is a {kind}, not a regular file; Sightline opens trace files only")]
    NotRegularFile { path: PathBuf, kind: &'static str },
    #[error("{path}: cannot read the file: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: not a trace Sightline reads (expected an Nsight Systems export from `nsys export --type=sqlite`, an .nsys-rep report, a PyTorch profiler trace .json / .json.gz, a JAX profile .xplane.pb, or an Nsight Compute report .ncu-rep or CSV page)"
    )]
    NotSqlite { path: PathBuf },
    #[error("{path}: not a readable Nsight Compute report: {detail}")]
    NotNcuReport { path: PathBuf, detail: String },
    #[error("{path}: not a PyTorch profiler trace: {detail}")]
    NotATrace { path: PathBuf, detail: String },
    #[error("{path}: the gzip stream is damaged or cut short before any event ({detail})")]
    DamagedGzip { path: PathBuf, detail: String },
    #[error("{path}: not a readable JAX / XLA profile (XPlane): {detail}")]
    NotAnXPlane { path: PathBuf, detail: String },
    #[error("{path}: the trace holds no events to show")]
    EmptyTrace { path: PathBuf },
    #[error("{path}: the SQLite file is damaged or truncated ({detail})")]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "{path}: an SQLite file, but not an Nsight Systems export: it has none of the tables {expected}"
    )]
    NotNsys { path: PathBuf, expected: String },
    #[error(
        "{path}: an Nsight Systems report, and `nsys` was not found on PATH to convert it: run `nsys export --type=sqlite -o {sqlite} {path}` where Nsight Systems is installed, then open {sqlite}"
    )]
    NsysRep { path: PathBuf, sqlite: PathBuf },
    #[error("{path}: converting the report with `{nsys} export --type=sqlite` failed: {detail}")]
    NsysExport {
        path: PathBuf,
        nsys: PathBuf,
        detail: String,
    },
    #[error("{path}: no folder to convert the report into: set SIGHTLINE_CACHE_DIR (or HOME)")]
    NoCacheDir { path: PathBuf },
    #[error(
        "{dir}: cannot write the converted report there: {source} (SIGHTLINE_CACHE_DIR chooses another folder)"
    )]
    CacheDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: reading table {table} failed: {detail}")]
    Table {
        path: PathBuf,
        table: String,
        detail: String,
    },
    #[error("loading was cancelled")]
    Cancelled,
}

/// How far a load has come, for a progress bar.
#[derive(Debug, Clone)]
pub struct LoadProgress {
    /// What is being read now, in words ("kernels", "NVTX ranges", ...).
    pub phase: &'static str,
    /// 0.0 ..= 1.0
    pub fraction: f32,
}

/// Lets a caller watch and stop a load from another thread.
pub struct LoadControl<'a> {
    pub progress: &'a (dyn Fn(&LoadProgress) + Sync),
    pub cancel: &'a AtomicBool,
    /// What to read ([`Needs::ALL`] for the window; a command asks for what its reports use).
    /// Formats that cannot read a part alone read everything.
    pub needs: Needs,
}

impl LoadControl<'_> {
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// What a non-regular file is, in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "named pipe";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "device";
        }
    }
    let _ = meta;
    "special file"
}

/// A suffix for a temporary file or folder that no other write uses at the same time: not one
/// of this process (threads, tests side by side, a count of the names it made), nor of another
/// process, of this host or another sharing the folder (process ids repeat across containers:
/// a random part, drawn once per process).
pub fn temporary_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    static MADE: AtomicU64 = AtomicU64::new(0);
    static RANDOM: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let random = *RANDOM.get_or_init(|| {
        // The standard library seeds each `RandomState` from the system's randomness.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    });
    let n = MADE.fetch_add(1, Ordering::Relaxed);
    format!("{}-{random:016x}-{n}", std::process::id())
}

/// Loads a trace with no progress reporting.
pub fn load_file(path: &Path) -> Result<Trace, LoadError> {
    let cancel = AtomicBool::new(false);
    load_file_with(
        path,
        &LoadControl {
            progress: &|_| {},
            cancel: &cancel,
            needs: Needs::ALL,
        },
    )
}

/// Loads a trace, reporting progress and honouring cancellation.
pub fn load_file_with(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LoadError::NotFound {
            path: path.to_path_buf(),
        },
        _ => LoadError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        },
    })?;
    if meta.is_dir() {
        // A `jax.profiler.trace` folder or one of its runs: its XPlane, when it has one.
        if let [xplane] = xplane::xplanes_in_folder(path).as_slice() {
            return xplane::load(xplane, control);
        }
        return Err(LoadError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    // A named pipe would block the open below forever, a device could be endless: refuse
    // anything that is not a regular file before opening it.
    if !meta.is_file() {
        return Err(LoadError::NotRegularFile {
            path: path.to_path_buf(),
            kind: file_kind(&meta),
        });
    }
    // Reading the header proves the file is readable and tells the format before SQLite does.
    let mut header = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|e| LoadError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        })?;
        let n = f.read(&mut header).map_err(|e| LoadError::Unreadable {
            path: path.to_path_buf(),
            source: e,
        })?;
        if ncu_rep::report_packing(path, &header[..n]).is_some() {
            return ncu_rep::load(path, control);
        }
        // ncu's CSV pages (plain or gzipped) before the PyTorch check, which claims gzip.
        if (header.starts_with(b"\"ID\"")
            || header.starts_with(&[0xEF, 0xBB, 0xBF, b'"'])
            || header.starts_with(&[0x1f, 0x8b]))
            && ncu_csv::is_ncu_csv(path)
        {
            return ncu_csv::load(path, control);
        }
        if xplane::has_xplane_name(path) {
            return xplane::load(path, control);
        }
        if kineto::looks_like_trace(&header[..n]) {
            return kineto::load(path, control);
        }
        if n < 16 || &header != b"SQLite format 3\0" {
            // A report is converted into the cache and the export loaded (an SQLite file
            // merely named .nsys-rep is read as it is).
            if nsys_rep::is_nsys_report(path) {
                let sqlite = nsys_rep::sqlite_for_report(path, control)?;
                let mut trace = nsys_sqlite::load(&sqlite, control)?;
                // Messages and the window title name the file the user opened, not the cache.
                trace.path = path.to_path_buf();
                return Ok(trace);
            }
            // Named like an Nsight Compute report but not one: say what it is instead.
            if ncu_rep::has_report_name(path) {
                return Err(ncu_rep::not_a_report(path, &header[..n]));
            }
            return Err(LoadError::NotSqlite {
                path: path.to_path_buf(),
            });
        }
    }
    nsys_sqlite::load(path, control)
}
