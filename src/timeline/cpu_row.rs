//! The CPU row of a thread: a thin strip of the intervals the thread ran on a CPU
//! (`SCHED_EVENTS`) over a tick per CPU sample (`COMPOSITE_EVENTS`), and the hover facts of both
//! (a sample's call stack; the thread's running share of the selection or the view).
//!
//! Both are drawn at screen cost: running intervals less than a pixel apart become one block
//! found by binary search, and a pixel column with any sample gets one tick, the next column
//! found by binary search too — O(pixels · log n) per row however many events the thread has.

use egui::{Color32, Pos2, Rect, Shape, Stroke};

use super::navigation::{TimeToX, ViewState};
use super::painter::RowPlacement;
use super::rows::{GroupId, Row, RowKind, TimelineModel};
use crate::timeline::palette::Palette;
use crate::trace::thread_states::running_ns_in;
use crate::trace::{ThreadTrack, Trace};

/// Height of the running strip at the top of the row.
const STRIP_PX: f32 = 5.0;
/// A sample within this many pixels of the pointer is the hovered one.
const HOVER_SLACK_PX: f32 = 3.0;

/// Whether a thread has anything for a CPU row.
pub fn has_cpu_row(t: &ThreadTrack) -> bool {
    !t.running.is_empty() || !t.samples.is_empty()
}

/// The CPU row of `trace.threads[thread]`, first in its thread group.
pub fn cpu_row(t: &ThreadTrack, thread: usize) -> Row {
    let title = match (t.running.is_empty(), t.samples.is_empty()) {
        (false, false) => "CPU · running, samples",
        (false, true) => "CPU · running",
        _ => "CPU · samples",
    };
    Row {
        kind: RowKind::ThreadCpu { thread },
        title: title.to_string(),
        indent: 2,
        toggles: None,
        hidden_by: vec![GroupId::Process(t.pid), GroupId::Thread(thread)],
        height_px: super::rows::EVENT_ROW_HEIGHT,
    }
}

/// Calls `emit(start, end)` for each block of the sorted, disjoint intervals `(start(i), end(i))`
/// that overlap `[t0, t1)`, intervals less than `px_ns` apart merged into one block. Returns the
/// number of blocks.
pub fn merged_blocks(
    n: usize,
    start: impl Fn(usize) -> i64,
    end: impl Fn(usize) -> i64,
    (t0, t1): (i64, i64),
    px_ns: i64,
    mut emit: impl FnMut(i64, i64),
) -> usize {
    let first_at_or_after = |from: usize, pred: &dyn Fn(usize) -> bool| {
        // First index >= from where pred turns true (pred is monotone).
        let (mut lo, mut hi) = (from, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if pred(mid) { hi = mid } else { lo = mid + 1 }
        }
        lo
    };
    let mut blocks = 0;
    let mut i = first_at_or_after(0, &|k| end(k) > t0);
    while i < n && start(i) < t1 {
        let block_start = start(i);
        let mut block_end = end(i);
        loop {
            let limit = block_end.saturating_add(px_ns);
            let j = first_at_or_after(i, &|k| start(k) > limit);
            let grown = end(j - 1).max(block_end);
            i = j;
            if grown == block_end {
                break;
            }
            block_end = grown;
        }
        emit(block_start, block_end);
        blocks += 1;
    }
    blocks
}

/// Draws the CPU row of `thread` into `bar`; returns the blocks and ticks drawn.
pub fn paint_cpu_row(
    trace: &Trace,
    thread: usize,
    map: &TimeToX,
    (t0, t1): (i64, i64),
    bar: Rect,
    palette: &Palette,
    shapes: &mut Vec<Shape>,
) -> usize {
    let Some(t) = trace.threads.get(thread) else {
        return 0;
    };
    let px_ns = (map.ns_per_px().ceil() as i64).max(1);
    let strip = bar.top()..=bar.top() + STRIP_PX;
    let x_range = |s: i64, e: i64| {
        let x0 = map.x(s).max(bar.left());
        x0..=map.x(e).min(bar.right()).max(x0 + 1.0)
    };
    // Known but not running: the thread's scheduled span, faint.
    if let Some((first, last)) = t.sched_span
        && first < t1
        && last > t0
    {
        shapes.push(Shape::rect_filled(
            Rect::from_x_y_ranges(x_range(first, last), strip.clone()),
            0.0,
            palette.thread_running.gamma_multiply(0.25),
        ));
    }
    let r = t.running.range.clone();
    let (starts, ends) = (
        &trace.thread_states.start_ns[r.clone()],
        &trace.thread_states.end_ns[r],
    );
    let mut drawn = merged_blocks(
        starts.len(),
        |i| starts[i],
        |i| ends[i],
        (t0, t1),
        px_ns,
        |s, e| {
            shapes.push(Shape::rect_filled(
                Rect::from_x_y_ranges(x_range(s, e), strip.clone()),
                0.0,
                palette.thread_running,
            ));
        },
    );
    let ticks = bar.top() + STRIP_PX + 2.0..=bar.bottom();
    drawn += sample_ticks(trace, t, map, (t0, t1), bar, |x| {
        shapes.push(Shape::line_segment(
            [Pos2::new(x, *ticks.start()), Pos2::new(x, *ticks.end())],
            Stroke::new(1.0, palette.sample_tick),
        ));
    });
    drawn
}

