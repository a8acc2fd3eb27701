//! What is known about one event, as (field, value) pairs: shown in the hover tooltip and in the
//! details panel, where it can be selected and copied, with buttons that jump to the correlated
//! partner (the API call that launched a GPU op, or the ops a call launched).

use egui::Ui;

use crate::trace::{NvtxStyle, Trace, memory_kind_label};
use crate::ui::timeline::rows::stream_of;
use crate::ui::timeline::{EventKind, EventRef, TimelineModel, format_duration};

/// The facts about an event, in display order.
pub fn describe(
    trace: &Trace,
    model: &TimelineModel,
    event: EventRef,
) -> Vec<(&'static str, String)> {
    let i = event.index as usize;
    let start = event.start_ns(trace);
    let end = event.end_ns(trace);
    let duration = end - start;
    let mut facts = vec![
        ("Kind", event.kind.label().to_string()),
        ("Name", event.name(trace).to_string()),
        (
            "Start",
            format!("{} ({start} ns)", format_duration(start as f64)),
        ),
        (
            "Duration",
            format!("{} ({duration} ns)", format_duration(duration as f64)),
        ),
    ];
    let stream_text = |facts: &mut Vec<(&'static str, String)>| {
        if let Some(s) = stream_of(trace, event).and_then(|s| trace.streams.get(s)) {
            facts.push((
                "Stream",
                format!("{} (context {})", s.key.stream, s.key.context),
            ));
            facts.push(("Device", trace.gpu_title(s.key.device)));
            facts.push(("Process", s.key.pid.to_string()));
        }
    };
    match event.kind {
        EventKind::Kernel => {
            let k = &trace.kernels;
            let short = trace.str(k.short_name[i]);
            if !short.is_empty() && short != event.name(trace) {
                facts.push(("Short name", short.to_string()));
            }
            stream_text(&mut facts);
            let g = k.grid[i];
            let b = k.block[i];
            facts.push(("Grid", format!("<<<{}, {}, {}>>>", g[0], g[1], g[2])));
            facts.push(("Block", format!("<<<{}, {}, {}>>>", b[0], b[1], b[2])));
            facts.push(("Registers/thread", k.registers_per_thread[i].to_string()));
            facts.push((
                "Static shared mem",
                bytes_text(u64::from(k.static_shared_bytes[i])),
            ));
            facts.push((
                "Dynamic shared mem",
                bytes_text(u64::from(k.dynamic_shared_bytes[i])),
            ));
            facts.push(("Correlation ID", k.correlation_id[i].to_string()));
            launch_latency(trace, k.api_call[i], start, end, &mut facts);
        }
        EventKind::Memcpy => {
            let m = &trace.memcpys;
            stream_text(&mut facts);
            let kind = m.copy_kind[i];
            facts.push(("Direction", format!("{} ({})", kind.label(), kind.short())));
            facts.push(("Bytes", bytes_text(m.bytes[i])));
            facts.push(("Source", memory_kind_label(m.src_kind[i]).to_string()));
            facts.push(("Destination", memory_kind_label(m.dst_kind[i]).to_string()));
            if kind.0 == 10 {
                facts.push((
                    "Peer devices",
                    format!("GPU {} to GPU {}", m.src_device[i], m.dst_device[i]),
                ));
            }
            if duration > 0 {
                // bytes per ns is GB/s (10^9 bytes per second), the unit nsys reports.
                facts.push((
                    "Bandwidth",
                    format!("{:.2} GB/s", m.bytes[i] as f64 / duration as f64),
                ));
            }
            facts.push(("Correlation ID", m.correlation_id[i].to_string()));
        }
        EventKind::Memset => {
            stream_text(&mut facts);
            facts.push(("Bytes", bytes_text(trace.memsets.bytes[i])));
            facts.push((
                "Correlation ID",
                trace.memsets.correlation_id[i].to_string(),
            ));
        }
        EventKind::ApiCall => {
            let a = &trace.api_calls;
            thread_text(trace, model, a.global_tid[i], &mut facts);
            facts.push(("Correlation ID", a.correlation_id[i].to_string()));
            let launched = model.launched.get(&event.index).map_or(0, Vec::len);
            if launched > 0 {
                facts.push(("Launched GPU ops", launched.to_string()));
            }
        }
        EventKind::Nvtx => {
            let n = &trace.nvtx;
            let domain = trace.str(n.domain[i]);
            facts.push((
                "Domain",
                if domain.is_empty() {
                    "default".to_string()
                } else {
                    domain.to_string()
                },
            ));
            facts.push(("Depth", n.depth[i].to_string()));
            facts.push(("Style", n.style[i].label().to_string()));
            if n.style[i] != NvtxStyle::Mark && n.unclosed[i] {
                facts.push(("Note", "never closed in the capture".to_string()));
            }
            thread_text(trace, model, n.global_tid[i], &mut facts);
        }
        EventKind::Osrt => {
            if let Some(t) = trace.threads.iter().find(|t| t.osrt.range.contains(&i)) {
                facts.push(("Thread", thread_title(trace, t)));
                facts.push(("Process", t.pid.to_string()));
            }
        }
    }
    facts
}

