//! The CPU side of `sightline bench` (issue 13, "Cost"): what CPU samples cost in memory
//! (the 16 bytes of each sample plus the interned stacks they share) and the time of the sample
//! aggregations the window and the CLI run over a selection — choosing the samples
//! ([`cpu_samples::samples_in`]), the bottom-up table and top-down tree ([`cpu_samples::profile`])
//! and folded stacks ([`cpu_samples::folded`]) — on up to [`SELECTION_SAMPLES`] samples.

use std::time::Instant;

use serde::Serialize;

use super::{median, ms};
use crate::analysis::cpu_samples;
use crate::trace::Trace;

/// The selection the aggregations are timed on: the trace's samples, all threads, whole time
/// span, cut to this many (issue 13 asks for the cost of a 1M-sample selection).
pub const SELECTION_SAMPLES: usize = 1_000_000;

/// Memory and aggregation times of a trace's CPU samples.
#[derive(Debug, Clone, Serialize)]
pub struct CpuSampleBench {
    pub samples: u64,
    /// `trace.cpu_samples.heap_bytes() / samples`.
    pub bytes_per_sample: f64,
    /// Distinct call stacks (of samples and of CUDA / OS-runtime backtraces) and their bytes.
    pub stacks: u64,
    pub stack_frames_bytes: u64,
    /// Samples plus stacks, over the samples.
    pub bytes_per_sample_with_stacks: f64,
    /// Running intervals of threads (from `SCHED_EVENTS`) and their bytes.
    pub running_intervals: u64,
    pub running_intervals_bytes: u64,
    /// Samples in the timed selection.
    pub selection: u64,
    pub runs: u32,
    /// Medians over `runs`: choosing the samples of the whole span on every thread (before the
    /// cut), the bottom-up table + top-down tree, and folded stacks, with their sizes.
    pub samples_in_ms: f64,
    pub profile_ms: f64,
    pub profile_ms_runs: Vec<f64>,
    pub bottom_up_rows: usize,
    pub tree_nodes: usize,
    pub folded_ms: f64,
    pub folded_ms_runs: Vec<f64>,
    pub folded_lines: usize,
}

/// Measures the CPU side of `trace`; `None` when it has no CPU samples.
pub fn measure(trace: &Trace, runs: u32) -> Option<CpuSampleBench> {
    let samples = trace.cpu_samples.len();
    if samples == 0 {
        return None;
    }
    let runs = runs.max(1);
    let mut select_runs = Vec::new();
    let mut selection = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        selection = cpu_samples::samples_in(trace, i64::MIN, i64::MAX, None);
        select_runs.push(ms(t.elapsed()));
    }
    selection.truncate(SELECTION_SAMPLES);
    let (mut profile_runs, mut folded_runs) = (Vec::new(), Vec::new());
    let (mut bottom_up_rows, mut tree_nodes, mut folded_lines) = (0, 0, 0);
    for _ in 0..runs {
        let t = Instant::now();
        let profile = std::hint::black_box(cpu_samples::profile(trace, &selection));
        profile_runs.push(ms(t.elapsed()));
        bottom_up_rows = profile.bottom_up.len();
        tree_nodes = profile.tree.len();
        let t = Instant::now();
        let folded = std::hint::black_box(cpu_samples::folded(trace, &selection));
        folded_runs.push(ms(t.elapsed()));
        folded_lines = folded.len();
    }
    let sample_bytes = trace.cpu_samples.heap_bytes();
    let stack_bytes = trace.stacks.heap_bytes();
    Some(CpuSampleBench {
        samples: samples as u64,
        bytes_per_sample: sample_bytes as f64 / samples as f64,
        stacks: trace.stacks.len() as u64,
        stack_frames_bytes: stack_bytes as u64,
        bytes_per_sample_with_stacks: (sample_bytes + stack_bytes) as f64 / samples as f64,
        running_intervals: trace.thread_states.len() as u64,
        running_intervals_bytes: trace.thread_states.heap_bytes() as u64,
        selection: selection.len() as u64,
        runs,
        samples_in_ms: median(&select_runs),
        profile_ms: median(&profile_runs),
        profile_ms_runs: profile_runs,
        bottom_up_rows,
        tree_nodes,
        folded_ms: median(&folded_runs),
        folded_ms_runs: folded_runs,
        folded_lines,
    })
}

impl CpuSampleBench {
    /// Measure / value rows for the text report.
    pub fn rows(&self) -> Vec<Vec<String>> {
        vec![
            vec!["CPU samples".into(), self.samples.to_string()],
            vec![
                "bytes per sample (samples only)".into(),
                format!("{:.1} B", self.bytes_per_sample),
            ],
            vec![
                "distinct stacks, their bytes".into(),
                format!("{}, {} B", self.stacks, self.stack_frames_bytes),
            ],
            vec![
                "bytes per sample with stacks".into(),
                format!("{:.2} B", self.bytes_per_sample_with_stacks),
            ],
            vec![
                "running intervals, their bytes".into(),
                format!(
                    "{}, {} B",
                    self.running_intervals, self.running_intervals_bytes
                ),
            ],
            vec![
                "samples_in (whole trace, all threads)".into(),
                format!("{:.1} ms", self.samples_in_ms),
            ],
            vec![
                format!("profile: bottom-up + top-down, {} samples", self.selection),
                format!(
                    "{:.1} ms ({} functions, {} tree nodes)",
                    self.profile_ms, self.bottom_up_rows, self.tree_nodes
                ),
            ],
            vec![
                format!("folded stacks, {} samples", self.selection),
                format!("{:.1} ms ({} lines)", self.folded_ms, self.folded_lines),
            ],
        ]
    }
}
