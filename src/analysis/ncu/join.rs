//! Which timeline kernel each Nsight Compute workload measured: the join of an `ncu` report to a
//! trace of the same program (an nsys export or a PyTorch profiler trace, recorded in another
//! run).
//!
//! What is matched on, and why:
//! - **Process** by executable and order of appearance, never by PID: ncu and the timeline come
//!   from separate runs, so the PIDs differ. The k-th process ncu saw running an executable is the
//!   k-th process of the timeline with that name (the timeline's processes ordered by their first
//!   kernel). Names compare by file name, allowing the kernel's 15-character `comm` cut and a
//!   version suffix (`python3` is `python3.12`); with one process on each side they pair whatever
//!   their names.
//! - **Context and stream** as CUDA numbers them: the same program creates them in the same order
//!   in both runs, and CUPTI (nsys, Kineto) and ncu report the same ids.
//! - **Kernel name** in [`kernel_match_key`]'s spelling: ncu and nsys 2025 spell demangled
//!   names one way, CUPTI (a PyTorch trace) another.
//! - **Invocation index per name** in launch order: the k-th ncu workload of a name on its
//!   (process, context, stream) is the k-th timeline kernel of that name there, the timeline's
//!   launches ordered by correlation id (the launching call's order; nodes of one graph launch,
//!   which share it, by start). ncu profiles launches in order, so this holds when it profiled
//!   only some kernels: `-k regex:` profiles every launch of a matching name (the names it skips
//!   have no workloads to count), and `--launch-count N` the first N launches (a prefix of each
//!   name's launches). `--launch-skip` would shift the count and is said in [`NcuJoin::notes`].
//! - **Never time**: ncu serialises each kernel and replays it, so its clock is not the
//!   timeline's.
//!
//! Two checks where both sides have the facts: the launch shape (grid and block), and the NVTX
//! push/pop stack of the default domain (ncu `--nvtx`, nsys NVTX tracing) at the launch. A pair
//! that fails one is left unmatched, with the reason: a wrong match is worse than none.

use std::collections::HashMap;

use super::pairing::{ANY_THREAD, PlaceKey, ThreadOrdinals};
pub use super::pairing::{pair_in_order, pair_processes, same_executable};
use crate::analysis::demangled::kernel_match_key;
use crate::trace::ncu::{NcuReport, NcuWorkload};
use crate::trace::{NO_INDEX, NvtxStyle, RangeKind, StrId, StreamKey, StringTable, Trace};

/// Why a workload has, or has not, a timeline kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchOutcome {
    /// Matched; `nvtx_checked` when the NVTX stacks were compared (and agreed).
    Matched { nvtx_checked: bool },
    /// No timeline process runs the workload's executable.
    NoProcess,
    /// The timeline has fewer launches of the name on that (process, context, stream).
    NoLaunch,
    /// The candidate's grid or block differs from ncu's.
    ShapeDiffers,
    /// The candidate's NVTX stack differs from ncu's.
    NvtxDiffers,
}

impl MatchOutcome {
    pub fn is_matched(self) -> bool {
        matches!(self, MatchOutcome::Matched { .. })
    }

    /// A short reason, for tables and tooltips.
    pub fn label(self) -> &'static str {
        match self {
            MatchOutcome::Matched { nvtx_checked: true } => "matched (NVTX agrees)",
            MatchOutcome::Matched { .. } => "matched",
            MatchOutcome::NoProcess => "no timeline process runs this executable",
            MatchOutcome::NoLaunch => "the timeline has fewer launches of this name",
            MatchOutcome::ShapeDiffers => "grid or block differs from the timeline's",
            MatchOutcome::NvtxDiffers => "NVTX stack differs from the timeline's",
        }
    }
}

/// One workload's match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadMatch {
    /// Index into `trace.kernels`, when matched.
    pub kernel: Option<u32>,
    pub outcome: MatchOutcome,
}

/// The join of a report to a trace: one entry per workload, in the report's order.
#[derive(Debug, Default, Clone)]
pub struct NcuJoin {
    pub matches: Vec<WorkloadMatch>,
    /// Matched kernel index → index into `report.workloads`.
    by_kernel: HashMap<u32, u32>,
    /// What the reader should know about the join as a whole.
    pub notes: Vec<String>,
}

