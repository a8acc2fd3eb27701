//! The sections of the report page, each a function from the gathered [`Report`] to HTML:
//! what changed against the baseline, key metrics with their targets, findings, top tables
//! (and their diffs), host threads, configuration.

use super::html::{esc, file_name};
use super::metrics::{Check, GpuFigures};
use super::tables::TOP_ROWS;
use super::{Report, RunReport};
use crate::analysis::Cell;
use crate::analysis::diff::Status;
use crate::analysis::headline::{format_ns, headline_text, judged};

fn pct(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |v| format!("{v:.1} %"))
}

/// The verdict, and why a target does not apply: `n/a — copies are 0.3 % of the active span`.
fn badge(c: &Check) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>{}",
        serde_json::to_value(c.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        c.verdict.label(),
        c.note
            .as_ref()
            .map_or(String::new(), |n| format!(" — {}", esc(n)))
    )
}

/// A time in the page: from the trace's origin.
fn at(run: &RunReport, t_ns: i64) -> String {
    format_ns((t_ns - run.time_origin_ns) as f64)
}

/// The headline lines that changed, worse first, each group by size of the change.
pub fn what_changed(report: &Report) -> String {
    let mut better = Vec::new();
    let mut worse = Vec::new();
    for row in &report.headline_rows {
        let t = headline_text(row);
        let line = format!(
            "<li><b>{}</b>: {} → {} ({}{})</li>",
            esc(&t.metric),
            esc(&t.base),
            esc(&t.new),
            esc(&t.delta),
            if t.delta_percent.is_empty() {
                String::new()
            } else {
                format!(", {}", esc(&t.delta_percent))
            }
        );
        match judged(t.change, t.better) {
            Some(true) => better.push(line),
            Some(false) => worse.push(line),
            None => {}
        }
    }
    let mut h = String::from(
        "<h2 id=\"changed\">What changed against the baseline</h2>\n<div class=\"cols\">\n",
    );
    for (title, class, lines) in [("Worse", "worse", &worse), ("Better", "better", &better)] {
        h.push_str(&format!("<div><h3 class=\"{class}\">{title}</h3>\n"));
        if lines.is_empty() {
            h.push_str("<p>Nothing.</p>\n");
        } else {
            h.push_str(&format!("<ul>{}</ul>\n", lines.join("\n")));
        }
        h.push_str("</div>\n");
    }
    h.push_str("</div>\n");
    // The kernels that moved most.
    if let Some(d) = report
        .diffs
        .iter()
        .find(|d| d.report == "cuda_gpu_kern_sum")
    {
        let moved: Vec<String> = d
            .rows
            .iter()
            .take(3)
            .map(|r| {
                let delta = r.delta_total();
                format!(
                    "<li><span class=\"{}\">{}{}</span> total in <code>{}</code> ({})</li>",
                    if delta > 0.0 { "worse" } else { "better" },
                    if delta > 0.0 { "+" } else { "" },
                    format_ns(delta),
                    esc(&r.name),
                    r.status().label()
                )
            })
            .collect();
        if !moved.is_empty() {
            h.push_str(&format!(
                "<h3>Kernels that moved most</h3>\n<ul>{}</ul>\n",
                moved.join("\n")
            ));
        }
    }
    h
}

fn gpu_title(g: &GpuFigures) -> String {
    if g.name.is_empty() {
        format!("GPU {}", g.device)
    } else {
        format!("GPU {} · {}", g.device, g.name)
    }
}

