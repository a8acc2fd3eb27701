//! The CPU side of a critical path: each thread's chain of events, the stretches where it waits,
//! and the edges that let the path follow, while one thread waits, the work of another thread of
//! the process.
//!
//! - **A thread's events** are its CUDA calls, its CPU ranges (PyTorch operators; NVTX ranges in
//!   an nsys export) and its OS-runtime calls, walked in nesting order. The time between two
//!   boundaries inside a call, an operator or an NVTX range is CPU work of that thread.
//! - **Untraced time**: between two top-level events the thread ran code the trace does not
//!   trace (Python, the framework) or waited. That time counts as the thread's CPU
//!   ("untraced"), at half the weight of traced work, so that where other work explains the
//!   stretch the path follows it instead.
//! - **Waits**: a stretch between top-level events, a blocking OS-runtime call
//!   ([`is_blocking_os_call`]: `pthread_cond_wait`, `futex`, `poll`, `sem_wait`, …) and a host
//!   synchronization that waited for GPU work. Inside a blocking call the thread does nothing:
//!   no weight. From the start of a wait the path may go to the first event boundary of another
//!   thread inside the wait, and from that thread's last boundary inside it back to the wait's
//!   end: the thread resumed after the work it waited for — the autograd thread during
//!   `backward`, the thread that launched the GPU work a sync waits on. HTA 0.5 keeps the path on
//!   one thread (its inter-event edges are free), so it misses this.

use super::graph::{Ev, Graph, Row, Weigh};
use std::collections::HashMap;

/// A CPU event of a thread.
#[derive(Debug, Clone, Copy)]
pub(super) struct CpuItem {
    pub start: i64,
    pub end: i64,
    pub ev: Ev,
    /// The thread waits inside it (a blocking OS-runtime call); a CUDA call's blocking comes
    /// from the work it waited for.
    pub wait: bool,
}

/// One thread's chain: its nodes by time and the stretches where it waits.
#[derive(Debug, Default)]
pub(super) struct ThreadChain {
    pub tid: i64,
    /// `(time, node)` of every boundary of its events, by time.
    pub nodes: Vec<(i64, u32)>,
    /// `(start node, end node)` of each wait.
    pub waits: Vec<(u32, u32)>,
}

impl ThreadChain {
    pub fn first_node(&self) -> Option<u32> {
        self.nodes.first().map(|&(_, n)| n)
    }

    pub fn last_node(&self) -> Option<u32> {
        self.nodes.last().map(|&(_, n)| n)
    }
}

/// The POSIX and Linux calls a thread blocks in until something else happens (a signal, a
/// child, a peer, a lock's holder, time): waiting for another thread, process or machine.
const BLOCKING_CALLS: [&str; 49] = [
    "pthread_cond_wait",
    "pthread_cond_timedwait",
    "pthread_cond_clockwait",
    "pthread_join",
    "pthread_timedjoin_np",
    "pthread_clockjoin_np",
    "pthread_mutex_lock",
    "pthread_mutex_timedlock",
    "pthread_mutex_clocklock",
    "pthread_rwlock_rdlock",
    "pthread_rwlock_wrlock",
    "pthread_rwlock_timedrdlock",
    "pthread_rwlock_timedwrlock",
    "pthread_barrier_wait",
    "sem_wait",
    "sem_timedwait",
    "sem_clockwait",
    "futex",
    "poll",
    "ppoll",
    "select",
    "pselect",
    "pselect6",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "wait",
    "waitpid",
    "waitid",
    "wait3",
    "wait4",
    "sleep",
    "usleep",
    "nanosleep",
    "clock_nanosleep",
    "pause",
    "sigsuspend",
    "sigwait",
    "sigwaitinfo",
    "sigtimedwait",
    "accept",
    "accept4",
    "recv",
    "recvfrom",
    "recvmsg",
    "recvmmsg",
    "msgrcv",
    "mq_receive",
    "mq_timedreceive",
];

/// Is an OS-runtime call (by its name as nsys records it: `pthread_cond_wait`, `__poll`,
/// `sem_timedwait64`, `epoll_wait`, `nanosleep`) one the thread blocks in until something else
/// happens? `read`, `write`, `ioctl`, `mmap`, `sem_post`, `epoll_ctl`, … are the thread's own
/// work. The name is compared whole, without leading underscores, a `64` suffix or glibc's
/// `@VERSION`.
pub fn is_blocking_os_call(name: &str) -> bool {
    let n = name
        .split('@')
        .next()
        .unwrap_or(name)
        .trim_start_matches('_');
    let n = n.strip_suffix("_time64").unwrap_or(n);
    let n = n.strip_suffix("64").unwrap_or(n);
    BLOCKING_CALLS.contains(&n)
}

