//! Iterations: the instances of one family of repeated ranges side by side — `step_N`,
//! `ProfilerStep#N`, `layer_N_ffn`, `Expert_N` (names that differ only in their numbers, as
//! [`align::family_of`] groups them) or the ranges a regex matches — with each one's duration, the
//! GPU work it launched, warm-up and outliers marked, and its children per iteration for a
//! heatmap ([`children`]). The `iterations` report, the panel's heatmap and the HTML report read
//! this one computation.
//!
//! - **Families** are those [`align::outermost_repeated`] finds for aligning two runs (NVTX ranges,
//!   and a PyTorch trace's annotations, `ProfilerStep#N` as `ProfilerStep*`), outermost first; the
//!   default family is the first: the one least often inside another, then covering most time.
//! - **An iteration** is an instance of the family not nested in another instance on its thread
//!   (a range the family's regex matches inside a matching range is part of that one).
//! - **Kernels and GPU time**: a step is everything its process does in it ([`process_work`]):
//!   the GPU operations launched by CUDA calls (runtime or driver) of **any thread of the
//!   range's process** that start in the iteration — in a PyTorch trace the backward pass, which
//!   runs on the autograd thread, included. Kernels counts kernels and CUDA graph executions;
//!   GPU Time is the union of the GPU spans of every such operation, copies and memsets
//!   included. nsys's own reports (`nvtx_kern_sum`, `nvtx_gpu_proj_*`) keep nsys's per-thread
//!   definition. A thread of the process that runs instances of its own (one thread per GPU, a
//!   server's workers) launches its own iterations' work, not this one's.
//! - **Warm-up**: an iteration whose range the warm-up exclusion excludes (its start lies in a
//!   chosen warm-up range of its process, or it is one of the first N iterations the rules name);
//!   without an exclusion, the one [`ExclusionRule::WarmupNames`] makes (ranges named warmup).
//! - **Outliers** ([`outliers`]): durations above median + 3 × MAD (MAD at least 5 % of the
//!   median) of the iterations that are not warm-up.

pub mod children;
pub mod outliers;
pub mod process_work;

use std::sync::Arc;

use regex::Regex;

use super::align::{self, PROFILER_STEP};
use super::filter::{EventTable, Excluded, Filter};
use super::range::TimeRange;
use super::reports::nvtx_tree::{RangeForest, RangeKinds};
use super::warmup::{AttributionScope, ExclusionRule, exclude_warmup};
use crate::trace::{NvtxStyle, RangeKind, Trace, pid_of};

pub use children::{ChildKind, Children};
pub use process_work::{ProcessWork, StepWork};

/// Which ranges are the iterations.
#[derive(Debug, Clone, Default)]
pub enum FamilyChoice {
    /// The default family of the trace ([`default_family`]).
    #[default]
    Default,
    /// A family or name as [`families`] lists it (`step_*`, `ProfilerStep*`, `forward_pass`).
    Named(String),
    /// The ranges whose text matches (unanchored, as grep matches; `^…$` anchors).
    Regex(Regex),
}

impl FamilyChoice {
    /// From user text (`--family`): a family the trace has ([`families`]) by that name, else a
    /// regex; the error says what is wrong with the pattern.
    pub fn parse(trace: &Trace, text: &str) -> Result<Self, regex::Error> {
        if families(trace).iter().any(|(name, _)| name == text) {
            return Ok(FamilyChoice::Named(text.to_string()));
        }
        Regex::new(text).map(FamilyChoice::Regex)
    }
}

/// The repeated range families and names of `trace` with their instance counts, outermost first
/// (see the module comment).
pub fn families(trace: &Trace) -> Vec<(String, usize)> {
    align::outermost_repeated(trace)
}

/// The family iterations default to: the outermost repeated one, if any.
pub fn default_family(trace: &Trace) -> Option<String> {
    families(trace).into_iter().next().map(|(name, _)| name)
}

/// One iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iteration {
    /// Index into `trace.nvtx` of its range.
    pub nvtx: usize,
    /// The range's own text (no domain), shared with the trace's string table.
    pub name: Arc<str>,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The union on the GPU of every operation its process launched in it (copies and memsets
    /// included).
    pub gpu_time_ns: i64,
    /// Kernels and CUDA graph executions its process launched in it.
    pub kernels: usize,
    /// First start and last end of those operations.
    pub gpu_span: Option<(i64, i64)>,
    pub warmup: bool,
    /// Duration above the family's outlier threshold.
    pub outlier: bool,
}

impl Iteration {
    pub fn duration_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

/// The iterations of one family over a time range.
#[derive(Debug, Clone, Default)]
pub struct Iterations {
    /// The family as chosen: its name, or the regex.
    pub family: String,
    /// In start order; their index here is their iteration number.
    pub iterations: Vec<Iteration>,
    /// Durations above this are outliers (`None`: fewer than 3 steady iterations).
    pub outlier_threshold_ns: Option<i64>,
    /// What each iteration holds, for the heatmap.
    pub children: Children,
}

impl Iterations {
    /// The iterations that are not warm-up, with their numbers.
    pub fn steady(&self) -> impl Iterator<Item = (usize, &Iteration)> {
        self.iterations
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.warmup)
    }
}

/// Can range `i` be an iteration chosen by regex: a range (not a mark) that is NVTX or a PyTorch
/// annotation or operator (not a Python frame, not a range drawn on a GPU lane)?
fn regex_candidate(trace: &Trace, i: usize) -> bool {
    trace.nvtx.style[i] != NvtxStyle::Mark
        && matches!(
            trace.nvtx.kind_of(i),
            RangeKind::Nvtx | RangeKind::Annotation | RangeKind::Operator
        )
}

