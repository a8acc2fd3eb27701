//! A run opened in the window from its digests (issue 35, "Open from digests"), on the bundled
//! 2-GPU NCCL run (tests/fixtures/nccl, nsys 2025.3.1, torchrun): `sightline digest` makes the
//! digests of copies of its two exports, the copies are moved away, and the folder of digests
//! opens as `sightline DIGESTS/` opens it — every rank from its digest, no trace read, the same
//! per-rank table, straggler, clock and collectives as the run opened from its traces. Expanding
//! a rank whose trace is gone says so under that rank's row, naming the path the digest gives
//! and why. And a run of traces opened twice reads its digests from the cache the second time.
//! No test here reads or writes the user's cache: `sightline digest` runs with `XDG_CACHE_HOME`
//! in a scratch folder, the window's runs of traces open with a cache in one or none.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use egui::{Pos2, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::digests::cache::{Cache, DEFAULT_LIMIT_BYTES};
use sightline::digests::store;
use sightline::ui::SightlineApp;
use sightline::ui::run::RunTab;

const RANKS: [&str; 2] = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"];

/// Steps `h` until no run is opening, analysing or loading a rank, then two frames more.
fn settle(h: &mut Harness<'static, SightlineApp>) {
    common::ui::settle_with(h, |app| {
        app.is_loading()
            || app
                .tabs
                .iter()
                .any(|t| t.run.as_ref().is_some_and(|r| r.busy()))
    });
    h.step();
    h.step();
}

fn harness(app: SightlineApp) -> Harness<'static, SightlineApp> {
    let mut h = Harness::builder()
        .with_size(Vec2::new(1500.0, 950.0))
        .with_step_dt(0.01)
        .with_max_steps(20)
        .build_ui_state(|ui, app: &mut SightlineApp| app.ui(ui), app);
    settle(&mut h);
    h
}

/// The app with `run` in its one tab, once it is open and analysed.
fn app_with(run: RunTab) -> Harness<'static, SightlineApp> {
    let mut app = SightlineApp::with_files(Vec::new(), false);
    app.tabs[0].run = Some(Box::new(run));
    harness(app)
}

fn run<'h>(h: &'h Harness<'static, SightlineApp>) -> &'h RunTab {
    h.state().tab().run.as_deref().expect("the tab is a run")
}

/// What a run shows of itself, to compare two opens: each rank's rank, offset, collectives and
/// digest; the per-rank table's cells, the straggler's rank, the verdict, the clock and the
/// number of collective instances matched.
#[derive(Debug, PartialEq)]
struct Shown {
    ranks: Vec<u32>,
    offsets: Vec<i64>,
    collectives: Vec<usize>,
    digests: Vec<String>,
    table: Vec<Vec<String>>,
    straggler: Option<u32>,
    verdict: String,
    clock: String,
    instances: usize,
}

fn shown(r: &RunTab) -> Shown {
    let a = r.analysis.as_ref().expect("the run's analysis is in");
    Shown {
        ranks: a.ranks.iter().map(|i| i.rank).collect(),
        offsets: (0..r.ranks.len()).map(|k| r.offset_ns(k)).collect(),
        collectives: a
            .collectives
            .per_rank
            .iter()
            .map(|c| c.list.len())
            .collect(),
        digests: r
            .ranks
            .iter()
            .map(|k| format!("{:?}", k.digest.as_ref().expect("a digest")))
            .collect(),
        table: a
            .table
            .rows
            .iter()
            .map(|row| row.cells.iter().map(|c| c.csv_text()).collect())
            .collect(),
        straggler: a.straggler.map(|(k, _)| a.ranks[k].rank),
        verdict: a.verdict.as_str().to_string(),
        clock: a.alignment.describe(),
        instances: a.instances().len(),
    }
}

