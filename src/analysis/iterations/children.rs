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

use super::Iteration;
use super::outliers;
use crate::analysis::align;
use crate::analysis::reports::nvtx_tree::RangeForest;
use crate::trace::Trace;

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
    let ranges: Vec<Vec<(String, i64, i64)>> = positions
        .iter()
        .map(|&p| nested_ranges(trace, forest, p))
        .collect();
    if ranges.iter().any(|r| !r.is_empty()) {
        return tabulate(ChildKind::Ranges, iterations, ranges);
    }
    let k = &trace.kernels;
    let launched: Vec<Vec<(String, i64, i64)>> = kernels
        .iter()
        .map(|list| {
            list.iter()
                .map(|&i| {
                    let i = i as usize;
                    let name = trace.str(k.short_name.get(i).copied().unwrap_or(k.spans.name[i]));
                    (name.to_string(), k.spans.start_ns[i], k.spans.end_ns[i])
                })
                .collect()
        })
        .collect();
    tabulate(ChildKind::Kernels, iterations, launched)
}

/// The ranges nested in position `p` on its thread that could be iterations themselves (NVTX,
/// annotations): (text, start, end).
fn nested_ranges(trace: &Trace, forest: &RangeForest, p: usize) -> Vec<(String, i64, i64)> {
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
        if let Some(key) = align::range_key(trace, i) {
            let name = if key == align::PROFILER_STEP {
                trace.str(trace.nvtx.spans.name[i])
            } else {
                key
            };
            out.push((name.to_string(), start, forest.end_ns[q]));
        }
    }
    out
}

/// Names that number the iterations themselves (`step_3` inside `ProfilerStep#5` only) would
/// each fill one cell of their own column: a name found in one iteration only, whose family
/// ([`align::family_of`]) is found in several, is replaced by its family (`step_*`). Names found
/// in every iteration (`layer_3_forward`) keep their own column.
fn merge_numbered(mut per_iteration: Vec<Vec<(String, i64, i64)>>) -> Vec<Vec<(String, i64, i64)>> {
    let mut iterations_of: HashMap<String, usize> = HashMap::new();
    let mut family_iterations: HashMap<String, usize> = HashMap::new();
    for list in &per_iteration {
        let mut names: Vec<&str> = list.iter().map(|(n, _, _)| n.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut families: Vec<String> = names
            .iter()
            .map(|n| align::family_of(n).into_owned())
            .collect();
        families.sort_unstable();
        families.dedup();
        for n in names {
            *iterations_of.entry(n.to_string()).or_default() += 1;
        }
        for f in families {
            *family_iterations.entry(f).or_default() += 1;
        }
    }
    for list in &mut per_iteration {
        for (name, _, _) in list.iter_mut() {
            let family = align::family_of(name).into_owned();
            if iterations_of.get(name.as_str()).copied().unwrap_or(0) <= 1
                && family_iterations.get(&family).copied().unwrap_or(0) > 1
            {
                *name = family;
            }
        }
    }
    per_iteration
}

/// Cells from each iteration's (child name, start, end) list.
fn tabulate(
    kind: ChildKind,
    iterations: &[Iteration],
    per_iteration: Vec<Vec<(String, i64, i64)>>,
) -> Children {
    let per_iteration = merge_numbered(per_iteration);
    // Column id by name; total time; summed offset from the iteration start and its count.
    let mut ids: HashMap<String, usize> = HashMap::new();
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
    let mut names: Vec<(String, usize)> = ids.into_iter().collect();
    names.sort_by(|(a, x), (b, y)| totals[*y].0.cmp(&totals[*x].0).then_with(|| a.cmp(b)));
    names.truncate(MAX_COLUMNS);
    if kind == ChildKind::Ranges {
        let mean_offset = |id: usize| totals[id].1 / i128::from(totals[id].2.max(1));
        names.sort_by(|(a, x), (b, y)| {
            mean_offset(*x)
                .cmp(&mean_offset(*y))
                .then(totals[*y].0.cmp(&totals[*x].0))
                .then_with(|| a.cmp(b))
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
        columns: names.into_iter().map(|(name, _)| name).collect(),
        cells: grid,
        thresholds,
    }
}
