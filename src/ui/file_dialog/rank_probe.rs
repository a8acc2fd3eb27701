//! What each trace of a folder says about its rank, read on a background thread while File →
//! Open run… lists the folder: its rank (`distributedInfo.rank`, else the rank in its processes'
//! environment — [`crate::trace::Trace::env_rank`]), its world size, and its span on the clock it
//! records. Open run… proposes from it the traces that look like other ranks of the run of the
//! trace ticked first ([`RankProbe::same_run`]), beside those named like it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::analysis::ranks::{RankHints, utc_origin};
use crate::load::{self, LoadControl};
use crate::trace::{Needs, Trace};

/// What one trace says about its rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct RankProbe {
    pub(super) rank: Option<u32>,
    /// `distributedInfo.world_size` of a PyTorch trace.
    pub(super) world: Option<u32>,
    /// First → last time on the clock the trace records, where it records one.
    pub(super) span_utc: Option<(i64, i64)>,
}

impl RankProbe {
    fn of(trace: &Trace) -> Self {
        let hints = RankHints::of(trace);
        let span_utc = utc_origin(trace)
            .filter(|_| trace.last_ns > trace.first_ns)
            .map(|o| (o + trace.first_ns, o + trace.last_ns));
        Self {
            rank: hints.distributed.or(hints.environment),
            world: trace.torch.as_ref().and_then(|t| t.world_size),
            span_utc,
        }
    }

    /// Whether `other` looks like another rank of this trace's run: both say their rank and the
    /// ranks differ, the world sizes agree, and where both record a clock their spans overlap on
    /// it (traces recorded at different times are not one run, whatever their ranks).
    pub(super) fn same_run(&self, other: &Self) -> bool {
        let (Some(a), Some(b)) = (self.rank, other.rank) else {
            return false;
        };
        a != b
            && self.world == other.world
            && match (self.span_utc, other.span_utc) {
                (Some(x), Some(y)) => x.0 < y.1 && y.0 < x.1,
                _ => true,
            }
    }
}

/// The probes of a folder's traces, filled in by a thread of its own (cancelled when dropped).
pub(super) struct Prober {
    found: Arc<Mutex<HashMap<String, RankProbe>>>,
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
}

impl Prober {
    /// Starts reading the files `names` of `dir`, one after the other; `repaint` is asked for a
    /// frame after each.
    pub(super) fn start(dir: &Path, names: Vec<String>, repaint: egui::Context) -> Self {
        let found = Arc::new(Mutex::new(HashMap::new()));
        let cancel = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (f, c, d, dir) = (
            Arc::clone(&found),
            Arc::clone(&cancel),
            Arc::clone(&done),
            dir.to_path_buf(),
        );
        let spawned = std::thread::Builder::new()
            .name("sightline-rank-probe".into())
            .spawn(move || probe_all(&dir, &names, &f, &c, &d, &repaint));
        if spawned.is_err() {
            done.store(true, Ordering::Relaxed);
        }
        Self {
            found,
            cancel,
            done,
        }
    }

    pub(super) fn get(&self, name: &str) -> Option<RankProbe> {
        self.found.lock().ok()?.get(name).copied()
    }

    pub(super) fn done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }
}

impl Drop for Prober {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

fn probe_all(
    dir: &Path,
    names: &[String],
    found: &Mutex<HashMap<String, RankProbe>>,
    cancel: &AtomicBool,
    done: &AtomicBool,
    repaint: &egui::Context,
) {
    for name in names {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let path: PathBuf = dir.join(name);
        // The metadata only where the format can read it alone (an nsys export); a PyTorch
        // trace is read whole.
        let control = LoadControl {
            progress: &|_| {},
            cancel,
            needs: Needs::NONE,
        };
        if let Ok(trace) = load::load_file_with(&path, &control)
            && let Ok(mut f) = found.lock()
        {
            f.insert(name.clone(), RankProbe::of(&trace));
        }
        repaint.request_repaint();
    }
    done.store(true, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_rank_of_one_run_overlaps_on_the_recorded_clock() {
        let p = |rank, span_utc| RankProbe {
            rank,
            world: Some(2),
            span_utc,
        };
        let rank0 = p(Some(0), Some((100, 200)));
        assert!(rank0.same_run(&p(Some(1), Some((150, 250)))));
        assert!(
            !rank0.same_run(&p(Some(0), Some((150, 250)))),
            "the same rank"
        );
        assert!(
            !rank0.same_run(&p(Some(1), Some((300, 400)))),
            "another time"
        );
        assert!(!rank0.same_run(&p(None, Some((150, 250)))), "no rank");
        let other_world = RankProbe {
            world: Some(4),
            ..p(Some(1), None)
        };
        assert!(!rank0.same_run(&other_world));
    }
}
