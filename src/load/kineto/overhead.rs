//! Puts Kineto's own overhead events (`"cat": "overhead"`: CUPTI's `Activity Buffer Request` and
//! `Buffer Flush`) on a thread of the program.
//!
//! Kineto writes them with pid -1 and tid 0: no thread. They are time the profiler took while the
//! program ran (a buffer request lasts 2–4 ms), and PyTorch counts them as CPU events of the
//! thread that stopped the profiler (`TransferEvents::setKinetoTID` in PyTorch 2.11's
//! `torch/csrc/profiler/collection.cpp`: a Kineto event with no parent takes
//! `RecordFunction::currentThreadId()`), where they nest among that thread's operators by time.
//! So each goes to the thread whose operators or annotations were running at its start — the
//! main thread (tid = pid) when it was one of them — and one that starts while none runs goes to
//! the main thread of the process with the most operators. Written on a thread of the program
//! instead, an event stays there.

use std::collections::HashMap;

use super::build::EVENTS;
use crate::trace::{GlobalTid, LoadWarnings, NvtxRanges, RangeKind};

/// The operator and annotation ranges of one thread, as a question: was one running at `t`?
struct Busy {
    starts: Vec<i64>,
    /// The latest end among the ranges up to each start (in start order).
    reach: Vec<i64>,
}

impl Busy {
    fn new(mut spans: Vec<(i64, i64)>) -> Self {
        spans.sort_unstable();
        let mut reach = Vec::with_capacity(spans.len());
        let mut latest = i64::MIN;
        for &(_, end) in &spans {
            latest = latest.max(end);
            reach.push(latest);
        }
        Self {
            starts: spans.into_iter().map(|(start, _)| start).collect(),
            reach,
        }
    }

    fn running_at(&self, t: i64) -> bool {
        let k = self.starts.partition_point(|&s| s <= t);
        k > 0 && self.reach[k - 1] > t
    }
}

fn is_main_thread(g: i64) -> bool {
    GlobalTid(g).tid() == GlobalTid(g).pid()
}

/// Moves every [`RangeKind::ProfilerOverhead`] range of `ranges` to its thread; `call_threads`
/// (the thread of each CUDA call) is the last resort of a trace without operators. Without even
/// those, the events are left out and counted in `warnings`.
pub fn place(ranges: &mut NvtxRanges, call_threads: &[i64], warnings: &mut LoadWarnings) {
    let overhead: Vec<usize> = (0..ranges.spans.len())
        .filter(|&i| ranges.kind_of(i) == RangeKind::ProfilerOverhead)
        .collect();
    if overhead.is_empty() {
        return;
    }
    let mut spans_of: HashMap<i64, Vec<(i64, i64)>> = HashMap::new();
    for i in 0..ranges.spans.len() {
        if matches!(
            ranges.kind_of(i),
            RangeKind::Operator | RangeKind::Annotation
        ) && let Some(&g) = ranges.global_tid.get(i)
        {
            spans_of
                .entry(g)
                .or_default()
                .push((ranges.spans.start_ns[i], ranges.spans.end_ns[i]));
        }
    }
    let fallback = fallback_thread(&spans_of, call_threads);
    let mut threads: Vec<(i64, Busy)> = spans_of
        .into_iter()
        .map(|(g, spans)| (g, Busy::new(spans)))
        .collect();
    // The main thread first, then by id: the first thread running an operator wins.
    threads.sort_unstable_by_key(|&(g, _)| (!is_main_thread(g), g));
    let mut left_out = Vec::new();
    for i in overhead {
        let written = ranges.global_tid[i];
        if threads.iter().any(|&(g, _)| g == written) {
            continue;
        }
        let start = ranges.spans.start_ns[i];
        let running = threads
            .iter()
            .find(|(_, busy)| busy.running_at(start))
            .map(|&(g, _)| g);
        match running.or(fallback) {
            Some(g) => ranges.global_tid[i] = g,
            None => left_out.push(i),
        }
    }
    if !left_out.is_empty() {
        let keep: Vec<u32> = (0..ranges.spans.len())
            .filter(|i| left_out.binary_search(i).is_err())
            .map(|i| i as u32)
            .collect();
        ranges.permute(&keep);
        warnings.skip(
            EVENTS,
            "[is|are] profiler overhead in a trace with no CPU thread to show it on (left out)",
            left_out.len() as u64,
        );
    }
}

