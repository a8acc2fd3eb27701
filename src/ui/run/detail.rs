//! A rank's detail on demand: expanding a rank loads its whole trace again ([`LoadJob`], on a
//! thread of its own, its progress on the rank's header row) and builds its rows; collapsing it
//! drops the trace and its rows at once (nothing is kept for a collapsed rank but its digest, so
//! the memory a run holds is its digests plus its expanded ranks). At most
//! [`super::open_job::open_workers`] ranks load at once; "Expand all" expands at most
//! [`EXPAND_ALL_MAX`] ranks.

use std::path::Path;
use std::sync::Arc;

use super::view::select_instance;
use super::{RankView, RunTab};
use crate::ui::loader::LoadJob;
use crate::ui::timeline::{TimelineModel, TimelineState};

/// The most ranks "Expand all" expands (each holds its whole trace).
pub const EXPAND_ALL_MAX: usize = 16;

impl RunTab {
    /// Expands or collapses rank `k`; the next [`RunTab::poll`] loads or drops its trace.
    pub fn set_expanded(&mut self, k: usize, expanded: bool) {
        if let Some(r) = self.ranks.get_mut(k) {
            r.expanded = expanded;
            if !expanded {
                r.detail_error = None;
            }
        }
    }

    /// Expands the first [`EXPAND_ALL_MAX`] ranks that can be.
    pub fn expand_all(&mut self) {
        let mut n = self.ranks.iter().filter(|r| r.expanded).count();
        for r in &mut self.ranks {
            if n >= EXPAND_ALL_MAX {
                break;
            }
            if !r.expanded && r.digest.is_some() {
                r.expanded = true;
                n += 1;
            }
        }
    }

    pub fn collapse_all(&mut self) {
        for k in 0..self.ranks.len() {
            self.set_expanded(k, false);
        }
    }

    /// Whether rank `k` is loading its whole trace, with the fraction read.
    pub fn detail_progress(&self, k: usize) -> Option<f32> {
        self.ranks.get(k)?.job.as_ref().map(|j| j.progress().1)
    }

    /// Takes in finished loads of expanded ranks, drops the trace and rows of collapsed ranks,
    /// starts loading expanded ranks that hold no trace (a few at once); true when something
    /// changed.
    pub fn poll_details(&mut self, ctx: Option<&egui::Context>) -> bool {
        let mut changed = false;
        let mut arrived = false;
        let mut dropped = false;
        for (k, r) in self.ranks.iter_mut().enumerate() {
            if !r.expanded {
                dropped |= drop_detail(r);
                continue;
            }
            let Some(outcome) = r.job.as_ref().and_then(LoadJob::poll) else {
                continue;
            };
            r.job = None;
            changed = true;
            match outcome {
                Ok(trace) => {
                    let model = TimelineModel::new(&trace);
                    r.state = TimelineState::new(&trace, &model);
                    r.model = Some(model);
                    if !r.search.query.is_empty() {
                        r.search.refresh(&trace);
                    }
                    r.trace = Some(Arc::new(trace));
                    arrived = true;
                }
                Err(e) => {
                    let rank = self.analysis.as_ref().and_then(|a| a.ranks.get(k));
                    r.detail_error = Some(unreadable_trace(rank.map(|i| i.rank), &r.path, &e));
                }
            }
        }
        if dropped {
            give_back_freed_memory();
        }
        let mut loading = self.ranks.iter().filter(|r| r.job.is_some()).count();
        let most = super::open_job::open_workers();
        for (k, r) in self.ranks.iter_mut().enumerate() {
            if loading >= most {
                break;
            }
            let wanted = r.expanded && r.trace.is_none() && r.job.is_none();
            if wanted && r.digest.is_some() && r.detail_error.is_none() {
                let made_from = r.digest.as_ref().and_then(|d| d.source_stamp);
                if crate::digests::store::changed_since(&r.path, made_from) {
                    let rank = self.analysis.as_ref().and_then(|a| a.ranks.get(k));
                    r.detail_error = Some(changed_trace(rank.map(|i| i.rank), &r.path));
                    changed = true;
                    continue;
                }
                r.job = Some(LoadJob::start(r.path.clone(), ctx.cloned()));
                loading += 1;
                changed = true;
            }
        }
        changed |= dropped;
        if arrived {
            // The new rows take the run's view, range, rulers, selected collective and the
            // pinned SQL results.
            self.pin_rank_tracks();
            self.apply_view();
            select_instance(self, self.selected_instance);
        }
        changed
    }
}

/// What the window says under an expanded rank whose trace cannot be loaded (a run opened from
/// digests on another machine, or its traces moved since): which rank, the path its digest
/// names, and why — the loader's reason without the path it starts with.
pub fn unreadable_trace(rank: Option<u32>, path: &Path, error: &str) -> String {
    let shown = path.display().to_string();
    let reason = error.strip_prefix(&format!("{shown}: ")).unwrap_or(error);
    let whose = rank.map_or_else(|| "this rank".to_string(), |r| format!("rank {r}"));
    format!(
        "The trace of {whose}, {shown}, cannot be read here: {reason}. Its row is drawn from \
         its digest; to see its events, put the trace back at that path (or open the run from \
         its traces)."
    )
}

/// What the window says under an expanded rank whose trace changed since its digest was made:
/// its rows would not be what the run's analysis (from the digest) measured.
pub fn changed_trace(rank: Option<u32>, path: &Path) -> String {
    let whose = rank.map_or_else(|| "this rank".to_string(), |r| format!("rank {r}"));
    format!(
        "The trace of {whose}, {}, changed since its digest was made (its size or time \
         differ): its row is drawn from the digest; digest the traces again, or open the run \
         from its traces, to see it as it is now.",
        path.display()
    )
}

/// Hands the heap's free pages back to the system (glibc keeps what the loading threads freed
/// in their arenas): after a run opened, its traces dropped once digested, and after a rank's
/// trace is dropped, so the memory the process holds is what the run keeps.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the kernel; it touches no live block.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A collapsed rank lets go of its trace, its rows and a load in flight (cancelled).
fn drop_detail(r: &mut RankView) -> bool {
    let held = r.trace.is_some() || r.model.is_some() || r.job.is_some();
    r.job = None;
    r.trace = None;
    r.model = None;
    r.search.matches.clear();
    r.state.selection = None;
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_trace_is_named_with_its_reason_once() {
        let path = Path::new("/gone/n25_ddp_rank1.sqlite");
        let said = unreadable_trace(Some(1), path, "/gone/n25_ddp_rank1.sqlite: file not found");
        assert!(said.starts_with(
            "The trace of rank 1, /gone/n25_ddp_rank1.sqlite, cannot be read here: file not found."
        ));
        assert_eq!(said.matches("/gone/").count(), 1, "{said}");
        let other = unreadable_trace(None, path, "loading was cancelled");
        assert!(other.contains(
            "of this rank, /gone/n25_ddp_rank1.sqlite, cannot be read here: loading was cancelled."
        ));
    }
}
