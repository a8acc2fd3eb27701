//! XProf's steps of a JAX / XLA profile (its `StepDetails` on a GPU, xprof
//! `xplane_to_step_events.cc`, `step_events_to_steps_db.cc`): a step is a host range a
//! `StepTraceAnnotation` made (`train#3`: the loader names it by its `step_num`); the GPU work
//! it claims is what the CUDA calls made inside that range, on its thread, launched; GPU work no
//! step claims (a `device_put`'s copy, dispatched from another thread) joins the step before it
//! (the last whose first claimed work started no later); the step time is the span of its GPU
//! work, first start to last end, in picoseconds — not the host range's duration. XProf lists
//! neither the first nor the last step (incomplete): they are marked.

use std::sync::Arc;

use crate::trace::{NO_INDEX, Trace};

/// One step as XProf counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XlaStep {
    /// The step's host range (an index into `trace.nvtx`).
    pub nvtx: usize,
    pub name: Arc<str>,
    /// First start and last end of the GPU work grouped into it, ps from the session start.
    pub begin_ps: i64,
    pub end_ps: i64,
    /// XProf's overview leaves out the first and the last step.
    pub complete: bool,
}

impl XlaStep {
    pub fn duration_ps(&self) -> i64 {
        self.end_ps - self.begin_ps
    }
}

/// The steps of an XPlane trace, by start; empty for other traces or without step annotations.
pub fn xla_steps(trace: &Trace) -> Vec<XlaStep> {
    let Some(xla) = &trace.xla else {
        return Vec::new();
    };
    let nvtx = &trace.nvtx;
    // The step annotations: ranges named `NAME#N` whose thread launched work inside them.
    let mut steps: Vec<usize> = (0..nvtx.spans.len())
        .filter(|&i| {
            let name = trace.str(nvtx.spans.name[i]);
            name.rsplit_once('#')
                .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    steps.sort_by_key(|&i| nvtx.spans.start_ns[i]);
    if steps.is_empty() {
        return Vec::new();
    }
    // Every GPU op: (start ps, end ps, claiming step).
    let mut ops: Vec<(i64, i64, Option<usize>)> = Vec::new();
    let api = &trace.api_calls;
    let claim = |call: u32| -> Option<usize> {
        if call == NO_INDEX {
            return None;
        }
        let c = call as usize;
        let (t, g) = (api.spans.start_ns[c], api.global_tid[c]);
        steps.iter().position(|&s| {
            nvtx.global_tid[s] == g && nvtx.spans.start_ns[s] <= t && t <= nvtx.spans.end_ns[s]
        })
    };
    let mut add = |external: &[u64], api_call: &[u32], start: &[i64], end: &[i64]| {
        for i in 0..start.len() {
            let (b, e) = match external.get(i).and_then(|&x| xla.gpu_op(x)) {
                Some(op) => (op.start_ps, op.start_ps + op.duration_ps),
                None => (start[i] * 1000, end[i] * 1000),
            };
            ops.push((b, e, claim(api_call[i])));
        }
    };
    let k = &trace.kernels;
    add(
        &k.external_id,
        &k.api_call,
        &k.spans.start_ns,
        &k.spans.end_ns,
    );
    let m = &trace.memsets;
    add(
        &m.external_id,
        &m.api_call,
        &m.spans.start_ns,
        &m.spans.end_ns,
    );
    let c = &trace.memcpys;
    add(
        &c.external_id,
        &c.api_call,
        &c.spans.start_ns,
        &c.spans.end_ns,
    );
    // Each step's span of the work grouped into it (claimed, or joining the one before).
    let claims: Vec<(i64, Option<usize>)> = ops.iter().map(|&(b, _, s)| (b, s)).collect();
    let groups = crate::trace::xla::group_into_steps(&claims, steps.len());
    let mut spans: Vec<Option<(i64, i64)>> = vec![None; steps.len()];
    for (&(b, e, _), group) in ops.iter().zip(groups) {
        if let Some(span) = group.and_then(|s| spans.get_mut(s)) {
            let span = span.get_or_insert((b, e));
            *span = (span.0.min(b), span.1.max(e));
        }
    }
    let mut out: Vec<XlaStep> = steps
        .iter()
        .zip(&spans)
        .filter_map(|(&i, span)| {
            let (begin_ps, end_ps) = (*span)?;
            Some(XlaStep {
                nvtx: i,
                name: trace.shared_str(nvtx.spans.name[i]),
                begin_ps,
                end_ps,
                complete: true,
            })
        })
        .collect();
    let n = out.len();
    for (i, step) in out.iter_mut().enumerate() {
        step.complete = i > 0 && i + 1 < n;
    }
    out
}