impl NcuJoin {
    /// Index into `report.workloads` of the workload that measured kernel `kernel`.
    pub fn workload_of_kernel(&self, kernel: usize) -> Option<usize> {
        let k = u32::try_from(kernel).ok()?;
        self.by_kernel.get(&k).map(|&w| w as usize)
    }

    pub fn matched_count(&self) -> usize {
        self.by_kernel.len()
    }

    /// (kernel index, workload index) of every match, in workload order.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.matches
            .iter()
            .enumerate()
            .filter_map(|(w, m)| m.kernel.map(|k| (k as usize, w)))
    }
}

/// Joins `report` to `trace` (see the module comment for what is matched on).
pub fn join(trace: &Trace, report: &NcuReport) -> NcuJoin {
    let k = &trace.kernels;
    let stream_of_kernel = stream_of_kernels(trace);
    // Canonical names once per distinct string: the regexes are not free on a million kernels.
    let mut canonical: HashMap<StrId, String> = HashMap::new();
    let mut name_of = |id: StrId, strings: &StringTable| -> String {
        canonical
            .entry(id)
            .or_insert_with(|| kernel_match_key(strings.get(id)))
            .clone()
    };

    // Timeline launches in launch order, with their place.
    let mut order: Vec<usize> = (0..k.spans.len())
        .filter(|&i| stream_of_kernel[i] != u32::MAX)
        .collect();
    let correlation = |i: usize| k.correlation_id.get(i).copied().unwrap_or(0);
    order.sort_by_key(|&i| (correlation(i), k.spans.start_ns[i], i));
    let mut first_kernel_of_pid: Vec<(u32, i64)> = Vec::new();
    let mut timeline_keys: Vec<PlaceKey> = Vec::with_capacity(order.len());
    let mut timeline_threads = ThreadOrdinals::default();
    let mut timeline_thread: Vec<u32> = Vec::with_capacity(order.len());
    for &i in &order {
        let key = trace.streams[stream_of_kernel[i] as usize].key;
        let start = k.spans.start_ns[i];
        match first_kernel_of_pid.iter_mut().find(|(p, _)| *p == key.pid) {
            Some((_, t)) => *t = (*t).min(start),
            None => first_kernel_of_pid.push((key.pid, start)),
        }
        let tid = k
            .api_call
            .get(i)
            .filter(|&&c| c != NO_INDEX)
            .and_then(|&c| trace.api_calls.global_tid.get(c as usize))
            .map(|&t| t as u64);
        timeline_thread.push(timeline_threads.ordinal(key.pid, tid));
        let name = name_of(k.spans.name[i], &trace.strings);
        timeline_keys.push((key.pid, key.context, key.stream, ANY_THREAD, name));
    }
    first_kernel_of_pid.sort_by_key(|&(p, t)| (t, p));
    let timeline_processes: Vec<(u32, String)> = first_kernel_of_pid
        .iter()
        .map(|&(p, _)| (p, trace.process_name(p).to_string()))
        .collect();

    let mut ncu_processes: Vec<(u32, String)> = Vec::new();
    for w in &report.workloads {
        if !ncu_processes.iter().any(|(p, _)| *p == w.pid) {
            let exe = report
                .process(w)
                .map(|p| p.executable.clone())
                .unwrap_or_default();
            ncu_processes.push((w.pid, exe));
        }
    }
    let pids = pair_processes(&ncu_processes, &timeline_processes);

    let mut ncu_threads = ThreadOrdinals::default();
    let ncu_keys: Vec<Option<PlaceKey>> = report
        .workloads
        .iter()
        .map(|w| {
            let pid = pids.get(&w.pid)?;
            let name = kernel_match_key(w.display_name());
            Some((*pid, w.context, w.stream, ANY_THREAD, name))
        })
        .collect();
    let ncu_thread: Vec<u32> = report
        .workloads
        .iter()
        .map(|w| ncu_threads.ordinal(w.pid, Some(u64::from(w.thread_id))))
        .collect();

    // Launches paired by name on their stream; and again with the launching thread (the n-th
    // thread of its process to launch) in the key, which holds when ncu left out some threads'
    // launches (`--nvtx-include` on a range of the main thread leaves out PyTorch's autograd
    // thread). The pairing that matches more is kept.
    let nvtx = TimelineNvtx::of(trace);
    let plain = outcomes(
        trace,
        report,
        &nvtx,
        &order,
        &ncu_keys,
        &pair_in_order(&ncu_keys, &timeline_keys),
    );
    let with_thread = |keys: &[PlaceKey]| -> Vec<PlaceKey> {
        keys.iter()
            .zip(&timeline_thread)
            .map(|(key, &t)| (key.0, key.1, key.2, t, key.4.clone()))
            .collect()
    };
    let ncu_keys_t: Vec<Option<PlaceKey>> = ncu_keys
        .iter()
        .zip(&ncu_thread)
        .map(|(key, &t)| key.clone().map(|key| (key.0, key.1, key.2, t, key.4)))
        .collect();
    let threaded = outcomes(
        trace,
        report,
        &nvtx,
        &order,
        &ncu_keys_t,
        &pair_in_order(&ncu_keys_t, &with_thread(&timeline_keys)),
    );
    let matched =
        |o: &[(MatchOutcome, Option<usize>)]| o.iter().filter(|(m, _)| m.is_matched()).count();
    let chosen = if matched(&threaded) > matched(&plain) {
        threaded
    } else {
        plain
    };
    let mut join = NcuJoin::default();
    for (outcome, kernel) in chosen {
        if let Some(kernel) = kernel {
            join.by_kernel
                .insert(kernel as u32, join.matches.len() as u32);
        }
        join.matches.push(WorkloadMatch {
            kernel: kernel.map(|k| k as u32),
            outcome,
        });
    }
    if let Some(line) = report.session.command_line.as_deref()
        && launch_skip(line)
    {
        join.notes.push(
            "ncu skipped launches (--launch-skip): the k-th workload of a name may not be the \
             k-th launch"
                .to_string(),
        );
    }
    join
}

