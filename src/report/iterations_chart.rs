//! The report's iterations chart: each iteration of the trace's default family (the outermost
//! repeated range: `step_N`, `ProfilerStep#N`, `token_N`, …) as a bar of its duration with the
//! GPU time of the kernels it launched inside, warm-up iterations grey, outliers red, the median
//! of the steady ones as a line. The figures are [`crate::analysis::iterations`]'s, as the
//! `iterations` report prints them; this file only draws them (inline SVG).

use crate::analysis::headline::{format_ns, median};
use crate::analysis::iterations::Iterations;

use super::html::esc;

const WIDTH: f64 = 1100.0;
const PLOT_H: f64 = 220.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 62.0;

/// The median duration of the steady (not warm-up) iterations.
pub fn steady_median_ns(its: &Iterations) -> Option<f64> {
    let mut d: Vec<i64> = its.steady().map(|(_, i)| i.duration_ns()).collect();
    d.sort_unstable();
    median(&d)
}

/// The chart, `None` when the trace has no repeated family.
pub fn iterations_svg(its: &Iterations) -> Option<String> {
    let n = its.iterations.len();
    if n == 0 {
        return None;
    }
    let max = its
        .iterations
        .iter()
        .map(|i| i.duration_ns())
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let height = TOP + PLOT_H + BOTTOM;
    let slot = (WIDTH - LEFT) / n as f64;
    let bar_w = (slot * 0.8).max(1.0);
    let y_of = |ns: f64| TOP + PLOT_H * (1.0 - ns / max);
    let mut s = format!(
        "<svg class=\"iterations\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         role=\"img\" aria-label=\"Iteration durations\">"
    );
    // Axis: 0 and the maximum.
    for (v, label) in [(0.0, "0".to_string()), (max, format_ns(max))] {
        let y = y_of(v);
        s.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{WIDTH}\" y2=\"{y:.1}\" stroke=\"#ccc\"/>\
             <text x=\"{}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{label}</text>",
            LEFT - 4.0,
            y + 4.0
        ));
    }
    let label_every = (n as f64 / 20.0).ceil().max(1.0) as usize;
    for (k, it) in its.iterations.iter().enumerate() {
        let x = LEFT + slot * k as f64 + (slot - bar_w) / 2.0;
        let d = it.duration_ns() as f64;
        let colour = if it.warmup {
            "#b8bec6"
        } else if it.outlier {
            "#d9534f"
        } else {
            "#5b8dd9"
        };
        let kind = if it.warmup {
            " (warm-up)"
        } else if it.outlier {
            " (outlier)"
        } else {
            ""
        };
        s.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{colour}\">\
             <title>{}{kind}: {} (GPU time {}, {} kernels)</title></rect>",
            y_of(d),
            PLOT_H * d / max,
            esc(&it.name),
            format_ns(d),
            format_ns(it.gpu_time_ns as f64),
            it.kernels
        ));
        // GPU time as a dark inner bar.
        let g = (it.gpu_time_ns as f64).min(d);
        let inner = bar_w * 0.4;
        s.push_str(&format!(
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{inner:.1}\" height=\"{:.1}\" fill=\"#1d2330\" fill-opacity=\"0.55\"/>",
            x + (bar_w - inner) / 2.0,
            y_of(g),
            PLOT_H * g / max
        ));
        if k % label_every == 0 {
            s.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{k}</text>",
                x + bar_w / 2.0,
                TOP + PLOT_H + 14.0
            ));
        }
    }
    if let Some(m) = steady_median_ns(its) {
        let y = y_of(m);
        s.push_str(&format!(
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{WIDTH}\" y2=\"{y:.1}\" stroke=\"#1e7e34\" stroke-dasharray=\"5 3\"/>"
        ));
    }
    s.push_str(&format!(
        "<text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"12\">iteration · bar: duration (blue steady, grey warm-up, red outlier) · \
         dashed: median of the steady ones</text><text x=\"{LEFT}\" y=\"{:.1}\" font-size=\"12\">dark inner bar: GPU time \
         of the work its process launched in it, every thread (the backward pass on PyTorch's autograd thread included)</text></svg>",
        TOP + PLOT_H + 36.0,
        TOP + PLOT_H + 52.0
    ));
    Some(s)
}