/// A scratch folder with copies of the run's exports in `traces/` and their digests, made by
/// the built `sightline digest`, in `digests/`; returns (scratch, traces' absolute paths).
fn digested_run(tag: &str) -> (PathBuf, Vec<PathBuf>) {
    let scratch = common::scratch_dir(tag);
    let traces = scratch.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    let paths: Vec<PathBuf> = RANKS
        .iter()
        .map(|f| {
            let to = traces.join(f);
            std::fs::copy(common::fixtures().join("nccl").join(f), &to).unwrap();
            std::fs::canonicalize(to).unwrap()
        })
        .collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("digest")
        .args(&paths)
        .arg("--out")
        .arg(scratch.join("digests"))
        .env("XDG_CACHE_HOME", scratch.join("cache"))
        .output()
        .expect("run sightline digest");
    assert!(
        out.status.success(),
        "sightline digest: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(store::is_digests(&scratch.join("digests")));
    (scratch, paths)
}

/// Moves the traces' folder away: the digests name paths that are no longer there.
fn move_traces_away(scratch: &Path, paths: &[PathBuf]) {
    std::fs::rename(scratch.join("traces"), scratch.join("traces-moved")).unwrap();
    assert!(paths.iter().all(|p| !p.exists()));
}

/// `sightline DIGESTS/`: the folder given on the command line, as `main_with` hands it to the
/// window (`run_window` → `SightlineApp::with_files`).
fn open_digests(scratch: &Path) -> Harness<'static, SightlineApp> {
    harness(SightlineApp::with_files(
        vec![scratch.join("digests")],
        false,
    ))
}