/// Per GPU: each check with its target and verdict; with a baseline, the baseline's value and
/// the change beside it.
pub fn key_metrics(report: &Report) -> String {
    let run = &report.run;
    let mut h = String::from("<h2 id=\"metrics\">Key metrics</h2>\n");
    if run.gpus.is_empty() {
        h.push_str("<p>No GPU work in the range.</p>\n");
    }
    for g in &run.gpus {
        let base = report
            .baseline
            .as_ref()
            .and_then(|b| b.gpus.iter().find(|x| x.device == g.device));
        h.push_str(&format!(
            "<h3>{}</h3>\n<p>Active span {} (from {} to {}), busy {}, idle {} ({} in {} gaps ≥ 100 µs).</p>\n",
            esc(&gpu_title(g)),
            format_ns(g.measured_ns as f64),
            g.window_start_ns.map_or("–".into(), |t| at(run, t)),
            g.window_end_ns.map_or("–".into(), |t| at(run, t)),
            format_ns(g.busy_ns as f64),
            format_ns(g.idle_ns as f64),
            format_ns(g.idle_in_gaps_ns as f64),
            g.gaps
        ));
        h.push_str("<table>\n<tr><th>Metric</th>");
        if base.is_some() {
            h.push_str("<th class=\"num\">Baseline</th><th class=\"num\">This run</th><th class=\"num\">Change</th>");
        } else {
            h.push_str("<th class=\"num\">Value</th>");
        }
        h.push_str("<th>Target</th><th>Verdict</th></tr>\n");
        for c in &g.checks {
            h.push_str(&format!(
                "<tr><td><a href=\"#def-{}\">{}</a></td>",
                c.id,
                esc(c.metric)
            ));
            if let Some(b) = base {
                let bc = b.checks.iter().find(|x| x.id == c.id);
                let bv = bc.and_then(|x| x.value_pct);
                let change = match (bv, c.value_pct) {
                    (Some(b), Some(n)) => {
                        let d = n - b;
                        // Exposed communication and sync wait improve downwards.
                        let lower_is_better = matches!(c.id, "sync-wait" | "exposed-comm");
                        let class = if d == 0.0 {
                            ""
                        } else if (d < 0.0) == lower_is_better {
                            "better"
                        } else {
                            "worse"
                        };
                        format!(
                            "<span class=\"{class}\">{}{d:.1} pt</span>",
                            if d > 0.0 { "+" } else { "" }
                        )
                    }
                    _ => "–".to_string(),
                };
                h.push_str(&format!(
                    "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{change}</td>",
                    pct(bv),
                    pct(c.value_pct)
                ));
            } else {
                h.push_str(&format!("<td class=\"num\">{}</td>", pct(c.value_pct)));
            }
            h.push_str(&format!(
                "<td>{}</td><td>{}</td></tr>\n",
                esc(c.target),
                badge(c)
            ));
        }
        h.push_str("</table>\n");
    }
    if report.baseline.is_some() && !report.headline_rows.is_empty() {
        h.push_str("<h3>Headline (as the compare view shows it)</h3>\n<table>\n<tr><th>Metric</th><th class=\"num\">Baseline</th><th class=\"num\">This run</th><th class=\"num\">Delta</th><th class=\"num\">Delta (%)</th></tr>\n");
        for row in &report.headline_rows {
            let t = headline_text(row);
            let class = match judged(t.change, t.better) {
                Some(true) => "better",
                Some(false) => "worse",
                None => "",
            };
            h.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num {class}\">{}</td><td class=\"num {class}\">{}</td></tr>\n",
                esc(&t.metric),
                esc(&t.base),
                esc(&t.new),
                esc(&t.delta),
                esc(&t.delta_percent)
            ));
        }
        h.push_str("</table>\n");
    }
    h
}

/// The findings, costliest first.
pub fn findings(run: &RunReport) -> String {
    let mut h = String::from(
        "<h2 id=\"findings\">Findings, by time lost</h2>\n<p>Time lost: the GPU idle time each explains, counted once (<a href=\"#def-findings\">how</a>).</p>\n",
    );
    if run.findings.is_empty() {
        h.push_str("<p>No rule found anything and no GPU gap of 100 µs or more.</p>\n");
    }
    for (i, f) in run.findings.iter().enumerate() {
        let when = match (f.start_ns, f.end_ns) {
            (Some(s), Some(e)) => format!(
                "worst at {} – {}{} · <code>--range {}:{}</code>",
                at(run, s),
                at(run, e),
                f.device.map_or(String::new(), |d| format!(" on GPU {d}")),
                s,
                e
            ),
            _ => String::new(),
        };
        // What the rows add up to, where it is not the idle time they explain (a region's
        // length, a call's, time another finding explained first).
        let rows = if f.rows_ns == f.lost_ns {
            String::new()
        } else {
            format!(" ({} long in all)", format_ns(f.rows_ns as f64))
        };
        h.push_str(&format!(
            "<div class=\"finding\"><div>{}. <b>{}</b> — <span class=\"lost\">{} lost</span> in {} {}{rows}</div>\
             <div class=\"advice\">{}</div><div class=\"when\">{when} · <code>{}</code></div></div>\n",
            i + 1,
            esc(&f.title),
            format_ns(f.lost_ns as f64),
            f.count,
            if f.source == "idle_causes" { "gaps" } else { "findings" },
            esc(&f.advice),
            esc(&f.source)
        ));
    }
    h
}

