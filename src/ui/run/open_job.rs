//! Opening a run: every rank's file is loaded (the parts a digest needs,
//! [`DIGEST_NEEDS`]) and reduced to its [`RankDigest`] on a few worker threads — at most
//! [`open_workers`] at once, so a run of 64 ranks never holds more than that many traces while
//! it opens; each trace is dropped as soon as its digest is made.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use crate::analysis::ranks::collectives::DEFAULT_PATTERN;
use crate::analysis::ranks::digest::{DIGEST_NEEDS, RankDigest};
use crate::load::{self, LoadControl, LoadProgress};

/// What a worker sends for rank `index`: its digest, or why its file failed.
pub type DigestOutcome = (usize, Result<RankDigest, String>);

/// How many ranks are read at once while a run opens: the machine's cores (at least 1).
pub fn open_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The digests being made.
pub struct OpenJob {
    progress: Arc<Vec<Mutex<f32>>>,
    cancel: Arc<AtomicBool>,
    done: Receiver<DigestOutcome>,
    /// Ranks not yet reported.
    pub pending: usize,
}

impl OpenJob {
    /// Starts digesting `paths` (rank indices are their places in it) on `workers` threads.
    pub fn start(paths: Vec<PathBuf>, workers: usize, repaint: Option<egui::Context>) -> Self {
        let n = paths.len();
        let progress: Arc<Vec<Mutex<f32>>> = Arc::new((0..n).map(|_| Mutex::new(0.0)).collect());
        let cancel = Arc::new(AtomicBool::new(false));
        let queue: Arc<Mutex<VecDeque<(usize, PathBuf)>>> =
            Arc::new(Mutex::new(paths.into_iter().enumerate().collect()));
        let (tx, done) = channel();
        let mut started = 0;
        for _ in 0..workers.clamp(1, n.max(1)) {
            let w = Worker {
                queue: Arc::clone(&queue),
                progress: Arc::clone(&progress),
                cancel: Arc::clone(&cancel),
                tx: tx.clone(),
                repaint: repaint.clone(),
            };
            let spawned = std::thread::Builder::new()
                .name("sightline-rank-digest".to_string())
                .spawn(move || w.run());
            match spawned {
                Ok(_) => started += 1,
                Err(e) if started == 0 => {
                    // No thread to read the ranks: each fails with the reason.
                    if let Ok(mut q) = queue.lock() {
                        for (i, _) in q.drain(..) {
                            let _ =
                                tx.send((i, Err(format!("cannot start a loading thread: {e}"))));
                        }
                    }
                }
                Err(_) => {}
            }
        }
        Self {
            progress,
            cancel,
            done,
            pending: n,
        }
    }

    /// Rank `index`'s load fraction (0..=1).
    pub fn progress(&self, index: usize) -> f32 {
        self.progress
            .get(index)
            .and_then(|p| p.lock().ok().map(|f| *f))
            .unwrap_or(0.0)
    }

    /// The outcomes that came in since the last call; the job is over when `pending` is 0.
    pub fn poll(&mut self) -> Vec<DigestOutcome> {
        let mut out = Vec::new();
        loop {
            match self.done.try_recv() {
                Ok(o) => {
                    self.pending = self.pending.saturating_sub(1);
                    out.push(o);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    self.pending = 0;
                    break;
                }
            }
        }
        out
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for OpenJob {
    fn drop(&mut self) {
        self.cancel();
    }
}

struct Worker {
    queue: Arc<Mutex<VecDeque<(usize, PathBuf)>>>,
    progress: Arc<Vec<Mutex<f32>>>,
    cancel: Arc<AtomicBool>,
    tx: Sender<DigestOutcome>,
    repaint: Option<egui::Context>,
}

impl Worker {
    fn run(self) {
        let pattern = regex::Regex::new(DEFAULT_PATTERN).ok();
        loop {
            let next = self.queue.lock().ok().and_then(|mut q| q.pop_front());
            let Some((index, path)) = next else { return };
            let outcome = if self.cancel.load(Ordering::Relaxed) {
                Err("loading cancelled".to_string())
            } else {
                self.digest(index, &path, pattern.as_ref())
            };
            if self.tx.send((index, outcome)).is_err() {
                return;
            }
            if let Some(ctx) = &self.repaint {
                ctx.request_repaint();
            }
        }
    }

    fn digest(
        &self,
        index: usize,
        path: &std::path::Path,
        pattern: Option<&regex::Regex>,
    ) -> Result<RankDigest, String> {
        let report = |p: &LoadProgress| {
            if let Some(Ok(mut slot)) = self.progress.get(index).map(|m| m.lock()) {
                *slot = p.fraction;
            }
            if let Some(ctx) = &self.repaint {
                ctx.request_repaint();
            }
        };
        let control = LoadControl {
            progress: &report,
            cancel: &self.cancel,
            needs: DIGEST_NEEDS,
        };
        let pattern = pattern.ok_or("the collectives' pattern does not compile")?;
        let trace = load::load_file_with(path, &control).map_err(|e| e.to_string())?;
        Ok(RankDigest::of(&trace, pattern))
    }
}