/// One thread's chain of CPU work (module comment). `items` are sorted outer first; calls take
/// their nodes from `call_nodes`; `waited` holds the calls that waited for GPU work.
pub(super) fn cpu_chain(
    g: &mut Graph,
    tid: i64,
    items: &[CpuItem],
    call_nodes: &HashMap<u32, (u32, u32, i64)>,
    waited: &HashMap<u32, Vec<u32>>,
    clip: impl Fn(i64) -> i64,
) -> ThreadChain {
    let row = Row::Thread(tid);
    let mut chain = ThreadChain {
        tid,
        ..ThreadChain::default()
    };
    // Open items: (end time, end node, event, blocking).
    let mut stack: Vec<(i64, u32, Ev, bool)> = Vec::new();
    let mut last: Option<u32> = None;
    let mut last_top_end: Option<u32> = None;
    let exit = |g: &mut Graph,
                stack: &mut Vec<(i64, u32, Ev, bool)>,
                last: &mut Option<u32>,
                last_top_end: &mut Option<u32>| {
        let Some((_, end, ev, blocking)) = stack.pop() else {
            return;
        };
        if let Some(l) = *last {
            g.edge(l, end, inside(ev, blocking), row, ev);
        }
        if stack.is_empty() {
            *last = None;
            *last_top_end = Some(end);
        } else {
            *last = Some(end);
        }
    };
    for it in items {
        while stack.last().is_some_and(|top| top.0 <= it.start) {
            exit(g, &mut stack, &mut last, &mut last_top_end);
        }
        // A partial overlap is cut at the enclosing event's end.
        let end_t = stack.last().map_or(it.end, |top| it.end.min(top.0));
        let (start, end, blocking) = match it.ev {
            Ev::Call(c) => match call_nodes.get(&c) {
                // A call that outlasts its parent ends, on this chain, where the parent does.
                Some(&(s, _, _)) if end_t < it.end => {
                    (s, g.node(clip(end_t)), waited.contains_key(&c))
                }
                Some(&(s, e, _)) => (s, e, waited.contains_key(&c)),
                None => continue,
            },
            _ => (g.node(clip(it.start)), g.node(clip(end_t)), it.wait),
        };
        chain.nodes.push((g.time[start as usize], start));
        chain.nodes.push((g.time[end as usize], end));
        if blocking {
            chain.waits.push((start, end));
        }
        if stack.is_empty()
            && let Some(t) = last_top_end
        {
            g.edge(t, start, Weigh::Untraced, row, Ev::Untraced);
            chain.waits.push((t, start));
        }
        if let Some(l) = last {
            let (parent, blocking) = stack.last().map_or((it.ev, false), |top| (top.2, top.3));
            g.edge(l, start, inside(parent, blocking), row, parent);
        }
        stack.push((end_t, end, it.ev, blocking));
        last = Some(start);
    }
    while !stack.is_empty() {
        exit(g, &mut stack, &mut last, &mut last_top_end);
    }
    chain.nodes.sort_unstable();
    chain.nodes.dedup();
    chain
}

/// How the time between two boundaries inside event `ev` weighs: nothing in a blocking call, the
/// thread's CPU inside a call, an operator or an NVTX range (a range the user put around work
/// says the thread is doing it; its waits inside are OS-runtime calls of their own).
fn inside(_ev: Ev, blocking: bool) -> Weigh {
    if blocking {
        Weigh::Free
    } else {
        Weigh::Work(super::Part::Cpu)
    }
}

/// The edges by which the path follows, through a wait of one thread, the work of another
/// thread (module comment): from the wait's start to the first boundary of each other thread
/// strictly inside it, and from that thread's last boundary inside it to the wait's end — two
/// edges per wait and thread, whatever the other thread does in between. Every such edge moves
/// forward in time.
pub(super) fn follow_waits(g: &mut Graph, chains: &[ThreadChain]) {
    for (a, chain) in chains.iter().enumerate() {
        for &(from, to) in &chain.waits {
            let (t0, t1) = (g.time[from as usize], g.time[to as usize]);
            if t1 <= t0 {
                continue;
            }
            for (b, other) in chains.iter().enumerate() {
                if a == b {
                    continue;
                }
                let lo = other.nodes.partition_point(|&(t, _)| t <= t0);
                let hi = other.nodes.partition_point(|&(t, _)| t < t1);
                if hi <= lo {
                    continue;
                }
                let (first, last) = (other.nodes[lo].1, other.nodes[hi - 1].1);
                g.edge(
                    from,
                    first,
                    Weigh::Free,
                    Row::Thread(chain.tid),
                    Ev::Untraced,
                );
                g.edge(last, to, Weigh::Free, Row::Thread(chain.tid), Ev::Untraced);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_os_calls_by_name() {
        for name in [
            "pthread_cond_wait",
            "pthread_cond_timedwait",
            "__poll",
            "epoll_wait",
            "sem_timedwait",
            "nanosleep",
            "pthread_join",
            "pthread_mutex_lock",
            "futex",
            "select",
            "recvmsg",
            "sem_timedwait64",
            "__pthread_cond_wait@GLIBC_2.3.2",
        ] {
            assert!(is_blocking_os_call(name), "{name}");
        }
        for name in [
            "read",
            "write",
            "ioctl",
            "mmap64",
            "open64",
            "fopen",
            "pthread_cond_signal",
            "epoll_ctl",
            "sem_post",
            "sem_init",
            "sem_getvalue",
            "pthread_rwlock_tryrdlock",
            "pthread_mutex_trylock",
        ] {
            assert!(!is_blocking_os_call(name), "{name}");
        }
    }
}
