//! Aligning two runs for comparison: the time in each run that both timelines put at relative
//! zero — the session start, the first GPU operation, or the start of an NVTX range instance
//! chosen by name and index (`step` #5 in both). By default: the first instance after warm-up of
//! the outermost repeated NVTX range the two runs share (an iteration), else the first GPU
//! operation.
//!
//! Ranges are counted by name or by **family**: the names that differ only in their numbers
//! (`token_0`, `token_1`, … are the family `token_*`; `ProfilerStep#N` is `ProfilerStep*`), so a
//! loop that numbers its iterations still repeats. A family name stands for its instances
//! wherever a range name is taken (`--align 'token_*#1'`).

use std::borrow::Cow;
use std::collections::HashMap;

use regex::Regex;

use crate::analysis::warmup::is_warmup_name;
use crate::trace::{NvtxStyle, RangeKind, StrId, Trace};

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
pub fn range_key(trace: &Trace, i: usize) -> Option<&str> {
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

/// The family of a range name: every run of ASCII digits replaced by `*` (`token_12` →
/// `token_*`, `layer_3_ffn` → `layer_*_ffn`); a name without digits is its own family.
pub fn family_of(name: &str) -> Cow<'_, str> {
    if !name.bytes().any(|b| b.is_ascii_digit()) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('*');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    Cow::Owned(out)
}

/// Does the range key `key` (see [`range_key`]) answer to `name`: the same name, or `name` is
/// the family of `key`?
fn answers_to(key: &str, name: &str) -> bool {
    key == name || (name.contains('*') && family_of(key) == name)
}

/// A regex matching the raw names of the ranges `name` stands for (a name or a family; the
/// `ProfilerStep#N` of `ProfilerStep*`), anchored; for counting steps by name.
pub fn instance_regex(name: &str) -> Option<Regex> {
    let family = if name == PROFILER_STEP {
        "ProfilerStep#[0-9]+".to_string()
    } else {
        name.split('*')
            .map(regex::escape)
            .collect::<Vec<_>>()
            .join("[0-9]+")
    };
    Regex::new(&format!("^(?:{}|{family})$", regex::escape(name))).ok()
}

/// Starts of the NVTX ranges (not marks) named `name` (or of the family `name`), ascending.
pub fn nvtx_instances(trace: &Trace, name: &str) -> Vec<i64> {
    let n = &trace.nvtx;
    let mut starts: Vec<i64> = (0..n.spans.len())
        .filter(|&i| range_key(trace, i).is_some_and(|k| answers_to(k, name)))
        .map(|i| n.spans.start_ns[i])
        .collect();
    starts.sort_unstable();
    starts
}

