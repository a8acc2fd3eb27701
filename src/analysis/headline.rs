//! Whole-run figures for comparing two runs (`sightline diff --report headline` and the compare
//! view's headline), GPU work first: per GPU its busy time and busy %, idle time in gaps,
//! copy/compute overlap, then — when an iteration range is known (the outermost repeated NVTX
//! range, or `--per-step`) — the median iteration time, its GPU time and its critical path's CPU, kernels and H2D copies (medians), and the iteration count, the kernel
//! count, and last the trace span (process start-up and tear-down included: it says little about
//! the GPU work, so it is shown without judging its change).

use regex::Regex;

use super::diff::HeadlineRow;
use super::filter::EventTable;
use super::{
    DEFAULT_MIN_GAP_NS, Filter, GapOptions, copy_compute_overlap, gpu_activity, gpu_idle_gaps,
};
use crate::trace::Trace;

/// The unit of a headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ns,
    Percent,
    Count,
}

/// Which way a figure improves (for colouring its change); `Neither` is shown neutral.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
    Neither,
}

/// One figure of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The metric's name with its unit, as `diff --format csv` prints it (`Trace span (ns)`).
    pub metric: String,
    pub value: f64,
    pub unit: Unit,
    pub better: Better,
}

impl Figure {
    fn new(metric: String, value: f64, unit: Unit, better: Better) -> Self {
        Self {
            metric,
            value,
            unit,
            better,
        }
    }
}

/// The iteration range of a headline: what a person reads (`token_*`, or the `--per-step`
/// regex) and the regex matching its instances' names.
#[derive(Debug, Clone)]
pub struct Iteration {
    pub label: String,
    pub regex: Regex,
}

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

/// The metric names of the iteration rows, for `label`.
pub fn iteration_metrics(label: &str) -> (String, String) {
    (
        format!("Iteration median: {label} (ns)"),
        format!("Iterations: {label}"),
    )
}

/// The parts of an iteration's critical path the headline compares.
const PATH_PARTS: [crate::analysis::critical_path::Part; 3] = [
    crate::analysis::critical_path::Part::Cpu,
    crate::analysis::critical_path::Part::Kernels,
    crate::analysis::critical_path::Part::CopyH2D,
];

