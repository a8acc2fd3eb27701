//! The report's *Profiled kernels* section (`sightline report TRACE --ncu REPORT`): for the
//! profiled kernels that took the most time on the timeline, the charts of their Nsight Compute
//! details as ncu-ui draws them — the occupancy line charts with the kernel's own configuration
//! marked ([`line_chart`]) and the single-precision hierarchical roofline, a ceiling per memory
//! level with the kernel's point at each ([`hierarchical`]) — as inline SVG.

use std::fmt::Write;

use super::html::esc;
use crate::analysis::headline::format_ns;
use crate::analysis::ncu::NcuJoin;
use crate::analysis::ncu::hierarchical::{self, HierarchicalRoofline};
use crate::analysis::ncu::line_chart::{LineChart, line_chart};
use crate::trace::Trace;
use crate::trace::ncu::NcuReport;

/// Kernels shown.
pub const SHOWN: usize = 3;

/// One profiled kernel's charts.
#[derive(Debug, Clone)]
pub struct KernelCharts {
    pub id: u32,
    pub name: String,
    /// Its matched kernel's time on the timeline.
    pub timeline_ns: i64,
    pub line_charts: Vec<LineChart>,
    /// The single-precision hierarchical roofline (else the first roofline chart it has).
    pub roofline: Option<HierarchicalRoofline>,
}

/// The matched profiled kernels with the longest time on the timeline, at most [`SHOWN`].
pub fn gather(trace: &Trace, report: &NcuReport, join: &NcuJoin) -> Vec<KernelCharts> {
    let spans = &trace.kernels.spans;
    let mut matched: Vec<(usize, i64)> = join
        .pairs()
        .filter(|&(k, _)| k < spans.len())
        .map(|(k, w)| (w, spans.end_ns[k] - spans.start_ns[k]))
        .collect();
    matched.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    matched
        .into_iter()
        .take(SHOWN)
        .filter_map(|(index, timeline_ns)| {
            let w = report.workloads.get(index)?;
            let sections = report.sections_in_order(w);
            let line_charts = sections
                .iter()
                .flat_map(|s| s.items_for(report.sm_version(w)))
                .filter_map(|item| line_chart(report, w, item))
                .collect();
            let rooflines: Vec<HierarchicalRoofline> = sections
                .iter()
                .filter_map(|s| hierarchical::of_section(report, w, s))
                .collect();
            let roofline = rooflines
                .iter()
                .find(|r| r.title.ends_with("(Single Precision)"))
                .or(rooflines.first())
                .cloned();
            Some(KernelCharts {
                id: w.id,
                name: w.display_name().to_string(),
                timeline_ns,
                line_charts,
                roofline,
            })
        })
        .collect()
}

/// The section; empty without kernels to show.
pub fn section(kernels: &[KernelCharts]) -> String {
    if kernels.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<h2 id=\"ncu\">Profiled kernels (Nsight Compute)</h2>\n<p>The kernels of the Nsight \
         Compute report that took the most time on this timeline: their occupancy charts (the \
         kernel's own configuration marked) and their hierarchical roofline (a ceiling per memory \
         level, the kernel's point at each), as ncu-ui draws them.</p>\n",
    );
    for k in kernels {
        let _ = writeln!(
            h,
            "<h3>ID {} · {} <span class=\"dim\">({} on the timeline)</span></h3>\n<div class=\"ncu-charts\">",
            k.id,
            esc(&k.name),
            format_ns(k.timeline_ns as f64)
        );
        if let Some(r) = &k.roofline {
            h.push_str(&roofline_svg(r));
        }
        for c in &k.line_charts {
            h.push_str(&line_chart_svg(c));
        }
        h.push_str("</div>\n");
    }
    h
}

const W: f64 = 420.0;
const H: f64 = 260.0;
/// Plot area inside the picture: left, top, right, bottom margins.
const MARGIN: (f64, f64, f64, f64) = (56.0, 28.0, 12.0, 40.0);
const LINE_COLOURS: [&str; 4] = ["#3a7cc8", "#e08a1e", "#27ae60", "#9b59b6"];