#[test]
fn a_run_opens_from_its_digests_with_its_traces_gone() {
    let (scratch, paths) = digested_run("run-digests-open");
    // The run opened from its traces (no cache), before they move.
    let from_traces = {
        let h = app_with(RunTab::open_with_cache(paths.clone(), None, None));
        let r = run(&h);
        assert!(r.ranks.iter().all(|k| k.error.is_none()));
        shown(r)
    };
    move_traces_away(&scratch, &paths);

    let h = open_digests(&scratch);
    assert_eq!(h.state().tabs.len(), 1, "one tab for the run");
    let r = run(&h);
    assert_eq!(r.title(), "Run · 2 ranks");
    assert!(r.analysis_error.is_none(), "{:?}", r.analysis_error);
    for (k, rank) in r.ranks.iter().enumerate() {
        assert!(rank.error.is_none(), "rank {k}: {:?}", rank.error);
        assert!(rank.digest.is_some(), "rank {k} has its digest");
        assert!(rank.trace.is_none() && rank.model.is_none() && rank.job.is_none());
        // Its path is the trace's, from the digest: what expanding it would load.
        assert_eq!(rank.path, paths[k]);
    }
    assert!(r.traces().is_empty(), "no trace held");
    let from_digests = shown(r);
    assert_eq!(from_digests, from_traces);
    assert_eq!(from_digests.ranks, vec![0, 1]);
    assert!(from_digests.instances > 0 && from_digests.collectives.iter().all(|&n| n > 0));
    assert_eq!(from_digests.table.len(), 2, "a row per rank");
    // Drawn: a header row per rank with its collectives.
    assert_eq!(
        r.last.headers.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(r.last.collectives_drawn > 0);

    // `sightline ranks DIGESTS/` prints the numbers the window shows.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("ranks")
        .arg(scratch.join("digests"))
        .arg("--no-cache")
        .output()
        .unwrap();
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    // The table on stdout, what it found (clock, ranks, straggler) on stderr.
    let said = String::from_utf8(out.stderr).unwrap();
    let printed_rows: Vec<Vec<String>> = printed
        .lines()
        .filter(|l| l.contains("n25_ddp_rank"))
        .filter(|l| !l.contains('/'))
        .map(|l| l.split_whitespace().map(|c| c.replace(',', "")).collect())
        .collect();
    assert_eq!(printed_rows, from_digests.table, "{printed}");
    let straggler = format!("straggler: rank {} ", from_digests.straggler.unwrap());
    assert!(said.contains(&straggler), "{said}");
    drop(h);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The line under rank `k`'s header that says its trace cannot be read, found by its text.
fn unreadable_line(h: &Harness<'static, SightlineApp>, path: &Path) -> egui::Rect {
    let shown = path.display().to_string();
    let nodes: Vec<_> = h.query_all_by_label_contains(&shown).collect();
    assert_eq!(nodes.len(), 1, "one line names {shown}");
    nodes[0].rect()
}

#[test]
fn expanding_a_rank_whose_trace_is_gone_says_so_on_its_row() {
    let (scratch, paths) = digested_run("run-digests-gone");
    move_traces_away(&scratch, &paths);
    let mut h = open_digests(&scratch);
    let title = |h: &Harness<'static, SightlineApp>, k: usize| {
        let header = run(h).last.headers[k].1;
        Pos2::new(header.left() + 40.0, header.center().y)
    };

    // Rank 0, expanded by its title: its load fails, and the line under its header says so.
    let at = title(&h, 0);
    common::ui::click_at(&mut h, at);
    settle(&mut h);
    let r = run(&h);
    assert!(r.ranks[0].expanded);
    assert!(r.ranks[0].trace.is_none() && r.ranks[0].model.is_none());
    let said = r.ranks[0].detail_error.clone().expect("the load failed");
    let expected = format!(
        "The trace of rank 0, {}, cannot be read here: file not found.",
        paths[0].display()
    );
    assert!(said.starts_with(&expected), "{said}");
    assert!(r.last.bodies.is_empty(), "no rows: no trace");
    let (header0, header1) = (r.last.headers[0].1, r.last.headers[1].1);
    let line = match r.last.unreadable.as_slice() {
        [(0, line)] => *line,
        other => panic!("one line, under rank 0: {other:?}"),
    };
    assert!(line.top() >= header0.bottom() - 0.5 && line.bottom() <= header1.top() + 0.5);
    // Shown as text (a person can read and select it) within that line.
    let label = unreadable_line(&h, &paths[0]);
    assert!(line.contains_rect(label), "{label:?} in {line:?}");
    let node = h.get_by_label_contains(&expected);
    assert!(node.rect().intersects(line));

    // Rank 1 too: each line under its own rank.
    let at = title(&h, 1);
    common::ui::click_at(&mut h, at);
    settle(&mut h);
    let r = run(&h);
    let header1 = r.last.headers[1].1;
    let said = r.ranks[1].detail_error.clone().expect("the load failed");
    assert!(
        said.starts_with(&format!(
            "The trace of rank 1, {}, cannot be read here: file not found.",
            paths[1].display()
        )),
        "{said}"
    );
    let lines: Vec<usize> = r.last.unreadable.iter().map(|(k, _)| *k).collect();
    assert_eq!(lines, vec![0, 1]);
    let label = unreadable_line(&h, &paths[1]);
    assert!(
        label.top() >= header1.bottom() - 0.5,
        "under rank 1's header"
    );
    // Nothing else failed: the run keeps every rank's digest and its analysis.
    assert!(
        r.ranks
            .iter()
            .all(|k| k.digest.is_some() && k.error.is_none())
    );
    assert!(r.analysis.is_some());

    // Collapsing rank 0 takes its line away.
    let at = title(&h, 0);
    common::ui::pause(&mut h);
    common::ui::click_at(&mut h, at);
    settle(&mut h);
    let r = run(&h);
    assert!(!r.ranks[0].expanded && r.ranks[0].detail_error.is_none());
    assert_eq!(
        r.last
            .unreadable
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert!(
        h.query_all_by_label_contains(&paths[0].display().to_string())
            .next()
            .is_none()
    );
    drop(h);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// A rank whose trace changed since it was digested is not expanded from it: its row says so,
/// and loads nothing; the unchanged rank expands as usual.
#[test]
fn a_rank_whose_trace_changed_since_its_digest_is_not_expanded_from_it() {
    let (scratch, paths) = digested_run("run-digests-changed");
    // Rank 1's trace is rewritten (same bytes, a new time): not the file that was digested.
    let f = std::fs::File::options()
        .write(true)
        .open(&paths[1])
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    drop(f);
    let mut h = open_digests(&scratch);
    for k in 0..2 {
        let header = run(&h).last.headers[k].1;
        common::ui::click_at(&mut h, Pos2::new(header.left() + 40.0, header.center().y));
        settle(&mut h);
    }
    let r = run(&h);
    assert!(
        r.ranks[0].trace.is_some(),
        "rank 0's trace is the one digested"
    );
    assert!(r.ranks[1].trace.is_none() && r.ranks[1].job.is_none());
    let said = r.ranks[1].detail_error.clone().expect("rank 1 is refused");
    assert!(
        said.starts_with(&format!(
            "The trace of rank 1, {}, changed since its digest was made",
            paths[1].display()
        )),
        "{said}"
    );
    let label = unreadable_line(&h, &paths[1]);
    assert!(label.top() >= run(&h).last.headers[1].1.bottom() - 0.5);
    drop(h);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// The rank folders of `cache` (each a digest.json and its tables).
fn cached(cache: &Cache) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&cache.dir)
        .map(|l| l.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    folders.retain(|p| p.join(store::ENTRY_FILE).is_file());
    folders.sort();
    folders
}

#[test]
fn a_second_open_reads_the_digests_from_the_cache() {
    let scratch = common::scratch_dir("run-digests-cache");
    let cache = Cache {
        dir: scratch.join("digests"),
        limit_bytes: DEFAULT_LIMIT_BYTES,
    };
    let paths: Vec<PathBuf> = RANKS
        .iter()
        .map(|f| std::fs::canonicalize(common::fixtures().join("nccl").join(f)).unwrap())
        .collect();
    let open = || {
        app_with(RunTab::open_with_cache(
            paths.clone(),
            None,
            Some(cache.clone()),
        ))
    };

    let first = {
        let h = open();
        shown(run(&h))
    };
    // One digest per rank kept, each naming its trace.
    let folders = cached(&cache);
    assert_eq!(folders.len(), 2, "{folders:?}");
    let mut sources: Vec<PathBuf> = folders
        .iter()
        .map(|f| store::read_rank(f).unwrap().0.source)
        .collect();
    sources.sort();
    assert_eq!(sources, paths);
    // Made old: a lookup that finds a digest marks it used now (the cache drops the least
    // recently used first), so a fresh time after the second open says it was read from here.
    let long_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    for f in &folders {
        let entry = std::fs::File::options()
            .write(true)
            .open(f.join(store::ENTRY_FILE))
            .unwrap();
        entry.set_modified(long_ago).unwrap();
    }

    let second = {
        let h = open();
        shown(run(&h))
    };
    assert_eq!(second, first, "the same digests, the same run");
    assert_eq!(cached(&cache), folders, "nothing more cached");
    for f in &folders {
        let used = std::fs::metadata(f.join(store::ENTRY_FILE))
            .and_then(|m| m.modified())
            .unwrap();
        assert!(used > long_ago, "{} read from the cache", f.display());
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `sightline --no-cache`: a run of traces opened in the window reads every trace and keeps no
/// digest in the cache; without it, the run goes through the user's cache.
#[test]
fn no_cache_opens_a_run_without_the_digest_cache() {
    let traces: Vec<PathBuf> = RANKS
        .iter()
        .map(|f| common::fixtures().join("nccl").join(f))
        .collect();
    let mut app = SightlineApp::with_run(traces.clone());
    app.digest_cache = false;
    let h = harness(app);
    let r = run(&h);
    assert!(r.cache.is_none(), "--no-cache: no cache");
    assert!(r.analysis.is_some() && r.ranks.iter().all(|k| k.digest.is_some()));
    drop(h);
    let h = harness(SightlineApp::with_run(traces));
    assert_eq!(
        run(&h).cache.as_ref().map(|c| c.dir.clone()),
        sightline::digests::cache::Cache::user().map(|c| c.dir)
    );
}