/// Each workload's outcome and timeline kernel for one pairing (`partners`: per workload, the
/// index into `order` of its candidate).
fn outcomes(
    trace: &Trace,
    report: &NcuReport,
    nvtx: &TimelineNvtx,
    order: &[usize],
    keys: &[Option<PlaceKey>],
    partners: &[Option<usize>],
) -> Vec<(MatchOutcome, Option<usize>)> {
    report
        .workloads
        .iter()
        .zip(keys.iter().zip(partners))
        .map(|(w, (key, partner))| match (key, partner) {
            (None, _) => (MatchOutcome::NoProcess, None),
            (Some(_), None) => (MatchOutcome::NoLaunch, None),
            (Some(_), Some(p)) => check(trace, nvtx, w, order[*p]),
        })
        .collect()
}

/// Whether ncu's command line skipped launches (`--launch-skip N`, `-s N`, with N > 0).
fn launch_skip(command_line: &str) -> bool {
    let words: Vec<&str> = command_line.split_whitespace().collect();
    words.windows(2).any(|w| {
        matches!(w[0], "--launch-skip" | "-s" | "--launch-skip-before-match")
            && w[1].parse::<u64>().is_ok_and(|n| n > 0)
    }) || words.iter().any(|w| {
        w.strip_prefix("--launch-skip=")
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n > 0)
    })
}

/// Grid/block and NVTX checks of a candidate pair.
fn check(
    trace: &Trace,
    nvtx: &TimelineNvtx,
    w: &NcuWorkload,
    kernel: usize,
) -> (MatchOutcome, Option<usize>) {
    let k = &trace.kernels;
    let widen_grid = |g: [u32; 3]| g.map(u64::from);
    let widen_block = |b: [u16; 3]| b.map(u64::from);
    let grid = k.grid.get(kernel).copied().map(widen_grid);
    let block = k.block.get(kernel).copied().map(widen_block);
    let known = |v: &[u64; 3]| v.iter().any(|&x| x != 0);
    if let (Some(g), Some(b)) = (grid, block)
        && known(&g)
        && known(&w.grid)
        && (g != w.grid || b != w.block)
    {
        return (MatchOutcome::ShapeDiffers, None);
    }
    let ncu_stack: Vec<&str> = w
        .nvtx
        .push_pop
        .iter()
        .filter(|d| d.domain.is_none())
        .flat_map(|d| d.ranges.iter().map(String::as_str))
        .collect();
    let stack = if nvtx.present && !w.nvtx.is_empty() {
        nvtx.stack_at_launch(trace, kernel, nvtx_thread(w))
    } else {
        None
    };
    let nvtx_checked = stack.is_some();
    if stack.is_some_and(|stack| stack != ncu_stack) {
        return (MatchOutcome::NvtxDiffers, None);
    }
    (MatchOutcome::Matched { nvtx_checked }, Some(kernel))
}

