//! What a GPU idle gap says about itself, in the Gaps tab and on the timeline's hatching alike:
//! its cause, the call that launched the work ending it and, for a late launch, where the
//! launching thread's time went before that launch — in sync calls, other CUDA calls, OS-runtime
//! calls or untraced (CPU work nsys did not record), as `sightline gaps --causes --wide` prints
//! it ([`crate::analysis::gap_causes`]). Also the hit test that finds the hatched gap under the
//! pointer.

use egui::{Color32, Pos2, Rect, RichText, Ui};

use crate::analysis::gap_causes::{GapCauseInfo, HostBreakdown};
use crate::trace::Trace;
use crate::ui::theme::Palette;
use crate::ui::timeline::{
    GapMark, RowKind, RowPlacement, TimeToX, TimelineModel, ViewState, format_duration,
};

/// The four parts of a host-time split with their names, largest first (ties in the order
/// sync, CUDA API, OS runtime, untraced).
pub fn host_parts(h: &HostBreakdown) -> Vec<(&'static str, i64)> {
    let mut parts = vec![
        ("sync", h.sync_ns),
        ("CUDA API", h.cuda_api_ns),
        ("OS runtime", h.osrt_ns),
        ("untraced", h.untraced_ns),
    ];
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    parts
}

/// The split in one line, its non-zero parts largest first: `host: untraced 8.482 ms · CUDA API
/// 3.101 ms`.
pub fn host_line(h: &HostBreakdown) -> String {
    let parts: Vec<String> = host_parts(h)
        .into_iter()
        .filter(|&(_, ns)| ns > 0)
        .map(|(name, ns)| format!("{name} {}", format_duration(ns as f64)))
        .collect();
    if parts.is_empty() {
        "host: no time before the launch".to_string()
    } else {
        format!("host: {}", parts.join(" · "))
    }
}

/// The colour of a part of the split: the timeline's colours for sync calls, other CUDA calls
/// and OS-runtime calls; untraced time in the weak text colour.
pub fn part_colour(palette: &Palette, part: &str) -> Color32 {
    match part {
        "sync" => palette.api_sync,
        "CUDA API" => palette.api_call,
        "OS runtime" => palette.osrt,
        _ => palette.weak_text,
    }
}

/// A bar `width` wide split by the parts of `h`, each in its colour; the line of
/// [`host_line`] is its tooltip.
pub fn host_bar(ui: &mut Ui, palette: &Palette, h: &HostBreakdown, width: f32) {
    let (rect, response) = ui.allocate_exact_size(egui::vec2(width, 10.0), egui::Sense::hover());
    let total: i64 = host_parts(h).iter().map(|p| p.1).sum();
    let mut x = rect.left();
    if total > 0 {
        for (name, ns) in host_parts(h) {
            let w = width * ns as f32 / total as f32;
            let r = Rect::from_x_y_ranges(x..=x + w, rect.y_range());
            ui.painter().rect_filled(r, 0.0, part_colour(palette, name));
            x += w;
        }
    }
    response.on_hover_text(host_line(h));
}

/// The split written out for the chosen gap, each part in its colour with its time.
pub fn host_legend(ui: &mut Ui, palette: &Palette, h: &HostBreakdown) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Before the launch, the launching thread spent");
        for (name, ns) in host_parts(h) {
            ui.label(
                RichText::new(format!("{name} {}", format_duration(ns as f64)))
                    .color(part_colour(palette, name)),
            );
        }
    });
}

/// A gap's cause for a tooltip: what it means, the launching call, and for a late launch where
/// the launching thread's time went.
pub fn cause_text(trace: &Trace, c: &GapCauseInfo) -> String {
    let mut text = cause_summary(trace, c);
    if let Some(h) = c.host {
        text.push_str(&format!(
            "before the launch, the launching thread spent {} in sync calls, {} in other CUDA \
             calls, {} in OS-runtime calls and {} untraced\n",
            format_duration(h.sync_ns as f64),
            format_duration(h.cuda_api_ns as f64),
            format_duration(h.osrt_ns as f64),
            format_duration(h.untraced_ns as f64),
        ));
    }
    text
}

/// A gap's cause without the host-time split: what it means and the launching call.
pub fn cause_summary(trace: &Trace, c: &GapCauseInfo) -> String {
    let mut text = format!("{}: {}\n", c.cause.label(), c.cause.explanation());
    let spans = &trace.api_calls.spans;
    if let Some(call) = c.launch_call.filter(|&i| i < spans.len()) {
        text.push_str(&format!(
            "launched by {} at {}\n",
            trace.str(spans.name[call]),
            format_duration(spans.start_ns[call] as f64)
        ));
    }
    let inside = c.inside_line(trace);
    if !inside.is_empty() {
        text.push_str(&format!("the launching thread was inside {inside}\n"));
    }
    if let Some(call) = c.graph_launch.filter(|&i| i < spans.len()) {
        text.push_str(&format!(
            "{} at {} launched a graph with no GPU work in this export\n",
            trace.str(spans.name[call]),
            format_duration(spans.start_ns[call] as f64)
        ));
    }
    text
}

/// The hatched gap under `pos` in the event area `area`: a gap of the hovered GPU row (whole-GPU
/// gaps) or stream row (its own gaps and its GPU's), at least a pixel wide on screen; the
/// longest when several are.
pub fn gap_at(
    trace: &Trace,
    model: &TimelineModel,
    view: &ViewState,
    rows: &[RowPlacement],
    area: Rect,
    pos: Pos2,
    gaps: &[GapMark],
) -> Option<GapMark> {
    if gaps.is_empty() || !area.contains(pos) {
        return None;
    }
    let placement = rows
        .iter()
        .find(|p| pos.y >= p.top && pos.y < p.top + p.height)?;
    let kind = &model.rows.get(placement.row)?.kind;
    let map = TimeToX::new(view, area.left(), area.width());
    gaps.iter()
        .filter(|g| match kind {
            RowKind::GpuSummary { device } => *device == g.device && g.stream.is_none(),
            RowKind::Stream { stream } => trace
                .streams
                .get(*stream)
                .is_some_and(|s| s.key.device == g.device && g.stream.is_none_or(|k| k == s.key)),
            _ => false,
        })
        .filter(|g| {
            let (x0, x1) = (map.x(g.start_ns), map.x(g.end_ns));
            pos.x >= x0 - 0.5 && pos.x <= x1.max(x0 + 1.0) + 0.5
        })
        .max_by_key(|g| g.end_ns - g.start_ns)
        .copied()
}

/// The tooltip of a hatched gap: where and how long, its cause and the host-time split.
pub fn show(ui: &mut Ui, trace: &Trace, gap: &GapMark) {
    let stream = gap
        .stream
        .map_or(String::new(), |s| format!(" stream {}", s.stream));
    ui.strong(format!(
        "GPU {}{stream} idle {}",
        gap.device,
        format_duration((gap.end_ns - gap.start_ns) as f64)
    ));
    ui.label(format!(
        "{} – {}",
        format_duration((gap.start_ns - trace.time_origin_ns()) as f64),
        format_duration((gap.end_ns - trace.time_origin_ns()) as f64)
    ));
    if let Some(info) = &gap.info {
        ui.label(cause_summary(trace, info).trim_end());
        if let Some(h) = &info.host {
            ui.label(format!(
                "the launching thread before the launch: {}",
                host_line(h).trim_start_matches("host: ")
            ));
        }
    }
}
