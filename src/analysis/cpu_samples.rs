//! Aggregations of CPU samples, shared by the `cpu_samples_sum` report, folded-stack export, the
//! window's CPU samples tab and the tests: choose the samples of a time window and a set of
//! threads, then build a [`Profile`] — a bottom-up table (self and total samples per function)
//! and a top-down call tree (which is also the flame graph) — or folded stacks.
//!
//! Everything is computed per distinct stack first (samples are counted by stack id), so a
//! selection of a million samples costs one pass over their stack ids plus work proportional to
//! the distinct stacks.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::trace::{Frame, NO_STACK, StackId, Trace};

/// The samples of the threads `threads` (indices into `trace.threads`, `None` for all) taken in
/// `[t0, t1)`, as indices into `trace.cpu_samples`, by thread then time.
pub fn samples_in(trace: &Trace, t0: i64, t1: i64, threads: Option<&[usize]>) -> Vec<u32> {
    let mut out = Vec::new();
    let mut add = |thread: usize| {
        if let Some(t) = trace.threads.get(thread) {
            let r = trace.cpu_samples.in_window(t.samples.clone(), t0, t1);
            out.extend(r.map(|i| i as u32));
        }
    };
    match threads {
        Some(list) => list.iter().for_each(|&t| add(t)),
        None => (0..trace.threads.len()).for_each(add),
    }
    out
}

/// How many of `samples` have each stack: (stack, count) by stack id, and the count of samples
/// without a stack.
pub fn count_stacks(trace: &Trace, samples: &[u32]) -> (Vec<(StackId, u64)>, u64) {
    let stacks = &trace.cpu_samples.stack;
    let n = trace.stacks.len();
    let counts = samples
        .par_chunks(1 << 16)
        .fold(
            || vec![0u64; n + 1],
            |mut acc, chunk| {
                for &i in chunk {
                    let s = stacks.get(i as usize).copied().unwrap_or(NO_STACK);
                    let slot = if (s as usize) < n { s as usize } else { n };
                    acc[slot] += 1;
                }
                acc
            },
        )
        .reduce(
            || vec![0u64; n + 1],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    let without = counts[n];
    let per_stack = counts[..n]
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(s, &c)| (s as StackId, c))
        .collect();
    (per_stack, without)
}

/// One function of a bottom-up table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionSamples {
    pub frame: Frame,
    /// Samples whose innermost frame is this function.
    pub self_samples: u64,
    /// Samples with this function in any frame (once per sample, however deep it recurses).
    pub total_samples: u64,
}

/// A node of the top-down call tree; node 0 is the root (no frame), its children the outermost
/// frames.
#[derive(Debug, Clone)]
pub struct CallNode {
    pub frame: Option<Frame>,
    pub parent: u32,
    /// Children, by total samples descending then name.
    pub children: Vec<u32>,
    /// Samples whose stack passes through this node.
    pub total_samples: u64,
    /// Samples whose stack ends here.
    pub self_samples: u64,
    /// Depth below the root (the root is 0).
    pub depth: u16,
}

/// The samples of a selection, aggregated.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// Samples that have a call stack (the 100 % of the percentages).
    pub samples: u64,
    /// Samples of the selection with no call stack (left out of the tables).
    pub without_stack: u64,
    /// Per (function, module), by self desc, total desc, function, module.
    pub bottom_up: Vec<FunctionSamples>,
    /// Top-down call tree; `tree[0]` is the root.
    pub tree: Vec<CallNode>,
}

impl Profile {
    /// Share of the samples, in percent.
    pub fn percent(&self, n: u64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            100.0 * n as f64 / self.samples as f64
        }
    }
}

