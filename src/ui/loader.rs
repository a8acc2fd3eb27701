//! Loading off the UI thread: a [`LoadJob`] runs [`crate::load::load_file_with`] on a worker
//! thread, publishes its phase and fraction for the progress bar, and can be cancelled. A
//! `.nsys-rep` report is first converted with `nsys export --type=sqlite` into a cache folder when
//! `nsys` is on PATH; without it, the loader's own error says what to run where nsys is installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use crate::load::{self, LoadControl, LoadProgress};
use crate::trace::Trace;

/// What the worker reports at the end.
pub type LoadOutcome = Result<Trace, String>;

/// A load in progress.
pub struct LoadJob {
    pub path: PathBuf,
    progress: Arc<Mutex<(String, f32)>>,
    cancel: Arc<AtomicBool>,
    done: Receiver<LoadOutcome>,
}

impl LoadJob {
    /// Starts loading `path` on a new thread; `repaint` (when given) is asked for a frame on
    /// every progress step so the bar moves.
    pub fn start(path: PathBuf, repaint: Option<egui::Context>) -> Self {
        let progress = Arc::new(Mutex::new(("opening".to_string(), 0.0)));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, done) = channel();
        let worker_path = path.clone();
        let worker_progress = Arc::clone(&progress);
        let worker_cancel = Arc::clone(&cancel);
        let spawned = std::thread::Builder::new()
            .name("sightline-load".to_string())
            .spawn(move || {
                let report = |p: &LoadProgress| {
                    if let Ok(mut slot) = worker_progress.lock() {
                        *slot = (p.phase.to_string(), p.fraction);
                    }
                    if let Some(ctx) = &repaint {
                        ctx.request_repaint();
                    }
                };
                let outcome = load_any(&worker_path, &report, &worker_cancel);
                // The receiver is gone when a newer open replaced this job: nothing to do.
                let _ = tx.send(outcome);
                if let Some(ctx) = &repaint {
                    ctx.request_repaint();
                }
            });
        if let Err(e) = spawned {
            let (tx, rx) = channel();
            let _ = tx.send(Err(format!("cannot start a loading thread: {e}")));
            return Self {
                path,
                progress,
                cancel,
                done: rx,
            };
        }
        Self {
            path,
            progress,
            cancel,
            done,
        }
    }

    /// Phase and fraction (0..=1) for the progress bar.
    pub fn progress(&self) -> (String, f32) {
        self.progress
            .lock()
            .map(|p| p.clone())
            .unwrap_or_else(|_| ("loading".to_string(), 0.0))
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The outcome once the worker is done.
    pub fn poll(&self) -> Option<LoadOutcome> {
        match self.done.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Err("the loading thread stopped unexpectedly".to_string()))
            }
        }
    }
}

impl Drop for LoadJob {
    /// A replaced or abandoned load stops reading as soon as it notices.
    fn drop(&mut self) {
        self.cancel();
    }
}

fn is_nsys_report(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("nsys-rep") || e.eq_ignore_ascii_case("qdrep"))
}

fn load_any(
    path: &Path,
    report: &(dyn Fn(&LoadProgress) + Sync),
    cancel: &AtomicBool,
) -> LoadOutcome {
    let mut sqlite = path.to_path_buf();
    // Without nsys the loader itself explains which command to run (LoadError::NsysRep).
    if is_nsys_report(path)
        && path.is_file()
        && let Some(nsys) = find_on_path("nsys")
    {
        report(&LoadProgress {
            phase: "converting with nsys export",
            fraction: 0.0,
        });
        sqlite = convert_report(&nsys, path)?;
    }
    let control = LoadControl {
        progress: report,
        cancel,
    };
    load::load_file_with(&sqlite, &control).map_err(|e| e.to_string())
}

/// `name` in one of the PATH directories, if it is there.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// `~/.cache/sightline` (or `$XDG_CACHE_HOME/sightline`).
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("sightline"))
}

/// Converts a report to SQLite in the cache folder, reusing an earlier conversion that is newer
/// than the report. The cache name carries a hash of the report's full path so two reports with
/// the same file name do not collide.
fn convert_report(nsys: &Path, report: &Path) -> Result<PathBuf, String> {
    let dir =
        cache_dir().ok_or_else(|| "cannot find a cache folder: HOME is not set".to_string())?;
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("{}: cannot create the cache folder: {e}", dir.display()))?;
    let absolute = std::fs::canonicalize(report).unwrap_or_else(|_| report.to_path_buf());
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    let hash = crate::ui::theme::stable_hash(&absolute.to_string_lossy());
    let out = dir.join(format!("{stem}-{hash:016x}.sqlite"));
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(cached), Some(source)) = (modified(&out), modified(report))
        && cached >= source
    {
        return Ok(out);
    }
    let result = Command::new(nsys)
        .arg("export")
        .arg("--type=sqlite")
        .arg("--force-overwrite=true")
        .arg("-o")
        .arg(&out)
        .arg(report)
        .output()
        .map_err(|e| {
            format!(
                "{}: running {} failed: {e}",
                report.display(),
                nsys.display()
            )
        })?;
    if !result.status.success() || !out.is_file() {
        let stderr = String::from_utf8_lossy(&result.stderr);
        return Err(format!(
            "{}: `nsys export --type=sqlite` failed ({}): {}",
            report.display(),
            result.status,
            stderr.trim()
        ));
    }
    Ok(out)
}
