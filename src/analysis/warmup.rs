//! Warm-up exclusion: choose NVTX ranges (named like `warmup`, matching a regex, or the first N
//! iterations of a repeated range) and exclude every event attributed to them, producing the
//! [`Excluded`] flags a [`Filter`] takes plus the excluded time, for shading in the timeline.
//!
//! Attribution, the semantics every caller gets:
//! - A GPU operation belongs to the time its launching CUDA API call *started on the CPU* (the
//!   `api_call` link: same correlationId, same process), not to when it ran on the GPU: a kernel
//!   queued during warm-up that runs after it is still warm-up work. An operation whose launching
//!   call is not in the trace falls back to its own GPU start.
//! - API calls, NVTX ranges and marks, and OS runtime calls belong to their own start.
//! - An event is excluded when that time lies in `[start, end)` of a chosen range **of the same
//!   process** ([`AttributionScope::Process`], the default). Same process rather than same thread
//!   because frameworks launch work of one phase from several threads: PyTorch runs backward on
//!   its autograd device threads while the `warmup`/`step_N` ranges are pushed on the main thread,
//!   so a same-thread rule would keep warm-up backward kernels. [`AttributionScope::Thread`]
//!   restricts a range to its own thread (push/pop ranges are per thread) for applications whose
//!   threads are independent; unlinked GPU ops then fall back to the ranges of their process.

use std::collections::HashMap;

use regex::Regex;

use super::filter::{Excluded, Filter};
use super::intervals::{self, Interval};
use super::range::TimeRange;
use crate::trace::{GlobalTid, NO_INDEX, NvtxStyle, Trace};

/// Which NVTX ranges to exclude. Several rules combine: a range chosen by any rule is excluded.
#[derive(Debug, Clone)]
pub enum ExclusionRule {
    /// Ranges whose text contains `warmup`, `warm-up` or `warm_up`, in any case.
    WarmupNames,
    /// Ranges whose text matches the regex (unanchored, as grep matches; use `^…$` to anchor).
    NameRegex(Regex),
    /// The first `count` instances, per process in start order, of the ranges whose text matches
    /// `iteration` (e.g. `step_.*`). A matching range nested inside an earlier matching instance
    /// is part of that instance, not an instance of its own.
    FirstIterations { iteration: Regex, count: usize },
}

impl ExclusionRule {
    /// `NameRegex` from user text; the error says what is wrong with the pattern.
    pub fn name_regex(pattern: &str) -> Result<Self, regex::Error> {
        Regex::new(pattern).map(ExclusionRule::NameRegex)
    }

    /// `FirstIterations` from user text.
    pub fn first_iterations(iteration: &str, count: usize) -> Result<Self, regex::Error> {
        Regex::new(iteration).map(|iteration| ExclusionRule::FirstIterations { iteration, count })
    }

    /// How the rule reads in a message, e.g. `NVTX ranges matching 'step_.*' (first 2)`.
    pub fn describe(&self) -> String {
        match self {
            ExclusionRule::WarmupNames => "NVTX ranges named warmup/warm-up/warm_up".into(),
            ExclusionRule::NameRegex(r) => format!("NVTX ranges matching '{}'", r.as_str()),
            ExclusionRule::FirstIterations { iteration, count } => {
                format!(
                    "the first {count} NVTX ranges matching '{}'",
                    iteration.as_str()
                )
            }
        }
    }
}

/// Which chosen ranges an event can be attributed to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AttributionScope {
    /// Ranges of any thread of the event's process (see the module comment for why).
    #[default]
    Process,
    /// Ranges of the event's own thread (for GPU ops: the launching call's thread).
    Thread,
}

/// Time excluded in one process: the union of its chosen ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExcludedInterval {
    pub pid: u32,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// The result of warm-up exclusion.
#[derive(Debug, Clone, Default)]
pub struct WarmupExclusion {
    /// Per-event flags, for [`Filter::excluded`].
    pub excluded: Excluded,
    /// Indices into `trace.nvtx` of the ranges the rules chose, in table order.
    pub ranges: Vec<usize>,
    /// Excluded time, merged per process, ordered by (pid, start): what the timeline shades.
    pub intervals: Vec<ExcludedInterval>,
}

