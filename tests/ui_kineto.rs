//! PyTorch profiler traces in the window, driven as a person would: a `.pt.trace.json.gz`
//! dropped on the window opens in a tab of its own with the rows a PyTorch trace has (operators,
//! annotations, folded Python frames, the GPU with its stream and GPU annotation lane, GPU memory
//! in use), and the compare view puts a PyTorch trace beside the Nsight Systems export of the
//! same workload with a diff headline. Uses the real files in `../shared/traces`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::DroppedPath;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::timeline::rows::Row;
use sightline::trace::TraceFormat;
use sightline::ui::SightlineApp;
use sightline::ui::timeline::{GroupId, RowKind};

/// `../shared/traces/pytorch/<name>`, or `None` (said loudly) when it is not there.
fn pytorch_trace(name: &str) -> Option<PathBuf> {
    let path = common::shared_traces()?.join("pytorch").join(name);
    if path.is_file() {
        Some(path)
    } else {
        println!("SKIPPED: ../shared/traces/pytorch/{name} not present; 0 files checked");
        None
    }
}

fn busy(app: &SightlineApp) -> bool {
    app.is_loading()
        || app.tabs.iter().any(|t| t.analysis.busy())
        || app.compare.as_ref().is_some_and(|c| c.diff.busy())
}

/// Steps until every load and background job is done and drawn.
fn settle(h: &mut Harness<'static, SightlineApp>) {
    common::ui::settle_with(h, busy);
}

fn harness(app: SightlineApp) -> Harness<'static, SightlineApp> {
    Harness::builder()
        .with_size(Vec2::new(1600.0, 1000.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app)
}

fn row<'a>(rows: &'a [Row], title: &str) -> &'a Row {
    rows.iter().find(|r| r.title == title).unwrap_or_else(|| {
        let titles: Vec<&str> = rows.iter().map(|r| r.title.as_str()).collect();
        panic!("no row `{title}` in {titles:?}")
    })
}

#[test]
fn a_dropped_pytorch_trace_opens_in_its_own_tab_with_its_rows() {
    let Some(path) = pytorch_trace("kt_train.pt.trace.json.gz") else {
        return;
    };
    // A window with a trace open already: the dropped file gets a tab of its own.
    let mut h = harness(SightlineApp::new(Some(common::fixture("moe"))));
    settle(&mut h);
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedPath(path.clone())));
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.tabs.len(), 2);
    assert_eq!(app.active, 1);
    let tab = app.tab();
    assert!(tab.error.is_none(), "{:?}", tab.error);
    assert_eq!(tab.title(), "kt_train.pt.trace.json.gz");
    assert!(h.query_by_label("kt_train.pt.trace.json.gz").is_some());
    assert!(h.query_by_label("moe.sqlite").is_some());
    let trace = app.trace().expect("the dropped trace is loaded");
    assert_eq!(trace.format, TraceFormat::Kineto);
    assert_eq!(trace.path, path);
    assert!(trace.kernels.spans.len() > 1000);

    let doc = tab.document.as_ref().expect("document");
    let rows = &doc.model.rows;
    // The GPU first, its stream and its GPU annotation lane under it.
    assert!(
        rows[0].title.starts_with("GPU 0 · NVIDIA H100"),
        "{}",
        rows[0].title
    );
    assert_eq!(rows[0].toggles, Some(GroupId::Gpu(0)));
    let stream = row(rows, "Stream 7");
    assert!(matches!(stream.kind, RowKind::Stream { .. }));
    assert_eq!(stream.hidden_by, vec![GroupId::Gpu(0)]);
    let lane = row(rows, "GPU annotations · depth 0");
    assert!(lane.hidden_by.contains(&GroupId::Gpu(0)));
    let RowKind::Nvtx { thread, .. } = lane.kind else {
        panic!("{:?}", lane.kind)
    };
    assert_eq!(trace.threads[thread].gpu_lane, Some(0));

    // A CPU thread's operators, annotations and Python frames, each kind nesting apart.
    for title in ["Operators · depth 0", "Annotations · depth 0"] {
        let r = row(rows, title);
        assert!(matches!(r.kind, RowKind::Nvtx { .. }), "{title}");
        assert!(
            r.hidden_by.iter().any(|g| matches!(g, GroupId::Process(_))),
            "{title} is under its process"
        );
    }
    assert!(rows.iter().any(|r| r.title == "Operators · depth 1"));
    // Python frames fold under their outermost level, closed at first.
    let python = row(rows, "Python · depth 0");
    let group = python
        .toggles
        .expect("Python · depth 0 opens its deeper frames");
    assert!(matches!(group, GroupId::Levels { .. }));
    assert!(tab.timeline.view.collapsed.contains(&group));
    let deeper = row(rows, "Python · depth 1");
    assert!(deeper.hidden_by.contains(&group));

    // GPU memory in use, from the allocator's `[memory]` events.
    let memory = rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Memory { .. }))
        .expect("a memory row");
    assert!(memory.title.starts_with("GPU 0 · pid "), "{}", memory.title);
    // The first view fits the GPU's work.
    let (first, last) = trace.gpu_span().expect("GPU work");
    let view = &tab.timeline.view;
    assert!(
        view.start_ns <= first as f64 && view.end_ns >= last as f64,
        "view {}..{} vs GPU {first}..{last}",
        view.start_ns,
        view.end_ns
    );
    let titles: Vec<&str> = rows.iter().map(|r| r.title.as_str()).collect();
    println!("checked 1 dropped PyTorch trace, rows {titles:?}");
}