/// One run's figures in display order (see the module's documentation).
pub fn headline(trace: &Trace, filter: &Filter, iteration: Option<&Iteration>) -> Vec<Figure> {
    let t = trace;
    let mut out = Vec::new();
    let activity = gpu_activity(t, filter);
    for a in &activity {
        if a.window.is_some() {
            out.push(Figure::new(
                format!("GPU {} busy time (ns)", a.device),
                a.busy_ns as f64,
                Unit::Ns,
                Better::Lower,
            ));
        }
        if let Some(p) = a.busy_percent() {
            out.push(Figure::new(
                format!("GPU {} busy (%)", a.device),
                p,
                Unit::Percent,
                Better::Higher,
            ));
        }
    }
    let gaps = gpu_idle_gaps(t, filter, &GapOptions::default());
    out.push(Figure::new(
        format!("Idle in gaps >= {} us (ns)", DEFAULT_MIN_GAP_NS / 1000),
        gaps.iter().map(|g| g.duration_ns()).sum::<i64>() as f64,
        Unit::Ns,
        Better::Lower,
    ));
    let overlap = copy_compute_overlap(t, filter);
    let (o, m) = overlap.iter().fold((0i64, 0i64), |(o, m), d| {
        (o + d.overlap_ns, m + d.memory_ns)
    });
    if m > 0 {
        out.push(Figure::new(
            "Copy/compute overlap (%)".to_string(),
            100.0 * o as f64 / m as f64,
            Unit::Percent,
            Better::Higher,
        ));
    }
    if let Some(it) = iteration {
        let d = step_durations(t, filter, &it.regex);
        let (median_metric, count_metric) = iteration_metrics(&it.label);
        if let Some(m) = median(&d) {
            out.push(Figure::new(median_metric, m, Unit::Ns, Better::Lower));
        }
        // The GPU time of each iteration: the work every thread of its process launched in it
        // (the backward pass on PyTorch's autograd thread included), as the iterations report.
        let steps = crate::analysis::iterations::iterations(
            t,
            filter.range,
            &crate::analysis::iterations::FamilyChoice::Regex(it.regex.clone()),
            filter.excluded,
        );
        let mut gpu: Vec<i64> = steps
            .iterations
            .iter()
            .filter(|i| filter.excluded.is_none() || !i.warmup)
            .map(|i| i.gpu_time_ns)
            .collect();
        gpu.sort_unstable();
        if let Some(m) = median(&gpu) {
            out.push(Figure::new(
                format!("Iteration GPU time median: {} (ns)", it.label),
                m,
                Unit::Ns,
                Better::Lower,
            ));
        }
        // What bounds an iteration: the median time its critical path spends on the CPU, in
        // kernels and in H2D copies (weight streaming's question: are the copies on the path?).
        let paths = crate::analysis::critical_path::step_paths(t, &steps.iterations);
        let kept: Vec<&crate::analysis::critical_path::CriticalPath> = paths
            .iter()
            .zip(&steps.iterations)
            .filter(|(_, i)| filter.excluded.is_none() || !i.warmup)
            .map(|(p, _)| p)
            .collect();
        for part in PATH_PARTS {
            let mut v: Vec<i64> = kept.iter().map(|p| p.part_ns(part)).collect();
            v.sort_unstable();
            if let Some(m) = median(&v) {
                out.push(Figure::new(
                    format!("Critical path {}: {} median (ns)", part.label(), it.label),
                    m,
                    Unit::Ns,
                    Better::Lower,
                ));
            }
        }
        out.push(Figure::new(
            count_metric,
            d.len() as f64,
            Unit::Count,
            Better::Neither,
        ));
    }
    let kernels = (0..t.kernels.spans.len())
        .filter(|&i| filter.keeps(EventTable::Kernels, i, t.kernels.spans.start_ns[i]))
        .count();
    out.push(Figure::new(
        "Kernels".to_string(),
        kernels as f64,
        Unit::Count,
        Better::Neither,
    ));
    out.push(Figure::new(
        "Trace span (ns)".to_string(),
        (t.last_ns - t.first_ns) as f64,
        Unit::Ns,
        Better::Neither,
    ));
    out
}

/// The device of a per-GPU figure (`GPU 3 busy time (ns)` → 3).
fn gpu_of(metric: &str) -> Option<&str> {
    let rest = metric.strip_prefix("GPU ")?;
    let (device, what) = rest.split_once(' ')?;
    what.starts_with("busy").then_some(device)
}

/// Two runs that each kept one GPU busy, but not the same one (two ranks of a run, or a run moved
/// to another GPU), compare those GPUs with each other: their figures are named `GPU busy …`.
fn one_gpu_each(base: &[Figure], new: &[Figure]) -> Option<(Vec<Figure>, Vec<Figure>)> {
    let only = |figures: &[Figure]| -> Option<String> {
        let mut devices = figures.iter().filter_map(|f| gpu_of(&f.metric));
        let first = devices.next()?;
        devices.all(|d| d == first).then(|| first.to_string())
    };
    let (b, n) = (only(base)?, only(new)?);
    if b == n {
        return None;
    }
    let rename = |figures: &[Figure], device: &str| -> Vec<Figure> {
        let prefix = format!("GPU {device} ");
        figures
            .iter()
            .map(|f| match f.metric.strip_prefix(&prefix) {
                Some(what) if gpu_of(&f.metric).is_some() => Figure {
                    metric: format!("GPU {what}"),
                    ..f.clone()
                },
                _ => f.clone(),
            })
            .collect()
    };
    Some((rename(base, &b), rename(new, &n)))
}