/// Calls `tick(x)` once per pixel column of `bar` holding a sample of `t` in `[t0, t1)`.
fn sample_ticks(
    trace: &Trace,
    t: &ThreadTrack,
    map: &TimeToX,
    (t0, t1): (i64, i64),
    bar: Rect,
    mut tick: impl FnMut(f32),
) -> usize {
    let times = &trace.cpu_samples.time_ns[t.samples.clone()];
    let mut i = times.partition_point(|&x| x < t0);
    let mut n = 0;
    while let Some(&time) = times.get(i) {
        if time >= t1 {
            break;
        }
        let x = map.x(time).floor();
        if x >= bar.left() && x <= bar.right() {
            tick(x + 0.5);
            n += 1;
        }
        // Next sample right of this pixel column.
        let next_t = map.t(x + 1.0).ceil() as i64;
        i += times[i..].partition_point(|&y| y < next_t).max(1);
    }
    n
}

/// Outlines the samples of `highlighted` (sorted sample indices) on the CPU rows placed in
/// `rows`, within the view `[t0, t1)` drawn in `area`; returns how many ticks were drawn.
pub fn outline_samples(
    (trace, model): (&Trace, &TimelineModel),
    map: &TimeToX,
    rows: &[RowPlacement],
    (t0, t1): (i64, i64),
    area: Rect,
    (highlighted, color): (&[u32], Color32),
    shapes: &mut Vec<Shape>,
) -> usize {
    if highlighted.is_empty() {
        return 0;
    }
    let mut drawn = 0;
    for p in rows {
        let Some(RowKind::ThreadCpu { thread }) = model.rows.get(p.row).map(|r| r.kind) else {
            continue;
        };
        let Some(t) = trace.threads.get(thread) else {
            continue;
        };
        let a = highlighted.partition_point(|&i| (i as usize) < t.samples.start);
        let b = highlighted.partition_point(|&i| (i as usize) < t.samples.end);
        let mut last_x = f32::NEG_INFINITY;
        for &i in &highlighted[a..b] {
            let time = trace.cpu_samples.time_ns[i as usize];
            if time < t0 || time >= t1 {
                continue;
            }
            let x = map.x(time).floor() + 0.5;
            if x == last_x || x < area.left() || x > area.right() {
                continue;
            }
            last_x = x;
            shapes.push(Shape::line_segment(
                [
                    Pos2::new(x, p.top + 1.0),
                    Pos2::new(x, p.top + p.height - 1.0),
                ],
                Stroke::new(2.0, color),
            ));
            drawn += 1;
        }
    }
    drawn
}

/// What the pointer is over on a CPU row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuHover {
    pub thread: usize,
    /// The sample within a few pixels of the pointer (index into `trace.cpu_samples`).
    pub sample: Option<usize>,
    /// The pointer's time.
    pub t_ns: i64,
}

/// The CPU row under `pos`, and the sample nearest to it when one is within a few pixels.
pub fn cpu_at(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    rect: Rect,
    pos: Pos2,
) -> Option<CpuHover> {
    let placement = super::painter::placement_at(rows, rect, pos)?;
    let RowKind::ThreadCpu { thread } = model.rows.get(placement.row)?.kind else {
        return None;
    };
    let t = trace.threads.get(thread)?;
    let map = TimeToX::new(view, rect.left(), rect.width());
    let t_ns = map.t(pos.x).round() as i64;
    let slack = (map.ns_per_px() * f64::from(HOVER_SLACK_PX)).ceil() as i64;
    let times = &trace.cpu_samples.time_ns[t.samples.clone()];
    let k = times.partition_point(|&x| x < t_ns);
    let sample = [k.checked_sub(1), Some(k)]
        .into_iter()
        .flatten()
        .filter(|&j| j < times.len() && (times[j] - t_ns).abs() <= slack)
        .min_by_key(|&j| (times[j] - t_ns).abs())
        .map(|j| t.samples.start + j);
    Some(CpuHover {
        thread,
        sample,
        t_ns,
    })
}

/// Running time of a thread in `[t0, t1)` and its share of that window's scheduled part (the
/// window clipped to the thread's first and last scheduling events), `None` without scheduling
/// data.
pub fn running_share(trace: &Trace, t: &ThreadTrack, t0: i64, t1: i64) -> Option<(i64, f64)> {
    let (first, last) = t.sched_span?;
    let r = t.running.range.clone();
    let running = running_ns_in(
        &trace.thread_states.start_ns[r.clone()],
        &trace.thread_states.end_ns[r],
        t0,
        t1,
    );
    let span = (t1.min(last) - t0.max(first)).max(0);
    let share = if span > 0 {
        100.0 * running as f64 / span as f64
    } else {
        0.0
    };
    Some((running, share))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_intervals_closer_than_a_pixel() {
        let iv = [(0, 10), (12, 20), (100, 110), (300, 310)];
        let mut got = Vec::new();
        let n = merged_blocks(
            iv.len(),
            |i| iv[i].0,
            |i| iv[i].1,
            (5, 305),
            5,
            |s, e| got.push((s, e)),
        );
        assert_eq!(got, vec![(0, 20), (100, 110), (300, 310)]);
        assert_eq!(n, 3);
        let mut none = Vec::new();
        merged_blocks(
            iv.len(),
            |i| iv[i].0,
            |i| iv[i].1,
            (400, 500),
            5,
            |s, e| none.push((s, e)),
        );
        assert!(none.is_empty());
    }
}
