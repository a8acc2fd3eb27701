//! Opening a run: every rank's [`RankDigest`] is read from its digest folder (a run opened from
//! `sightline digest`'s output), else from the digest cache ([`Cache`]) when the trace is
//! unchanged since it was cached, else made from the trace (loaded with the parts a digest
//! needs) and cached — on a few worker threads, at most [`open_workers`] at once, so a run of 64
//! ranks never holds more than that many traces while it opens; each trace is dropped as soon
//! as its digest is made.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Mutex};

use crate::analysis::ranks::collectives::DEFAULT_PATTERN;
use crate::analysis::ranks::digest::RankDigest;
use crate::digests::{self, cache::Cache, store};
use crate::load::LoadProgress;

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
    /// The digest cache the job reads and writes.
    pub cache: Option<Cache>,
}

impl OpenJob {
    /// Starts digesting `paths` (traces, or rank folders of a folder of digests; rank indices
    /// are their places in it) on `workers` threads, through `cache` where given.
    pub fn start(
        paths: Vec<PathBuf>,
        workers: usize,
        cache: Option<Cache>,
        repaint: Option<egui::Context>,
    ) -> Self {
        let n = paths.len();
        let progress: Arc<Vec<Mutex<f32>>> = Arc::new((0..n).map(|_| Mutex::new(0.0)).collect());
        let cancel = Arc::new(AtomicBool::new(false));
        let names = Arc::new(store::folder_names(&paths));
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
                cache: cache.clone(),
                names: Arc::clone(&names),
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
            cache,
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
    cache: Option<Cache>,
    /// Each rank's folder name, were its digest written ([`store::folder_names`]).
    names: Arc<Vec<String>>,
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
        let pattern = pattern.ok_or("the collectives' pattern does not compile")?;
        if path.join(store::ENTRY_FILE).is_file() {
            return store::read_rank(path)
                .map(|(_, d)| d)
                .map_err(|e| format!("{e:#}"));
        }
        let source = digests::absolute(path);
        if let Some((_, d, _)) = self
            .cache
            .as_ref()
            .and_then(|c| c.lookup(&source, pattern.as_str()))
        {
            return Ok(d);
        }
        let report = |p: &LoadProgress| {
            if let Some(Ok(mut slot)) = self.progress.get(index).map(|m| m.lock()) {
                *slot = p.fraction;
            }
            if let Some(ctx) = &self.repaint {
                ctx.request_repaint();
            }
        };
        let folder = self.names.get(index).cloned().unwrap_or_default();
        let made = digests::load_and_make(path, (index, folder), pattern, &report, &self.cancel)
            .map_err(|e| e.root_cause().to_string())?;
        if let Some(c) = &self.cache {
            // A digest not cached is made again next time; the run opens all the same.
            let _ = c.store(&made);
        }
        Ok(made.digest)
    }
}