/// Bottom-up table and top-down tree of `samples`.
pub fn profile(trace: &Trace, samples: &[u32]) -> Profile {
    let (stacks, without_stack) = count_stacks(trace, samples);
    let total: u64 = stacks.iter().map(|s| s.1).sum();

    let mut by_frame: HashMap<Frame, (u64, u64)> = HashMap::new();
    let mut seen: Vec<Frame> = Vec::new();
    for &(s, c) in &stacks {
        let frames = trace.stacks.frames(s);
        if let Some(&leaf) = frames.first() {
            by_frame.entry(leaf).or_default().0 += c;
        }
        seen.clear();
        for &f in frames {
            if !seen.contains(&f) {
                seen.push(f);
                by_frame.entry(f).or_default().1 += c;
            }
        }
    }
    let mut bottom_up: Vec<FunctionSamples> = by_frame
        .into_iter()
        .map(|(frame, (self_samples, total_samples))| FunctionSamples {
            frame,
            self_samples,
            total_samples,
        })
        .collect();
    bottom_up.sort_by(|a, b| {
        b.self_samples
            .cmp(&a.self_samples)
            .then(b.total_samples.cmp(&a.total_samples))
            .then_with(|| trace.str(a.frame.function).cmp(trace.str(b.frame.function)))
            .then_with(|| trace.str(a.frame.module).cmp(trace.str(b.frame.module)))
    });

    Profile {
        samples: total,
        without_stack,
        bottom_up,
        tree: call_tree(trace, &stacks),
    }
}

/// The top-down tree of counted stacks.
fn call_tree(trace: &Trace, stacks: &[(StackId, u64)]) -> Vec<CallNode> {
    let mut tree = vec![CallNode {
        frame: None,
        parent: 0,
        children: Vec::new(),
        total_samples: 0,
        self_samples: 0,
        depth: 0,
    }];
    let mut child_of: HashMap<(u32, Frame), u32> = HashMap::new();
    for &(s, c) in stacks {
        let mut node = 0u32;
        tree[0].total_samples += c;
        for &f in trace.stacks.frames(s).iter().rev() {
            node = match child_of.get(&(node, f)) {
                Some(&n) => n,
                None => {
                    let n = tree.len() as u32;
                    let depth = tree[node as usize].depth.saturating_add(1);
                    tree.push(CallNode {
                        frame: Some(f),
                        parent: node,
                        children: Vec::new(),
                        total_samples: 0,
                        self_samples: 0,
                        depth,
                    });
                    tree[node as usize].children.push(n);
                    child_of.insert((node, f), n);
                    n
                }
            };
            tree[node as usize].total_samples += c;
        }
        tree[node as usize].self_samples += c;
    }
    let name = |n: u32| tree[n as usize].frame.map_or("", |f| trace.str(f.function));
    let orders: Vec<Vec<u32>> = tree
        .iter()
        .map(|node| {
            let mut ch = node.children.clone();
            ch.sort_by(|&a, &b| {
                tree[b as usize]
                    .total_samples
                    .cmp(&tree[a as usize].total_samples)
                    .then_with(|| name(a).cmp(name(b)))
            });
            ch
        })
        .collect();
    for (node, ch) in tree.iter_mut().zip(orders) {
        node.children = ch;
    }
    tree
}

/// Folded stacks of `samples`: `outermost;…;innermost` function names and the number of samples
/// with that stack, by stack text — the format flamegraph.pl, inferno and speedscope read.
/// Samples without a stack are left out.
pub fn folded(trace: &Trace, samples: &[u32]) -> Vec<(String, u64)> {
    let (stacks, _) = count_stacks(trace, samples);
    let mut by_text: HashMap<String, u64> = HashMap::new();
    for (s, c) in stacks {
        let names: Vec<String> = trace
            .stacks
            .frames(s)
            .iter()
            .rev()
            .map(|f| folded_name(trace.str(f.function)))
            .collect();
        *by_text.entry(names.join(";")).or_default() += c;
    }
    let mut out: Vec<(String, u64)> = by_text.into_iter().collect();
    out.sort_unstable();
    out
}