/// A cell as the page shows it: durations with units, other numbers grouped.
fn cell_text(column: &str, c: &Cell) -> String {
    match (c.number(), column.ends_with("(ns)")) {
        (Some(v), true) => format_ns(v),
        _ => c.csv_text(),
    }
}

/// Columns a top table shows: the share, total, count, average, median and the name.
const SHOWN: [&str; 11] = [
    "Time (%)",
    "Total Time (ns)",
    "Instances",
    "Num Calls",
    "Count",
    "Calls",
    "Avg (ns)",
    "Med (ns)",
    "Name",
    "Range",
    "Style",
];

pub fn top_tables(report: &Report) -> String {
    let mut h = String::from("<h2 id=\"tops\">Top tables</h2>\n");
    for t in &report.run.tops {
        let cols: Vec<usize> = (0..t.table.columns.len())
            .filter(|&i| {
                SHOWN.contains(&t.table.columns[i].as_str()) || t.report == "torch_ops" && i < 6
            })
            .collect();
        h.push_str(&format!(
            "<h3>{} <code>{}</code> — first {} of {} rows</h3>\n<table>\n<tr>",
            esc(t.title),
            t.report,
            t.table.rows.len().min(TOP_ROWS),
            t.table.rows.len()
        ));
        for &i in &cols {
            h.push_str(&format!("<th>{}</th>", esc(&t.table.columns[i])));
        }
        h.push_str("</tr>\n");
        for row in t.table.rows.iter().take(TOP_ROWS) {
            h.push_str("<tr>");
            for &i in &cols {
                let col = &t.table.columns[i];
                let cell = row.cells.get(i).unwrap_or(&Cell::Null);
                let class = if cell.number().is_some() {
                    "num"
                } else {
                    "name"
                };
                h.push_str(&format!(
                    "<td class=\"{class}\">{}</td>",
                    esc(&cell_text(col, cell))
                ));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table>\n");
        if let Some(d) = report.diffs.iter().find(|d| d.report == t.report) {
            h.push_str(&format!(
                "<p>Against the baseline (by |Δ total|, first {}):</p>\n<table>\n<tr><th>Name</th><th class=\"num\">Base count</th><th class=\"num\">New count</th><th class=\"num\">Base total</th><th class=\"num\">New total</th><th class=\"num\">Δ total</th><th>Status</th></tr>\n",
                d.rows.len().min(TOP_ROWS)
            ));
            for r in d.rows.iter().take(TOP_ROWS) {
                let delta = r.delta_total();
                let total = |v: f64| {
                    if d.unit == "ns" {
                        format_ns(v)
                    } else {
                        format!("{v:.3} {}", d.unit)
                    }
                };
                let count = |s: Option<crate::analysis::diff::Side>| {
                    s.map_or("–".to_string(), |s| format!("{}", s.instances))
                };
                let class = if delta > 0.0 {
                    "worse"
                } else if delta < 0.0 {
                    "better"
                } else {
                    ""
                };
                h.push_str(&format!(
                    "<tr><td class=\"name\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num {class}\">{}{}</td><td>{}</td></tr>\n",
                    esc(&r.name),
                    count(r.base),
                    count(r.new),
                    total(r.base_total()),
                    total(r.new_total()),
                    if delta > 0.0 { "+" } else { "" },
                    total(delta),
                    match r.status() {
                        Status::Both => "",
                        s => s.label(),
                    }
                ));
            }
            h.push_str("</table>\n");
        }
    }
    h
}

/// The threads that launch GPU work and their sync wait.
pub fn host_threads(run: &RunReport) -> String {
    let mut h = String::from(
        "<h2 id=\"threads\">Host threads that launch GPU work</h2>\n<p><a href=\"#def-sync-wait\">Synchronisation wait</a> of each (target &lt; 10 %).</p>\n",
    );
    if run.threads.is_empty() {
        h.push_str("<p>No CUDA call of the trace is linked to GPU work.</p>\n");
        return h;
    }
    h.push_str("<table>\n<tr><th>Thread</th><th>GPUs</th><th class=\"num\">Launches</th><th class=\"num\">Active span</th><th class=\"num\">Sync wait</th><th class=\"num\">Share</th></tr>\n");
    for t in &run.threads {
        let devices: Vec<String> = t.devices.iter().map(u32::to_string).collect();
        h.push_str(&format!(
            "<tr><td>{} (pid {}, tid {})</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>\n",
            esc(if t.name.is_empty() { "thread" } else { &t.name }),
            t.pid,
            t.tid,
            devices.join(", "),
            t.launches,
            format_ns(t.active_ns as f64),
            format_ns(t.sync_ns as f64),
            pct(t.sync_percent())
        ));
    }
    h.push_str("</table>\n");
    h
}

fn config_table(run: &RunReport) -> String {
    let c = &run.config;
    let mut rows: Vec<(String, String)> = vec![
        ("Trace".into(), c.trace.clone()),
        ("Format".into(), c.format.to_string()),
        ("Written by".into(), c.profiler.clone()),
        (
            if c.gpus.len() == 1 { "GPU" } else { "GPUs" }.into(),
            if c.gpus.is_empty() {
                "none recorded".into()
            } else {
                c.gpus.join("; ")
            },
        ),
        ("Span".into(), format_ns(c.span_ns as f64)),
        (
            "Range reported".into(),
            match (c.range_start_ns, c.range_end_ns) {
                (None, None) => "the whole trace".into(),
                (s, e) => format!(
                    "{} to {}",
                    s.map_or("start".into(), |s| at(run, s)),
                    e.map_or("end".into(), |e| at(run, e))
                ),
            },
        ),
        (
            "Warm-up".into(),
            match c.excluded_ranges {
                Some(n) => format!("excluded ({n} NVTX range(s))"),
                None => "included".into(),
            },
        ),
        ("Recorded".into(), c.captured.join("; ")),
    ];
    rows.extend(c.options.iter().cloned());
    let mut h = String::from("<table>\n");
    for (k, v) in rows {
        h.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            esc(&k),
            esc(&v)
        ));
    }
    h.push_str("</table>\n");
    h
}

