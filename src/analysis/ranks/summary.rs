//! Per-rank summaries of a run: what the window draws for a collapsed rank — the union of its
//! GPU work on all its devices and its collectives, each tied to the instance it belongs to.
//! They are a small fraction of the trace (one interval per busy stretch), the part a run of
//! many ranks would build first and keep for every rank.

use super::collectives::Collectives;
use crate::analysis::filter::Filter;
use crate::analysis::gaps::{MeasureOver, measured_time};
use crate::analysis::intervals::{self, Interval};
use crate::trace::Trace;

/// The union of a trace's GPU operations (kernels, copies, sets, graph executions) on all its
/// devices, on its own clock.
pub fn gpu_busy(trace: &Trace) -> Vec<Interval> {
    let filter = Filter::all();
    let mut busy = Vec::new();
    for device in trace.devices() {
        busy.extend(
            measured_time(trace, &filter, device, None, MeasureOver::ActiveSpan).busy(|_| true),
        );
    }
    intervals::union(busy)
}

/// For each rank (index) and each of its collectives (in `per_rank` order), the instance it
/// belongs to (index into `instances`); `None` for one no other rank shares.
pub fn instance_of_occurrences(c: &Collectives) -> Vec<Vec<Option<usize>>> {
    let mut out: Vec<Vec<Option<usize>>> = c
        .per_rank
        .iter()
        .map(|m| vec![None; m.list.len()])
        .collect();
    for (i, inst) in c.instances.iter().enumerate() {
        for (r, member) in inst.members.iter().enumerate() {
            if let Some(slot) = member.and_then(|j| out.get_mut(r)?.get_mut(j)) {
                *slot = Some(i);
            }
        }
    }
    out
}

/// The pixel-resolution view of sorted, disjoint intervals: those overlapping `[from, to)`
/// merged where less than `min_gap_ns` apart (one block per pixel column at most).
pub fn visible_blocks(busy: &[Interval], from: i64, to: i64, min_gap_ns: i64) -> Vec<Interval> {
    let first = busy.partition_point(|&(_, e)| e <= from);
    let mut out: Vec<Interval> = Vec::new();
    for &(s, e) in &busy[first..] {
        if s >= to {
            break;
        }
        match out.last_mut() {
            Some(last) if s - last.1 < min_gap_ns => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_what_a_pixel_cannot_separate() {
        let busy = [(0, 10), (12, 20), (100, 110), (300, 310)];
        assert_eq!(visible_blocks(&busy, 5, 200, 5), vec![(0, 20), (100, 110)]);
        assert_eq!(
            visible_blocks(&busy, 15, 400, 1),
            vec![(12, 20), (100, 110), (300, 310)]
        );
        assert!(visible_blocks(&busy, 400, 500, 1).is_empty());
    }
}
