//! What each iteration holds, for the iterations heatmap: one column per child and one cell per
//! (iteration, child) with its duration.
//!
//! Children are the ranges nested in the iteration on its thread (NVTX ranges, or a PyTorch
//! trace's annotations; operators and Python frames are too many to read), every depth, grouped
//! by their text: `forward_pass`, `layer_3_forward`, `optimizer_step` — so a slow layer or expert
//! shows as one bright column (a name found in one iteration only, `step_3` inside
//! `ProfilerStep#5`, by its family `step_*`). A cell's duration is the sum of that child's instances in the
//! iteration. A family whose iterations hold no such range gets its top kernels instead: the
//! kernels it launched grouped by name, a cell being their summed GPU time. At most
//! [`MAX_COLUMNS`] columns, those with the most time over all iterations; ranges in the order
//! they run (mean offset from the iteration's start), kernels by time. A cell is an outlier by
//! [`super::outliers`] against the same column's cells of the other iterations that are not
//! warm-up.

use std::collections::HashMap;
use std::sync::Arc;

use super::Iteration;
use super::outliers;
use crate::analysis::align;
use crate::analysis::reports::nvtx_tree::RangeForest;
use crate::trace::{StrId, Trace};

/// A child instance: its text (an id in [`Texts`]), start and end.
type Child = (u32, i64, i64);

/// The texts children are grouped by — their names and the families of those — each held once
/// (shared with the trace's string table) and hashed once: an instance carries a small id, so a
/// name of megabytes costs neither a copy nor a hash per instance.
#[derive(Default)]
struct Texts {
    texts: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, u32>,
    of_name: HashMap<StrId, u32>,
}

impl Texts {
    fn intern(&mut self, text: Arc<str>) -> u32 {
        if let Some(&id) = self.ids.get(&text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(Arc::clone(&text));
        self.ids.insert(text, id);
        id
    }

    /// The id of the trace's string `name`.
    fn name(&mut self, trace: &Trace, name: StrId) -> u32 {
        if let Some(&id) = self.of_name.get(&name) {
            return id;
        }
        let id = self.intern(trace.shared_str(name));
        self.of_name.insert(name, id);
        id
    }

    fn get(&self, id: u32) -> &str {
        self.texts.get(id as usize).map_or("", |t| t)
    }
}

/// The most columns a heatmap gets.
pub const MAX_COLUMNS: usize = 24;

/// What the columns are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChildKind {
    /// Ranges nested in the iterations, by text.
    #[default]
    Ranges,
    /// Kernels launched in the iterations, by name.
    Kernels,
}

/// One child in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildCell {
    /// Summed duration of its instances (GPU time for kernels).
    pub duration_ns: i64,
    /// Its instances in the iteration.
    pub count: usize,
    /// First start and last end of those instances: what a click zooms to.
    pub start_ns: i64,
    pub end_ns: i64,
    pub outlier: bool,
}

/// The heatmap's columns and cells.
#[derive(Debug, Clone, Default)]
pub struct Children {
    pub kind: ChildKind,
    /// Column names.
    pub columns: Vec<String>,
    /// `cells[iteration][column]`, `None` where the iteration has no such child.
    pub cells: Vec<Vec<Option<ChildCell>>>,
    /// Each column's outlier threshold.
    pub thresholds: Vec<Option<i64>>,
}

/// Children of the iterations at forest positions `positions`; `kernels[k]` the kernels (indices
/// into `trace.kernels`) iteration `k` launched.
pub fn of(
    trace: &Trace,
    forest: &RangeForest,
    positions: &[usize],
    iterations: &[Iteration],
    kernels: &[Vec<u32>],
) -> Children {
    let mut texts = Texts::default();
    let ranges: Vec<Vec<Child>> = positions
        .iter()
        .map(|&p| nested_ranges(trace, forest, p, &mut texts))
        .collect();
    if ranges.iter().any(|r| !r.is_empty()) {
        return tabulate(ChildKind::Ranges, iterations, ranges, texts);
    }
    let k = &trace.kernels;
    let launched: Vec<Vec<Child>> = kernels
        .iter()
        .map(|list| {
            list.iter()
                .map(|&i| {
                    let i = i as usize;
                    let name = k.short_name.get(i).copied().unwrap_or(k.spans.name[i]);
                    (
                        texts.name(trace, name),
                        k.spans.start_ns[i],
                        k.spans.end_ns[i],
                    )
                })
                .collect()
        })
        .collect();
    tabulate(ChildKind::Kernels, iterations, launched, texts)
}

/// The ranges nested in position `p` on its thread that could be iterations themselves (NVTX,
/// annotations): (text, start, end).
fn nested_ranges(trace: &Trace, forest: &RangeForest, p: usize, texts: &mut Texts) -> Vec<Child> {
    let t = forest.threads.partition_point(|(_, r)| r.end <= p);
    let Some((_, thread)) = forest.threads.get(t) else {
        return Vec::new();
    };
    let end = forest.end_ns[p];
    let mut out = Vec::new();
    for q in p + 1..thread.end {
        let start = forest.start_ns(trace, q);
        if start >= end {
            break;
        }
        let i = forest.nvtx_index(q);
        if forest.end_ns[q] > end {
            continue; // overlaps the iteration's end: not inside it
        }
        // A range with a key is named by its own text (a `ProfilerStep#N` too, not by the
        // key `ProfilerStep*` that stands for them all).
        if align::range_key(trace, i).is_some() {
            let name = texts.name(trace, trace.nvtx.spans.name[i]);
            out.push((name, start, forest.end_ns[q]));
        }
    }
    out
}