impl WarmupExclusion {
    /// A filter over `range` that drops the excluded events.
    pub fn filter(&self, range: TimeRange) -> Filter<'_> {
        Filter {
            range,
            excluded: Some(&self.excluded),
        }
    }

    /// How many events of each table are excluded:
    /// (kernels, memcpys, memsets, api_calls, nvtx, osrt).
    pub fn counts(&self) -> [usize; 6] {
        let n = |v: &[bool]| v.iter().filter(|&&x| x).count();
        let e = &self.excluded;
        [
            n(&e.kernels),
            n(&e.memcpys),
            n(&e.memsets),
            n(&e.api_calls),
            n(&e.nvtx),
            n(&e.osrt),
        ]
    }
}

/// Does an NVTX text name a warm-up phase (`warmup`, `warm-up`, `warm_up`, any case)?
pub fn is_warmup_name(name: &str) -> bool {
    // Compared ASCII-blind in place rather than on a lower-cased copy (a text can be megabytes,
    // read once per range): no other character lower-cases to one of these letters.
    let bytes = name.as_bytes();
    (0..bytes.len())
        .filter(|&i| bytes[i].eq_ignore_ascii_case(&b'w'))
        .any(|i| {
            [&b"warmup"[..], b"warm-up", b"warm_up"].iter().any(|w| {
                bytes[i..]
                    .get(..w.len())
                    .is_some_and(|b| b.eq_ignore_ascii_case(w))
            })
        })
}

/// Indices into `trace.nvtx` of the ranges (not marks) any of `rules` chooses, ascending.
pub fn matching_ranges(trace: &Trace, rules: &[ExclusionRule]) -> Vec<usize> {
    let n = &trace.nvtx;
    let is_range = |i: usize| n.style[i] != NvtxStyle::Mark;
    let mut chosen = vec![false; n.spans.len()];
    for rule in rules {
        match rule {
            ExclusionRule::WarmupNames => {
                // Each distinct text read once, however many ranges it names.
                let mut warmup_text: Vec<Option<bool>> = vec![None; trace.strings.len()];
                for (i, c) in chosen.iter_mut().enumerate() {
                    let id = n.spans.name[i];
                    let named = match warmup_text.get_mut(id as usize) {
                        Some(known) => *known.get_or_insert_with(|| is_warmup_name(trace.str(id))),
                        None => is_warmup_name(trace.str(id)),
                    };
                    *c |= is_range(i) && named;
                }
            }
            ExclusionRule::NameRegex(re) => {
                for (i, c) in chosen.iter_mut().enumerate() {
                    *c |= is_range(i) && re.is_match(trace.str(n.spans.name[i]));
                }
            }
            ExclusionRule::FirstIterations { iteration, count } => {
                // Instances per process, in start order (outer ranges first on ties).
                let mut by_pid: HashMap<u32, Vec<usize>> = HashMap::new();
                for i in 0..n.spans.len() {
                    if is_range(i) && iteration.is_match(trace.str(n.spans.name[i])) {
                        by_pid
                            .entry(GlobalTid(n.global_tid[i]).pid())
                            .or_default()
                            .push(i);
                    }
                }
                for mut ranges in by_pid.into_values() {
                    ranges.sort_by_key(|&i| {
                        (n.spans.start_ns[i], std::cmp::Reverse(n.spans.end_ns[i]), i)
                    });
                    let mut taken = 0;
                    let mut instance_end = i64::MIN;
                    for i in ranges {
                        if n.spans.start_ns[i] < instance_end {
                            continue; // nested in the previous instance
                        }
                        if taken == *count {
                            break;
                        }
                        taken += 1;
                        instance_end = n.spans.end_ns[i];
                        chosen[i] = true;
                    }
                }
            }
        }
    }
    (0..chosen.len()).filter(|&i| chosen[i]).collect()
}

/// Merged excluded time per attribution key, with a point lookup.
struct Windows(HashMap<i64, Vec<Interval>>);

impl Windows {
    fn build(spans: impl Iterator<Item = (i64, Interval)>) -> Self {
        let mut raw: HashMap<i64, Vec<Interval>> = HashMap::new();
        for (key, span) in spans {
            raw.entry(key).or_default().push(span);
        }
        Windows(
            raw.into_iter()
                .map(|(k, v)| (k, intervals::union(v)))
                .collect(),
        )
    }

    fn contains(&self, key: i64, t_ns: i64) -> bool {
        self.0.get(&key).is_some_and(|v| {
            let after = v.partition_point(|&(s, _)| s <= t_ns);
            after > 0 && t_ns < v[after - 1].1
        })
    }
}

