//! The hover tooltips of the timeline: an event's (the same facts as the details panel, in a
//! compact grid, and the first frames of its call stack when it has one), a counter sample's, a
//! CPU row's and a pinned query interval's.

use egui::Ui;

use super::event_facts as details;
use crate::timeline::counters::MetricHover;
use crate::timeline::cpu_row::{CpuHover, running_share};
use crate::timeline::navigation::format_duration;
use crate::timeline::rows::{EventRef, TimelineModel};
use crate::timeline::sql_tracks::SqlHit;
use crate::trace::Trace;

/// Frames listed in a sample's tooltip before "… N more".
const SAMPLE_TOOLTIP_FRAMES: usize = 24;

pub fn event_tooltip(ui: &mut Ui, trace: &Trace, model: &TimelineModel, event: EventRef) {
    facts_grid(
        ui,
        "sightline_tooltip",
        details::describe(trace, model, event),
    );
    details::call_stack_ui(
        ui,
        trace,
        details::call_stack(trace, event),
        details::TOOLTIP_FRAMES,
    );
}

/// (field, value) pairs as a compact two-column grid: the body of every timeline tooltip.
pub fn facts_grid(ui: &mut Ui, id: &str, facts: Vec<(&'static str, String)>) {
    egui::Grid::new(id)
        .num_columns(2)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            for (key, value) in facts {
                ui.weak(key);
                ui.label(value);
                ui.end_row();
            }
        });
}

/// The hover tooltip of a counter sample.
pub fn metric_tooltip(ui: &mut Ui, trace: &Trace, hover: MetricHover) {
    let Some(s) = trace.gpu_metrics.series.get(hover.series) else {
        return;
    };
    let (Some(&value), Some(&t)) = (s.value.get(hover.sample), s.time_ns.get(hover.sample)) else {
        return;
    };
    let mut facts = vec![
        ("Metric", s.title.clone()),
        ("Value", s.format_value(value)),
        ("Time", format_duration(t as f64)),
        ("GPU", trace.gpu_title(s.device)),
    ];
    let (a, b) = hover.in_column;
    if b > a + 1
        && let Some((min, max)) = s.min_max_of(a..b)
    {
        facts.push((
            "In this pixel",
            format!(
                "{} samples, {} – {}",
                b - a,
                s.format_value(min),
                s.format_value(max)
            ),
        ));
    }
    facts_grid(ui, "sightline_metric_tooltip", facts);
}

/// The facts of a hovered CPU row: the sample's time and call stack, or the thread's running
/// share of `window` (the range selection, else the view).
pub fn cpu_tooltip(ui: &mut Ui, trace: &Trace, hover: CpuHover, window: (i64, i64), what: &str) {
    let Some(t) = trace.threads.get(hover.thread) else {
        return;
    };
    let mut facts: Vec<(&'static str, String)> = Vec::new();
    if let Some(i) = hover.sample {
        facts.push(("Event", "CPU sample".to_string()));
        facts.push(("Time", format_duration(trace.cpu_samples.time_ns[i] as f64)));
    } else {
        let r = t.running.range.clone();
        let starts = &trace.thread_states.start_ns[r.clone()];
        let k = starts.partition_point(|&s| s <= hover.t_ns);
        let running = k > 0 && trace.thread_states.end_ns[r.start + k - 1] > hover.t_ns;
        facts.push((
            "State",
            if t.sched_span.is_none() {
                "not recorded".to_string()
            } else if running {
                "running".to_string()
            } else {
                "not running".to_string()
            },
        ));
    }
    let name = trace.str(t.name);
    facts.push(("Thread", format!("{name} [{}]", t.tid)));
    if let Some((running, share)) = running_share(trace, t, window.0, window.1) {
        facts.push((
            "CPU share",
            format!(
                "{share:.1} % of {what} ({} running)",
                format_duration(running as f64)
            ),
        ));
    }
    facts_grid(ui, "sightline_cpu_tooltip", facts);
    if let Some(i) = hover.sample {
        let frames = trace.stacks.frames(trace.cpu_samples.stack[i]);
        ui.separator();
        if frames.is_empty() {
            ui.weak("No call stack recorded for this sample");
            return;
        }
        stack_lines(ui, trace, frames, SAMPLE_TOOLTIP_FRAMES);
    }
}

/// A call stack, innermost first: function in full, module as its file name.
pub fn stack_lines(ui: &mut Ui, trace: &Trace, frames: &[crate::trace::Frame], max: usize) {
    for f in frames.iter().take(max) {
        let module = trace.str(f.module);
        let module = module.rsplit('/').next().unwrap_or(module);
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new(trace.str(f.function)).monospace());
            ui.weak(module);
        });
    }
    if frames.len() > max {
        ui.weak(format!("… {} more frames", frames.len() - max));
    }
}

/// The tooltip (and the details panel) of a pinned interval: its track, times and every column
/// of its row.
pub fn sql_tooltip(ui: &mut Ui, model: &TimelineModel, hit: SqlHit, origin_ns: i64) {
    let Some(track) = model.sql_tracks.get(hit.track) else {
        return;
    };
    let Some(iv) = track.intervals.get(hit.interval) else {
        return;
    };
    ui.strong(format!("SQL · {}", track.title));
    egui::Grid::new("sightline_sql_tooltip")
        .num_columns(2)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            for (key, value) in [
                ("Start", format_duration((iv.start_ns - origin_ns) as f64)),
                (
                    "Duration",
                    format_duration((iv.end_ns - iv.start_ns) as f64),
                ),
            ] {
                ui.weak(key);
                ui.label(value);
                ui.end_row();
            }
            for (column, value) in track.row_lines(hit.interval).into_iter().take(16) {
                ui.weak(column);
                ui.label(value);
                ui.end_row();
            }
        });
}