/// Whose NVTX stack ncu recorded for a workload. ncu 2025.3 records the stack of the process's
/// main thread even for a kernel launched from another one (PyTorch's autograd thread launches
/// the backward pass: `ncu_train_gemm`'s backward kernels carry the main thread's `warmup /
/// backward_pass`), so the timeline side must read the same thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NvtxThread {
    Launching,
    Main,
}

fn nvtx_thread(w: &NcuWorkload) -> Option<NvtxThread> {
    match w.nvtx.thread {
        None => Some(NvtxThread::Launching),
        Some(t) if t == w.thread_id => Some(NvtxThread::Launching),
        Some(t) if t == w.pid => Some(NvtxThread::Main),
        // A thread the other run cannot name.
        Some(_) => None,
    }
}

/// The timeline's NVTX push/pop ranges, when it has any.
struct TimelineNvtx {
    present: bool,
    /// globalTid → index into `trace.threads`.
    thread_of_tid: HashMap<i64, usize>,
}

impl TimelineNvtx {
    fn of(trace: &Trace) -> Self {
        let n = &trace.nvtx;
        let present = (0..n.spans.len()).any(|i| {
            n.kind_of(i) == RangeKind::Nvtx && n.style.get(i) == Some(&NvtxStyle::PushPop)
        });
        let thread_of_tid = trace
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| (t.global_tid, i))
            .collect();
        TimelineNvtx {
            present,
            thread_of_tid,
        }
    }

    /// The default domain's push/pop ranges open on the launching thread (or the process's main
    /// thread) when the kernel's launch call began, outermost first; `None` when the launch call
    /// or that thread is not in the trace.
    fn stack_at_launch<'t>(
        &self,
        trace: &'t Trace,
        kernel: usize,
        whose: Option<NvtxThread>,
    ) -> Option<Vec<&'t str>> {
        let call = *trace.kernels.api_call.get(kernel)?;
        if call == NO_INDEX {
            return None;
        }
        let calls = &trace.api_calls;
        let call = call as usize;
        let launching = *calls.global_tid.get(call)?;
        let t = *calls.spans.start_ns.get(call)?;
        let thread = match whose? {
            NvtxThread::Launching => &trace.threads[*self.thread_of_tid.get(&launching)?],
            NvtxThread::Main => {
                let pid = trace.threads[*self.thread_of_tid.get(&launching)?].pid;
                trace
                    .threads
                    .iter()
                    .find(|t| t.pid == pid && t.tid == pid)?
            }
        };
        let n = &trace.nvtx;
        let mut stack = Vec::new();
        for level in &thread.nvtx_levels {
            for i in level.overlapping(&n.spans.start_ns, &n.spans.end_ns, t, t + 1) {
                let default_domain = n.domain.get(i) == Some(&StringTable::EMPTY);
                if n.kind_of(i) == RangeKind::Nvtx
                    && n.style.get(i) == Some(&NvtxStyle::PushPop)
                    && default_domain
                {
                    stack.push(trace.str(n.spans.name[i]));
                }
            }
        }
        Some(stack)
    }
}

/// The stream kernel `kernel` ran on (tables are sorted by stream, so a binary search over the
/// streams' kernel ranges finds it).
pub fn stream_key_of_kernel(trace: &Trace, kernel: usize) -> Option<StreamKey> {
    let s = trace
        .streams
        .partition_point(|s| s.kernels.range.end <= kernel);
    match trace.streams.get(s) {
        Some(t) if t.kernels.range.contains(&kernel) => Some(t.key),
        _ => trace
            .streams
            .iter()
            .find(|t| t.kernels.range.contains(&kernel))
            .map(|t| t.key),
    }
}

