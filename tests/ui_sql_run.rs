//! The SQL page of a run's tab (issue 22): a query over the run's views answers, for every rank,
//! what that rank's own file answers, times moved by the rank's offset (read here from the
//! exports' session starts); its result pinned is drawn on each rank's rows, the rows of that
//! rank on its own clock. On the bundled NCCL pair (two ranks of one DDP job, nsys 2025.3.1).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::types::Value;
use sightline::sql::SqlTrace;
use sightline::timeline::rows::RowKind;
use sightline::ui::SightlineApp;
use sightline::ui::run::RunTab;
use sightline::ui::run::sql::RunPage;

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

fn run_mut<'h>(h: &'h mut Harness<'static, SightlineApp>) -> &'h mut RunTab {
    h.state_mut()
        .tab_mut()
        .run
        .as_deref_mut()
        .expect("the tab is a run")
}

/// (start, end) of the NCCL kernels of one export, by its own tables, and its session start.
fn nccl_kernels_by_sql(path: &std::path::Path) -> (Vec<(i64, i64)>, i64) {
    let conn = common::open_ro(path);
    let mut stmt = conn
        .prepare(
            "SELECT k.start, k.\"end\" FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE '%nccl%' \
             ORDER BY k.start, k.\"end\"",
        )
        .unwrap();
    let spans = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let utc = conn
        .query_row(
            "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (spans, utc)
}

#[test]
fn sql_on_a_run_tab_answers_per_rank_on_the_runs_clock_and_pins_on_each_rank() {
    let files: Vec<PathBuf> = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"]
        .iter()
        .map(|f| common::fixtures().join("nccl").join(f))
        .collect();
    let by_sql: Vec<(Vec<(i64, i64)>, i64)> =
        files.iter().map(|f| nccl_kernels_by_sql(f)).collect();
    let earliest = by_sql.iter().map(|(_, utc)| *utc).min().unwrap();
    let mut h = run_app(files.clone());
    assert!(run(&h).analysis.is_some(), "the run's analysis is in");
    run_mut(&mut h).page = RunPage::Sql;
    run_mut(&mut h).sql.query =
        "SELECT rank, start, \"end\", name FROM kernels WHERE name LIKE '%nccl%'".into();
    h.step();
    h.step();
    h.get_by_label("Run").click();
    h.step();
    let started = Instant::now();
    while run(&h).sql.is_running() || run(&h).sql.answer().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "no answer");
        std::thread::sleep(Duration::from_millis(10));
        h.step();
    }
    h.step();
    let answer = run(&h).sql.answer().unwrap().result.clone().expect("rows");
    assert_eq!(answer.columns, ["rank", "start", "end", "name"]);
    // Each rank's rows are its file's NCCL kernels, moved by its session start's distance from
    // the earliest one.
    let r = run(&h);
    for (k, rv) in r.ranks.iter().enumerate() {
        let file = files.iter().position(|f| *f == rv.path).unwrap();
        let rank = r.analysis.as_ref().unwrap().ranks[k].rank;
        let (spans, utc) = &by_sql[file];
        let offset = utc - earliest;
        assert_eq!(r.offset_ns(k), offset, "rank {rank}'s offset");
        let mut got: Vec<(i64, i64)> = answer
            .rows
            .iter()
            .filter(|row| row[0] == Value::Integer(i64::from(rank)))
            .map(|row| match (&row[1], &row[2]) {
                (Value::Integer(s), Value::Integer(e)) => (*s, *e),
                other => panic!("{other:?}"),
            })
            .collect();
        got.sort_unstable();
        let want: Vec<(i64, i64)> = spans
            .iter()
            .map(|(s, e)| (s + offset, e + offset))
            .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "rank {rank}");
    }
    assert!(
        (0..r.ranks.len()).any(|k| r.offset_ns(k) != 0),
        "the ranks' clocks differ: the shift is tested"
    );

    // Pinned: each rank's rows get that rank's intervals on its own clock, drawn when expanded.
    h.get_by_label("Pin as track").click();
    h.step();
    expand_all(&mut h);
    let r = run(&h);
    for (k, rv) in r.ranks.iter().enumerate() {
        let file = files.iter().position(|f| *f == rv.path).unwrap();
        let model = rv.model.as_ref().expect("loaded");
        assert_eq!(model.sql_tracks.len(), 1, "rank {k}");
        let mut spans: Vec<(i64, i64)> = model.sql_tracks[0]
            .intervals
            .iter()
            .map(|iv| (iv.start_ns, iv.end_ns))
            .collect();
        spans.sort_unstable();
        assert_eq!(
            spans, by_sql[file].0,
            "rank {k}: its own kernels, its own clock"
        );
        let row = model
            .row_index(RowKind::SqlTrack { track: 0, lane: 0 })
            .expect("a pinned row");
        assert!(
            rv.state.last_rows.iter().any(|p| p.row == row),
            "rank {k}'s pinned row is drawn"
        );
    }
    // The run's views as a run that holds no trace gets them (each rank loaded from its file
    // on the SQL thread) give the same answer.
    let mut ranks = run(&h).sql_ranks();
    assert_eq!(ranks.len(), 2);
    for r in &mut ranks {
        r.trace = None;
    }
    let db = SqlTrace::for_run_traces(&ranks, &AtomicBool::new(false)).unwrap();
    let q = "SELECT rank, start, \"end\", name FROM kernels WHERE name LIKE '%nccl%'";
    let again = db.query(q, None, Duration::from_secs(30), None).unwrap();
    assert_eq!(again.rows, answer.rows);
}

