//! The CPU samples tab and a gap's top functions (issue 13), driven through `egui_kittest` on
//! the real cpu_side capture: the tab follows a range selection, clicking a bottom-up row, a
//! top-down node or a flame-graph box outlines exactly the samples it stands for, and a clicked
//! GPU gap lists the functions the launching thread was sampled in. Every expected value is read
//! from the SQLite file here (`COMPOSITE_EVENTS`, `SAMPLING_CALLCHAINS`, `StringIds`, NVTX),
//! apart from the loader and the aggregations.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use common::ui::{click_at, opened, settle};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::{Connection, OpenFlags};
use sightline::analysis::gap_causes;
use sightline::analysis::{self, Filter, GapOptions, cpu_samples};
use sightline::ui::SightlineApp;
use sightline::ui::panels::analysis::{ChosenFunction, gap_function_line, gap_label, node_facts};

/// A sample as the file has it: thread, time, and its frames (function, module) innermost first.
struct SqlSample {
    global_tid: i64,
    start: i64,
    frames: Vec<(String, String)>,
}

fn db() -> Connection {
    Connection::open_with_flags(
        common::fixture("cpu_side"),
        OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open cpu_side")
}

fn sql_samples() -> Vec<SqlSample> {
    let conn = db();
    let mut at: HashMap<i64, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut q = conn
        .prepare("SELECT id, globalTid, start FROM COMPOSITE_EVENTS")
        .unwrap();
    let rows = q
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get(2)?)))
        .unwrap();
    for row in rows {
        let (id, global_tid, start) = row.unwrap();
        at.insert(id, out.len());
        out.push(SqlSample {
            global_tid,
            start,
            frames: Vec::new(),
        });
    }
    let mut q = conn
        .prepare(
            "SELECT c.id, s.value, m.value FROM SAMPLING_CALLCHAINS c \
             JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module \
             ORDER BY c.id, c.stackDepth",
        )
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?))
        })
        .unwrap();
    for row in rows {
        let (id, function, module) = row.unwrap();
        if let Some(&i) = at.get(&id) {
            out[i].frames.push((function, module));
        }
    }
    out
}

