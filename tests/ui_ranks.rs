//! A run of ranks in the window, driven as a person would: the two real two-rank runs in
//! ../shared/traces (nsys 2025.3.1 exports `n25_rank0/1.sqlite`, PyTorch traces
//! `kt_ranks_rank0/1.pt.trace.json.gz`; one gloo job in which rank 1 computes longer, so it is
//! the last to arrive at the all-reduces) open as one tab with a row group per rank; clicking a
//! collective on one rank outlines it on every rank and marks the late one; a heatmap cell zooms
//! to its step, whose span the test reads from the file itself. A collapsed rank holds no trace
//! (only its digest): expanding it loads the trace, collapsing drops it. Skipped, saying so,
//! without the shared folder (the NCCL tests use the bundled fixtures).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use egui::accesskit::Role;
use egui::{Pos2, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::ranks::RankSource;
use sightline::analysis::ranks::collectives::Source;
use sightline::ui::SightlineApp;
use sightline::ui::run::RunTab;

fn shared_pair(a: &str, b: &str) -> Option<Vec<PathBuf>> {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout; the run tests need it");
        return None;
    };
    let paths = vec![dir.join(a), dir.join(b)];
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        eprintln!("SKIPPED: {} is missing", missing.display());
        return None;
    }
    Some(paths)
}

/// The app with `paths` open as one run, once loads and the run's analysis are over.
fn run_app(paths: Vec<PathBuf>) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(Vec2::new(1500.0, 950.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_run(paths),
        );
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    h.step();
    h
}

fn run<'h>(h: &'h Harness<'static, SightlineApp>) -> &'h RunTab {
    h.state().tab().run.as_deref().expect("the tab is a run")
}