/// Is range `i` an instance of `choice` (`family` resolved for `Default`)?
fn is_instance(trace: &Trace, i: usize, choice: &FamilyChoice, family: &str) -> bool {
    match choice {
        FamilyChoice::Regex(re) => {
            regex_candidate(trace, i) && re.is_match(trace.str(trace.nvtx.spans.name[i]))
        }
        _ => align::range_key(trace, i).is_some_and(|key| {
            key == family || (family.contains('*') && align::family_of(key) == family)
        }),
    }
}

/// The iterations of `choice` whose range starts in `range`, with their GPU work, warm-up (by
/// `warmup`, the exclusion in force; `None`: ranges named warmup) and outliers, and their
/// children. Empty when the trace has no such family.
pub fn iterations(
    trace: &Trace,
    range: TimeRange,
    choice: &FamilyChoice,
    warmup: Option<&Excluded>,
) -> Iterations {
    let family = match choice {
        FamilyChoice::Default => default_family(trace),
        FamilyChoice::Named(name) => Some(name.clone()),
        FamilyChoice::Regex(re) => Some(re.as_str().to_string()),
    };
    let Some(family) = family else {
        return Iterations::default();
    };
    // Every range and kernel counts: an iteration is a unit, whatever the selection cuts.
    let forest = RangeForest::build(trace, &Filter::all(), RangeKinds::SameThreadRanges);
    let process_work = ProcessWork::new(trace);
    let default_warmup;
    let warmup = match warmup {
        Some(w) => w,
        None => {
            default_warmup = exclude_warmup(
                trace,
                &[ExclusionRule::WarmupNames],
                AttributionScope::Process,
            );
            &default_warmup.excluded
        }
    };

    // The instances: (forest position, range, thread, start), those starting in `range`.
    let mut instances: Vec<(usize, usize, i64, i64)> = Vec::new();
    let mut homes: Vec<i64> = Vec::new();
    for (tid, ranges) in &forest.threads {
        let mut instance_end = i64::MIN;
        for p in ranges.clone() {
            let i = forest.nvtx_index(p);
            if !is_instance(trace, i, choice, &family) {
                continue;
            }
            let start_ns = forest.start_ns(trace, p);
            // Positions are in start order, longest first: a later instance starting before the
            // last one ended lies inside it.
            if start_ns < instance_end {
                continue;
            }
            instance_end = forest.end_ns[p];
            homes.push(*tid);
            if range.contains(start_ns) {
                instances.push((p, i, *tid, start_ns));
            }
        }
    }
    // A thread that runs instances of its own (one thread per GPU) launches its steps' work,
    // not another thread's.
    let instance_threads = instance_threads(&homes);
    let mut found: Vec<(usize, Iteration, Vec<u32>)> = Vec::with_capacity(instances.len());
    for (p, i, tid, start_ns) in instances {
        let work = process_work.of_step(trace, pid_of(tid), (start_ns, forest.end_ns[p]), |t| {
            t == tid || instance_threads.binary_search(&t).is_err()
        });
        found.push((
            p,
            Iteration {
                nvtx: i,
                name: trace.shared_str(trace.nvtx.spans.name[i]),
                start_ns,
                end_ns: forest.end_ns[p],
                gpu_time_ns: work.gpu_time_ns,
                kernels: work.kernels.len() + work.graphs,
                gpu_span: work.gpu_span,
                warmup: warmup.is_excluded(EventTable::Nvtx, i),
                outlier: false,
            },
            work.kernels,
        ));
    }
    found.sort_by_key(|(p, it, _)| (it.start_ns, *p));
    let threshold = outliers::threshold_ns(
        found
            .iter()
            .filter(|(_, it, _)| !it.warmup)
            .map(|(_, it, _)| it.duration_ns()),
    );
    let mut positions = Vec::with_capacity(found.len());
    let mut iterations = Vec::with_capacity(found.len());
    let mut kernels = Vec::with_capacity(found.len());
    for (p, mut it, k) in found {
        it.outlier = !it.warmup && threshold.is_some_and(|t| it.duration_ns() > t);
        positions.push(p);
        iterations.push(it);
        kernels.push(k);
    }
    let children = children::of(trace, &forest, &positions, &iterations, &kernels);
    Iterations {
        family: display_family(&family),
        iterations,
        outlier_threshold_ns: threshold,
        children,
    }
}

/// The threads that run instances (`homes`: each instance's thread), sorted and distinct: each
/// launches its own iterations' work.
pub fn instance_threads(homes: &[i64]) -> Vec<i64> {
    let mut v = homes.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// How a family is named to a person: `ProfilerStep*` stays as PyTorch prints it.
fn display_family(family: &str) -> String {
    if family == PROFILER_STEP {
        PROFILER_STEP.to_string()
    } else {
        family.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_choice_prefers_a_listed_family_over_a_regex() {
        let mut t = Trace::default();
        let names = ["step_0", "step_1", "optimizer_step"];
        for (k, name) in names.iter().enumerate() {
            let id = t.strings.intern(name);
            t.nvtx.spans.push(k as i64 * 10, k as i64 * 10 + 5, id);
            t.nvtx.style.push(NvtxStyle::PushPop);
            t.nvtx.global_tid.push(1);
        }
        assert!(matches!(
            FamilyChoice::parse(&t, "step_*"),
            Ok(FamilyChoice::Named(n)) if n == "step_*"
        ));
        assert!(matches!(
            FamilyChoice::parse(&t, "^step_[0-9]+$"),
            Ok(FamilyChoice::Regex(_))
        ));
        assert!(FamilyChoice::parse(&t, "step_(").is_err());
        assert_eq!(default_family(&t).as_deref(), Some("step_*"));
    }
}