/// The thread of overhead that starts while no operator runs: the main thread of the process
/// with the most operators (or, failing that, its busiest thread); in a trace without operators,
/// the same among the threads that made CUDA calls.
fn fallback_thread(spans_of: &HashMap<i64, Vec<(i64, i64)>>, call_threads: &[i64]) -> Option<i64> {
    let mut events_of: HashMap<i64, usize> = spans_of.iter().map(|(&g, s)| (g, s.len())).collect();
    if events_of.is_empty() {
        for &g in call_threads {
            *events_of.entry(g).or_default() += 1;
        }
    }
    let mut per_pid: HashMap<u32, usize> = HashMap::new();
    for (&g, &n) in &events_of {
        *per_pid.entry(GlobalTid(g).pid()).or_default() += n;
    }
    let pid = per_pid
        .into_iter()
        .max_by_key(|&(pid, n)| (n, std::cmp::Reverse(pid)))
        .map(|(pid, _)| pid)?;
    events_of
        .into_iter()
        .filter(|&(g, _)| GlobalTid(g).pid() == pid)
        .max_by_key(|&(g, n)| (is_main_thread(g), n, std::cmp::Reverse(g)))
        .map(|(g, _)| g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::kineto::global_tid;
    use crate::trace::StringTable;

    fn push(r: &mut NvtxRanges, kind: RangeKind, start: i64, end: i64, g: i64) {
        r.spans.push(start, end, StringTable::EMPTY);
        r.domain.push(StringTable::EMPTY);
        r.color_argb.push(0);
        r.style.push(crate::trace::NvtxStyle::PushPop);
        r.depth.push(0);
        r.global_tid.push(g);
        r.unclosed.push(false);
        r.row_id.push(0);
        r.ended_on_other_thread.push(false);
        r.kind.push(kind);
        r.external_id.push(0);
        r.input_shapes.push(StringTable::EMPTY);
        r.input_types.push(StringTable::EMPTY);
        r.input_strides.push(StringTable::EMPTY);
        r.concrete_inputs.push(StringTable::EMPTY);
    }

    #[test]
    fn overhead_goes_to_the_thread_running_an_operator() {
        let (main, worker, nowhere) = (global_tid(50, 50), global_tid(50, 51), global_tid(-1, 0));
        let mut r = NvtxRanges::default();
        push(&mut r, RangeKind::Operator, 0, 100, worker);
        push(&mut r, RangeKind::Annotation, 200, 300, main);
        push(&mut r, RangeKind::Operator, 210, 220, main);
        push(&mut r, RangeKind::Operator, 250, 400, worker);
        // Only the worker runs an op at 50; both at 260 (the main thread wins); neither at 500;
        // the main thread at 299 (inside the annotation, past its op).
        for start in [50, 260, 500, 299] {
            push(
                &mut r,
                RangeKind::ProfilerOverhead,
                start,
                start + 5,
                nowhere,
            );
        }
        let mut w = LoadWarnings::default();
        place(&mut r, &[], &mut w);
        assert_eq!(&r.global_tid[4..], &[worker, main, main, main]);
        assert_eq!(w.total(), 0);
    }

    #[test]
    fn without_operators_the_calling_thread_takes_it_and_without_threads_it_is_left_out() {
        let mut r = NvtxRanges::default();
        push(
            &mut r,
            RangeKind::ProfilerOverhead,
            10,
            20,
            global_tid(-1, 0),
        );
        let calls = [global_tid(7, 9), global_tid(7, 9), global_tid(7, 8)];
        place(&mut r, &calls, &mut LoadWarnings::default());
        assert_eq!(r.global_tid, vec![global_tid(7, 9)]);

        let mut r = NvtxRanges::default();
        push(
            &mut r,
            RangeKind::ProfilerOverhead,
            10,
            20,
            global_tid(-1, 0),
        );
        let mut w = LoadWarnings::default();
        place(&mut r, &[], &mut w);
        assert!(r.spans.is_empty() && r.kind.is_empty());
        assert_eq!(w.total(), 1);
    }
}