/// `[start, end)` of the NVTX range named `name` (one instance in cpu_side).
fn nvtx_range(name: &str) -> (i64, i64) {
    db().query_row(
        "SELECT start, end FROM NVTX_EVENTS WHERE text = ?1",
        [name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// The outlined samples as (globalTid, time), sorted.
fn outlined(h: &Harness<'static, SightlineApp>) -> Vec<(i64, i64)> {
    let app = h.state();
    let trace = app.trace().unwrap();
    let s = &trace.cpu_samples;
    let mut v: Vec<(i64, i64)> = app
        .overlays()
        .highlighted_samples
        .iter()
        .map(|&i| {
            let i = i as usize;
            (trace.threads[s.thread[i] as usize].global_tid, s.time_ns[i])
        })
        .collect();
    v.sort_unstable();
    v
}

/// The (globalTid, start) of the SQL samples in `[t0, t1)` that `keep` accepts, sorted.
fn expected(
    samples: &[SqlSample],
    (t0, t1): (i64, i64),
    keep: impl Fn(&SqlSample) -> bool,
) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = samples
        .iter()
        .filter(|s| s.start >= t0 && s.start < t1 && keep(s))
        .map(|s| (s.global_tid, s.start))
        .collect();
    v.sort_unstable();
    v
}

/// The whole trace's counts, then the `data_loader` range selected: the tab's counts are those
/// of `samples_in` and of SQL over COMPOSITE_EVENTS; a bottom-up row, a top-down node and a
/// flame-graph box each outline the samples SQL says they stand for; a second click clears.
#[test]
fn samples_tab_follows_the_selection_and_outlines_what_is_clicked() {
    let sql = sql_samples();
    let mut h = opened("cpu_side");
    h.get_by_label("CPU samples").click();
    settle(&mut h);

    // Whole trace.
    let without: usize = sql.iter().filter(|s| s.frames.is_empty()).count();
    h.get_by_label(&format!(
        "{} samples in the whole trace, {without} without a call stack",
        sql.len()
    ));

    // The data_loader range (the host preparing batches on the CPU).
    let (t0, t1) = nvtx_range("data_loader");
    h.state_mut().set_selection_range(Some((t0, t1)));
    settle(&mut h);
    let sql_count: i64 = db()
        .query_row(
            "SELECT count(*) FROM COMPOSITE_EVENTS WHERE start >= ?1 AND start < ?2",
            [t0, t1],
            |r| r.get(0),
        )
        .unwrap();
    {
        let app = h.state();
        let trace = app.trace().unwrap();
        let in_range = cpu_samples::samples_in(trace, t0, t1, None);
        let shown = app
            .tab()
            .analysis
            .cpu_samples(trace)
            .expect("profile computed");
        assert_eq!(shown.samples, in_range);
        assert_eq!(shown.samples.len() as i64, sql_count);
        assert!(sql_count > 0, "data_loader holds samples");
    }
    let in_range = |s: &SqlSample| s.start >= t0 && s.start < t1;
    let without = sql
        .iter()
        .filter(|s| in_range(s) && s.frames.is_empty())
        .count();
    h.get_by_label(&format!(
        "{sql_count} samples in the selection, {without} without a call stack"
    ));

    // Bottom-up: the function with the most self samples in the range (by SQL), clicked.
    let mut self_counts: HashMap<&str, usize> = HashMap::new();
    for s in sql.iter().filter(|s| in_range(s)) {
        if let Some((f, _)) = s.frames.first() {
            *self_counts.entry(f.as_str()).or_default() += 1;
        }
    }
    let (&hot, _) = self_counts.iter().max_by_key(|(f, n)| (**n, *f)).unwrap();
    h.get_by_label(hot).click();
    settle(&mut h);
    let want = expected(&sql, (t0, t1), |s| s.frames.iter().any(|(f, _)| f == hot));
    assert!(!want.is_empty());
    assert_eq!(outlined(&h), want, "samples with {hot} in their stack");
    // Clicking it again clears the outline.
    h.get_by_label(hot).click();
    settle(&mut h);
    assert!(h.state().overlays().highlighted_samples.is_empty());
    assert_eq!(h.state().tab().analysis.chosen_function(), None);
    // A chosen function follows the selection: chosen again, then the first half of the range
    // selected.
    h.get_by_label(hot).click();
    settle(&mut h);
    let half = (t0, t0 + (t1 - t0) / 2);
    h.state_mut().set_selection_range(Some(half));
    settle(&mut h);
    let in_half = expected(&sql, half, |s| s.frames.iter().any(|(f, _)| f == hot));
    assert!(!in_half.is_empty() && in_half.len() < want.len());
    assert_eq!(outlined(&h), in_half, "{hot} in the first half");
    h.get_by_label(hot).click();
    settle(&mut h);
    assert!(h.state().overlays().highlighted_samples.is_empty());
    h.state_mut().set_selection_range(Some((t0, t1)));
    settle(&mut h);
    assert!(h.state().overlays().highlighted_samples.is_empty());

    // Top-down: a function sampled both as a root of its own (stacks of one frame) and deeper;
    // its root node is the one drawn while the deeper branch is folded. Its samples are those
    // whose outermost frame it is, not every sample with it somewhere.
    let root_only = |s: &SqlSample, f: &str| s.frames.last().is_some_and(|(g, _)| g == f);
    let roots: Vec<&str> = {
        let mut r: Vec<&str> = sql
            .iter()
            .filter(|s| in_range(s))
            .filter_map(|s| s.frames.last().map(|(f, _)| f.as_str()))
            .collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    let node = roots
        .iter()
        .copied()
        .find(|f| {
            let anywhere = sql
                .iter()
                .filter(|s| in_range(s) && s.frames.iter().any(|(g, _)| g == f))
                .count();
            let as_root = sql
                .iter()
                .filter(|s| in_range(s) && root_only(s, f))
                .count();
            as_root > 0 && anywhere > as_root
        })
        .expect("cpu_side has a function sampled both alone and under main");
    h.get_by_label("Top-down").click();
    settle(&mut h);
    h.get_by_label(node).click();
    settle(&mut h);
    let want = expected(&sql, (t0, t1), |s| root_only(s, node));
    assert_eq!(
        outlined(&h),
        want,
        "samples whose outermost frame is {node}"
    );
    assert!(matches!(
        h.state().tab().analysis.chosen_function(),
        Some(ChosenFunction::Node(p)) if p.len() == 1
    ));

    // Flame graph: the deepest box of the biggest stack under `main`, clicked: zoomed into and
    // outlined; its samples are those whose outermost frames are its path.
    h.get_by_label("Flame graph").click();
    settle(&mut h);
    let (target, path) = {
        let app = h.state();
        let trace = app.trace().unwrap();
        let profile = &app.tab().analysis.cpu_samples(trace).unwrap().profile;
        let boxes = app.tab().analysis.flame_boxes();
        assert!(!boxes.is_empty(), "the flame graph was drawn");
        let (rect, node) = boxes
            .iter()
            .filter(|(_, n)| {
                profile
                    .node_path(*n)
                    .iter()
                    .any(|f| trace.str(f.function) == "main")
            })
            .max_by_key(|(r, n)| (profile.node_path(*n).len(), r.width() as i64))
            .copied()
            .expect("a box under main");
        let path: Vec<(String, String)> = profile
            .node_path(node)
            .iter()
            .map(|f| {
                (
                    trace.str(f.function).to_string(),
                    trace.str(f.module).to_string(),
                )
            })
            .collect();
        (rect.center(), path)
    };
    let through = |s: &SqlSample| {
        s.frames.len() >= path.len() && s.frames.iter().rev().zip(&path).all(|(a, b)| a == b)
    };
    let n_through = sql.iter().filter(|s| in_range(s) && through(s)).count();
    // What hovering the box shows: its module and how many samples pass through it, as SQL
    // counts them.
    let facts = {
        let app = h.state();
        let trace = app.trace().unwrap();
        let profile = &app.tab().analysis.cpu_samples(trace).unwrap().profile;
        let (_, node) = app
            .tab()
            .analysis
            .flame_boxes()
            .iter()
            .copied()
            .find(|(r, _)| r.contains(target))
            .expect("a box under the pointer");
        node_facts(trace, profile, node)
    };
    assert_eq!(facts[0], path.last().unwrap().0);
    assert_eq!(facts[1], format!("Module: {}", path.last().unwrap().1));
    assert!(
        facts[2].starts_with(&format!("Total: {n_through} samples")),
        "{facts:?}"
    );
    click_at(&mut h, target);
    settle(&mut h);
    let want = expected(&sql, (t0, t1), through);
    assert!(!want.is_empty());
    assert_eq!(outlined(&h), want, "samples through {path:?}");
    let leaf = &path.last().unwrap().0;
    h.get_by_label(&format!("Zoomed into {leaf}"));
    // The zoomed box now spans the graph; clicking it again clears the outline, keeps the zoom.
    let target = {
        let app = h.state();
        let trace = app.trace().unwrap();
        let profile = &app.tab().analysis.cpu_samples(trace).unwrap().profile;
        let (rect, node) = app
            .tab()
            .analysis
            .flame_boxes()
            .iter()
            .copied()
            .find(|(_, n)| profile.node_path(*n).len() == path.len())
            .unwrap();
        assert!(rect.width() > 300.0, "the zoomed box spans the graph");
        let names: Vec<&str> = profile
            .node_path(node)
            .iter()
            .map(|f| trace.str(f.function))
            .collect();
        assert_eq!(names, path.iter().map(|p| p.0.as_str()).collect::<Vec<_>>());
        rect.center()
    };
    click_at(&mut h, target);
    settle(&mut h);
    assert!(h.state().overlays().highlighted_samples.is_empty());
    h.get_by_label("Reset zoom").click();
    settle(&mut h);
    assert!(h.query_by_label(&format!("Zoomed into {leaf}")).is_none());
}

/// A thread filter profiles only the chosen threads: the counts follow SQL per globalTid.
#[test]
fn the_thread_filter_keeps_the_chosen_threads_samples() {
    let sql = sql_samples();
    let mut h = opened("cpu_side");
    h.get_by_label("CPU samples").click();
    settle(&mut h);
    let (thread, tid) = {
        let trace = h.state().trace().unwrap();
        // The thread with the fewest samples (not the main one).
        let t = (0..trace.threads.len())
            .filter(|&t| !trace.threads[t].samples.is_empty())
            .min_by_key(|&t| trace.threads[t].samples.len())
            .unwrap();
        (t, trace.threads[t].global_tid)
    };
    let trace = h.state().tab().document.as_ref().unwrap().trace.clone();
    h.state_mut()
        .tab_mut()
        .analysis
        .set_sample_threads(&trace, Some(&[thread]));
    settle(&mut h);
    let want = sql.iter().filter(|s| s.global_tid == tid).count();
    let without = sql
        .iter()
        .filter(|s| s.global_tid == tid && s.frames.is_empty())
        .count();
    h.get_by_label(&format!(
        "{want} samples in the whole trace on 1 thread, {without} without a call stack"
    ));
    let shown = h.state().tab().analysis.cpu_samples(&trace).unwrap();
    assert_eq!(shown.samples.len(), want);
}

/// The longest gap of cpu_side is a late launch: clicking it lists the launching thread's top
/// functions by self samples inside the gap, as SQL counts them.
#[test]
fn a_gap_lists_the_launching_threads_top_functions() {
    let sql = sql_samples();
    let mut h = opened("cpu_side");
    let (gap, cause) = {
        let trace = h.state().trace().unwrap();
        let gaps = analysis::gpu_idle_gaps(trace, &Filter::all(), &GapOptions::default());
        let causes = gap_causes::gap_causes(trace, &gaps);
        (gaps[0], causes[0])
    };
    let (tid, call_name) = {
        let trace = h.state().trace().unwrap();
        let call = cause.launch_call.expect("a launching call");
        (
            trace.api_calls.global_tid[call],
            trace.str(trace.api_calls.spans.name[call]).to_string(),
        )
    };
    h.get_by_label("Gaps").click();
    settle(&mut h);
    h.get_by_label(&gap_label(1, &gap)).click();
    settle(&mut h);

    // SQL: the thread's samples in the gap, and their innermost frames counted.
    let mine: Vec<&SqlSample> = sql
        .iter()
        .filter(|s| s.global_tid == tid && s.start >= gap.start_ns && s.start < gap.end_ns)
        .collect();
    assert!(
        !mine.is_empty(),
        "the launching thread was sampled in the gap"
    );
    let mut leaf: HashMap<(&str, &str), u64> = HashMap::new();
    for s in &mine {
        if let Some((f, m)) = s.frames.first() {
            *leaf.entry((f.as_str(), m.as_str())).or_default() += 1;
        }
    }
    let mut want_counts: Vec<u64> = leaf.values().copied().collect();
    want_counts.sort_unstable_by(|a, b| b.cmp(a));
    want_counts.truncate(sightline::ui::panels::analysis::GAP_TOP_FUNCTIONS);

    let found = h
        .state()
        .tab()
        .analysis
        .gap_functions()
        .expect("computed")
        .clone();
    let trace = h.state().trace().unwrap();
    assert_eq!(trace.threads[found.thread].global_tid, tid);
    assert_eq!(found.samples, mine.len() as u64);
    let counts: Vec<u64> = found.top.iter().map(|t| t.1).collect();
    assert_eq!(counts, want_counts);
    let mut lines = Vec::new();
    for (frame, n) in &found.top {
        let key = (trace.str(frame.function), trace.str(frame.module));
        assert_eq!(leaf.get(&key), Some(n), "{key:?}");
        lines.push(gap_function_line(key.0, *n, mine.len() as u64));
    }
    h.get_by_label_contains(&format!("{call_name}'s thread"));
    for line in lines {
        h.get_by_label(&line);
    }
    // A range that holds no gap: the list is empty and the chosen gap's samples go with it.
    let heading = format!(
        "Gap #1 ({}): the launching thread's CPU samples",
        sightline::ui::timeline::format_duration(gap.duration_ns() as f64)
    );
    h.get_by_label(&heading);
    h.state_mut()
        .set_selection_range(Some((gap.start_ns + 1, gap.end_ns - 1)));
    settle(&mut h);
    assert!(
        h.query_by_label(&heading).is_none(),
        "{heading} still shown"
    );
    assert!(
        h.query_by_label_contains("the launching thread's CPU samples")
            .is_none()
    );
}