/// NVTX range names and families (of two names or more) that occur more than once, with their
/// counts, most frequent first (then by name).
pub fn repeated_nvtx_names(trace: &Trace) -> Vec<(String, usize)> {
    let n = &trace.nvtx;
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for i in 0..n.spans.len() {
        if let Some(key) = range_key(trace, i) {
            *counts.entry(key).or_default() += 1;
        }
    }
    // Families: instances and distinct names.
    let mut families: HashMap<String, (usize, usize)> = HashMap::new();
    for (&key, &c) in &counts {
        if let Cow::Owned(f) = family_of(key) {
            let e = families.entry(f).or_default();
            e.0 += c;
            e.1 += 1;
        }
    }
    let mut v: Vec<(String, usize)> = counts
        .into_iter()
        .filter(|&(name, c)| c > 1 && !name.is_empty())
        .map(|(name, c)| (name.to_string(), c))
        .collect();
    v.extend(
        families
            .into_iter()
            .filter(|&(_, (c, names))| c > 1 && names > 1)
            .map(|(f, (c, _))| (f, c)),
    );
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The repeated range families of `trace` (not warm-up ranges), outermost first: those whose
/// instances lie inside an instance of another repeated family least often (an iteration holds
/// its phases, not the other way round), then those covering the most time, then the most
/// frequent, then by name. Each with its instance count.
pub fn outermost_repeated(trace: &Trace) -> Vec<(String, usize)> {
    let n = &trace.nvtx;
    // Every candidate instance: (start, end, family id).
    let mut ids: HashMap<String, usize> = HashMap::new();
    // Each distinct key's family id (`None`: not a candidate), worked out once: a long name is
    // not copied, hashed and lower-cased per instance. A key is the range's text, or
    // `ProfilerStep*` standing for it.
    let mut family_of_key: HashMap<(StrId, bool), Option<usize>> = HashMap::new();
    let mut instances: Vec<(i64, i64, usize)> = Vec::new();
    for i in 0..n.spans.len() {
        let Some(key) = range_key(trace, i) else {
            continue;
        };
        let id = *family_of_key
            .entry((n.spans.name[i], key == PROFILER_STEP))
            .or_insert_with(|| {
                if key.is_empty() || is_warmup_name(key) {
                    return None;
                }
                let next = ids.len();
                Some(*ids.entry(family_of(key).into_owned()).or_insert(next))
            });
        let Some(id) = id else {
            continue;
        };
        instances.push((n.spans.start_ns[i], n.spans.end_ns[i], id));
    }
    let families = ids.len();
    let mut count = vec![0usize; families];
    let mut covered = vec![0i64; families];
    for &(s, e, f) in &instances {
        count[f] += 1;
        covered[f] += (e - s).max(0);
    }
    let repeated: Vec<bool> = count.iter().map(|&c| c > 1).collect();
    instances.retain(|&(_, _, f)| repeated[f]);
    // Sweep by start (the longer first on ties), keeping the latest end of the two families
    // that reach furthest so far: an instance lies inside another family's instance when one of
    // those (not its own family) ends at or after it.
    instances.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut contained = vec![0usize; families];
    let mut furthest: Vec<(i64, usize)> = Vec::with_capacity(3);
    for &(_, e, f) in &instances {
        if furthest.iter().any(|&(end, g)| g != f && end >= e) {
            contained[f] += 1;
        }
        match furthest.iter_mut().find(|(_, g)| *g == f) {
            Some(x) => x.0 = x.0.max(e),
            None => furthest.push((e, f)),
        }
        furthest.sort_by_key(|x| std::cmp::Reverse(x.0));
        furthest.truncate(2);
    }
    let mut names: Vec<(String, usize)> = ids.into_iter().collect();
    names.retain(|&(_, f)| repeated[f]);
    names.sort_by(|(a, f), (b, g)| {
        // Contained share, compared without division: c_f / n_f vs c_g / n_g.
        (contained[*f] * count[*g])
            .cmp(&(contained[*g] * count[*f]))
            .then(covered[*g].cmp(&covered[*f]))
            .then(count[*g].cmp(&count[*f]))
            .then_with(|| a.cmp(b))
    });
    names
        .into_iter()
        .map(|(name, f)| (name, count[f]))
        .collect()
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

/// The default alignment of `new` on `base`: the outermost repeated NVTX range (or family) of
/// `base` that `new` has too ([`outermost_repeated`]: an iteration, not one of its phases), at
/// its first instance after warm-up in `base` (the same index is used in both runs, when `new`
/// has it); otherwise the first GPU operation; otherwise the session start.
pub fn default_alignment(base: &Trace, new: &Trace) -> Alignment {
    for (name, _) in outermost_repeated(base) {
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

    #[test]
    fn families_replace_numbers_and_their_regex_matches_the_members() {
        assert_eq!(family_of("token_12"), "token_*");
        assert_eq!(family_of("layer_3_ffn7"), "layer_*_ffn*");
        assert_eq!(family_of("forward"), "forward");
        assert!(answers_to("token_3", "token_*"));
        assert!(!answers_to("token_3", "token_4"));
        let re = instance_regex("token_*").unwrap();
        assert!(re.is_match("token_0") && re.is_match("token_*") && !re.is_match("token_"));
        assert!(!re.is_match("xtoken_1"));
        let steps = instance_regex(PROFILER_STEP).unwrap();
        assert!(steps.is_match("ProfilerStep#12") && !steps.is_match("ProfilerStep#"));
        assert!(instance_regex("a.b").unwrap().is_match("a.b"));
        assert!(!instance_regex("a.b").unwrap().is_match("axb"));
    }
}