/// One tab, two rank rows in rank order, every rank loaded and given its rank.
fn opens_as_one_tab(h: &Harness<'static, SightlineApp>, files: [&str; 2]) {
    assert_eq!(h.state().tabs.len(), 1, "one tab for the whole run");
    let r = run(h);
    assert!(r.ranks.iter().all(|k| k.error.is_none()));
    let a = r.analysis.as_ref().expect("the run's analysis is in");
    let ranks: Vec<u32> = a.ranks.iter().map(|i| i.rank).collect();
    assert_eq!(ranks, vec![0, 1]);
    let names: Vec<String> = r.ranks.iter().map(|k| k.file_name()).collect();
    assert_eq!(names, files.map(str::to_string).to_vec());
    // A header row per rank, collapsed, one under the other.
    let headers = &r.last.headers;
    assert_eq!(
        headers.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(headers[0].1.bottom() <= headers[1].1.top());
    assert!(r.ranks.iter().all(|k| !k.expanded));
    assert!(r.last.bodies.is_empty());
    assert!(
        r.ranks
            .iter()
            .all(|k| k.digest.is_some() && k.trace.is_none() && k.model.is_none()),
        "a collapsed rank holds its digest, not its trace"
    );
    assert!(
        r.last.collectives_drawn > 0,
        "collectives drawn on the header rows"
    );
}

/// Clicks rank 0's copy of an instance rank 1 arrives last at: outlined on both ranks, rank 1
/// marked late.
fn selecting_a_collective_outlines_it_on_every_rank(h: &mut Harness<'static, SightlineApp>) {
    let (pos, inst) = {
        let r = run(h);
        let a = r.analysis.as_ref().unwrap();
        // The first of rank 0's collectives that belongs to an instance and is in view.
        let (j, inst) = a.occurrence_instance[0]
            .iter()
            .enumerate()
            .find_map(|(j, i)| {
                let c = &a.collectives.per_rank[0].list[j];
                let start = (c.start_ns + r.offset_ns(0)) as f64;
                i.filter(|_| start > r.view.0 && start < r.view.1)
                    .map(|i| (j, i))
            })
            .expect("a shared collective in view");
        let c = &a.collectives.per_rank[0].list[j];
        let o = r.offset_ns(0);
        let area = r.last.event_area;
        let x_of = |t: i64| {
            area.left() + ((t as f64 - r.view.0) / (r.view.1 - r.view.0)) as f32 * area.width()
        };
        let x = (x_of(c.start_ns + o) + x_of(c.end_ns + o)) / 2.0;
        let header = r.last.headers[0].1;
        (Pos2::new(x, header.bottom() - 6.0), inst)
    };
    common::ui::click_at(h, pos);
    let r = run(h);
    assert_eq!(r.selected_instance, Some(inst));
    let mut outlined: Vec<usize> = r.last.outlines.iter().map(|(k, _)| *k).collect();
    outlined.sort_unstable();
    assert_eq!(outlined, vec![0, 1], "outlined on every rank");
    for (k, rect) in &r.last.outlines {
        let header = r.last.headers.iter().find(|(i, _)| i == k).unwrap().1;
        assert!(header.intersects(*rect), "rank {k}'s outline is on its row");
    }
    let a = r.analysis.as_ref().unwrap();
    let instance = &a.instances()[inst];
    // Rank 1 computes longer by construction: it arrives last, and is marked.
    assert_eq!(instance.last, Some(1));
    assert_eq!(r.last.late, Some(1));
    assert!(instance.arrivals[1].unwrap() > instance.arrivals[0].unwrap());
}

/// Clicks the heatmap cell of rank 1's step `number`; the run zooms to that step, whose span on
/// the run's clock is `expected`.
fn heatmap_cell_zooms_to_its_step(
    h: &mut Harness<'static, SightlineApp>,
    number: u64,
    expected: (i64, i64),
) {
    let cell = run(h)
        .last_heat_cells
        .iter()
        .find(|c| c.rank == 1 && c.step == number)
        .copied()
        .expect("the heatmap has the cell");
    common::ui::pause(h);
    common::ui::click_at(h, cell.rect.center());
    let r = run(h);
    assert!(
        r.ranks.iter().all(|k| k.trace.is_none()),
        "from the digests"
    );
    assert_eq!(r.range, Some(expected), "the step's span is selected");
    let (a, b) = (expected.0 as f64, expected.1 as f64);
    assert!(r.view.0 <= a && r.view.1 >= b, "the step is in view");
    assert!(
        r.view.1 - r.view.0 < 1.5 * (b - a),
        "zoomed to the step: view {:?}, step {:?}",
        r.view,
        expected
    );
}

/// A column of a one-row query on a read-only export.
fn sql_i64(path: &Path, query: &str) -> i64 {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.query_row(query, [], |r| r.get(0)).unwrap()
}

#[test]
fn nsys_pair_opens_as_one_run() {
    let Some(paths) = shared_pair("n25_rank0.sqlite", "n25_rank1.sqlite") else {
        return;
    };
    let mut h = run_app(paths.clone());
    opens_as_one_tab(&h, ["n25_rank0.sqlite", "n25_rank1.sqlite"]);
    let r = run(&h);
    // One clock: the sessions' UTC starts, read from the files.
    let utc = |p: &Path| sql_i64(p, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME");
    let (u0, u1) = (utc(&paths[0]), utc(&paths[1]));
    let earliest = u0.min(u1);
    assert_eq!(r.offset_ns(0), u0 - earliest);
    assert_eq!(r.offset_ns(1), u1 - earliest);
    selecting_a_collective_outlines_it_on_every_rank(&mut h);
    // step_3 of rank 1, from its NVTX table, on the run's clock.
    let step = |col: &str| {
        sql_i64(
            &paths[1],
            &format!("SELECT {col} FROM NVTX_EVENTS WHERE text = 'step_3'"),
        ) + u1
            - earliest
    };
    heatmap_cell_zooms_to_its_step(&mut h, 3, (step("start"), step("end")));
}

#[test]
fn pytorch_pair_opens_as_one_run() {
    let Some(paths) = shared_pair(
        "pytorch/kt_ranks_rank0.pt.trace.json.gz",
        "pytorch/kt_ranks_rank1.pt.trace.json.gz",
    ) else {
        return;
    };
    let mut h = run_app(paths);
    opens_as_one_tab(
        &h,
        [
            "kt_ranks_rank0.pt.trace.json.gz",
            "kt_ranks_rank1.pt.trace.json.gz",
        ],
    );
    selecting_a_collective_outlines_it_on_every_rank(&mut h);
    // ProfilerStep#3 of rank 1, from its file loaded here, on the run's clock.
    let expected = {
        let r = run(&h);
        let t = &sightline::load::load_file(&r.ranks[1].path).unwrap();
        let n = &t.nvtx;
        let i = (0..n.spans.len())
            .find(|&i| t.str(n.spans.name[i]) == "ProfilerStep#3")
            .expect("rank 1 has ProfilerStep#3");
        let o = r.offset_ns(1);
        (n.spans.start_ns[i] + o, n.spans.end_ns[i] + o)
    };
    heatmap_cell_zooms_to_its_step(&mut h, 3, expected);
}

#[test]
fn expanding_a_rank_shows_its_rows_on_the_run_clock() {
    let Some(paths) = shared_pair("n25_rank0.sqlite", "n25_rank1.sqlite") else {
        return;
    };
    let mut h = run_app(paths);
    let title = {
        let header = run(&h).last.headers[1].1;
        Pos2::new(header.left() + 40.0, header.center().y)
    };
    common::ui::click_at(&mut h, title);
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    let r = run(&h);
    assert!(r.ranks[1].expanded);
    assert_eq!(r.last.bodies.len(), 1);
    // Its own view is the run's, less its offset.
    let o = r.offset_ns(1) as f64;
    let v = &r.ranks[1].state.view;
    assert!((v.start_ns + o - r.view.0).abs() < 1.0);
    assert!((v.end_ns + o - r.view.1).abs() < 1.0);
    assert!(
        !r.ranks[1].state.last_rows.is_empty(),
        "its usual rows are drawn"
    );
}

/// Dropping both PyTorch traces asks, and "Open as one run" opens them as one tab of two ranks;
/// a folder holding them (and a file that is no trace) opens the same way.
#[test]
fn dropped_files_and_a_folder_open_as_one_run() {
    let Some(paths) = shared_pair(
        "pytorch/kt_ranks_rank0.pt.trace.json.gz",
        "pytorch/kt_ranks_rank1.pt.trace.json.gz",
    ) else {
        return;
    };
    let mut h = Harness::builder()
        .with_size(Vec2::new(1500.0, 950.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_files(Vec::new(), false),
        );
    h.step();
    for p in &paths {
        h.input_mut()
            .dropped_files
            .push(std::sync::Arc::new(common::ui::DroppedPath(p.clone())));
    }
    h.step();
    h.step();
    assert_eq!(
        h.state().dropped.len(),
        2,
        "two files dropped: the app asks"
    );
    assert!(h.state().tab().run.is_none());
    h.get_by_label("Open as one run").click();
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    assert_eq!(h.state().tabs.len(), 1);
    assert_eq!(run(&h).ranks.len(), 2);
    let matched = run(&h).analysis.as_ref().unwrap().instances().len();
    assert!(matched > 0);

    let dir = common::scratch_dir("run-folder");
    for p in &paths {
        std::fs::copy(p, dir.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    // `sightline DIR`: the folder given as a file to open.
    let mut h = Harness::builder()
        .with_size(Vec2::new(1500.0, 950.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(
            |ui, app: &mut SightlineApp| app.ui(ui),
            SightlineApp::with_files(vec![dir.clone()], false),
        );
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    let r = run(&h);
    let names: Vec<String> = r.ranks.iter().map(|k| k.file_name()).collect();
    assert_eq!(
        names,
        vec![
            "kt_ranks_rank0.pt.trace.json.gz",
            "kt_ranks_rank1.pt.trace.json.gz"
        ]
    );
    assert_eq!(r.analysis.as_ref().unwrap().instances().len(), matched);
    h.step();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Shifting rank 1 by hand moves it on the run's clock and its collectives' arrivals with it;
/// searching finds matches on every rank, and Next expands the rank of the next one.
#[test]
fn a_rank_shifted_by_hand_and_search_across_ranks() {
    let Some(paths) = shared_pair("n25_rank0.sqlite", "n25_rank1.sqlite") else {
        return;
    };
    let mut h = run_app(paths);
    let (before_offset, before_arrival) = {
        let r = run(&h);
        let a = r.analysis.as_ref().unwrap();
        (r.offset_ns(1), a.instances()[0].arrivals[1].unwrap())
    };
    let shift = -2_000_000;
    {
        let app = h.state_mut();
        let ctx = None;
        app.tab_mut()
            .run
            .as_deref_mut()
            .unwrap()
            .set_shift(1, shift, ctx);
    }
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    let r = run(&h);
    assert_eq!(r.offset_ns(1), before_offset + shift);
    let a = r.analysis.as_ref().unwrap();
    assert_eq!(
        a.instances()[0].arrivals[1].unwrap(),
        before_arrival + shift
    );
    let v = &r.ranks[1].state.view;
    assert!((v.start_ns + r.offset_ns(1) as f64 - r.view.0).abs() < 1.0);

    // Search reads events: it covers the expanded ranks. "allreduce_grads" is an NVTX range on
    // both ranks; only rank 1 is expanded.
    let label = "Search expanded ranks";
    h.get_by_role_and_label(Role::TextInput, label).focus();
    h.step();
    h.get_by_role_and_label(Role::TextInput, label)
        .type_text("allreduce_grads");
    h.step();
    assert!(run(&h).ranks.iter().all(|k| k.search.matches.is_empty()));
    h.state_mut()
        .tab_mut()
        .run
        .as_deref_mut()
        .unwrap()
        .set_expanded(1, true);
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    let r = run(&h);
    assert!(
        !r.ranks[1].search.matches.is_empty(),
        "matches on the expanded rank"
    );
    assert!(
        r.ranks[0].search.matches.is_empty(),
        "none on the collapsed one"
    );
    h.get_by_label("Next").click();
    h.step();
    h.step();
    let r = run(&h);
    let selected = r.ranks[1].state.selection.expect("the match is selected");
    assert!(r.ranks[1].search.matches.contains(&selected));
    let t = r.ranks[1].trace.as_ref().unwrap();
    let at = (selected.start_ns(t) + r.offset_ns(1)) as f64;
    assert!(
        at >= r.view.0 && at <= r.view.1,
        "the match is in the run's view"
    );
}

/// The bundled 2-GPU NCCL run (tests/fixtures/nccl, nsys 2025.3.1, torchrun): given rank 1's
/// file first, the run sorts its ranks by the `RANK` each export's process environment holds
/// (read here by SQL), takes the collectives from the NCCL kernels, and a clicked collective is
/// outlined on both ranks with its last rank marked.
#[test]
fn nccl_run_ranks_come_from_the_process_environment() {
    let dir = common::fixtures().join("nccl");
    let files = ["n25_ddp_rank1.sqlite", "n25_ddp_rank0.sqlite"];
    let paths: Vec<PathBuf> = files.iter().map(|f| dir.join(f)).collect();
    let env_rank = |p: &Path| -> u32 {
        let conn = common::open_ro(p);
        let v: String = conn
            .query_row(
                "SELECT value FROM META_DATA_CAPTURE WHERE name LIKE '%:ENVIRONMENT_VARIABLE' \
                 AND value LIKE 'RANK=%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        v.trim_start_matches("RANK=")
            .trim_matches('"')
            .parse()
            .unwrap()
    };
    let mut h = run_app(paths.clone());
    let r = run(&h);
    let a = r.analysis.as_ref().unwrap();
    for (k, info) in a.ranks.iter().enumerate() {
        assert_eq!(info.source, RankSource::Environment);
        assert_eq!(info.collectives_from, Some(Source::NcclKernels));
        let path = &r.ranks[k].path;
        assert_eq!(info.rank, env_rank(path), "{}", path.display());
    }
    assert_eq!(
        a.ranks.iter().map(|i| i.rank).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(r.last.collectives_drawn > 0);

    // Click rank 0's first shared collective in view.
    let pos = {
        let (j, _) = a.occurrence_instance[0]
            .iter()
            .enumerate()
            .find(|(j, i)| {
                let c = &a.collectives.per_rank[0].list[*j];
                let s = (c.start_ns + r.offset_ns(0)) as f64;
                i.is_some() && s > r.view.0 && s < r.view.1
            })
            .unwrap();
        let c = &a.collectives.per_rank[0].list[j];
        let area = r.last.event_area;
        let x_of = |t: i64| {
            area.left()
                + ((t + r.offset_ns(0)) as f64 - r.view.0) as f32 / (r.view.1 - r.view.0) as f32
                    * area.width()
        };
        let x = (x_of(c.start_ns) + x_of(c.end_ns)) / 2.0;
        Pos2::new(x, r.last.headers[0].1.bottom() - 6.0)
    };
    common::ui::click_at(&mut h, pos);
    let r = run(&h);
    let inst = r.selected_instance.expect("a collective is selected");
    let mut outlined: Vec<usize> = r.last.outlines.iter().map(|(k, _)| *k).collect();
    outlined.sort_unstable();
    assert_eq!(outlined, vec![0, 1]);
    let instance = &r.analysis.as_ref().unwrap().instances()[inst];
    assert_eq!(r.last.late, instance.last);
}

/// Summaries first, detail when expanded, on the bundled 2-GPU NCCL run: after opening, no rank
/// holds its trace (only its digest) while the run's table equals `sightline ranks`'s computation
/// on the whole traces; clicking rank 1's title loads its whole trace (as many kernels as its
/// export has, counted by SQL) and shows its rows; a worker can get a collapsed rank's trace from
/// its file; clicking the title again drops the trace (freed: no one else holds it).
#[test]
fn a_collapsed_rank_holds_no_trace_and_expanding_loads_it() {
    use sightline::analysis::ranks::{Run, collectives, table};
    let dir = common::fixtures().join("nccl");
    let paths: Vec<PathBuf> = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"]
        .iter()
        .map(|f| dir.join(f))
        .collect();
    let mut h = run_app(paths.clone());
    let r = run(&h);
    assert!(
        r.ranks
            .iter()
            .all(|k| k.digest.is_some() && k.trace.is_none() && k.model.is_none())
    );
    assert!(r.traces().is_empty(), "no trace held after opening");
    // The window's analysis (from digests) = the command line's (from whole traces).
    let whole: Vec<_> = paths
        .iter()
        .map(|p| sightline::load::load_file(p).unwrap())
        .collect();
    let refs: Vec<_> = whole.iter().collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let cli = Run::new(&refs, &pattern);
    let a = r.analysis.as_ref().unwrap();
    let cells = |t: &sightline::analysis::table::Table| -> Vec<Vec<String>> {
        t.rows
            .iter()
            .map(|row| row.cells.iter().map(|c| c.csv_text()).collect())
            .collect()
    };
    assert_eq!(cells(&a.table), cells(&table::rank_table(&cli)));
    assert_eq!(a.instances().len(), cli.collectives.instances.len());
    assert!(!a.instances().is_empty());

    // A collapsed rank's trace for a worker: loaded from its file.
    let source = r.ranks[1].trace_source();
    assert!(!source.is_held());
    let kernels = |p: &Path| sql_i64(p, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    let from_file = source.get_whole().unwrap();
    assert_eq!(
        from_file.kernels.spans.len() as i64,
        kernels(&r.ranks[1].path)
    );
    drop(from_file);

    // Expand rank 1 by its title.
    let title = {
        let header = r.last.headers[1].1;
        Pos2::new(header.left() + 40.0, header.center().y)
    };
    common::ui::click_at(&mut h, title);
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    let r = run(&h);
    assert!(
        r.ranks[0].trace.is_none(),
        "rank 0 stays collapsed, no trace"
    );
    let t = r.ranks[1].trace.clone().expect("expanding loads the trace");
    assert_eq!(t.kernels.spans.len() as i64, kernels(&r.ranks[1].path));
    assert!(r.ranks[1].model.is_some());
    assert_eq!(
        r.last.bodies.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![1]
    );
    assert!(!r.ranks[1].state.last_rows.is_empty(), "its rows are drawn");
    let held = r.ranks[1].trace_source();
    assert!(held.is_held());
    assert!(std::sync::Arc::ptr_eq(&held.get_whole().unwrap(), &t));
    let weak = std::sync::Arc::downgrade(&t);
    drop((t, held));

    // Collapse it: the trace and rows are dropped, the header still draws from the digest.
    common::ui::click_at(&mut h, title);
    h.step();
    h.step();
    let r = run(&h);
    assert!(!r.ranks[1].expanded);
    assert!(r.ranks[1].trace.is_none() && r.ranks[1].model.is_none());
    assert!(weak.upgrade().is_none(), "the trace is freed");
    assert!(r.last.bodies.is_empty());
    assert!(r.last.collectives_drawn > 0);
}
