//! CUDA graphs traced node by node in the window, on n25_graphs_node (nsys 2025.3,
//! `--cuda-graph-trace=node`): a launch shows as one gold block over its nodes; a click selects
//! it, its details count its nodes (the test's own SQL) and link to the `cudaGraphLaunch` that
//! ran it (its partner, "find the call"); its triangle expands it, and then its kernels are drawn
//! and clicked as kernels, each naming its launch; the details panel's button collapses it
//! again. Driven with `egui_kittest`; without `../shared/traces` the test says so and passes.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::ui::{click_at, harness, wait_for_load};
use egui::Pos2;
use egui_kittest::kittest::Queryable;
use sightline::timeline::graph_brackets::DISCLOSURE_PX;
use sightline::trace::NO_INDEX;
use sightline::ui::panels::details;
use sightline::ui::timeline::{EventKind, EventRef};

#[test]
fn a_node_level_graph_launch_is_one_block_joined_to_its_call_and_expands_into_its_kernels() {
    let Some(path) = common::shared_traces()
        .map(|d| d.join("n25_graphs_node.sqlite"))
        .filter(|p| p.is_file())
    else {
        eprintln!("SKIPPED: ../shared/traces/n25_graphs_node.sqlite is not beside the checkout");
        return;
    };
    let conn = common::open_ro(&path);
    let mut h = harness(Some(path));
    wait_for_load(&mut h);
    assert!(
        h.state().tab().error.is_none(),
        "{:?}",
        h.state().tab().error
    );
    let (launch, call, call_name, correlation) = {
        let trace = h.state().trace().expect("trace");
        let g = &trace.graph_launches;
        assert_eq!(g.len(), 120);
        // The longest launch: the easiest to hit.
        let l = (0..g.len())
            .max_by_key(|&i| g.spans.duration_ns(i))
            .unwrap();
        let c = g.api_call[l];
        assert_ne!(c, NO_INDEX, "launch {l} has its cudaGraphLaunch");
        (
            EventRef::new(EventKind::GraphLaunch, l),
            EventRef::new(EventKind::ApiCall, c as usize),
            trace
                .str(trace.api_calls.spans.name[c as usize])
                .to_string(),
            g.correlation_id[l],
        )
    };
    assert!(call_name.starts_with("cudaGraphLaunch"), "{call_name}");
    // Its nodes, by SQL: the rows with a graphNodeId and its correlationId.
    let nodes_by_sql: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL \
                     WHERE graphNodeId IS NOT NULL AND correlationId = ?1) \
                  + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET \
                     WHERE graphNodeId IS NOT NULL AND correlationId = ?1)",
            [correlation],
            |r| r.get(0),
        )
        .unwrap();

    // On screen, collapsed: click the middle of the block, where its kernels are.
    h.state_mut().reveal(launch);
    h.state_mut().tab_mut().timeline.selection = None;
    h.step();
    h.step();
    assert!(h.state().tab().timeline.view.expanded_graphs.is_empty());
    let rect = h
        .state()
        .event_screen_rect(launch)
        .expect("launch on screen");
    println!("launch {launch:?}: {rect:?} on screen, {nodes_by_sql} nodes");
    click_at(&mut h, rect.center());
    assert_eq!(
        h.state().selection(),
        Some(launch),
        "the block, not a kernel"
    );
    assert_eq!(h.state().selection_partners(), vec![call]);
    assert!(h.state().event_screen_rect(call).is_some());
    {
        let app = h.state();
        let trace = app.trace().unwrap();
        let model = &app.tab().document.as_ref().unwrap().model;
        let facts = details::describe(trace, model, launch);
        let nodes = facts.iter().find(|(k, _)| *k == "Nodes").expect("Nodes");
        assert!(
            nodes.1.starts_with(&format!("{nodes_by_sql} (")),
            "{facts:?}"
        );
        assert!(
            facts
                .iter()
                .any(|(k, v)| *k == "Correlation ID" && *v == correlation.to_string())
        );
        assert!(
            facts
                .iter()
                .any(|(k, v)| *k == "Launched by" && *v == call_name)
        );
        // The call's partners: the launch first, then its nodes, each counted once.
        let of_call = model.partners(trace, call);
        assert_eq!(of_call.first(), Some(&launch));
        assert_eq!(of_call.len() as i64, nodes_by_sql + 1);
    }
    let title = format!("CUDA graph launch · CUDA graph · {nodes_by_sql} nodes");
    assert!(
        h.query_all_by_label(&title).count() >= 1,
        "the details do not show `{title}`"
    );

    // Expand it with its triangle: the launch stays selected, its kernels come out.
    let triangle = Pos2::new(rect.left() + DISCLOSURE_PX / 2.0, rect.top() + 6.0);
    click_at(&mut h, triangle);
    assert!(
        h.state()
            .tab()
            .timeline
            .view
            .expanded_graphs
            .contains(&launch.index),
        "the triangle expands the launch"
    );
    assert_eq!(h.state().selection(), Some(launch));
    // Its longest kernel, clicked below the bar: a kernel now, naming its launch.
    let kernel = {
        let trace = h.state().trace().unwrap();
        let k = &trace.kernels;
        (0..k.spans.len())
            .filter(|&i| k.correlation_id[i] == correlation)
            .max_by_key(|&i| k.spans.duration_ns(i))
            .map(|i| EventRef::new(EventKind::Kernel, i))
            .unwrap()
    };
    let krect = h
        .state()
        .event_screen_rect(kernel)
        .expect("kernel on screen");
    assert!(krect.width() >= 3.0, "{krect:?}");
    click_at(&mut h, Pos2::new(krect.center().x, krect.bottom() - 3.0));
    assert_eq!(h.state().selection(), Some(kernel));
    {
        let app = h.state();
        let trace = app.trace().unwrap();
        let model = &app.tab().document.as_ref().unwrap().model;
        let facts = details::describe(trace, model, kernel);
        assert!(
            facts.iter().any(|(k, _)| *k == "Graph node ID"),
            "{facts:?}"
        );
        assert!(
            facts.iter().any(|(k, v)| *k == "CUDA graph launch"
                && v.contains(&format!("correlation ID {correlation}"))),
            "{facts:?}"
        );
        assert_eq!(model.partners(trace, kernel), vec![call]);
    }

    // The details panel's button folds it back into one block.
    h.get_by_label(&format!("Show as one block ({nodes_by_sql} nodes)"))
        .click();
    h.step();
    h.step();
    assert!(h.state().tab().timeline.view.expanded_graphs.is_empty());

    // Find the call: select the launch again and follow its partner link.
    click_at(&mut h, rect.center());
    assert_eq!(h.state().selection(), Some(launch));
    h.get_by_label_contains(&format!("CUDA API · {call_name}"))
        .click();
    h.step();
    h.step();
    assert_eq!(h.state().selection(), Some(call));
    assert!(h.state().selection_partners().contains(&launch));
}