/// A function name as one field of a folded line: `;` separates frames and a line ends with
/// ` COUNT`, so a `;` in a name becomes `:`, a line break a space, and an empty name `[unknown]`.
fn folded_name(name: &str) -> String {
    if name.is_empty() {
        "[unknown]".to_string()
    } else {
        name.replace(';', ":").replace(['\n', '\r'], " ")
    }
}

/// The folded lines as text, one `stack count` per line.
pub fn folded_text(lines: &[(String, u64)]) -> String {
    let mut out = String::new();
    for (stack, n) in lines {
        out.push_str(stack);
        out.push(' ');
        out.push_str(&n.to_string());
        out.push('\n');
    }
    out
}

/// The functions with the most self samples on `thread` in `[t0, t1)`: (frame, self samples),
/// at most `n`, with the thread's sample count in the window.
pub fn top_functions(
    trace: &Trace,
    thread: usize,
    t0: i64,
    t1: i64,
    n: usize,
) -> (Vec<(Frame, u64)>, u64) {
    let samples = samples_in(trace, t0, t1, Some(&[thread]));
    let p = profile(trace, &samples);
    let top = p
        .bottom_up
        .iter()
        .filter(|f| f.self_samples > 0)
        .take(n)
        .map(|f| (f.frame, f.self_samples))
        .collect();
    (top, samples.len() as u64)
}

/// The samples of `samples` that `matches` accepts by their stack's frames (innermost first),
/// deciding once per distinct stack; samples without a stack are never kept.
fn samples_whose_stack(
    trace: &Trace,
    samples: &[u32],
    matches: impl Fn(&[Frame]) -> bool,
) -> Vec<u32> {
    const UNKNOWN: u8 = 0;
    const YES: u8 = 1;
    const NO: u8 = 2;
    let mut verdict = vec![UNKNOWN; trace.stacks.len()];
    let stacks = &trace.cpu_samples.stack;
    samples
        .iter()
        .copied()
        .filter(|&i| {
            let s = stacks.get(i as usize).copied().unwrap_or(NO_STACK);
            let Some(v) = verdict.get_mut(s as usize) else {
                return false;
            };
            if *v == UNKNOWN {
                *v = if matches(trace.stacks.frames(s)) {
                    YES
                } else {
                    NO
                };
            }
            *v == YES
        })
        .collect()
}

/// The samples of `samples` with `frame` anywhere in their stack (a row of the bottom-up
/// table), in the order given.
pub fn samples_with_frame(trace: &Trace, samples: &[u32], frame: Frame) -> Vec<u32> {
    samples_whose_stack(trace, samples, |frames| frames.contains(&frame))
}

/// The samples of `samples` whose stack passes through the top-down node `path` (its frames
/// from the outermost down, as [`Profile::node_path`] gives them), in the order given.
pub fn samples_through(trace: &Trace, samples: &[u32], path: &[Frame]) -> Vec<u32> {
    samples_whose_stack(trace, samples, |frames| {
        frames.len() >= path.len() && frames.iter().rev().zip(path).all(|(a, b)| a == b)
    })
}

impl Profile {
    /// The frames from the outermost down to `node` of [`Profile::tree`] (empty for the root).
    pub fn node_path(&self, node: u32) -> Vec<Frame> {
        let mut path = Vec::new();
        let mut n = node as usize;
        while let Some(c) = self.tree.get(n) {
            match c.frame {
                Some(f) => path.push(f),
                None => break,
            }
            n = c.parent as usize;
        }
        path.reverse();
        path
    }

    /// The node of [`Profile::tree`] reached by `path` from the root, if the tree has it.
    pub fn node_at(&self, path: &[Frame]) -> Option<u32> {
        let mut node = 0u32;
        for f in path {
            node = *self
                .tree
                .get(node as usize)?
                .children
                .iter()
                .find(|&&c| self.tree.get(c as usize).and_then(|n| n.frame) == Some(*f))?;
        }
        Some(node)
    }
}
