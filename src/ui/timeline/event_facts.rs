//! What is known about one event, as (field, value) pairs: the hover tooltip shows them and the
//! details panel ([`crate::ui::panels::details`]) lists them, selectable, with buttons that jump
//! to the correlated partner. A CUDA or OS-runtime call recorded with a backtrace
//! (`--cudabacktrace`, `--osrt-backtrace-*`) also shows its call stack, innermost frame first, in
//! both. Here, in the timeline, so that the timeline's tooltip does not reach into the panels.

use egui::Ui;

use super::graph_facts;
use super::{EventKind, EventRef, TimelineModel, format_duration};
use crate::timeline::rows::stream_of;
use crate::timeline::unified_memory::{access_type_label, address_text, migration_label};
use crate::trace::{Frame, NvtxStyle, RangeKind, Trace, memory_kind_label, pid_of};

/// Frames of a call stack listed in an event's tooltip before "… N more frames".
pub const TOOLTIP_FRAMES: usize = 12;

/// The call stack recorded with a CUDA API or OS-runtime call, innermost frame first; empty for
/// any other event and for a call without one.
pub fn call_stack(trace: &Trace, event: EventRef) -> &[Frame] {
    let i = event.index as usize;
    let stack = match event.kind {
        EventKind::ApiCall => trace.api_calls.callchain.get(i),
        EventKind::Osrt => trace.osrt.callchain.get(i),
        _ => None,
    };
    stack.map_or(&[], |&s| trace.stacks.frames(s))
}

/// The facts of a unified-memory page fault (an instant for a CPU fault, a range for a GPU one).
fn describe_fault(trace: &Trace, event: EventRef) -> Vec<(&'static str, String)> {
    let i = event.index as usize;
    let um = &trace.unified_memory;
    let time = |ns: i64| format!("{} ({ns} ns)", format_duration(ns as f64));
    let process = |global_pid: i64| {
        let pid = pid_of(global_pid);
        match trace.process_name(pid) {
            "" => pid.to_string(),
            name => format!("{name} [{pid}]"),
        }
    };
    let mut facts = vec![("Kind", event.kind.label().to_string())];
    match event.kind {
        EventKind::CpuPageFault => {
            let f = &um.cpu_page_faults;
            let (Some(&address), Some(&start)) = (f.address.get(i), f.spans.start_ns.get(i)) else {
                return facts;
            };
            facts.push(("Address", address_text(address)));
            facts.push(("Function", trace.str(f.spans.name[i]).to_string()));
            facts.push(("Module", trace.str(f.module[i]).to_string()));
            facts.push(("Time", time(start)));
            facts.push(("Process", process(f.global_pid[i])));
        }
        EventKind::GpuPageFault => {
            let f = &um.gpu_page_faults;
            let (Some(&address), Some(&start)) = (f.address.get(i), f.spans.start_ns.get(i)) else {
                return facts;
            };
            facts.push(("Address", address_text(address)));
            facts.push(("Faults", f.faults[i].to_string()));
            facts.push(("Access type", access_type_label(f.access_type[i])));
            facts.push(("Start", time(start)));
            facts.push(("Duration", time(f.spans.duration_ns(i))));
            facts.push(("Device", trace.gpu_title(u32::from(f.device[i]))));
            facts.push(("Process", process(f.global_pid[i])));
        }
        _ => {}
    }
    facts
}

/// Is range `i` one of a PyTorch trace's own (not NVTX)?
fn n_is_torch(trace: &Trace, i: usize) -> bool {
    trace.nvtx.kind_of(i) != RangeKind::Nvtx
}

