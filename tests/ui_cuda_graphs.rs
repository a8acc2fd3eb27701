//! CUDA graph executions in the window, on n25_graphs (nsys 2025.3, graphs traced as a whole):
//! a click selects one, its details name its graph and link to the `cudaGraphLaunch` that launched
//! it (its partner), and the Gaps tab's busy % counts graph time. Driven with `egui_kittest`; the
//! export lives in `../shared/traces`, and without it the test says so and passes.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::ui::{click_at, harness, settle, wait_for_load};
use egui_kittest::kittest::Queryable;
use sightline::analysis::{self, Filter};
use sightline::trace::{NO_INDEX, Trace};
use sightline::ui::panels::details;
use sightline::ui::timeline::{EventKind, EventRef};

/// The length of the union of `spans`.
fn union_ns(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (s, e) in spans {
        match out.last_mut() {
            Some(l) if s <= l.1 => l.1 = l.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out.iter().map(|(s, e)| e - s).sum()
}

/// `[start, end)` of events.
type Spans = Vec<(i64, i64)>;

/// The spans of device `device`'s kernels, copies and memsets, and of its graph executions.
fn device_spans(trace: &Trace, device: u32) -> (Spans, Spans) {
    let (mut eager, mut graphs) = (Vec::new(), Vec::new());
    for s in trace.streams.iter().filter(|s| s.key.device == device) {
        for (slice, spans) in [
            (&s.kernels, &trace.kernels.spans),
            (&s.memcpys, &trace.memcpys.spans),
            (&s.memsets, &trace.memsets.spans),
        ] {
            eager.extend(
                slice
                    .range
                    .clone()
                    .map(|i| (spans.start_ns[i], spans.end_ns[i])),
            );
        }
        let g = &trace.graphs.spans;
        graphs.extend(s.graphs.range.clone().map(|i| (g.start_ns[i], g.end_ns[i])));
    }
    (eager, graphs)
}

#[test]
fn a_graph_execution_selected_shows_its_graph_and_launch_and_counts_as_busy() {
    let Some(path) = common::shared_traces()
        .map(|d| d.join("n25_graphs.sqlite"))
        .filter(|p| p.is_file())
    else {
        eprintln!("SKIPPED: ../shared/traces/n25_graphs.sqlite is not beside the checkout");
        return;
    };
    let mut h = harness(Some(path));
    wait_for_load(&mut h);
    assert!(
        h.state().tab().error.is_none(),
        "{:?}",
        h.state().tab().error
    );
    let (graph, call, graph_id, call_name) = {
        let trace = h.state().trace().expect("trace");
        assert_eq!(trace.graphs.spans.len(), 120);
        // The longest execution: the easiest to hit.
        let g = (0..trace.graphs.spans.len())
            .max_by_key(|&i| trace.graphs.spans.duration_ns(i))
            .unwrap();
        let c = trace.graphs.api_call[g];
        assert_ne!(c, NO_INDEX, "graph execution {g} has a launching call");
        (
            EventRef::new(EventKind::Graph, g),
            EventRef::new(EventKind::ApiCall, c as usize),
            trace.graphs.graph_id[g],
            trace
                .str(trace.api_calls.spans.name[c as usize])
                .to_string(),
        )
    };
    assert!(call_name.starts_with("cudaGraphLaunch"), "{call_name}");

    // Bring it on screen, clear the selection, and click it as a user does.
    h.state_mut().reveal(graph);
    h.state_mut().tab_mut().timeline.selection = None;
    h.step();
    h.step();
    let rect = h
        .state()
        .event_screen_rect(graph)
        .expect("graph execution on screen");
    click_at(&mut h, rect.center());
    assert_eq!(h.state().selection(), Some(graph));
    // Its partner is the cudaGraphLaunch that launched it (the model's `partners`), drawn too.
    assert_eq!(h.state().selection_partners(), vec![call]);
    assert!(h.state().event_screen_rect(call).is_some());

    // The details: the graph's name and ids, and a link to the launch.
    {
        let app = h.state();
        let trace = app.trace().unwrap();
        let model = &app.tab().document.as_ref().unwrap().model;
        let facts = details::describe(trace, model, graph);
        assert!(
            facts
                .iter()
                .any(|(k, v)| *k == "Graph ID" && *v == graph_id.to_string()),
            "{facts:?}"
        );
        assert!(
            facts.iter().any(|(k, _)| *k == "Graph exec ID"),
            "{facts:?}"
        );
        assert_eq!(model.partners(trace, graph), vec![call]);
    }
    // (The tooltip under the pointer may repeat the facts: at least once, then.)
    for label in [
        format!("CUDA graph · CUDA graph {graph_id}"),
        "Graph ID".into(),
    ] {
        assert!(
            h.query_all_by_label(&label).count() >= 1,
            "the details do not show `{label}`"
        );
    }
    h.get_by_label_contains(&format!("CUDA API · {call_name}"))
        .click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(call));
    assert!(h.state().selection_partners().contains(&graph));

    // The Gaps tab: GPU 0's busy % counts graph time. Without the graph executions it would be
    // lower, over the same window, by exactly the time only graphs cover.
    h.get_by_label("Gaps").click();
    settle(&mut h);
    let (shown, without) = {
        let trace = h.state().trace().unwrap();
        let activity = analysis::gpu_activity(trace, &Filter::all());
        let a = activity.iter().find(|a| a.device == 0).expect("GPU 0");
        let (eager, graphs) = device_spans(trace, 0);
        assert!(!graphs.is_empty());
        let (lo, hi) = a.window.unwrap();
        let all: Vec<(i64, i64)> = eager.iter().chain(&graphs).copied().collect();
        assert_eq!(lo, all.iter().map(|s| s.0).min().unwrap());
        assert_eq!(hi, all.iter().map(|s| s.1).max().unwrap());
        let busy_all = union_ns(all);
        let busy_eager = union_ns(eager.clone());
        let graph_only = busy_all - busy_eager;
        assert_eq!(a.busy_ns, busy_all);
        assert!(graph_only > 0, "graphs add no time of their own");
        let with = a.busy_percent().unwrap();
        let same_window = busy_eager as f64 * 100.0 / (hi - lo) as f64;
        let share = graph_only as f64 * 100.0 / (hi - lo) as f64;
        assert!((with - same_window - share).abs() < 1e-9);
        // What a view without graph executions would show: its own window, eager work only.
        let eager_lo = eager.iter().map(|s| s.0).min().unwrap();
        let eager_hi = eager.iter().map(|s| s.1).max().unwrap();
        let without = busy_eager as f64 * 100.0 / (eager_hi - eager_lo) as f64;
        println!(
            "GPU 0: busy {with:.1} % with graph executions ({graph_only} ns only theirs, \
             {share:.1} points), {same_window:.1} % without over the same window, {without:.1} % \
             over the eager work's own window"
        );
        (format!("{with:.1} %"), format!("{without:.1} %"))
    };
    assert_ne!(shown, without);
    assert!(
        h.query_all_by_label(&shown).count() >= 1,
        "the Gaps tab does not show GPU 0 busy {shown}"
    );
}
