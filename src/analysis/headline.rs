//! Whole-run figures for comparing two runs (`sightline diff --report headline` and the compare
//! view's headline): trace span, GPU busy % per GPU, copy/compute overlap %, idle time in gaps,
//! kernel count and, when a step range is chosen, the number of steps and their median duration.

use regex::Regex;

use super::diff::HeadlineRow;
use super::filter::EventTable;
use super::{
    DEFAULT_MIN_GAP_NS, Filter, GapOptions, copy_compute_overlap, gpu_activity, gpu_idle_gaps,
};
use crate::trace::Trace;

/// Durations of the kept NVTX ranges whose name matches `step`, sorted.
pub fn step_durations(trace: &Trace, filter: &Filter, step: &Regex) -> Vec<i64> {
    let nv = &trace.nvtx.spans;
    let mut d: Vec<i64> = (0..nv.len())
        .filter(|&i| {
            filter.keeps(EventTable::Nvtx, i, nv.start_ns[i])
                && step.is_match(trace.str(nv.name[i]))
        })
        .map(|i| nv.duration_ns(i))
        .collect();
    d.sort_unstable();
    d
}

/// The median of sorted values (the mean of the middle two for an even count).
pub fn median(sorted: &[i64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2] as f64),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0),
    }
}

/// One run's figures, by metric name, in display order.
pub fn headline(trace: &Trace, filter: &Filter, step: Option<&Regex>) -> Vec<(String, f64)> {
    let t = trace;
    let mut out = vec![(
        "Trace span (ns)".to_string(),
        (t.last_ns - t.first_ns) as f64,
    )];
    for a in gpu_activity(t, filter) {
        if let Some(p) = a.busy_percent() {
            out.push((format!("GPU {} busy (%)", a.device), p));
        }
    }
    let overlap = copy_compute_overlap(t, filter);
    let (o, m) = overlap.iter().fold((0i64, 0i64), |(o, m), d| {
        (o + d.overlap_ns, m + d.memory_ns)
    });
    if m > 0 {
        out.push((
            "Copy/compute overlap (%)".to_string(),
            100.0 * o as f64 / m as f64,
        ));
    }
    let gaps = gpu_idle_gaps(t, filter, &GapOptions::default());
    out.push((
        format!("Idle in gaps >= {} us (ns)", DEFAULT_MIN_GAP_NS / 1000),
        gaps.iter().map(|g| g.duration_ns()).sum::<i64>() as f64,
    ));
    let kernels = (0..t.kernels.spans.len())
        .filter(|&i| filter.keeps(EventTable::Kernels, i, t.kernels.spans.start_ns[i]))
        .count();
    out.push(("Kernels".to_string(), kernels as f64));
    if let Some(step) = step {
        let d = step_durations(t, filter, step);
        out.push(("Steps".to_string(), d.len() as f64));
        if let Some(m) = median(&d) {
            out.push(("Step median (ns)".to_string(), m));
        }
    }
    out
}

/// The two runs' figures side by side: every metric of either run, base's order first.
pub fn headline_rows(base: &[(String, f64)], new: &[(String, f64)]) -> Vec<HeadlineRow> {
    let mut metrics: Vec<&String> = base.iter().map(|m| &m.0).collect();
    for (m, _) in new {
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    let get = |v: &[(String, f64)], m: &str| v.iter().find(|x| x.0 == m).map(|x| x.1);
    metrics
        .into_iter()
        .map(|m| HeadlineRow {
            base: get(base, m),
            new: get(new, m),
            metric: m.clone(),
        })
        .collect()
}