/// The facts about an event, in display order.
pub fn describe(
    trace: &Trace,
    model: &TimelineModel,
    event: EventRef,
) -> Vec<(&'static str, String)> {
    let i = event.index as usize;
    if matches!(
        event.kind,
        EventKind::CpuPageFault | EventKind::GpuPageFault
    ) {
        return describe_fault(trace, event);
    }
    let start = event.start_ns(trace);
    let end = event.end_ns(trace);
    let duration = end - start;
    let kind_text = match event.kind {
        EventKind::Memcpy => trace
            .memcpys
            .copy_kind
            .get(i)
            .and_then(|&k| migration_label(k)),
        // An XPlane's host ranges are TraceMe events; its GPU lane holds XProf's derived lines.
        EventKind::Nvtx if trace.format == crate::trace::TraceFormat::XPlane => {
            match trace.nvtx.kind_of(i) {
                RangeKind::Python => Some("Python frame"),
                RangeKind::GpuAnnotation => {
                    Some("XLA module / op on the GPU (derived as XProf does)")
                }
                _ => Some("TraceMe range (JAX / XLA runtime)"),
            }
        }
        EventKind::Nvtx => match trace.nvtx.kind_of(i) {
            RangeKind::Nvtx => None,
            RangeKind::Operator => Some("PyTorch operator"),
            RangeKind::ProfilerOverhead => Some("Profiler overhead (Kineto / CUPTI)"),
            RangeKind::Annotation => Some("PyTorch annotation (record_function)"),
            RangeKind::Python => Some("Python frame"),
            RangeKind::GpuAnnotation => Some("GPU annotation (record_function on the GPU)"),
        },
        _ => None,
    };
    let mut facts = vec![
        ("Kind", kind_text.unwrap_or(event.kind.label()).to_string()),
        ("Name", event.name(trace).to_string()),
        (
            "Start",
            // A PyTorch trace counts from an epoch: show the time into the trace, and the value
            // as written.
            format!(
                "{} ({start} ns)",
                format_duration((start - trace.time_origin_ns()) as f64)
            ),
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
            graph_facts::node_facts(trace, event, &mut facts);
            launch_latency(
                trace,
                k.api_call[i],
                (start, end),
                "Kernel time",
                &mut facts,
            );
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
            if let Some(&address) = m.virtual_address.get(i)
                && migration_label(kind).is_some()
                && address != 0
            {
                facts.push(("Virtual address", address_text(address)));
            }
            if duration > 0 {
                // bytes per ns is GB/s (10^9 bytes per second), the unit nsys reports.
                facts.push((
                    "Bandwidth",
                    format!("{:.2} GB/s", m.bytes[i] as f64 / duration as f64),
                ));
            }
            facts.push(("Correlation ID", m.correlation_id[i].to_string()));
            graph_facts::node_facts(trace, event, &mut facts);
        }
        EventKind::Memset => {
            stream_text(&mut facts);
            facts.push(("Bytes", bytes_text(trace.memsets.bytes[i])));
            facts.push((
                "Correlation ID",
                trace.memsets.correlation_id[i].to_string(),
            ));
            graph_facts::node_facts(trace, event, &mut facts);
        }
        EventKind::Graph => {
            let g = &trace.graphs;
            stream_text(&mut facts);
            facts.push(("Graph ID", g.graph_id[i].to_string()));
            facts.push(("Graph exec ID", g.graph_exec_id[i].to_string()));
            facts.push((
                "Note",
                "traced as a whole (nsys --cuda-graph-trace=graph): its kernels are not listed"
                    .to_string(),
            ));
            facts.push(("Correlation ID", g.correlation_id[i].to_string()));
            launch_latency(
                trace,
                g.api_call[i],
                (start, end),
                "Kernel time",
                &mut facts,
            );
        }
        EventKind::GraphLaunch => {
            stream_text(&mut facts);
            graph_facts::launch_facts(trace, i, &mut facts);
            let call = trace.graph_launches.api_call[i];
            launch_latency(trace, call, (start, end), "Span", &mut facts);
        }
        EventKind::ApiCall => {
            let a = &trace.api_calls;
            thread_text(trace, model, a.global_tid[i], &mut facts);
            facts.push(("Correlation ID", a.correlation_id[i].to_string()));
            // The GPU operations; a node-level graph launch is a group of them, not one more.
            let launched = model.launched.get(&event.index).map_or(0, |ops| {
                ops.iter()
                    .filter(|e| e.kind != EventKind::GraphLaunch)
                    .count()
            });
            if launched > 0 {
                facts.push(("Launched GPU ops", launched.to_string()));
            }
        }
        EventKind::Nvtx if n_is_torch(trace, i) => {
            let n = &trace.nvtx;
            facts.push(("Depth", n.depth[i].to_string()));
            if let Some(&id) = n.external_id.get(i).filter(|&&id| id != 0) {
                facts.push(("External id", id.to_string()));
            }
            if let Some(&shapes) = n.input_shapes.get(i).filter(|&&s| s != 0) {
                facts.push(("Input shapes", trace.str(shapes).to_string()));
            }
            let lane = trace
                .threads
                .iter()
                .find(|t| t.global_tid == n.global_tid[i])
                .and_then(|t| t.gpu_lane);
            match lane {
                Some(device) => facts.push(("Device", trace.gpu_title(device))),
                None => thread_text(trace, model, n.global_tid[i], &mut facts),
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
        EventKind::CpuPageFault | EventKind::GpuPageFault => {}
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
/// kernel time (the span of the GPU work, named `work`).
fn launch_latency(
    trace: &Trace,
    call: u32,
    (start, end): (i64, i64),
    work: &'static str,
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
    facts.push((work, text(end - start)));
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

/// A call stack as plain text for the clipboard: one "function (module)" line per frame,
/// innermost first.
pub fn stack_text(trace: &Trace, frames: &[Frame]) -> String {
    let mut out = String::from("Call stack (innermost first):\n");
    for f in frames {
        out.push_str(&format!(
            "  {} ({})\n",
            trace.str(f.function),
            trace.str(f.module)
        ));
    }
    out
}

/// The call stack section of an event's tooltip or details: a heading, then at most `max` frames,
/// innermost first, function and module each. Shows nothing for an event without a stack.
pub fn call_stack_ui(ui: &mut Ui, trace: &Trace, frames: &[Frame], max: usize) {
    if frames.is_empty() {
        return;
    }
    ui.separator();
    ui.weak(format!(
        "Call stack ({} frames, innermost first)",
        frames.len()
    ));
    super::tooltip::stack_lines(ui, trace, frames, max);
}