/// Excludes every event attributed to the NVTX ranges `rules` choose (see the module comment
/// for the attribution rules).
pub fn exclude_warmup(
    trace: &Trace,
    rules: &[ExclusionRule],
    scope: AttributionScope,
) -> WarmupExclusion {
    let ranges = matching_ranges(trace, rules);
    let n = &trace.nvtx;
    let pid_key = |global_tid: i64| i64::from(GlobalTid(global_tid).pid());
    let scope_key = |global_tid: i64| match scope {
        AttributionScope::Process => pid_key(global_tid),
        AttributionScope::Thread => global_tid,
    };
    let span = |i: usize| (n.spans.start_ns[i], n.spans.end_ns[i]);
    let by_scope = Windows::build(
        ranges
            .iter()
            .map(|&i| (scope_key(n.global_tid[i]), span(i))),
    );
    let by_pid = Windows::build(ranges.iter().map(|&i| (pid_key(n.global_tid[i]), span(i))));

    let api = &trace.api_calls;
    let api_calls: Vec<bool> = (0..api.spans.len())
        .map(|i| by_scope.contains(scope_key(api.global_tid[i]), api.spans.start_ns[i]))
        .collect();
    let mut nvtx: Vec<bool> = (0..n.spans.len())
        .map(|i| by_scope.contains(scope_key(n.global_tid[i]), n.spans.start_ns[i]))
        .collect();
    for &i in &ranges {
        nvtx[i] = true; // a chosen range is excluded even when it is empty
    }
    let mut osrt = vec![false; trace.osrt.spans.len()];
    for thread in &trace.threads {
        let key = scope_key(thread.global_tid);
        for i in thread.osrt.range.clone() {
            osrt[i] = by_scope.contains(key, trace.osrt.spans.start_ns[i]);
        }
    }

    // GPU ops: by the launching call's CPU start; without one, by their GPU start.
    let gpu_op = |api_call: u32, stream_pid: u32, gpu_start: i64| match api_call {
        NO_INDEX => by_pid.contains(i64::from(stream_pid), gpu_start),
        a => api_calls.get(a as usize).copied().unwrap_or(false),
    };
    let mut kernels = vec![false; trace.kernels.spans.len()];
    let mut memcpys = vec![false; trace.memcpys.spans.len()];
    let mut memsets = vec![false; trace.memsets.spans.len()];
    for stream in &trace.streams {
        let pid = stream.key.pid;
        for i in stream.kernels.range.clone() {
            let k = &trace.kernels;
            kernels[i] = gpu_op(k.api_call[i], pid, k.spans.start_ns[i]);
        }
        for i in stream.memcpys.range.clone() {
            let m = &trace.memcpys;
            memcpys[i] = gpu_op(m.api_call[i], pid, m.spans.start_ns[i]);
        }
        for i in stream.memsets.range.clone() {
            let m = &trace.memsets;
            memsets[i] = gpu_op(m.api_call[i], pid, m.spans.start_ns[i]);
        }
    }

    let mut shading: Vec<ExcludedInterval> = by_pid
        .0
        .iter()
        .flat_map(|(&pid, spans)| {
            spans
                .iter()
                .map(move |&(start_ns, end_ns)| ExcludedInterval {
                    pid: pid as u32,
                    start_ns,
                    end_ns,
                })
        })
        .collect();
    shading.sort_unstable_by_key(|e| (e.pid, e.start_ns));

    WarmupExclusion {
        excluded: Excluded {
            kernels,
            memcpys,
            memsets,
            api_calls,
            nvtx,
            osrt,
        },
        ranges,
        intervals: shading,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_warmup_spellings() {
        for name in [
            "warmup",
            "Warm-Up",
            "WARM_UP",
            "model_warmup_3",
            "[warmup] step",
        ] {
            assert!(is_warmup_name(name), "{name}");
        }
        for name in ["warm", "step_0", "warm up", "wup"] {
            assert!(!is_warmup_name(name), "{name}");
        }
    }

    /// One process (pid 7) with two threads, and pid 8: `warmup` [100, 200) pushed on thread 71.
    fn small_trace() -> Trace {
        use crate::trace::{Slice, StreamKey, StreamTrack, ThreadTrack};
        let g = |pid: i64, tid: i64| (pid << 24) | tid;
        let mut t = Trace::default();
        let warmup = t.strings.intern("warmup");
        let launch = t.strings.intern("cudaLaunchKernel");
        let k = t.strings.intern("k");
        t.nvtx.spans.push(100, 200, warmup);
        t.nvtx.style.push(NvtxStyle::PushPop);
        t.nvtx.global_tid.push(g(7, 71));
        for (start, tid, corr) in [
            (150, g(7, 71), 1),
            (250, g(7, 71), 2),
            (160, g(7, 72), 3),
            (150, g(8, 81), 1),
        ] {
            t.api_calls.spans.push(start, start + 5, launch);
            t.api_calls.global_tid.push(tid);
            t.api_calls.correlation_id.push(corr);
        }
        // Kernel 0: launched in warm-up (call 0), runs after it: excluded. Kernel 1: launched
        // after warm-up (call 1): kept. Kernel 2: launched during warm-up from another thread
        // of the process (call 2). Kernel 3: no launching call, runs inside warm-up: excluded by
        // its GPU start. Kernel 4: launched by pid 8 (call 3) during pid 7's warm-up: kept.
        let kernels = [(300, 0), (400, 1), (500, 2), (150, NO_INDEX), (600, 3)];
        for (start, api) in kernels {
            t.kernels.spans.push(start, start + 10, k);
            t.kernels.api_call.push(api);
        }
        let starts = t.kernels.spans.start_ns.clone();
        let ends = t.kernels.spans.end_ns.clone();
        t.streams.push(StreamTrack {
            key: StreamKey {
                device: 0,
                pid: 7,
                context: 1,
                stream: 7,
            },
            kernels: Slice::new(0..4, &starts, &ends),
            ..Default::default()
        });
        t.streams.push(StreamTrack {
            key: StreamKey {
                device: 0,
                pid: 8,
                context: 1,
                stream: 7,
            },
            kernels: Slice::new(4..5, &starts, &ends),
            ..Default::default()
        });
        t.threads.push(ThreadTrack {
            global_tid: g(7, 71),
            pid: 7,
            tid: 71,
            ..Default::default()
        });
        t
    }

    #[test]
    fn gpu_ops_follow_their_launch_not_their_gpu_time() {
        let t = small_trace();
        let rules = [ExclusionRule::WarmupNames];
        let p = exclude_warmup(&t, &rules, AttributionScope::Process);
        assert_eq!(p.ranges, vec![0]);
        assert_eq!(p.excluded.api_calls, vec![true, false, true, false]);
        assert_eq!(p.excluded.kernels, vec![true, false, true, true, false]);
        assert_eq!(p.excluded.nvtx, vec![true]);
        assert_eq!(
            p.intervals,
            vec![ExcludedInterval {
                pid: 7,
                start_ns: 100,
                end_ns: 200
            }]
        );
        // Same thread only: the other thread's launch (kernel 2) is kept.
        let th = exclude_warmup(&t, &rules, AttributionScope::Thread);
        assert_eq!(th.excluded.kernels, vec![true, false, false, true, false]);
        assert_eq!(th.excluded.api_calls, vec![true, false, false, false]);
    }

    #[test]
    fn first_iterations_count_outer_instances_per_process() {
        let mut t = Trace::default();
        let step = t.strings.intern("step_x");
        // pid 1: step [0,10) with a nested step [2,4), then [10,20), [20,30); pid 2: [5,15).
        for (s, e, pid) in [(0, 10, 1), (2, 4, 1), (10, 20, 1), (20, 30, 1), (5, 15, 2)] {
            t.nvtx.spans.push(s, e, step);
            t.nvtx.style.push(NvtxStyle::PushPop);
            t.nvtx.global_tid.push(pid << 24);
        }
        let rule = ExclusionRule::first_iterations("^step_", 2);
        let Ok(rule) = rule else {
            panic!("valid regex")
        };
        assert_eq!(matching_ranges(&t, &[rule]), vec![0, 2, 4]);
    }

    #[test]
    fn windows_are_half_open_and_per_key() {
        let w = Windows::build([(1, (10, 20)), (1, (15, 30)), (2, (100, 110))].into_iter());
        assert!(w.contains(1, 10) && w.contains(1, 29));
        assert!(!w.contains(1, 30) && !w.contains(1, 9));
        assert!(!w.contains(2, 20) && w.contains(2, 100));
        assert!(!w.contains(3, 15));
    }
}