pub fn configuration(report: &Report) -> String {
    let mut h = String::from("<h2 id=\"configuration\">Configuration</h2>\n");
    match &report.baseline {
        Some(b) => {
            h.push_str(&format!(
                "<div class=\"cols\"><div><h3>This run: {}</h3>{}</div><div><h3>Baseline: {}</h3>{}</div></div>\n",
                esc(&file_name(&report.run.config.trace)),
                config_table(&report.run),
                esc(&file_name(&b.config.trace)),
                config_table(b)
            ));
        }
        None => h.push_str(&config_table(&report.run)),
    }
    h
}

/// The iterations chart of each run, with the count, median and outliers.
pub fn iterations(report: &Report) -> String {
    let mut h = String::from(
        "<h2 id=\"iterations\">Iterations</h2>\n<p><a href=\"#def-iterations\">What an iteration is</a></p>\n",
    );
    let runs: Vec<(&str, &RunReport)> = match &report.baseline {
        Some(b) => vec![("This run", &report.run), ("Baseline", b)],
        None => vec![("", &report.run)],
    };
    for (who, run) in runs {
        let its = &run.iterations;
        let prefix = if who.is_empty() {
            String::new()
        } else {
            format!("{who}: ")
        };
        let Some(svg) = super::iterations_chart::iterations_svg(its) else {
            h.push_str(&format!(
                "<p>{prefix}no repeated range family in this trace.</p>\n"
            ));
            continue;
        };
        let warmup = its.iterations.iter().filter(|i| i.warmup).count();
        let outliers: Vec<String> = its
            .iterations
            .iter()
            .enumerate()
            .filter(|(_, i)| i.outlier)
            .map(|(k, i)| {
                format!(
                    "{k} ({}, {})",
                    esc(&i.name),
                    format_ns(i.duration_ns() as f64)
                )
            })
            .collect();
        h.push_str(&format!(
            "<h3>{prefix}<code>{}</code> — {} iterations{}, median {}{}</h3>\n<figure>{svg}</figure>\n",
            esc(&its.family),
            its.iterations.len(),
            if warmup > 0 { format!(" ({warmup} warm-up)") } else { String::new() },
            super::iterations_chart::steady_median_ns(its).map_or("–".into(), format_ns),
            if outliers.is_empty() {
                String::new()
            } else {
                format!("; outliers: {}", outliers.join(", "))
            }
        ));
    }
    h
}