fn frame(title: &str, x_label: &str, y_label: &str) -> String {
    let (l, t, r, b) = MARGIN;
    format!(
        "<svg class=\"ncu-chart\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\
         <title>{t_esc}</title>\
         <text x=\"{l}\" y=\"16\" font-weight=\"bold\">{t_esc}</text>\
         <rect x=\"{l}\" y=\"{t}\" width=\"{pw}\" height=\"{ph}\" fill=\"none\" stroke=\"#999\"/>\
         <text x=\"{cx}\" y=\"{xl}\" text-anchor=\"middle\">{x}</text>\
         <text x=\"12\" y=\"{cy}\" text-anchor=\"middle\" transform=\"rotate(-90 12 {cy})\">{y}</text>",
        t_esc = esc(title),
        pw = W - l - r,
        ph = H - t - b,
        cx = l + (W - l - r) / 2.0,
        xl = H - 6.0,
        cy = t + (H - t - b) / 2.0,
        x = esc(x_label),
        y = esc(y_label),
    )
}

/// Maps `(x, y)` in `[x0, x1] × [y0, y1]` to the plot area.
fn to_px(x: f64, y: f64, (x0, x1, y0, y1): (f64, f64, f64, f64)) -> (f64, f64) {
    let (l, t, r, b) = MARGIN;
    let fx = if x1 > x0 { (x - x0) / (x1 - x0) } else { 0.5 };
    let fy = if y1 > y0 { (y - y0) / (y1 - y0) } else { 0.5 };
    (l + fx * (W - l - r), H - b - fy * (H - t - b))
}

