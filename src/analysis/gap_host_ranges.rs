//! Where the host was while a GPU sat idle: the ranges open on the thread that launched the work
//! ending the gap (NVTX ranges; a PyTorch trace's annotations and operators), outermost first,
//! at the middle of the time the cause looks at — for a late launch the time before the
//! launching call began (`[g0, min(L.start, g1))`), else the gap. `moe.sqlite`'s long gaps say
//! `untraced 2.855 ms`; the launching thread was then inside `Token_Preparation`, which only the
//! timeline showed.

use std::collections::HashMap;

use super::gap_causes::GapCauseInfo;
use super::gaps::IdleGap;
use crate::trace::{RangeKind, Trace};

/// Ranges looked at backwards from the last one begun before the instant asked about, at most:
/// enough for a step of a PyTorch trace; a thread whose outer range holds more says less.
const MAX_SCAN: usize = 200_000;

/// The ranges of each thread, by start, built once for a batch of gaps.
pub struct HostRanges<'t> {
    trace: &'t Trace,
    by_thread: HashMap<i64, Vec<usize>>,
}

impl<'t> HostRanges<'t> {
    pub fn new(trace: &'t Trace) -> Self {
        let nvtx = &trace.nvtx;
        let mut by_thread: HashMap<i64, Vec<usize>> = HashMap::new();
        for i in 0..nvtx.spans.len() {
            let kind = nvtx.kind_of(i);
            if matches!(
                kind,
                RangeKind::Nvtx | RangeKind::Annotation | RangeKind::Operator
            ) && nvtx.spans.end_ns[i] > nvtx.spans.start_ns[i]
            {
                by_thread.entry(nvtx.global_tid[i]).or_default().push(i);
            }
        }
        for list in by_thread.values_mut() {
            list.sort_by_key(|&i| (nvtx.spans.start_ns[i], nvtx.depth[i]));
        }
        Self { trace, by_thread }
    }

    /// The ranges open on thread `tid` at `t` (`start <= t < end`), outermost first.
    pub fn open_at(&self, tid: i64, t: i64) -> Vec<usize> {
        let Some(list) = self.by_thread.get(&tid) else {
            return Vec::new();
        };
        let nvtx = &self.trace.nvtx;
        let begun = list.partition_point(|&i| nvtx.spans.start_ns[i] <= t);
        let mut open: Vec<usize> = Vec::new();
        for &i in list[..begun].iter().rev().take(MAX_SCAN) {
            if nvtx.spans.end_ns[i] > t {
                open.push(i);
            }
            // Ranges of one thread nest: before an outermost range, none is still open.
            if nvtx.depth[i] == 0 {
                break;
            }
        }
        open.sort_by_key(|&i| (nvtx.depth[i], nvtx.spans.start_ns[i]));
        open
    }

    /// The ranges open on the launching thread of the work that ended `gap`, at the middle of
    /// the time its cause looks at; empty without a launching call.
    pub fn of_gap(&self, gap: &IdleGap, cause: &GapCauseInfo) -> Vec<usize> {
        let calls = &self.trace.api_calls;
        let Some(call) = cause.launch_call.filter(|&c| c < calls.spans.len()) else {
            return Vec::new();
        };
        let launch = calls.spans.start_ns[call];
        let end = launch.min(gap.end_ns);
        let (a, b) = if end > gap.start_ns {
            (gap.start_ns, end)
        } else {
            (gap.start_ns, gap.end_ns)
        };
        self.open_at(calls.global_tid[call], a + (b - a) / 2)
    }

    /// [`Self::of_gap`] as one line: the ranges' names, outermost first, joined by ` > `.
    pub fn line(&self, gap: &IdleGap, cause: &GapCauseInfo) -> String {
        let nvtx = &self.trace.nvtx;
        self.of_gap(gap, cause)
            .iter()
            .map(|&i| self.trace.str(nvtx.spans.name[i]))
            .collect::<Vec<_>>()
            .join(" > ")
    }
}
