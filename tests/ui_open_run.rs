//! File → Open run… in the window (issue 36 item 2), through the built-in browser as a person
//! would use it: the folder's traces listed with a tick each; ticking `kt_ranks_rank0` proposes
//! `kt_ranks_rank1` (the same program with another rank in its name), and Open makes one run of
//! the two ranks on their recorded clock. Ticking the eight unrelated PyTorch traces of the same
//! folder opens no run: the panel says they are not one and why. Traces whose names say no rank
//! are proposed by their `distributedInfo` rank and their clock, read in the background.
//! Skipped, saying so, without ../shared/traces.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::ranks::{Alignment, RankSource};
use sightline::ui::SightlineApp;
use sightline::ui::file_dialog::{self, FileDialogs, FilePurpose, NO_SYSTEM_DIALOG};
use sightline::ui::run::RunTab;

fn pytorch_folder() -> Option<PathBuf> {
    let dir = common::shared_traces()?.join("pytorch");
    if dir.join("kt_ranks_rank0.pt.trace.json.gz").exists() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: ../shared/traces/pytorch (kt_ranks_rank0/1) is not there");
        None
    }
}

/// The app with no trace, its file dialogs the built-in browser starting in `start_dir`, and
/// File → Open run… chosen.
fn open_run_dialog(start_dir: &Path) -> Harness<'static, SightlineApp> {
    let mut h = common::ui::harness(None);
    let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
    dialogs.set_start_dir(start_dir);
    file_dialog::install(&h.ctx, dialogs);
    h.step();
    h.get_by_label("File").click();
    h.step();
    h.step();
    h.get_by_label("Open run…").click();
    h.step();
    h.step();
    assert_eq!(
        file_dialog::with(&h.ctx, |d| d.browsing().cloned()),
        Some(FilePurpose::OpenRun)
    );
    h
}

/// Steps until the browser has read the ranks of the folder's traces (it reads them on threads
/// of its own, and re-draws the list when they are in): what a user waits for before Open.
fn wait_for_ranks(h: &mut Harness<'static, SightlineApp>) {
    let read = |h: &Harness<'static, SightlineApp>| file_dialog::with(&h.ctx, |d| d.ranks_read());
    for _ in 0..500 {
        if read(h) {
            break;
        }
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(read(h), "the folder's ranks are read");
    h.step();
}

/// Ticks the file `name` of the browser's list (through accesskit: it may lie below the fold).
fn tick(h: &mut Harness<'static, SightlineApp>, name: &str) {
    h.get_by_label(name).click_accesskit();
    h.step();
    h.step();
}

/// Presses Open and lets the run open and be analysed.
fn open_and_settle(h: &mut Harness<'static, SightlineApp>) {
    h.get_by_label("Open").click();
    h.step();
    h.step();
    common::ui::settle_with(h, |app| app.tab().run.as_ref().is_none_or(|r| r.busy()));
    h.step();
    h.step();
}

fn run<'h>(h: &'h Harness<'static, SightlineApp>) -> &'h RunTab {
    h.state().tab().run.as_deref().expect("the tab is a run")
}

#[test]
fn open_run_with_a_chosen_pair_opens_two_ranks() {
    let Some(dir) = pytorch_folder() else {
        return;
    };
    let mut h = open_run_dialog(&dir);
    wait_for_ranks(&mut h);
    tick(&mut h, "kt_ranks_rank0.pt.trace.json.gz");
    // Its rank 1 is proposed with it, nothing else.
    h.get_by_label(
        "2 chosen (proposed: the ranks named kt_ranks_rank*.pt.trace.json.gz); tick or untick any",
    );
    open_and_settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1, "one tab for the run");
    let r = run(&h);
    let names: Vec<String> = r.ranks.iter().map(|k| k.file_name()).collect();
    assert_eq!(
        names,
        [
            "kt_ranks_rank0.pt.trace.json.gz",
            "kt_ranks_rank1.pt.trace.json.gz"
        ]
    );
    let a = r.analysis.as_ref().expect("the run's analysis is in");
    assert_eq!(
        a.ranks
            .iter()
            .map(|i| (i.rank, i.source))
            .collect::<Vec<_>>(),
        [(0, RankSource::Distributed), (1, RankSource::Distributed)]
    );
    assert_eq!(a.alignment, Alignment::Utc);
    // The panel says the clock as `sightline ranks` prints it, and what the verdict rests on.
    assert!(h.query_by_label_contains("clock: recorded").is_some());
    assert!(
        h.query_by_label_contains("straggler: rank 1 arrived last")
            .is_some()
    );
    println!("{}", a.verdict);
}

#[test]
fn eight_unrelated_traces_are_refused_as_a_run_in_the_window() {
    let Some(dir) = pytorch_folder() else {
        return;
    };
    let files = common::unrelated_pytorch_traces(&dir);
    if files.len() != 8 {
        eprintln!(
            "SKIPPED: expected 8 unrelated PyTorch traces, found {}",
            files.len()
        );
        return;
    }
    let mut h = open_run_dialog(&dir);
    wait_for_ranks(&mut h);
    for f in &files {
        tick(&mut h, &f.file_name().unwrap().to_string_lossy());
    }
    h.get_by_label("8 chosen");
    open_and_settle(&mut h);
    let r = run(&h);
    assert_eq!(r.ranks.len(), 8);
    assert!(r.ranks.iter().all(|k| k.error.is_none()), "each trace read");
    assert!(r.analysis.is_none(), "no run is made of them");
    let why = r.analysis_error.as_deref().expect("a reason");
    assert!(
        why.starts_with("Not one run: on the clock the traces record, their spans do not overlap"),
        "{why}"
    );
    assert!(
        why.contains("nor do they share a collective every rank takes part in"),
        "{why}"
    );
    // Said in the window, not only held.
    assert!(
        h.query_all_by_label_contains("Not one run: on the clock the traces record")
            .count()
            >= 1
    );
    println!("{why}");
}

