//! Which operator calls get a row and which GPU work is theirs, as TraceLens decides it
//! (`TraceToTree.build_host_call_stack_tree`, `TreePerfAnalyzer.collect_unified_perf_events`).
//!
//! 1. Operators (Kineto `cpu_op`) and CUDA calls nest per thread by time, in start order: an
//!    event nests in the innermost open one; one that outlasts it by less than 1 µs closes it and
//!    nests one level up (TraceLens' "event bleed"), by more it stays out of the tree.
//! 2. GPU work (kernels, copies, memsets) belongs to the call that launched it and to every
//!    event above that call.
//! 3. From each outermost operator down, skipping subtrees without GPU work: an operator with a
//!    model is a row (and its subtree is done); else, if some operator below has a model and GPU
//!    work, its children are visited; else an operator that launches GPU work itself is a row; else
//!    its children are visited. Operators whose work is all NCCL's are left out.
//! 4. GPU work in no row whose launching call lies under an operator is a row of its own, named
//!    `<operator>-><kernel> (Synthetic Op)` with the operator's arguments; under no operator,
//!    `<call>-><kernel> (Synthetic Op)`.
//!
//! Sightline's one change: an attention backward is modelled itself (TraceLens files its numbers
//! under an operator inside it through the forward's model), and the modelled operators inside
//! it keep their rows ([`super::models::is_transparent`]).

use super::models::{ModelKind, is_transparent, model_of};
use crate::analysis::gaps::{GpuOpKind, GpuOpRef};
use crate::trace::{NO_INDEX, Trace};

/// TraceLens' tolerance for an event that ends after the one it starts in (1 µs).
const BLEED_TOLERANCE_NS: i64 = 1_000;

/// One row-to-be: an operator call (or a synthetic one) and the GPU work under it.
#[derive(Debug, Clone)]
pub struct CollectedCall {
    /// Index in `trace.nvtx` of the operator (for a synthetic row: the operator above the work).
    pub range: Option<usize>,
    /// Index in `trace.api_calls` of the launching call, for a synthetic row under no operator.
    pub call: Option<usize>,
    /// `Some` for a synthetic row: the name of the GPU work.
    pub synthetic_of: Option<String>,
    pub model: Option<ModelKind>,
    pub gpu_work: Vec<GpuOpRef>,
}

/// A node of the host tree: an operator (index in `trace.nvtx`) or a CUDA call (in
/// `trace.api_calls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Op(usize),
    Call(usize),
}

struct Tree {
    nodes: Vec<Node>,
    parent: Vec<Option<u32>>,
    children: Vec<Vec<u32>>,
    /// GPU work launched by each call node.
    launched: Vec<Vec<GpuOpRef>>,
    /// Some GPU work lies in the subtree.
    has_gpu: Vec<bool>,
    model: Vec<Option<ModelKind>>,
    /// Some operator below (through operators) has a model and GPU work.
    modelled_below: Vec<bool>,
}

/// The calls that get rows, in no particular order.
pub fn collect(trace: &Trace) -> Vec<CollectedCall> {
    let tree = build_tree(trace);
    let mut out = Vec::new();
    let mut covered = vec![false; tree.nodes.len()];
    for root in 0..tree.nodes.len() {
        let is_root_op = matches!(tree.nodes[root], Node::Op(_)) && !has_op_ancestor(&tree, root);
        if is_root_op {
            visit(trace, &tree, root, false, &mut out, &mut covered);
        }
    }
    synthetic_rows(trace, &tree, &covered, &mut out);
    out
}

fn has_op_ancestor(tree: &Tree, mut n: usize) -> bool {
    while let Some(p) = tree.parent[n] {
        if matches!(tree.nodes[p as usize], Node::Op(_)) {
            return true;
        }
        n = p as usize;
    }
    false
}

fn build_tree(trace: &Trace) -> Tree {
    let nvtx = &trace.nvtx;
    let api = &trace.api_calls;
    // (thread, start, -end, node)
    let mut order: Vec<(i64, i64, i64, Node)> = Vec::new();
    for i in 0..nvtx.spans.len() {
        if nvtx.is_operator(i) {
            let g = nvtx.global_tid.get(i).copied().unwrap_or(0);
            order.push((
                g,
                nvtx.spans.start_ns[i],
                -nvtx.spans.end_ns[i],
                Node::Op(i),
            ));
        }
    }
    for i in 0..api.spans.len() {
        let g = api.global_tid.get(i).copied().unwrap_or(0);
        order.push((
            g,
            api.spans.start_ns[i],
            -api.spans.end_ns[i],
            Node::Call(i),
        ));
    }
    order.sort_by_key(|&(g, s, e, _)| (g, s, e));
    let n = order.len();
    let nodes: Vec<Node> = order.iter().map(|o| o.3).collect();
    let mut parent: Vec<Option<u32>> = vec![None; n];
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    let end_of = |k: usize| -order[k].2;
    let mut stack: Vec<usize> = Vec::new();
    let mut thread = None;
    for k in 0..n {
        let (g, start, _, _) = order[k];
        if thread != Some(g) {
            stack.clear();
            thread = Some(g);
        }
        while stack.last().is_some_and(|&top| start >= end_of(top)) {
            stack.pop();
        }
        if let Some(&top) = stack.last()
            && end_of(k) > end_of(top)
        {
            if end_of(top) - start < BLEED_TOLERANCE_NS && stack.len() >= 2 {
                stack.pop();
            } else {
                continue;
            }
        }
        if let Some(&top) = stack.last() {
            parent[k] = Some(top as u32);
            children[top].push(k as u32);
        }
        stack.push(k);
    }
    // GPU work → the node of its launching call.
    let mut node_of_call = vec![NO_INDEX; api.spans.len()];
    for (k, node) in nodes.iter().enumerate() {
        if let Node::Call(c) = *node {
            node_of_call[c] = k as u32;
        }
    }
    let mut launched: Vec<Vec<GpuOpRef>> = vec![Vec::new(); n];
    let tables = [
        (GpuOpKind::Kernel, &trace.kernels.api_call),
        (GpuOpKind::Memcpy, &trace.memcpys.api_call),
        (GpuOpKind::Memset, &trace.memsets.api_call),
    ];
    for (kind, links) in tables {
        for (index, &c) in links.iter().enumerate() {
            let Some(&k) = node_of_call.get(c as usize) else {
                continue;
            };
            if k != NO_INDEX {
                launched[k as usize].push(GpuOpRef { kind, index });
            }
        }
    }
    // Children follow their parents in `nodes`: one backward pass sums subtrees.
    let model: Vec<Option<ModelKind>> = nodes
        .iter()
        .map(|node| match *node {
            Node::Op(i) => model_of(super::op_name(trace, i)),
            Node::Call(_) => None,
        })
        .collect();
    let mut has_gpu: Vec<bool> = launched.iter().map(|l| !l.is_empty()).collect();
    let mut modelled_below = vec![false; n];
    for k in (0..n).rev() {
        let Some(p) = parent[k] else {
            continue;
        };
        let p = p as usize;
        has_gpu[p] |= has_gpu[k];
        if matches!(nodes[k], Node::Op(_)) {
            modelled_below[p] |= (model[k].is_some() && has_gpu[k]) || modelled_below[k];
        }
    }
    Tree {
        nodes,
        parent,
        children,
        launched,
        has_gpu,
        model,
        modelled_below,
    }
}

