//! Any rank's whole trace for work off the UI thread (a query over a run, an export): the trace
//! the rank holds while expanded, else its file, loaded on the calling worker thread. A collapsed
//! rank holds no trace ([`super::detail`]), so work over every rank of a large run loads them one
//! after another, not all at once, when it drops each before asking for the next.
//!
//! ```ignore
//! let sources = run.rank_traces();          // on the UI thread: cheap (Arcs and paths)
//! std::thread::spawn(move || {
//!     for s in &sources {
//!         let trace = s.get(&control)?;     // held Arc, or loaded from its file here
//!         // … query it, then drop it before the next rank
//!     }
//! });
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::{RankView, RunTab};
use crate::load::{self, LoadControl};
use crate::trace::{Needs, Trace};

/// Where a rank's whole trace comes from: held (the rank is expanded) or its file.
#[derive(Clone)]
pub enum RankTrace {
    Held(Arc<Trace>),
    File(PathBuf),
}

impl RankTrace {
    /// The rank's trace: the held one, or its file loaded now with `control` (progress, cancel,
    /// the parts needed) — on the calling thread, so call it from a worker, never the UI thread.
    pub fn get(&self, control: &LoadControl) -> Result<Arc<Trace>, String> {
        match self {
            RankTrace::Held(t) => Ok(Arc::clone(t)),
            RankTrace::File(path) => load::load_file_with(path, control)
                .map(Arc::new)
                .map_err(|e| format!("{}: {e}", path.display())),
        }
    }

    /// [`RankTrace::get`] with the whole trace, no progress, no cancel.
    pub fn get_whole(&self) -> Result<Arc<Trace>, String> {
        let cancel = AtomicBool::new(false);
        self.get(&LoadControl {
            progress: &|_| {},
            cancel: &cancel,
            needs: Needs::ALL,
        })
    }

    /// Whether the trace is held (no load needed).
    pub fn is_held(&self) -> bool {
        matches!(self, RankTrace::Held(_))
    }
}

impl RankView {
    /// Where this rank's whole trace comes from (see [`RankTrace::get`]).
    pub fn trace_source(&self) -> RankTrace {
        match &self.trace {
            Some(t) => RankTrace::Held(Arc::clone(t)),
            None => RankTrace::File(self.path.clone()),
        }
    }
}

impl RunTab {
    /// Every rank's trace source, in the tab's rank order (ranks whose file could not be read
    /// when the run opened are left out).
    pub fn rank_traces(&self) -> Vec<RankTrace> {
        self.ranks
            .iter()
            .filter(|r| r.digest.is_some())
            .map(RankView::trace_source)
            .collect()
    }
}