/// Copies of the pair named without a rank, beside a trace of another program and HTA's rank 0
/// of another run: ticking one pair member proposes the other once the folder's ranks are read,
/// and neither of the others (no rank; the same rank and another time).
#[test]
fn traces_named_without_a_rank_are_proposed_by_their_distributed_rank_and_clock() {
    let Some(dir) = pytorch_folder() else {
        return;
    };
    let scratch = common::scratch_dir("open-run-probe");
    for (from, to) in [
        ("kt_ranks_rank0.pt.trace.json.gz", "first.pt.trace.json.gz"),
        ("kt_ranks_rank1.pt.trace.json.gz", "second.pt.trace.json.gz"),
        ("kt_moe.pt.trace.json.gz", "moe.pt.trace.json.gz"),
        ("HolisticTraceAnalysis__nccl_data.json.gz", "hta.json.gz"),
    ] {
        std::fs::copy(dir.join(from), scratch.join(to)).unwrap();
    }
    let mut h = open_run_dialog(&scratch);
    wait_for_ranks(&mut h);
    tick(&mut h, "first.pt.trace.json.gz");
    h.get_by_label(
        "2 chosen (proposed: the ranks by their distributedInfo / environment rank on one \
         clock); tick or untick any",
    );
    open_and_settle(&mut h);
    let r = run(&h);
    let names: Vec<String> = r.ranks.iter().map(|k| k.file_name()).collect();
    assert_eq!(names, ["first.pt.trace.json.gz", "second.pt.trace.json.gz"]);
    assert!(r.analysis.is_some(), "{:?}", r.analysis_error);
    std::fs::remove_dir_all(&scratch).ok();
}

/// A press on Open while the browser still reads the folder's ranks, released once they are
/// read, opens the run: the line "Reading the traces' ranks…" goes away between the press and
/// the release, and the Open button must stay the widget that was pressed (a person presses as
/// soon as the ticks look right, and was made to press again).
#[test]
fn open_pressed_while_the_ranks_are_read_still_opens_the_run() {
    let Some(dir) = pytorch_folder() else {
        return;
    };
    let mut h = open_run_dialog(&dir);
    tick(&mut h, "kt_ranks_rank0.pt.trace.json.gz");
    let read = |h: &Harness<'static, SightlineApp>| file_dialog::with(&h.ctx, |d| d.ranks_read());
    assert!(
        !read(&h),
        "the press must land while the ranks are still read (the folder holds {} traces)",
        std::fs::read_dir(&dir).map_or(0, |d| d.count())
    );
    let at = h.get_by_label("Open").rect().center();
    let button = |pressed| egui::Event::PointerButton {
        pos: at,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: egui::Modifiers::NONE,
    };
    h.event(egui::Event::PointerMoved(at));
    h.event(button(true));
    h.step();
    wait_for_ranks(&mut h);
    h.event(button(false));
    h.step();
    h.step();
    assert!(
        h.state().tab().run.is_some(),
        "the press on Open, released after the ranks were read, opened the run"
    );
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    let names: Vec<String> = run(&h).ranks.iter().map(|k| k.file_name()).collect();
    assert_eq!(
        names,
        [
            "kt_ranks_rank0.pt.trace.json.gz",
            "kt_ranks_rank1.pt.trace.json.gz"
        ]
    );
}

/// Open run… in a folder of digests (`sightline digest`): nothing to tick, the browser says so,
/// and Open opens the run from the digests.
#[test]
fn open_run_in_a_folder_of_digests_opens_it() {
    let scratch = common::scratch_dir("open-run-digests");
    let traces: Vec<PathBuf> = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"]
        .iter()
        .map(|f| common::fixtures().join("nccl").join(f))
        .collect();
    let digests = scratch.join("digests");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("digest")
        .args(&traces)
        .arg("--out")
        .arg(&digests)
        .env("XDG_CACHE_HOME", scratch.join("cache"))
        .env_remove("SIGHTLINE_CACHE_DIR")
        .output()
        .expect("run sightline digest");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut h = open_run_dialog(&digests);
    wait_for_ranks(&mut h);
    h.get_by_label("A folder of digests: Open opens the run from them");
    open_and_settle(&mut h);
    assert_eq!(h.state().tabs.len(), 1, "one tab for the run");
    let r = run(&h);
    assert_eq!(r.ranks.len(), 2);
    assert!(
        r.ranks
            .iter()
            .all(|k| k.digest_folder.is_some() && k.trace.is_none())
    );
    let a = r.analysis.as_ref().expect("the run's analysis is in");
    assert_eq!(a.ranks.iter().map(|i| i.rank).collect::<Vec<_>>(), [0, 1]);
    drop(h);
    let _ = std::fs::remove_dir_all(&scratch);
}