/// Step 3 from node `k` (an operator). `modelled_only`: inside a transparent operator, where
/// only modelled operators take rows.
fn visit(
    trace: &Trace,
    tree: &Tree,
    k: usize,
    modelled_only: bool,
    out: &mut Vec<CollectedCall>,
    covered: &mut [bool],
) {
    let Node::Op(range) = tree.nodes[k] else {
        return;
    };
    if !tree.has_gpu[k] {
        return;
    }
    let op_children = |out: &mut Vec<CollectedCall>, covered: &mut [bool], only: bool| {
        for &c in &tree.children[k] {
            visit(trace, tree, c as usize, only, out, covered);
        }
    };
    if let Some(kind) = tree.model[k] {
        out.push(row_of(tree, k, range, Some(kind), covered));
        if is_transparent(kind) {
            op_children(out, covered, true);
        }
        return;
    }
    if tree.modelled_below[k] || modelled_only {
        op_children(out, covered, modelled_only);
        return;
    }
    let launches_itself = tree.children[k]
        .iter()
        .any(|&c| matches!(tree.nodes[c as usize], Node::Call(_)) && tree.has_gpu[c as usize]);
    if launches_itself {
        let row = row_of(tree, k, range, None, covered);
        if !row.gpu_work.iter().any(|&w| is_communication(trace, w)) {
            out.push(row);
        }
        return;
    }
    op_children(out, covered, false);
}

/// The row of operator node `k`: all GPU work of its subtree, marked covered.
fn row_of(
    tree: &Tree,
    k: usize,
    range: usize,
    model: Option<ModelKind>,
    covered: &mut [bool],
) -> CollectedCall {
    let mut gpu_work = Vec::new();
    let mut stack = vec![k];
    while let Some(n) = stack.pop() {
        covered[n] = true;
        gpu_work.extend_from_slice(&tree.launched[n]);
        stack.extend(tree.children[n].iter().map(|&c| c as usize));
    }
    CollectedCall {
        range: Some(range),
        call: None,
        synthetic_of: None,
        model,
        gpu_work,
    }
}

/// Step 4: GPU work of calls no row covers.
fn synthetic_rows(trace: &Trace, tree: &Tree, covered: &[bool], out: &mut Vec<CollectedCall>) {
    for (k, (&node, &is_covered)) in tree.nodes.iter().zip(covered).enumerate() {
        let Node::Call(call) = node else {
            continue;
        };
        if is_covered {
            continue;
        }
        let mut owner = tree.parent[k];
        while let Some(p) = owner {
            if matches!(tree.nodes[p as usize], Node::Op(_)) {
                break;
            }
            owner = tree.parent[p as usize];
        }
        for &work in &tree.launched[k] {
            if is_communication(trace, work) {
                continue;
            }
            let (range, call) = match owner.map(|p| tree.nodes[p as usize]) {
                Some(Node::Op(i)) => (Some(i), None),
                _ => (None, Some(call)),
            };
            out.push(CollectedCall {
                range,
                call,
                synthetic_of: Some(gpu_work_name(trace, work).to_string()),
                model: None,
                gpu_work: vec![work],
            });
        }
    }
}

/// The GPU work's name as the trace writes it (Kineto's own names for copies and memsets).
pub fn gpu_work_name(trace: &Trace, work: GpuOpRef) -> &str {
    let kineto = match work.kind {
        GpuOpKind::Memcpy => trace.memcpys.kineto_name.get(work.index),
        GpuOpKind::Memset => trace.memsets.kineto_name.get(work.index),
        _ => None,
    };
    match kineto
        .copied()
        .filter(|&n| n != crate::trace::StringTable::EMPTY)
    {
        Some(n) => trace.str(n),
        None => work.name(trace),
    }
}

/// NCCL (or RCCL) work, which TraceLens leaves out of this table (`include_nccl=False`).
fn is_communication(trace: &Trace, work: GpuOpRef) -> bool {
    let name = work.name(trace);
    name.contains("nccl") || name.contains("rccl") || name.contains("NCCL")
}