/// The two runs' figures side by side: every metric of either run, base's order first;
/// runs on one GPU each, not the same, compare those two GPUs ([`one_gpu_each`]).
pub fn headline_rows(base: &[Figure], new: &[Figure]) -> Vec<HeadlineRow> {
    let renamed = one_gpu_each(base, new);
    let (base, new) = match &renamed {
        Some((b, n)) => (b.as_slice(), n.as_slice()),
        None => (base, new),
    };
    let mut metrics: Vec<&Figure> = base.iter().collect();
    for f in new {
        if !metrics.iter().any(|m| m.metric == f.metric) {
            metrics.push(f);
        }
    }
    let get = |v: &[Figure], m: &str| v.iter().find(|x| x.metric == m).map(|x| x.value);
    let span = |f: &&Figure| f.metric == "Trace span (ns)";
    // The span stays last even when only the new run has metrics the base lacks.
    let (mut rows, last): (Vec<&Figure>, Vec<&Figure>) =
        metrics.into_iter().partition(|f| !span(f));
    rows.extend(last);
    rows.into_iter()
        .map(|f| HeadlineRow {
            base: get(base, &f.metric),
            new: get(new, &f.metric),
            metric: f.metric.clone(),
            unit: f.unit,
            better: f.better,
        })
        .collect()
}

/// A duration for a person, to about four significant digits: `414.4 ms`, `40.22 ms`,
/// `212.3 µs`, `950 ns`.
pub fn format_ns(ns: f64) -> String {
    let a = ns.abs();
    let (unit, scale) = if a >= 1e9 {
        ("s", 1e9)
    } else if a >= 1e6 {
        ("ms", 1e6)
    } else if a >= 1e3 {
        ("µs", 1e3)
    } else {
        return format!("{ns:.0} ns");
    };
    let v = ns / scale;
    let decimals = if v.abs() >= 99.995 {
        1
    } else if v.abs() >= 9.9995 {
        2
    } else {
        3
    };
    format!("{v:.decimals$} {unit}")
}

/// A whole number with thousands separators: `1,234,567`.
fn grouped(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 && digits != "0" {
        format!("-{out}")
    } else {
        out
    }
}

/// A headline line as people read it: the metric without its unit suffix, values and change
/// with units (`414.4 ms`, `99.2 %`, `+0.3 pt`, `258`), and the change in percent (none for a
/// percentage: its change in points says it).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineText {
    pub metric: String,
    pub base: String,
    pub new: String,
    pub delta: String,
    pub delta_percent: String,
    /// The change as a number (for colouring), `None` when a run lacks the metric.
    pub change: Option<f64>,
    pub better: Better,
}

/// Formats `row` for people (see [`HeadlineText`]).
pub fn headline_text(row: &HeadlineRow) -> HeadlineText {
    let value = |v: Option<f64>| match (v, row.unit) {
        (None, _) => String::new(),
        (Some(v), Unit::Ns) => format_ns(v),
        (Some(v), Unit::Percent) => format!("{v:.1} %"),
        (Some(v), Unit::Count) => grouped(v),
    };
    let change = match (row.base, row.new) {
        (Some(b), Some(n)) => Some(n - b),
        _ => None,
    };
    let sign = |d: f64| if d > 0.0 { "+" } else { "" };
    let delta = match (change, row.unit) {
        (None, _) => String::new(),
        (Some(d), Unit::Ns) => format!("{}{}", sign(d), format_ns(d)),
        (Some(d), Unit::Percent) => format!("{}{:.1} pt", sign(d), d),
        (Some(d), Unit::Count) => format!("{}{}", sign(d), grouped(d)),
    };
    let delta_percent = match (row.base, row.new, row.unit) {
        (_, _, Unit::Percent) => String::new(),
        (Some(b), Some(n), _) => super::diff::delta_percent(b, n)
            .map_or(String::new(), |p| format!("{}{p:.1} %", sign(p))),
        _ => String::new(),
    };
    let metric = row
        .metric
        .strip_suffix(" (ns)")
        .or_else(|| row.metric.strip_suffix(" (%)"))
        .unwrap_or(&row.metric)
        .replace(">=", "≥")
        .replace(" us", " µs");
    HeadlineText {
        metric,
        base: value(row.base),
        new: value(row.new),
        delta,
        delta_percent,
        change,
        better: row.better,
    }
}