/// For each kernel, the index into `trace.streams` of its stream (`u32::MAX` for none).
fn stream_of_kernels(trace: &Trace) -> Vec<u32> {
    let mut out = vec![u32::MAX; trace.kernels.spans.len()];
    for (s, stream) in trace.streams.iter().enumerate() {
        if let Some(part) = out.get_mut(stream.kernels.range.clone()) {
            part.fill(s as u32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executables_compare_by_file_name_version_and_comm_cut() {
        assert!(same_executable("/usr/bin/python3.12", "python3"));
        assert!(same_executable("/usr/bin/python3.12", "python3.12"));
        assert!(same_executable("/opt/app/train", "train"));
        assert!(!same_executable("/opt/app/train", "trainer"));
        assert!(same_executable(
            "/opt/a/very_long_program_name",
            "very_long_progr"
        ));
        assert!(!same_executable("/usr/bin/python3.12", "bash"));
        assert!(!same_executable("", "python3"));
    }

    #[test]
    fn processes_pair_by_name_and_order_never_by_pid() {
        let ncu = vec![
            (517, "/usr/bin/python3.12".to_string()),
            (9, "/opt/worker".to_string()),
            (600, "/usr/bin/python3.12".to_string()),
        ];
        let timeline = vec![
            (13555, "python3".to_string()),
            (40, "worker".to_string()),
            (13600, "python3".to_string()),
        ];
        let pids = pair_processes(&ncu, &timeline);
        assert_eq!(pids.get(&517), Some(&13555));
        assert_eq!(pids.get(&600), Some(&13600));
        assert_eq!(pids.get(&9), Some(&40));
        // One process on each side pairs whatever the names.
        let one = pair_processes(&[(1, "a".into())], &[(2, "b".into())]);
        assert_eq!(one.get(&1), Some(&2));
    }

    #[test]
    fn kth_of_a_name_pairs_with_kth_of_that_name() {
        // Timeline launch order on one stream: g a g b g a.
        let timeline: Vec<&str> = vec!["g", "a", "g", "b", "g", "a"];
        // `-k regex:g|b --launch-count 3`: every g and b, the first three of them.
        let ncu = vec![Some("g"), Some("g"), Some("b")];
        assert_eq!(
            pair_in_order(&ncu, &timeline),
            vec![Some(0), Some(2), Some(3)]
        );
        // Everything profiled, then one more launch than the timeline has.
        let ncu = vec![
            Some("g"),
            Some("a"),
            Some("g"),
            Some("b"),
            Some("g"),
            Some("a"),
            Some("g"),
        ];
        let got = pair_in_order(&ncu, &timeline);
        assert_eq!(
            &got[..6],
            &[Some(0), Some(1), Some(2), Some(3), Some(4), Some(5)]
        );
        assert_eq!(got[6], None);
        // A workload with no place (no process) pairs with nothing and counts for nothing.
        let ncu = vec![None, Some("a")];
        assert_eq!(pair_in_order(&ncu, &timeline), vec![None, Some(1)]);
    }

    #[test]
    fn places_keep_streams_apart() {
        let timeline = vec![(1u32, 7u32, "g"), (1, 8, "g"), (1, 7, "g")];
        let ncu = vec![
            Some((1u32, 8u32, "g")),
            Some((1, 7, "g")),
            Some((1, 7, "g")),
        ];
        assert_eq!(
            pair_in_order(&ncu, &timeline),
            vec![Some(1), Some(0), Some(2)]
        );
    }

    #[test]
    fn launch_skip_is_noticed() {
        assert!(launch_skip("ncu -o x --launch-skip 10 python3 a.py"));
        assert!(launch_skip("ncu -s 3 python3 a.py"));
        assert!(launch_skip("ncu --launch-skip=2 a"));
        assert!(!launch_skip(
            "ncu --launch-skip 0 --launch-count 120 python3 a.py"
        ));
        assert!(!launch_skip("ncu --launch-count 120 python3 a.py"));
    }
}
