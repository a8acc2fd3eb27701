//! Loading off the UI thread: a [`LoadJob`] runs [`crate::load::load_file_with`] on a worker
//! thread, publishes its phase and fraction for the progress bar, and can be cancelled. A
//! `.nsys-rep` report is converted by the loading layer ([`crate::load::nsys_rep`]); the
//! conversion is one more phase of the load, and Cancel stops `nsys export` too.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, TryRecvError, channel};
use std::sync::{Arc, Mutex};

pub use crate::load::nsys_rep::{cache_dir, find_on_path};
use crate::load::{self, LoadControl, LoadProgress};
use crate::trace::Trace;

/// What the worker reports at the end.
pub type LoadOutcome = Result<Trace, String>;

/// A load in progress: of a trace, or of anything else read from a file on a worker (an
/// attached Nsight Compute report with its join).
pub struct LoadJob<T = Trace> {
    pub path: PathBuf,
    progress: Arc<Mutex<(String, f32)>>,
    cancel: Arc<AtomicBool>,
    done: Receiver<Result<T, String>>,
}

impl LoadJob<Trace> {
    /// Starts loading `path` on a new thread; `repaint` (when given) is asked for a frame on
    /// every progress step so the bar moves.
    pub fn start(path: PathBuf, repaint: Option<egui::Context>) -> Self {
        LoadJob::run(path, repaint, "sightline-load", |path, control| {
            load::load_file_with(path, control).map_err(|e| e.to_string())
        })
    }
}

impl<T: Send + 'static> LoadJob<T> {
    /// Runs `work` on `path` on a new thread named `thread`, with a [`LoadControl`] whose
    /// progress this job publishes and whose cancel flag [`LoadJob::cancel`] (or dropping the
    /// job) sets.
    pub fn run(
        path: PathBuf,
        repaint: Option<egui::Context>,
        thread: &str,
        work: impl FnOnce(&Path, &LoadControl) -> Result<T, String> + Send + 'static,
    ) -> Self {
        let progress = Arc::new(Mutex::new(("opening".to_string(), 0.0)));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, done) = channel();
        let worker_path = path.clone();
        let worker_progress = Arc::clone(&progress);
        let worker_cancel = Arc::clone(&cancel);
        let spawned = std::thread::Builder::new()
            .name(thread.to_string())
            .spawn(move || {
                let report = |p: &LoadProgress| {
                    if let Ok(mut slot) = worker_progress.lock() {
                        *slot = (p.phase.to_string(), p.fraction);
                    }
                    if let Some(ctx) = &repaint {
                        ctx.request_repaint();
                    }
                };
                let control = LoadControl {
                    progress: &report,
                    cancel: &worker_cancel,
                    needs: crate::trace::Needs::ALL,
                };
                let outcome = work(&worker_path, &control);
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
    pub fn poll(&self) -> Option<Result<T, String>> {
        match self.done.try_recv() {
            Ok(outcome) => Some(outcome),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                Some(Err("the loading thread stopped unexpectedly".to_string()))
            }
        }
    }
}

impl<T> Drop for LoadJob<T> {
    /// A replaced or abandoned load stops reading as soon as it notices.
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}