/// Whether a change is an improvement (`Some(true)`), a regression (`Some(false)`) or neither.
pub fn judged(change: Option<f64>, better: Better) -> Option<bool> {
    match (change, better) {
        (Some(d), Better::Lower) if d != 0.0 => Some(d < 0.0),
        (Some(d), Better::Higher) if d != 0.0 => Some(d > 0.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gpu_each_compares_the_two_gpus() {
        let fig = |m: &str, v: f64| Figure::new(m.to_string(), v, Unit::Ns, Better::Lower);
        let base = [fig("GPU 1 busy time (ns)", 5.0), fig("Kernels", 3.0)];
        let new = [fig("GPU 0 busy time (ns)", 7.0), fig("Kernels", 4.0)];
        let rows = headline_rows(&base, &new);
        assert_eq!(rows[0].metric, "GPU busy time (ns)");
        assert_eq!((rows[0].base, rows[0].new), (Some(5.0), Some(7.0)));
        assert_eq!(rows.len(), 2);
        // The same GPU, or several, keep their ids.
        let same = headline_rows(&base, &base);
        assert_eq!(same[0].metric, "GPU 1 busy time (ns)");
        let two = [
            fig("GPU 0 busy time (ns)", 1.0),
            fig("GPU 1 busy time (ns)", 2.0),
        ];
        assert_eq!(headline_rows(&two, &new)[0].metric, "GPU 0 busy time (ns)");
        assert_eq!(headline_rows(&two, &new).len(), 3);
    }

    #[test]
    fn durations_read_with_units() {
        assert_eq!(format_ns(414_412_330.0), "414.4 ms");
        assert_eq!(format_ns(40_219_505.0), "40.22 ms");
        assert_eq!(format_ns(212_260.0), "212.3 µs");
        assert_eq!(format_ns(-4_199_572.0), "-4.200 ms");
        assert_eq!(format_ns(950.0), "950 ns");
        assert_eq!(format_ns(2_500_000_000.0), "2.500 s");
        assert_eq!(grouped(1_234_567.0), "1,234,567");
        assert_eq!(grouped(-1_000.0), "-1,000");
        assert_eq!(grouped(0.0), "0");
    }

    #[test]
    fn a_headline_line_keeps_units_and_judges_by_direction() {
        let row = HeadlineRow {
            metric: "Idle in gaps >= 100 us (ns)".into(),
            base: Some(212_260.0),
            new: Some(0.0),
            unit: Unit::Ns,
            better: Better::Lower,
        };
        let t = headline_text(&row);
        assert_eq!(t.metric, "Idle in gaps ≥ 100 µs");
        assert_eq!((t.base.as_str(), t.new.as_str()), ("212.3 µs", "0 ns"));
        assert_eq!(t.delta, "-212.3 µs");
        assert_eq!(t.delta_percent, "-100.0 %");
        assert_eq!(judged(t.change, t.better), Some(true));
        let pct = HeadlineRow {
            metric: "Copy/compute overlap (%)".into(),
            base: Some(0.0),
            new: Some(81.2),
            unit: Unit::Percent,
            better: Better::Higher,
        };
        let t = headline_text(&pct);
        assert_eq!(
            (t.delta.as_str(), t.delta_percent.as_str()),
            ("+81.2 pt", "")
        );
        assert_eq!(judged(t.change, t.better), Some(true));
        assert_eq!(judged(Some(5.0), Better::Neither), None);
    }
}