#[test]
fn a_pytorch_trace_compares_with_the_nsys_export_of_the_same_workload() {
    let Some(kineto) = pytorch_trace("kt_ws_baseline.pt.trace.json.gz") else {
        return;
    };
    let n25 = common::shared_traces()
        .map(|d| d.join("n25_ws_baseline.sqlite"))
        .filter(|p| p.is_file());
    let nsys = n25.unwrap_or_else(|| {
        println!("n25_ws_baseline.sqlite not present: comparing with the ws_baseline fixture");
        common::fixture("ws_baseline")
    });
    let mut h = harness(SightlineApp::with_files(
        vec![kineto.clone(), nsys.clone()],
        true,
    ));
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.tabs.len(), 2);
    for t in &app.tabs {
        assert!(t.error.is_none(), "{:?}", t.error);
    }
    let formats: Vec<TraceFormat> = app
        .tabs
        .iter()
        .map(|t| t.trace().expect("loaded").format)
        .collect();
    assert_eq!(formats, vec![TraceFormat::Kineto, TraceFormat::NsysSqlite]);
    let cv = app.compare.as_ref().expect("the compare view is on");
    // Both halves show their GPU.
    for k in 0..2 {
        let doc = app.tabs[k].document.as_ref().expect("doc");
        let gpus = cv.views[k]
            .last_rows
            .iter()
            .filter(|p| matches!(doc.model.rows[p.row].toggles, Some(GroupId::Gpu(_))))
            .count();
        assert_eq!(gpus, 1, "half {k}");
    }
    // The diff: kernels of both runs, and the headline with a value for each.
    let r = cv.diff.result().expect("diff computed");
    assert!(!r.rows.is_empty());
    assert!(
        r.rows
            .iter()
            .any(|row| row.base.is_some() && row.new.is_some()),
        "the same kernels run in both"
    );
    let span = r
        .headline
        .iter()
        .find(|l| l.metric == "Trace span (ns)")
        .expect("a span line");
    assert!(span.base.is_some_and(|v| v > 0.0) && span.new.is_some_and(|v| v > 0.0));
    let busy = r
        .headline
        .iter()
        .find(|l| l.metric == "GPU 0 busy (%)")
        .expect("a GPU busy line");
    assert!(busy.base.is_some() && busy.new.is_some());
    // Shown without the unit suffix: the values carry their units.
    assert!(h.query_by_label("Trace span").is_some());
    assert!(h.query_by_label("GPU 0 busy").is_some());
    // The tab bar names both runs.
    let file = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let label = format!("Compare: {} vs {}", file(&kineto), file(&nsys));
    assert!(h.query_by_label(&label).is_some(), "`{label}` on screen");
    println!(
        "checked the compare view of {} against {}",
        kineto.display(),
        nsys.display()
    );
}