/// Names that number the iterations themselves (`step_3` inside `ProfilerStep#5` only) would
/// each fill one cell of their own column: a name found in one iteration only, whose family
/// ([`align::family_of`]) is found in several, is replaced by its family (`step_*`). Names found
/// in every iteration (`layer_3_forward`) keep their own column.
fn merge_numbered(mut per_iteration: Vec<Vec<Child>>, texts: &mut Texts) -> Vec<Vec<Child>> {
    // Each distinct name's family, worked out once.
    let mut family: HashMap<u32, u32> = HashMap::new();
    let mut iterations_of: HashMap<u32, usize> = HashMap::new();
    let mut family_iterations: HashMap<u32, usize> = HashMap::new();
    for list in &per_iteration {
        let mut names: Vec<u32> = list.iter().map(|&(n, _, _)| n).collect();
        names.sort_unstable();
        names.dedup();
        let mut families: Vec<u32> = names
            .iter()
            .map(|&n| {
                if let Some(&f) = family.get(&n) {
                    return f;
                }
                let f = match align::family_of(texts.get(n)) {
                    std::borrow::Cow::Borrowed(_) => n,
                    std::borrow::Cow::Owned(f) => texts.intern(f.into()),
                };
                family.insert(n, f);
                f
            })
            .collect();
        families.sort_unstable();
        families.dedup();
        for n in names {
            *iterations_of.entry(n).or_default() += 1;
        }
        for f in families {
            *family_iterations.entry(f).or_default() += 1;
        }
    }
    for list in &mut per_iteration {
        for (name, _, _) in list.iter_mut() {
            let Some(&f) = family.get(name) else {
                continue;
            };
            if iterations_of.get(name).copied().unwrap_or(0) <= 1
                && family_iterations.get(&f).copied().unwrap_or(0) > 1
            {
                *name = f;
            }
        }
    }
    per_iteration
}

/// Cells from each iteration's (child name, start, end) list.
fn tabulate(
    kind: ChildKind,
    iterations: &[Iteration],
    per_iteration: Vec<Vec<Child>>,
    mut texts: Texts,
) -> Children {
    let per_iteration = merge_numbered(per_iteration, &mut texts);
    // Column id by name; total time; summed offset from the iteration start and its count.
    let mut ids: HashMap<u32, usize> = HashMap::new();
    let mut totals: Vec<(i64, i128, i64)> = Vec::new();
    let mut cells: Vec<HashMap<usize, ChildCell>> = Vec::with_capacity(per_iteration.len());
    for (it, list) in iterations.iter().zip(per_iteration) {
        let mut row: HashMap<usize, ChildCell> = HashMap::new();
        for (name, s, e) in list {
            let next = ids.len();
            let id = *ids.entry(name).or_insert(next);
            if id == totals.len() {
                totals.push((0, 0, 0));
            }
            totals[id].0 += e - s;
            let cell = row.entry(id).or_insert(ChildCell {
                duration_ns: 0,
                count: 0,
                start_ns: s,
                end_ns: e,
                outlier: false,
            });
            if cell.count == 0 {
                totals[id].1 += i128::from(s - it.start_ns);
                totals[id].2 += 1;
            }
            cell.duration_ns += e - s;
            cell.count += 1;
            cell.start_ns = cell.start_ns.min(s);
            cell.end_ns = cell.end_ns.max(e);
        }
        cells.push(row);
    }
    let mut names: Vec<(u32, usize)> = ids.into_iter().collect();
    let text = |t: &u32| texts.get(*t);
    names.sort_by(|(a, x), (b, y)| {
        totals[*y]
            .0
            .cmp(&totals[*x].0)
            .then_with(|| text(a).cmp(text(b)))
    });
    names.truncate(MAX_COLUMNS);
    if kind == ChildKind::Ranges {
        let mean_offset = |id: usize| totals[id].1 / i128::from(totals[id].2.max(1));
        names.sort_by(|(a, x), (b, y)| {
            mean_offset(*x)
                .cmp(&mean_offset(*y))
                .then(totals[*y].0.cmp(&totals[*x].0))
                .then_with(|| text(a).cmp(text(b)))
        });
    }
    let mut grid: Vec<Vec<Option<ChildCell>>> = cells
        .iter()
        .map(|row| names.iter().map(|(_, id)| row.get(id).copied()).collect())
        .collect();
    let thresholds: Vec<Option<i64>> = (0..names.len())
        .map(|c| {
            outliers::threshold_ns(
                grid.iter()
                    .zip(iterations)
                    .filter(|(_, it)| !it.warmup)
                    .filter_map(|(row, _)| row[c].map(|cell| cell.duration_ns)),
            )
        })
        .collect();
    for (row, it) in grid.iter_mut().zip(iterations) {
        for (cell, threshold) in row.iter_mut().zip(&thresholds) {
            if let (Some(cell), Some(t)) = (cell, threshold) {
                cell.outlier = !it.warmup && cell.duration_ns > *t;
            }
        }
    }
    Children {
        kind,
        columns: names
            .into_iter()
            .map(|(name, _)| texts.get(name).to_string())
            .collect(),
        cells: grid,
        thresholds,
    }
}
