//! Aligning two runs for comparison: the time in each run that both timelines put at relative
//! zero — the session start, the first GPU operation, or the start of an NVTX range instance
//! chosen by name and index (`step` #5 in both). By default: the first instance after warm-up of
//! the most frequent repeated NVTX range the two runs share, else the first GPU operation.

use std::collections::HashMap;

use crate::analysis::warmup::is_warmup_name;
use crate::trace::{NvtxStyle, RangeKind, Trace};

/// What relative zero is in each run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Alignment {
    /// nsys's own zero (times count from it already).
    SessionStart,
    /// The start of the first kernel, copy or memset.
    FirstGpuOp,
    /// The start of the `index`-th (0-based, in start order) NVTX range named `name`.
    Nvtx { name: String, index: usize },
}

impl Alignment {
    pub fn describe(&self) -> String {
        match self {
            Alignment::SessionStart => "session start".to_string(),
            Alignment::FirstGpuOp => "first GPU operation".to_string(),
            Alignment::Nvtx { name, index } => format!("NVTX '{name}' #{index}"),
        }
    }
}

/// The start of the first GPU operation, if there is one.
pub fn first_gpu_op_ns(trace: &Trace) -> Option<i64> {
    [
        &trace.kernels.spans,
        &trace.memcpys.spans,
        &trace.memsets.spans,
    ]
    .into_iter()
    .filter_map(|s| s.start_ns.iter().copied().min())
    .min()
}

/// The name a range is aligned and counted by, `None` for ranges that are no candidates: marks,
/// and in a PyTorch trace everything but its annotations (operators and Python frames repeat by
/// the thousand). `ProfilerStep#N` is `ProfilerStep*`, as PyTorch merges the steps.
fn range_key(trace: &Trace, i: usize) -> Option<&str> {
    let n = &trace.nvtx;
    if n.style[i] == NvtxStyle::Mark {
        return None;
    }
    match n.kind_of(i) {
        RangeKind::Nvtx => Some(trace.str(n.spans.name[i])),
        RangeKind::Annotation => {
            let name = trace.str(n.spans.name[i]);
            Some(if name.starts_with("ProfilerStep#") {
                PROFILER_STEP
            } else {
                name
            })
        }
        _ => None,
    }
}

/// The name that stands for every `ProfilerStep#N` of a PyTorch trace.
pub const PROFILER_STEP: &str = "ProfilerStep*";

/// Starts of the NVTX ranges (not marks) named `name`, ascending.
pub fn nvtx_instances(trace: &Trace, name: &str) -> Vec<i64> {
    let n = &trace.nvtx;
    let mut starts: Vec<i64> = (0..n.spans.len())
        .filter(|&i| range_key(trace, i) == Some(name))
        .map(|i| n.spans.start_ns[i])
        .collect();
    starts.sort_unstable();
    starts
}

/// NVTX range names that occur more than once, with their counts, most frequent first (then
/// by name).
pub fn repeated_nvtx_names(trace: &Trace) -> Vec<(String, usize)> {
    let n = &trace.nvtx;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for i in 0..n.spans.len() {
        if let Some(key) = range_key(trace, i) {
            *counts.entry(key).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = counts
        .into_iter()
        .filter(|&(name, c)| c > 1 && !name.is_empty())
        .map(|(name, c)| (name.to_string(), c))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The time in `trace` that `alignment` puts at relative zero, or `None` when the trace lacks
/// it (no GPU operation, fewer instances of the range).
pub fn offset_ns(trace: &Trace, alignment: &Alignment) -> Option<i64> {
    match alignment {
        // An nsys export counts from its session start; a PyTorch trace from an epoch, so its own
        // first event stands for the start.
        Alignment::SessionStart => Some(trace.time_origin_ns()),
        Alignment::FirstGpuOp => first_gpu_op_ns(trace),
        Alignment::Nvtx { name, index } => nvtx_instances(trace, name).get(*index).copied(),
    }
}

/// The index of the first instance of `name` that starts after every warm-up range (a range
/// named warmup / warm-up / warm_up) has ended, or 0 when there is none.
fn first_after_warmup(trace: &Trace, name: &str) -> usize {
    let n = &trace.nvtx;
    let warmup_end = (0..n.spans.len())
        .filter(|&i| n.style[i] != NvtxStyle::Mark && is_warmup_name(trace.str(n.spans.name[i])))
        .map(|i| n.spans.end_ns[i])
        .max();
    let Some(end) = warmup_end else {
        return 0;
    };
    let starts = nvtx_instances(trace, name);
    starts.iter().position(|&s| s >= end).unwrap_or(0)
}

/// The default alignment of `new` on `base`: the most frequent repeated NVTX range of `base`
/// that `new` has too (not a warm-up range itself), at its first instance after warm-up in
/// `base` (the same index is used in both runs, when `new` has it); otherwise the first GPU
/// operation; otherwise the session start.
pub fn default_alignment(base: &Trace, new: &Trace) -> Alignment {
    for (name, _) in repeated_nvtx_names(base) {
        if is_warmup_name(&name) {
            continue;
        }
        let in_new = nvtx_instances(new, &name).len();
        if in_new == 0 {
            continue;
        }
        let index = first_after_warmup(base, &name);
        if index < in_new {
            return Alignment::Nvtx { name, index };
        }
    }
    if first_gpu_op_ns(base).is_some() && first_gpu_op_ns(new).is_some() {
        Alignment::FirstGpuOp
    } else {
        Alignment::SessionStart
    }
}

/// An alignment from the command line: `session`, `gpu`, `NAME` (its first instance) or
/// `NAME#N` (instance N, from 0).
pub fn parse_alignment(spec: &str) -> Result<Alignment, String> {
    match spec {
        "session" => Ok(Alignment::SessionStart),
        "gpu" => Ok(Alignment::FirstGpuOp),
        "" => Err("an empty alignment: use session, gpu, NAME or NAME#N".to_string()),
        _ => match spec.rsplit_once('#') {
            Some((name, n)) if !name.is_empty() => n
                .parse()
                .map(|index| Alignment::Nvtx {
                    name: name.to_string(),
                    index,
                })
                .map_err(|_| format!("'{spec}': the instance after # must be a number")),
            _ => Ok(Alignment::Nvtx {
                name: spec.to_string(),
                index: 0,
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_alignment_specs() {
        assert_eq!(parse_alignment("session"), Ok(Alignment::SessionStart));
        assert_eq!(parse_alignment("gpu"), Ok(Alignment::FirstGpuOp));
        assert_eq!(
            parse_alignment("step#5"),
            Ok(Alignment::Nvtx {
                name: "step".into(),
                index: 5
            })
        );
        assert_eq!(
            parse_alignment("layer_[1,2]"),
            Ok(Alignment::Nvtx {
                name: "layer_[1,2]".into(),
                index: 0
            })
        );
        assert!(parse_alignment("step#x").is_err());
        assert!(parse_alignment("").is_err());
    }
}