/// Expands every rank and waits for their traces: a collapsed rank holds no events (ranks
/// load lazily), so its rows, pinned results and search matches come with its trace.
fn expand_all(h: &mut Harness<'static, SightlineApp>) {
    for k in 0..run(h).ranks.len() {
        run_mut(h).set_expanded(k, true);
    }
    common::ui::settle_with(h, |app| app.tab().run.as_ref().is_none_or(|r| r.busy()));
    h.step();
    h.step();
    assert!(
        run(h).ranks.iter().all(|r| r.model.is_some()),
        "every rank loaded"
    );
}

/// Types `query` on the run's SQL page, runs it, waits for the answer and pins it.
fn query_and_pin(h: &mut Harness<'static, SightlineApp>, query: &str) -> Vec<Vec<Value>> {
    let rows = ask(h, query);
    h.step();
    h.get_by_label("Pin as track").click();
    h.step();
    h.step();
    rows
}

/// The run's search finds pinned intervals by name on the expanded ranks, and Next goes to the
/// first one after the middle of the view, on the run's clock, selecting it as a click does.
#[test]
fn the_runs_search_steps_to_pinned_intervals() {
    let files: Vec<PathBuf> = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"]
        .iter()
        .map(|f| common::fixtures().join("nccl").join(f))
        .collect();
    let mut h = run_app(files);
    let rows = query_and_pin(
        &mut h,
        "SELECT rank, start, \"end\", 'wait_' || rank AS name FROM kernels \
         WHERE name LIKE 'ncclDevKernel_All%'",
    );
    expand_all(&mut h);
    // Rank 1's intervals on the run's clock, from the answer.
    let mut starts: Vec<i64> = rows
        .iter()
        .filter(|r| r[0] == Value::Integer(1))
        .map(|r| match r[1] {
            Value::Integer(s) => s,
            _ => panic!("start"),
        })
        .collect();
    starts.sort_unstable();
    assert!(starts.len() > 4);
    run_mut(&mut h).query = "wait_1".into();
    run_mut(&mut h).refresh_search();
    h.step();
    let label = format!("{} matches", starts.len());
    assert!(h.query_by_label(&label).is_some(), "{label}");
    // The middle of the view just before rank 1's fourth interval: Next goes to it.
    let target = starts[3];
    {
        let r = run_mut(&mut h);
        r.view = ((target - 1_000_001) as f64, (target + 999_999) as f64);
        r.apply_view();
    }
    h.step();
    h.get_by_label("Next").click();
    h.step();
    h.step();
    let r = run(&h);
    let k = r
        .analysis
        .as_ref()
        .unwrap()
        .ranks
        .iter()
        .position(|i| i.rank == 1)
        .unwrap();
    let rv = &r.ranks[k];
    assert!(rv.expanded, "rank 1 expanded");
    assert_eq!(rv.state.selection, None);
    let hit = rv.state.sql_selection.expect("a pinned interval selected");
    let iv = &rv.model.as_ref().unwrap().sql_tracks[hit.track].intervals[hit.interval];
    assert_eq!(iv.name, "wait_1");
    assert_eq!(iv.start_ns + r.offset_ns(k), target);
    // Rank 0's rank has none of them: nothing selected there.
    assert!(r.ranks[1 - k].state.sql_selection.is_none());
}

/// Runs `query` on the run's SQL page and waits for its rows.
fn ask(h: &mut Harness<'static, SightlineApp>, query: &str) -> Vec<Vec<Value>> {
    run_mut(h).page = RunPage::Sql;
    run_mut(h).sql.query = query.into();
    h.step();
    h.step();
    h.get_by_label("Run").click();
    h.step();
    let started = Instant::now();
    while run(h).sql.is_running() || run(h).sql.answer().is_none() {
        assert!(started.elapsed() < Duration::from_secs(60), "no answer");
        std::thread::sleep(Duration::from_millis(10));
        h.step();
    }
    let answer = run(h).sql.answer().unwrap().result.clone();
    answer
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .rows
        .clone()
}

/// The run's own tables (ranks, collectives, kernel_sums) are answered from its digests: equal to
/// the run's per-rank table and to each export's kernels, with no rank's trace loaded.
#[test]
fn the_runs_own_tables_are_answered_from_its_digests() {
    let files: Vec<PathBuf> = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"]
        .iter()
        .map(|f| common::fixtures().join("nccl").join(f))
        .collect();
    let mut h = run_app(files.clone());
    let table = run(&h).analysis.as_ref().expect("analysis").table.clone();
    let rows = ask(
        &mut h,
        "SELECT rank, collectives, late_arrivals, wait_ns FROM ranks ORDER BY rank",
    );
    assert_eq!(rows.len(), table.rows.len());
    for (row, want) in rows.iter().zip(&table.rows) {
        let cell = |k: usize| match &want.cells[k] {
            sightline::analysis::Cell::Int(v) => Value::Integer(*v),
            other => panic!("{other:?}"),
        };
        assert_eq!(row, &vec![cell(0), cell(8), cell(9), cell(10)]);
    }
    let per_rank = ask(
        &mut h,
        "SELECT rank, count(*) FROM collectives GROUP BY rank ORDER BY rank",
    );
    for (row, want) in per_rank.iter().zip(&rows) {
        assert_eq!(row[1], want[1], "collectives of rank {:?}", row[0]);
    }
    let sums = ask(
        &mut h,
        "SELECT rank, sum(Instances) FROM kernel_sums GROUP BY rank ORDER BY rank",
    );
    for (r, f) in files.iter().enumerate() {
        let c = rusqlite::Connection::open(f).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |x| {
                x.get(0)
            })
            .unwrap();
        assert_eq!(sums[r][1], Value::Integer(n), "kernels of rank {r}");
    }
    assert!(
        run(&h)
            .ranks
            .iter()
            .all(|r| r.trace.is_none() && r.job.is_none()),
        "no rank's trace was loaded for the run's own tables"
    );
}
