//! "What bounds each step": the critical path of each iteration
//! ([`crate::analysis::critical_path`]) as a stacked bar per iteration, the part that holds most
//! of it, and the median shares over the steady iterations.

use super::html::esc;
use super::{Report, RunReport};
use crate::analysis::critical_path::{CriticalPath, Part};
use crate::analysis::headline::format_ns;

/// Iterations listed per run; the median covers them all.
const LISTED: usize = 12;

/// The colour of a part in the bars, as the timeline outlines it.
pub fn part_colour(part: Part) -> String {
    let c = crate::timeline::overlays::path::part_colour(part);
    format!("#{:02x}{:02x}{:02x}", c.r(), c.g(), c.b())
}

/// One bar: the path's parts side by side, each as wide as its share of the iteration.
fn bar(path: &CriticalPath, duration_ns: i64) -> String {
    let mut h = String::from(
        "<div class=\"cpbar\" style=\"display:flex;width:360px;height:14px;background:#f4f4f4\">",
    );
    for p in Part::ALL {
        let ns = path.part_ns(p);
        if ns <= 0 || duration_ns <= 0 {
            continue;
        }
        let w = ns as f64 * 100.0 / duration_ns as f64;
        h.push_str(&format!(
            "<span title=\"{}: {}\" style=\"width:{w:.3}%;background:{}\"></span>",
            p.label(),
            format_ns(ns as f64),
            part_colour(p)
        ));
    }
    h.push_str("</div>");
    h
}

fn legend() -> String {
    let items: Vec<String> = Part::ALL
        .iter()
        .map(|&p| {
            format!(
                "<span style=\"display:inline-block;width:10px;height:10px;background:{}\"></span> {}",
                part_colour(p),
                p.label()
            )
        })
        .collect();
    format!("<p class=\"legend\">{}</p>\n", items.join(" &nbsp; "))
}

/// The median share of each part over the steady iterations, largest first.
fn median_shares(run: &RunReport) -> Vec<(Part, f64)> {
    let steady: Vec<&CriticalPath> = run
        .iterations
        .iterations
        .iter()
        .zip(&run.critical_paths)
        .filter(|(it, _)| !it.warmup)
        .map(|(_, p)| p)
        .filter(|p| p.path_ns() > 0)
        .collect();
    let mut out: Vec<(Part, f64)> = Part::ALL
        .iter()
        .map(|&part| {
            let mut v: Vec<f64> = steady
                .iter()
                .map(|p| p.part_ns(part) as f64 * 100.0 / p.path_ns() as f64)
                .collect();
            v.sort_by(f64::total_cmp);
            (part, v.get(v.len() / 2).copied().unwrap_or(0.0))
        })
        .filter(|&(_, share)| share >= 0.5)
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// The section, one table per run.
pub fn section(report: &Report) -> String {
    let mut h = String::from(
        "<h2 id=\"bounds\">What bounds each step</h2>\n<p>The critical path of each iteration: the chain of dependent CPU work, launches, GPU work, copies and waits from its start to its end, through every thread of its process (<a href=\"#def-critical-path\">how it is found</a>; <code>sightline summary TRACE --report critical_path</code>).</p>\n",
    );
    h.push_str(&legend());
    let runs: Vec<(&str, &RunReport)> = match &report.baseline {
        Some(b) => vec![("This run", &report.run), ("Baseline", b)],
        None => vec![("", &report.run)],
    };
    for (who, run) in runs {
        let prefix = if who.is_empty() {
            String::new()
        } else {
            format!("{who}: ")
        };
        if run.critical_paths.is_empty() {
            h.push_str(&format!("<p>{prefix}no iterations to follow.</p>\n"));
            continue;
        }
        let shares: Vec<String> = median_shares(run)
            .iter()
            .map(|(p, s)| format!("{} {s:.1} %", p.label()))
            .collect();
        h.push_str(&format!(
            "<h3>{prefix}median step: {}</h3>\n",
            if shares.is_empty() {
                "–".into()
            } else {
                shares.join(", ")
            }
        ));
        h.push_str("<table><tr><th>Iteration</th><th>Duration</th><th>Path</th><th>Bound by</th><th>Path by part</th><th>CPU by thread</th></tr>\n");
        for (n, (it, path)) in run
            .iterations
            .iterations
            .iter()
            .zip(&run.critical_paths)
            .enumerate()
            .take(LISTED)
        {
            let bound = path.bound_by().map_or("–".to_string(), |p| {
                format!(
                    "{} ({:.0} %)",
                    p.label(),
                    path.part_ns(p) as f64 * 100.0 / path.path_ns() as f64
                )
            });
            let threads: Vec<String> = path
                .cpu_by_thread
                .iter()
                .map(|(t, ns)| {
                    let label = run.path_threads.get(t).map_or("", String::as_str);
                    format!("{} {}", esc(label), format_ns(*ns as f64))
                })
                .collect();
            h.push_str(&format!(
                "<tr><td>{n} <code>{}</code>{}</td><td>{}</td><td>{}</td><td>{bound}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&it.name),
                if it.warmup { " (warm-up)" } else { "" },
                format_ns(it.duration_ns() as f64),
                format_ns(path.path_ns() as f64),
                bar(path, it.duration_ns()),
                threads.join("<br>"),
            ));
        }
        h.push_str("</table>\n");
        let more = run.critical_paths.len().saturating_sub(LISTED);
        if more > 0 {
            h.push_str(&format!(
                "<p>and {more} more iterations (all in the median).</p>\n"
            ));
        }
        if let Some(notes) = run.critical_paths.first().map(|p| &p.notes) {
            for note in notes {
                h.push_str(&format!("<p class=\"note\">{}</p>\n", esc(note)));
            }
        }
    }
    h
}
