//! The GPU work of a step: every GPU operation — kernel, CUDA graph execution, copy, memset —
//! whose launching CUDA call (runtime or driver) was made by **any thread of the step's process**
//! while the step ran (the call starts in `[start, end)`).
//!
//! A step is everything its process does in it: PyTorch runs each backward pass on its own
//! autograd thread (`pt_autograd_0`), DataLoader pin-memory threads copy, and a framework may
//! launch from a thread of its own. Counting only the calls of the step range's own thread (as
//! nsys's `nvtx_kern_sum` / `nvtx_gpu_proj_*` do, and as those reports still do here) leaves the
//! backward pass out of every training step. An operation with no launching call in the trace
//! (a unified-memory migration) belongs to no step.

use std::collections::HashMap;

use crate::analysis::intervals;
use crate::trace::{NO_INDEX, Trace, pid_of};

/// Which GPU table an operation is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WorkTable {
    Kernel,
    Graph,
    Memcpy,
    Memset,
}

/// One launched operation: when its call started, and where the operation is.
#[derive(Debug, Clone, Copy)]
struct Launched {
    call_start_ns: i64,
    /// The launching thread's `globalTid`.
    thread: i64,
    table: WorkTable,
    index: u32,
}

/// Every launched GPU operation of the trace by process, in call-start order: built once, then
/// each step is two binary searches.
#[derive(Debug, Default)]
pub struct ProcessWork {
    by_pid: HashMap<u32, Vec<Launched>>,
}

/// What one step launched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepWork {
    /// Indices into `trace.kernels`, ascending.
    pub kernels: Vec<u32>,
    /// CUDA graph executions traced as a whole (`trace.graphs`).
    pub graphs: usize,
    pub memcpys: usize,
    pub memsets: usize,
    /// The union of the GPU spans of every operation.
    pub gpu_time_ns: i64,
    /// First start and last end of those operations.
    pub gpu_span: Option<(i64, i64)>,
}

impl ProcessWork {
    pub fn new(trace: &Trace) -> Self {
        let api = &trace.api_calls;
        let mut by_pid: HashMap<u32, Vec<Launched>> = HashMap::new();
        let tables = [
            (WorkTable::Kernel, &trace.kernels.api_call),
            (WorkTable::Graph, &trace.graphs.api_call),
            (WorkTable::Memcpy, &trace.memcpys.api_call),
            (WorkTable::Memset, &trace.memsets.api_call),
        ];
        for (table, calls) in tables {
            for (i, &c) in calls.iter().enumerate() {
                if c == NO_INDEX || c as usize >= api.spans.len() {
                    continue;
                }
                let c = c as usize;
                by_pid
                    .entry(pid_of(api.global_tid[c]))
                    .or_default()
                    .push(Launched {
                        call_start_ns: api.spans.start_ns[c],
                        thread: api.global_tid[c],
                        table,
                        index: i as u32,
                    });
            }
        }
        for v in by_pid.values_mut() {
            v.sort_unstable_by_key(|l| (l.call_start_ns, l.table, l.index));
        }
        Self { by_pid }
    }

    /// The work the threads of process `pid` that `thread` keeps launched by calls starting in
    /// `[start_ns, end_ns)`.
    pub fn of_step(
        &self,
        trace: &Trace,
        pid: u32,
        (start_ns, end_ns): (i64, i64),
        thread: impl Fn(i64) -> bool,
    ) -> StepWork {
        let Some(all) = self.by_pid.get(&pid) else {
            return StepWork::default();
        };
        let from = all.partition_point(|l| l.call_start_ns < start_ns);
        let to = all.partition_point(|l| l.call_start_ns < end_ns);
        let mut work = StepWork::default();
        let mut spans = Vec::with_capacity(to.saturating_sub(from));
        for l in all[from..to.max(from)].iter().filter(|l| thread(l.thread)) {
            let i = l.index as usize;
            let s = match l.table {
                WorkTable::Kernel => {
                    work.kernels.push(l.index);
                    &trace.kernels.spans
                }
                WorkTable::Graph => {
                    work.graphs += 1;
                    &trace.graphs.spans
                }
                WorkTable::Memcpy => {
                    work.memcpys += 1;
                    &trace.memcpys.spans
                }
                WorkTable::Memset => {
                    work.memsets += 1;
                    &trace.memsets.spans
                }
            };
            spans.push((s.start_ns[i], s.end_ns[i].max(s.start_ns[i])));
        }
        work.kernels.sort_unstable();
        work.gpu_span = spans
            .iter()
            .map(|s| s.0)
            .min()
            .zip(spans.iter().map(|s| s.1).max());
        work.gpu_time_ns = intervals::total_ns(&intervals::union(spans));
        work
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads of process 7 and one of process 8 launch; a step of process 7 counts both of
    /// its threads' launches whose call starts inside it, copies in its GPU time.
    #[test]
    fn a_step_counts_every_thread_of_its_process() {
        let mut t = Trace::default();
        let name = t.strings.intern("k");
        let main = (7i64 << 24) | 7;
        let autograd = (7i64 << 24) | 9;
        let other = (8i64 << 24) | 8;
        // (thread, call start, kernel start, kernel end)
        let launches = [
            (main, 10, 20, 30),
            (autograd, 40, 45, 60),
            (other, 41, 61, 70),
            (main, 100, 110, 120),
        ];
        for (k, &(tid, call, s, e)) in launches.iter().enumerate() {
            t.api_calls.spans.push(call, call + 2, name);
            t.api_calls.global_tid.push(tid);
            t.kernels.spans.push(s, e, name);
            t.kernels.api_call.push(k as u32);
        }
        t.api_calls.spans.push(50, 52, name);
        t.api_calls.global_tid.push(autograd);
        t.memcpys.spans.push(55, 65, name);
        t.memcpys.api_call.push(4);
        t.memcpys.spans.push(0, 5, name);
        t.memcpys.api_call.push(NO_INDEX);

        let w = ProcessWork::new(&t);
        let all = |_| true;
        let step = w.of_step(&t, 7, (0, 100), all);
        assert_eq!(step.kernels, vec![0, 1]);
        assert_eq!(step.memcpys, 1);
        // [20, 30) and [45, 65): the copy extends the second kernel.
        assert_eq!(step.gpu_time_ns, 10 + 20);
        assert_eq!(step.gpu_span, Some((20, 65)));
        // The call at 100 is the next step's: [start, end).
        assert_eq!(w.of_step(&t, 7, (100, 200), all).kernels, vec![3]);
        assert_eq!(w.of_step(&t, 8, (0, 100), all).kernels, vec![2]);
        assert_eq!(w.of_step(&t, 9, (0, 100), all), StepWork::default());
        // A thread left out (it runs steps of its own) does not count.
        let step = w.of_step(&t, 7, (0, 100), |t| t != autograd);
        assert_eq!(step.kernels, vec![0]);
        assert_eq!(step.memcpys, 0);
    }
}
