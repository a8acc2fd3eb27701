//! The id PyTorch gives each of Kineto's overhead events (`Activity Buffer Request`, `Buffer
//! Flush`): the id whose kernels it takes in `key_averages()`.
//!
//! Kineto's `OverheadActivity` has no correlation of its own (0), so PyTorch 2.11's
//! `Result::correlationID()` (torch/csrc/profiler/collection.cpp) takes that of its parent in the
//! C++ event tree that `build_tree` makes: the event on top of the stop thread's stack when the
//! overhead began. That stack holds the thread's operators, annotations and Python frames, and
//! every Kineto event without a parent of its own (the overhead itself, a CUDA call made outside
//! any op), all on the thread that stopped the profiler; an event leaves it once an event starts
//! after its end. The parent's id is an op's `External id`, a CUDA call's CUPTI correlation, a
//! Python frame's 0, or another overhead's own.
//!
//! That tree is not the one `key_averages()` nests by (`_populate_cpu_children`: containment): a
//! `Buffer Flush` that starts inside `aten::clamp_min` and outlasts it (CUPTI flushes on a thread
//! of its own) takes that op's kernel time without being its child. With the ids made so, the
//! overhead rows of the traces in tests/fixtures/kineto_overhead equal PyTorch's to the
//! nanosecond.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::tree::main_thread;
use crate::trace::{RangeKind, Trace};

/// One event of a stop thread's stack.
struct Node {
    start_ns: i64,
    end_ns: i64,
    /// Ties at one start: PyTorch's own events (ops, annotations) come first, then Python frames,
    /// then the Kineto events appended after them; then file order.
    group: u8,
    order: usize,
    /// The id a child overhead takes; `None` for an overhead (which asks its own parent).
    id: Option<u64>,
    /// The overhead's row of `trace.nvtx`.
    overhead_row: Option<usize>,
}

/// The id of each overhead range of `trace.nvtx` (by row) whose C++ parent has one.
pub(super) fn overhead_ids(trace: &Trace) -> HashMap<usize, u64> {
    let nvtx = &trace.nvtx;
    let thread_of = |i: usize| nvtx.global_tid.get(i).copied().unwrap_or(0);
    let mut stacks: HashMap<i64, Vec<Node>> = HashMap::new();
    for i in 0..nvtx.spans.len() {
        if nvtx.kind_of(i) == RangeKind::ProfilerOverhead {
            stacks.entry(main_thread(thread_of(i))).or_default();
        }
    }
    if stacks.is_empty() {
        return HashMap::new();
    }
    for i in 0..nvtx.spans.len() {
        let kind = nvtx.kind_of(i);
        let (group, id, thread) = match kind {
            RangeKind::Operator | RangeKind::Annotation => (
                0,
                Some(nvtx.external_id.get(i).copied().unwrap_or(0)),
                thread_of(i),
            ),
            RangeKind::Python => (1, Some(0), thread_of(i)),
            RangeKind::ProfilerOverhead => (2, None, main_thread(thread_of(i))),
            RangeKind::Nvtx | RangeKind::GpuAnnotation => continue,
        };
        if let Some(nodes) = stacks.get_mut(&thread) {
            nodes.push(Node {
                start_ns: nvtx.spans.start_ns[i],
                end_ns: nvtx.spans.end_ns[i],
                group,
                order: i,
                id,
                overhead_row: (kind == RangeKind::ProfilerOverhead).then_some(i),
            });
        }
    }
    // A CUDA call with no `External id` has no parent among PyTorch's events: Kineto hands it to
    // the stop thread, whatever thread made it (`setKinetoTID`).
    let api = &trace.api_calls;
    for i in 0..api.spans.len() {
        if api.external_id.get(i).copied().unwrap_or(0) != 0 {
            continue;
        }
        let thread = main_thread(api.global_tid.get(i).copied().unwrap_or(0));
        if let Some(nodes) = stacks.get_mut(&thread) {
            nodes.push(Node {
                start_ns: api.spans.start_ns[i],
                end_ns: api.spans.end_ns[i],
                group: 2,
                order: nvtx.spans.len() + i,
                id: Some(api.correlation_id.get(i).map_or(0, |&c| u64::from(c))),
                overhead_row: None,
            });
        }
    }
    let mut ids = HashMap::new();
    for nodes in stacks.values_mut() {
        nodes.sort_by_key(|n| (n.start_ns, n.group, n.order));
        let parent = build_tree(nodes);
        for (k, node) in nodes.iter().enumerate() {
            let Some(row) = node.overhead_row else {
                continue;
            };
            let mut up = parent[k];
            while let Some(p) = up {
                if let Some(id) = nodes[p].id {
                    ids.insert(row, id);
                    break;
                }
                up = parent[p];
            }
        }
    }
    ids
}

/// `build_tree`'s stack replay over one thread's events (sorted by start): each event's parent is
/// the stack's top when it starts; the stack drops an event (and what is above it) once an event
/// starts after its end.
fn build_tree(nodes: &[Node]) -> Vec<Option<usize>> {
    let mut parent: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut finished = vec![false; nodes.len()];
    let mut top: Option<usize> = None;
    let mut ends: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    for (k, node) in nodes.iter().enumerate() {
        while let Some(&Reverse((end, j))) = ends.peek() {
            if end >= node.start_ns {
                break;
            }
            ends.pop();
            if finished[j] {
                continue;
            }
            let mut frame = top;
            while let Some(f) = frame {
                if f == j {
                    break;
                }
                finished[f] = true;
                frame = parent[f];
            }
            finished[j] = true;
            top = parent[j];
        }
        parent[k] = top;
        if node.end_ns > node.start_ns {
            top = Some(k);
            ends.push(Reverse((node.end_ns, k)));
        } else {
            finished[k] = true;
        }
    }
    parent
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(start_ns: i64, end_ns: i64, id: Option<u64>) -> Node {
        Node {
            start_ns,
            end_ns,
            group: 0,
            order: 0,
            id,
            overhead_row: None,
        }
    }

    #[test]
    fn the_parent_is_the_top_of_the_stack_not_the_container() {
        // step [0, 100) > add [10, 20); an overhead [15, 40) starts inside add and outlasts it,
        // so its parent is add. mul [30, 35) starts after add ended: add leaves the stack and
        // takes the overhead above it along, so mul's parent is the step, as is relu's.
        let nodes = [
            node(0, 100, Some(1)),
            node(10, 20, Some(2)),
            node(15, 40, None),
            node(30, 35, Some(3)),
            node(50, 60, Some(4)),
        ];
        let parent = build_tree(&nodes);
        assert_eq!(parent, vec![None, Some(0), Some(1), Some(0), Some(0)]);
    }
}
