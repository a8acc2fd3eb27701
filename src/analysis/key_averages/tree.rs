//! Steps 3 and 4 of `key_averages()`: which kernels and thread each function event has, and the
//! tree PyTorch builds of them (`_populate_cpu_children`, `_remove_dup_nodes`).

use std::collections::HashMap;

use super::{FunctionEvent, OpDevice, Source};
use crate::analysis::filter::EventTable;

/// Step 3: kernels of each op, and the thread of each CUDA call it made.
pub(super) fn link_kernels(events: &mut [FunctionEvent]) {
    let mut by_linked: HashMap<u64, Vec<u32>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.linked > 0 {
            by_linked.entry(e.linked).or_default().push(i as u32);
        }
    }
    let mut moves: Vec<(u32, i64)> = Vec::new();
    for i in 0..events.len() {
        let e = &events[i];
        if e.linked != 0 || !e.is_sync_cpu() {
            continue;
        }
        let Some(linked) = by_linked.get(&e.id) else {
            continue;
        };
        let thread = e.thread;
        let mut kernel_ns = 0i64;
        for &j in linked {
            let f = &events[j as usize];
            match f.device {
                OpDevice::Cuda => {
                    kernel_ns = kernel_ns.saturating_add(f.end_ns.saturating_sub(f.start_ns));
                }
                OpDevice::Cpu => moves.push((j, thread)),
            }
        }
        events[i].kernel_ns = events[i].kernel_ns.saturating_add(kernel_ns);
    }
    for (j, thread) in moves {
        events[j as usize].thread = thread;
    }
}

/// Step 3b: a CUDA call linked to no op, made on a thread where PyTorch recorded no op or
/// annotation (NCCL's watchdog polling `cudaEventQuery`; CUPTI names such a thread by a number
/// Kineto cannot map to a system thread, e.g. 1654507200), nests on its process's main thread (tid
/// = pid), as in PyTorch 2.11's `key_averages()` of the NCCL runs in tests/fixtures/nccl/pytorch:
/// there its time counts as a child of the main thread's ops (`aten::gelu`, `cudaLaunchKernelExC`).
pub(super) fn calls_of_unknown_threads_to_main(events: &mut [FunctionEvent]) {
    let known: std::collections::HashSet<i64> = events
        .iter()
        .filter(|e| e.device == OpDevice::Cpu && e.linked == 0)
        .filter(|e| matches!(e.source, Source::Event(r) if r.table == EventTable::Nvtx))
        .map(|e| e.thread)
        .collect();
    for e in events.iter_mut() {
        let is_call = matches!(e.source, Source::Event(r) if r.table == EventTable::ApiCalls);
        if is_call && !known.contains(&e.thread) {
            e.thread = main_thread(e.thread);
        }
    }
}

/// The `globalTid` of the main thread (tid = pid) of the process of thread `g`.
pub(super) fn main_thread(g: i64) -> i64 {
    let pid = g >> 24;
    (pid << 24) | pid
}

/// Step 4a (`_populate_cpu_children`): on each thread, in (start, -end) order, an event's parent
/// is the innermost open event that contains it.
pub(super) fn populate_cpu_children(events: &mut [FunctionEvent]) {
    let mut by_thread: HashMap<i64, Vec<u32>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.is_sync_cpu() {
            by_thread.entry(e.thread).or_default().push(i as u32);
        }
    }
    let mut stack: Vec<u32> = Vec::new();
    for list in by_thread.values() {
        stack.clear();
        for &i in list {
            let (start, end) = (events[i as usize].start_ns, events[i as usize].end_ns);
            while let Some(&top) = stack.last() {
                let parent_end = events[top as usize].end_ns;
                if start >= parent_end || end > parent_end {
                    stack.pop();
                } else {
                    events[top as usize].children.push(i);
                    events[i as usize].parent = Some(top);
                    break;
                }
            }
            stack.push(i);
        }
    }
}

/// Step 4b (`_remove_dup_nodes`): folds each only child of the same name into its parent, pass
/// after pass until none is left. Returns which events remain.
pub(super) fn remove_dup_nodes(events: &mut [FunctionEvent]) -> Vec<bool> {
    let mut alive = vec![true; events.len()];
    loop {
        let mut removed = false;
        for i in 0..events.len() {
            if !alive[i] {
                continue;
            }
            let Some(p) = events[i].parent else {
                continue;
            };
            let p = p as usize;
            if events[p].name != events[i].name || events[p].children.len() != 1 {
                continue;
            }
            let children = std::mem::take(&mut events[i].children);
            for &c in &children {
                events[c as usize].parent = Some(p as u32);
            }
            events[p].children = children;
            events[p].kernel_ns = events[i].kernel_ns;
            alive[i] = false;
            removed = true;
        }
        if !removed {
            return alive;
        }
    }
}