fn thread_title(trace: &Trace, t: &crate::trace::ThreadTrack) -> String {
    let name = trace.str(t.name);
    if name.is_empty() {
        format!("{}", t.tid)
    } else {
        format!("{name} [{}]", t.tid)
    }
}

fn thread_text(
    trace: &Trace,
    model: &TimelineModel,
    global_tid: i64,
    facts: &mut Vec<(&'static str, String)>,
) {
    if let Some(t) = model
        .thread_of(global_tid)
        .and_then(|t| trace.threads.get(t))
    {
        facts.push(("Thread", thread_title(trace, t)));
        let process = trace.process_name(t.pid);
        facts.push((
            "Process",
            if process.is_empty() {
                t.pid.to_string()
            } else {
                format!("{process} [{}]", t.pid)
            },
        ));
    }
}

/// The three times of a launch as `cuda_kern_exec_sum` defines them: API time (the launching
/// call), queue time (call end → kernel start; nsys reports none when it is not positive) and
/// kernel time.
fn launch_latency(
    trace: &Trace,
    call: u32,
    start: i64,
    end: i64,
    facts: &mut Vec<(&'static str, String)>,
) {
    let c = call as usize;
    let api = &trace.api_calls.spans;
    if call == crate::trace::NO_INDEX || c >= api.len() {
        facts.push(("Launched by", "no launching call in the trace".to_string()));
        return;
    }
    let (call_start, call_end) = (api.start_ns[c], api.end_ns[c]);
    facts.push(("Launched by", trace.str(api.name[c]).to_string()));
    let text = |ns: i64| format!("{} ({ns} ns)", format_duration(ns as f64));
    facts.push(("API time", text(call_end - call_start)));
    let queue = start - call_end;
    facts.push((
        "Queue time",
        if queue > 0 {
            text(queue)
        } else {
            format!(
                "none (started {} before the call returned)",
                format_duration(-queue as f64)
            )
        },
    ));
    facts.push(("Kernel time", text(end - start)));
}

/// "12.0 MiB (12582912 B)".
pub fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    let human = if b >= (1u64 << 30) as f64 {
        format!("{:.2} GiB", b / (1u64 << 30) as f64)
    } else if b >= (1u64 << 20) as f64 {
        format!("{:.2} MiB", b / (1u64 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.2} KiB", b / 1024.0)
    } else {
        return format!("{bytes} B");
    };
    format!("{human} ({bytes} B)")
}

/// The facts as plain text, one "field: value" per line (what the Copy button puts on the clipboard).
pub fn as_text(facts: &[(&'static str, String)]) -> String {
    facts.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
}

/// The details panel of the selected event. Returns an event to select and reveal when the user
/// clicks one of its correlated partners.
pub fn show(
    ui: &mut Ui,
    trace: &Trace,
    model: &TimelineModel,
    selected: Option<EventRef>,
) -> Option<EventRef> {
    let Some(event) = selected else {
        ui.weak("Click an event to see its details. Double-click zooms to it. Press ? for keys.");
        return None;
    };
    let facts = describe(trace, model, event);
    let mut go_to = None;
    ui.horizontal(|ui| {
        ui.strong(format!("{} · {}", event.kind.label(), event.name(trace)));
        if ui
            .button("Copy")
            .on_hover_text("Copy these details as text")
            .clicked()
        {
            ui.ctx().copy_text(as_text(&facts));
        }
    });
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.columns(2, |cols| {
                egui::Grid::new("sightline_details")
                    .num_columns(2)
                    .spacing([12.0, 2.0])
                    .show(&mut cols[0], |ui| {
                        for (key, value) in &facts {
                            ui.weak(*key);
                            ui.add(egui::Label::new(value.as_str()).selectable(true));
                            ui.end_row();
                        }
                    });
                let ui = &mut cols[1];
                let partners = model.partners(trace, event);
                if !partners.is_empty() {
                    ui.strong(if event.kind == EventKind::ApiCall {
                        "Launched on the GPU"
                    } else {
                        "Launched by"
                    });
                    for p in partners.iter().take(50) {
                        let text = format!(
                            "{} · {} @ {}",
                            p.kind.label(),
                            p.name(trace),
                            format_duration(p.start_ns(trace) as f64)
                        );
                        if ui.link(text).clicked() {
                            go_to = Some(*p);
                        }
                    }
                    if partners.len() > 50 {
                        ui.weak(format!("… and {} more", partners.len() - 50));
                    }
                }
            });
        });
    go_to
}