/// A line chart: each line a polyline over its points, the kernel's marks as dashed verticals.
pub fn line_chart_svg(c: &LineChart) -> String {
    let points = c.lines.iter().flat_map(|l| &l.points);
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for p in points.clone() {
        x0 = x0.min(p[0]);
        x1 = x1.max(p[0]);
        y1 = y1.max(p[1]);
    }
    if !x0.is_finite() {
        return String::new();
    }
    let bounds = (x0, x1, 0.0, if y1 > 0.0 { y1 * 1.05 } else { 1.0 });
    let x_label = c.marks.first().map_or("", |(l, _)| l.as_str());
    let y_label = c.lines.first().map_or("", |l| l.label.as_str());
    let mut s = frame(&c.label, x_label, y_label);
    let (l, t, _, b) = MARGIN;
    let _ = write!(
        s,
        "<text x=\"{l}\" y=\"{}\" text-anchor=\"start\">{}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
        H - b + 14.0,
        num(x0),
        W - MARGIN.2,
        H - b + 14.0,
        num(x1),
        l - 4.0,
        t + 10.0,
        num(bounds.3),
    );
    for (i, line) in c.lines.iter().enumerate() {
        let colour = LINE_COLOURS[i % LINE_COLOURS.len()];
        let pts: Vec<String> = line
            .points
            .iter()
            .map(|p| {
                let (x, y) = to_px(p[0], p[1], bounds);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        let _ = write!(
            s,
            "<polyline class=\"line\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" \
             points=\"{}\"><title>{}</title></polyline>",
            pts.join(" "),
            esc(&line.label)
        );
    }
    for (label, x) in &c.marks {
        let (px, _) = to_px(*x, 0.0, bounds);
        let _ = write!(
            s,
            "<line class=\"mark\" x1=\"{px:.1}\" x2=\"{px:.1}\" y1=\"{t}\" y2=\"{}\" \
             stroke=\"#d35400\" stroke-dasharray=\"4 3\"><title>This kernel — {}: {}</title></line>",
            H - b,
            esc(label),
            // The configuration as it is (a block size of 1024, not 1.02k).
            if x.fract() == 0.0 {
                format!("{x:.0}")
            } else {
                num(*x)
            }
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The roofline on log–log axes: each ceiling's memory roof and compute roof, each achieved
/// point in its level's colour.
pub fn roofline_svg(r: &HierarchicalRoofline) -> String {
    let drawn: Vec<_> = r.points.iter().filter(|p| p.is_drawable()).collect();
    let ceilings: Vec<_> = r
        .ceilings
        .iter()
        .filter(|c| c.peak_work > 0.0 && c.peak_traffic > 0.0)
        .filter(|c| !c.label.contains(':'))
        .collect();
    let (mut x0, mut x1) = (-3.0f64, 4.0f64);
    for p in &drawn {
        x0 = x0.min(p.intensity().log10().floor());
        x1 = x1.max(p.intensity().log10().ceil());
    }
    let top = ceilings
        .iter()
        .map(|c| c.peak_work)
        .chain(drawn.iter().map(|p| p.work))
        .fold(1.0f64, f64::max)
        .log10()
        .ceil()
        + 0.5;
    let bounds = (x0, x1, top - 7.0, top);
    let mut s = frame(&r.title, "operations / byte", "operations / s");
    let (l, _, _, b) = MARGIN;
    let (_, t, _, _) = MARGIN;
    let _ = write!(
        s,
        "<text x=\"{l}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
        H - b + 14.0,
        num(10f64.powf(x0)),
        W - MARGIN.2,
        H - b + 14.0,
        num(10f64.powf(x1)),
        l - 4.0,
        t + 10.0,
        num(10f64.powf(bounds.3)),
        l - 4.0,
        H - b,
        num(10f64.powf(bounds.2)),
    );
    let colour = |label: &str| {
        if label.starts_with("DRAM") {
            "#d35400"
        } else if label.starts_with("L2") {
            "#27ae60"
        } else {
            "#2980b9"
        }
    };
    for c in &ceilings {
        let ridge = c.ridge().log10();
        let y_lo = (c.peak_traffic * 10f64.powf(x0)).log10().max(bounds.2);
        let x_lo = if y_lo > (c.peak_traffic * 10f64.powf(x0)).log10() {
            (10f64.powf(y_lo) / c.peak_traffic).log10()
        } else {
            x0
        };
        let peak = c.peak_work.log10();
        let pts: Vec<String> = [(x_lo, y_lo), (ridge, peak), (x1, peak)]
            .iter()
            .map(|&(x, y)| {
                let (px, py) = to_px(x, y, bounds);
                format!("{px:.1},{py:.1}")
            })
            .collect();
        let _ = write!(
            s,
            "<polyline class=\"ceiling\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" \
             points=\"{}\"><title>{} ({} op/s, {} B/s)</title></polyline>",
            colour(&c.label),
            pts.join(" "),
            esc(&c.label),
            num(c.peak_work),
            num(c.peak_traffic)
        );
    }
    // A legend at the lower right, under the roofs: each level's colour, ceiling and share.
    for (i, c) in ceilings.iter().enumerate() {
        let point = drawn.iter().find(|p| r.ceiling_of(p) == Some(*c));
        let share = point.map_or(String::new(), |p| {
            format!(" · {:.1} %", p.work / c.attainable(p.intensity()) * 100.0)
        });
        let _ = write!(
            s,
            "<text class=\"legend\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{} {}B/s{share}</text>",
            W - MARGIN.2 - 6.0,
            H - b - 8.0 - 14.0 * (ceilings.len() - 1 - i) as f64,
            colour(&c.label),
            esc(&c.label),
            num(c.peak_traffic),
        );
    }
    for p in &drawn {
        let (px, py) = to_px(p.intensity().log10(), p.work.log10(), bounds);
        let share = r
            .ceiling_of(p)
            .map(|c| {
                format!(
                    ", {:.1} % of its roof",
                    p.work / c.attainable(p.intensity()) * 100.0
                )
            })
            .unwrap_or_default();
        let _ = write!(
            s,
            "<circle class=\"point\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"5\" fill=\"{}\">\
             <title>{}: {} op/byte, {} op/s{share}</title></circle>",
            colour(&p.label),
            esc(&p.label),
            num(p.intensity()),
            num(p.work)
        );
    }
    s.push_str("</svg>\n");
    s
}

/// A value with three significant digits and an SI prefix.
fn num(v: f64) -> String {
    let (scale, prefix) = crate::analysis::ncu::units::si_prefix(v);
    let x = v / scale;
    if x != 0.0 && x.abs() < 1.0 {
        // Three significant digits, trailing zeros dropped: 0.001, 0.0452.
        let decimals = (-x.abs().log10()).floor() as usize + 3;
        let text = format!("{x:.decimals$}");
        return text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    let text = if x.abs() >= 100.0 || x == x.trunc() {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    format!("{text}{prefix}")
}
