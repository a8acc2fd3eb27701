//! `sightline bench BASE --compare NEW`: what two traces open at once cost in memory against one,
//! and what the compare view adds on top of them (its two view states, the alignment and the
//! kernel diff with every name's events for outlining), with the time of the alignment and of
//! the diff. Resident memory from `/proc/self/status`, as the single-trace bench measures it.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::memory;
use crate::load::{self, LoadError};
use crate::timeline::TimelineModel;
use crate::trace::Trace;
use crate::ui::compare::CompareView;
use crate::ui::compare::diff_view::{self, DiffResult};

/// What the compare bench measured.
#[derive(Debug, Clone, Serialize)]
pub struct CompareBench {
    pub base_events: usize,
    pub new_events: usize,
    /// RSS before anything was loaded.
    pub rss_start_mib: f64,
    /// RSS added by the baseline (trace + timeline model), then by both.
    pub one_trace_mib: f64,
    pub two_traces_mib: f64,
    /// RSS added by the compare view over the two traces, and as a share of what they take.
    pub compare_mib: f64,
    pub compare_percent: f64,
    pub align_ms: f64,
    pub diff_ms: f64,
    pub diff_rows: usize,
    pub peak_rss_mib: f64,
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn rss() -> u64 {
    memory::resident().unwrap_or_default().now_bytes
}

/// Loads both traces as the window does (trace + timeline model), then sets up the compare
/// view and computes its kernel diff.
pub fn run(base: &Path, new: &Path) -> Result<CompareBench, LoadError> {
    let start = rss();
    let open = |p: &Path| -> Result<(Arc<Trace>, TimelineModel), LoadError> {
        let t = load::load_file(p)?;
        let m = TimelineModel::new(&t);
        Ok((Arc::new(t), m))
    };
    let a = open(base)?;
    let after_one = rss();
    let b = open(new)?;
    let after_two = rss();

    let t = Instant::now();
    let mut cv = CompareView::new(0, 1);
    cv.initialize([(a.0.as_ref(), &a.1), (b.0.as_ref(), &b.1)]);
    let align_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let key = diff_view::key_of(&cv, [&a.0, &b.0]);
    let diff: DiffResult = diff_view::compute([a.0.as_ref(), b.0.as_ref()], &key);
    let diff_ms = t.elapsed().as_secs_f64() * 1e3;
    let after_compare = rss();
    let two = after_two.saturating_sub(start);
    let added = after_compare.saturating_sub(after_two);
    let out = CompareBench {
        base_events: a.0.event_count(),
        new_events: b.0.event_count(),
        rss_start_mib: mib(start),
        one_trace_mib: mib(after_one.saturating_sub(start)),
        two_traces_mib: mib(two),
        compare_mib: mib(added),
        compare_percent: if two > 0 {
            100.0 * added as f64 / two as f64
        } else {
            0.0
        },
        align_ms,
        diff_ms,
        diff_rows: diff.rows.len(),
        peak_rss_mib: mib(memory::resident().unwrap_or_default().peak_bytes),
    };
    // Keep everything alive until measured.
    drop((cv, diff, a, b));
    Ok(out)
}

impl CompareBench {
    pub fn to_table(&self) -> String {
        format!(
            "events: base {} / new {}\n\
             RSS at start: {:.1} MiB\n\
             one trace (trace + timeline model): +{:.1} MiB\n\
             two traces: +{:.1} MiB ({:.2}x one)\n\
             compare view (views, alignment, kernel diff with events): +{:.1} MiB = {:.1} % of the two traces\n\
             alignment: {:.1} ms, kernel diff + headline: {:.1} ms ({} names)\n\
             peak RSS: {:.1} MiB\n",
            self.base_events,
            self.new_events,
            self.rss_start_mib,
            self.one_trace_mib,
            self.two_traces_mib,
            if self.one_trace_mib > 0.0 {
                self.two_traces_mib / self.one_trace_mib
            } else {
                0.0
            },
            self.compare_mib,
            self.compare_percent,
            self.align_ms,
            self.diff_ms,
            self.diff_rows,
            self.peak_rss_mib
        )
    }
}
