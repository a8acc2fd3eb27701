//! Damaged copies of real exports (made here with SQL) say what could not be read: every command
//! that loads a trace prints one `warning: FILE: …` line per reason on stderr, the load keeps the
//! same lines for the window, a table whose rows are all unreadable is told apart from a table
//! with no rows, names that point at missing strings show as `<unknown name #ID>`, a directory is
//! refused at once, and a file a writer holds open loads what was committed. Every expected count
//! is computed by SQL over the damaged file.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use rusqlite::Connection;
use sightline::analysis::unreadable;
use sightline::load::{self, LoadError};
use sightline::trace::{LoadWarnings, Trace};
use sightline::ui::panels::warnings;

const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

/// A copy of fixture `name` in a fresh folder, damaged by `sql`.
fn damaged_copy(tag: &str, name: &str, sql: &str) -> (PathBuf, PathBuf) {
    let dir = common::scratch_dir(tag);
    let path = dir.join(format!("{tag}.sqlite"));
    std::fs::copy(common::fixture(name), &path).expect("copy fixture");
    let conn = Connection::open(&path).expect("open copy");
    conn.execute_batch(sql).expect("damage the copy");
    drop(conn);
    (dir, path)
}

/// The kernel table rebuilt without its NOT NULL constraints, so that rows can lose their end
/// the way a capture cut short loses it.
const KERNELS_WITHOUT_CONSTRAINTS: &str = "
    CREATE TABLE k_copy AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;
    DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
    ALTER TABLE k_copy RENAME TO CUPTI_ACTIVITY_KIND_KERNEL;";

fn count(path: &Path, sql: &str) -> u64 {
    let conn = common::open_ro(path);
    conn.query_row(sql, [], |r| r.get::<_, i64>(0))
        .expect("count by SQL") as u64
}

/// Runs `sightline ARGS` and returns (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn load(path: &Path) -> Trace {
    load::load_file(path).expect("a damaged trace still loads")
}

fn has_message(w: &LoadWarnings, line: &str) -> bool {
    w.messages().iter().any(|m| m == line)
}

#[test]
fn kernel_rows_with_no_end_are_kept_as_instants_and_every_command_says_so() {
    let (dir, path) = damaged_copy(
        "no-end",
        "moe",
        &format!(
            "{KERNELS_WITHOUT_CONSTRAINTS} UPDATE {KERNEL} SET end = NULL WHERE rowid % 3 = 0;"
        ),
    );
    let no_end = count(
        &path,
        &format!("SELECT count(*) FROM {KERNEL} WHERE end IS NULL"),
    );
    let all = count(&path, &format!("SELECT count(*) FROM {KERNEL}"));
    assert!(no_end > 0 && no_end < all);
    let line = format!("{no_end} kernel rows have no end time (kept as instants)");

    let trace = load(&path);
    assert!(
        has_message(&trace.warnings, &line),
        "{:?}",
        trace.warnings.messages()
    );
    assert_eq!(
        trace.kernels.spans.len() as u64,
        all,
        "rows with no end are kept"
    );
    let instants = (0..trace.kernels.spans.len())
        .filter(|&i| trace.kernels.spans.start_ns[i] == trace.kernels.spans.end_ns[i])
        .count() as u64;
    assert!(instants >= no_end);

    let p = path.to_string_lossy().into_owned();
    let csv = dir.join("events.csv").to_string_lossy().into_owned();
    let expected = format!("warning: {p}: {line}");
    for args in [
        vec![
            "summary",
            &p,
            "--report",
            "cuda_gpu_kern_sum",
            "--format",
            "csv",
        ],
        vec!["gaps", &p],
        vec!["export", &p, "--out", &csv],
        vec!["analyze", &p, "--rule", "gpu_gaps"],
        vec!["diff", &p, &p],
    ] {
        let (_, _, err) = run(&args);
        assert!(
            err.lines().any(|l| l == expected),
            "sightline {args:?}: stderr has no line {expected:?}:\n{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernels_all_ending_before_they_start_are_unreadable_not_absent() {
    let (dir, path) = damaged_copy(
        "end-before-start",
        "moe",
        &format!("UPDATE {KERNEL} SET end = start - 1;"),
    );
    let n = count(
        &path,
        &format!("SELECT count(*) FROM {KERNEL} WHERE end < start"),
    );
    assert_eq!(n, count(&path, &format!("SELECT count(*) FROM {KERNEL}")));
    let trace = load(&path);
    assert_eq!(trace.kernels.spans.len(), 0);
    let rows = trace.warnings.table(KERNEL).expect("kernel rows counted");
    assert_eq!((rows.read, rows.kept()), (n, 0));
    assert!(has_message(
        &trace.warnings,
        &format!("{n} kernel rows end before they start (skipped)")
    ));
    let unreadable = format!("has {n} kernel rows, none readable ({n} end before they start)");
    assert_eq!(
        unreadable::empty_reason(&trace, "CUDA kernel data"),
        unreadable
    );

    let p = path.to_string_lossy().into_owned();
    let (ok, out, err) = run(&[
        "summary",
        &p,
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    assert!(out.trim().is_empty(), "{out}");
    assert!(
        err.contains(&format!("cuda_gpu_kern_sum: {p} {unreadable}")),
        "{err}"
    );
    assert!(!err.contains("does not contain CUDA kernel data"), "{err}");
    // `--report all` says it too, though it is silent about reports with no data.
    let (_, _, err_all) = run(&["summary", &p]);
    assert!(err_all.contains(&unreadable), "{err_all}");

    // The same fixture with no kernel rows at all: nsys's own words, and no talk of damage.
    let (dir_empty, empty) = damaged_copy("no-kernels", "moe", &format!("DELETE FROM {KERNEL};"));
    assert_eq!(count(&empty, &format!("SELECT count(*) FROM {KERNEL}")), 0);
    let trace = load(&empty);
    assert_eq!(
        unreadable::empty_reason(&trace, "CUDA kernel data"),
        "does not contain CUDA kernel data"
    );
    let e = empty.to_string_lossy().into_owned();
    let (_, _, err) = run(&[
        "summary",
        &e,
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    assert!(
        err.contains(&format!(
            "cuda_gpu_kern_sum: {e} does not contain CUDA kernel data"
        )),
        "{err}"
    );
    assert!(!err.contains("none readable"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir_empty);
}

#[test]
fn names_whose_strings_are_missing_show_as_unknown_and_are_counted() {
    // The first kernel's demangled and short names lose their StringIds rows.
    let (dir, path) = damaged_copy(
        "missing-strings",
        "moe",
        &format!(
            "CREATE TABLE gone AS SELECT demangledName AS id FROM {KERNEL} WHERE rowid = (SELECT min(rowid) FROM {KERNEL})
               UNION SELECT shortName FROM {KERNEL} WHERE rowid = (SELECT min(rowid) FROM {KERNEL});
             DELETE FROM StringIds WHERE id IN (SELECT id FROM gone);"
        ),
    );
    let id = count(
        &path,
        &format!("SELECT demangledName FROM {KERNEL} ORDER BY rowid LIMIT 1"),
    );
    // A kernel's name is its demangled name, else its short name: unknown when neither is there.
    let unknown = count(
        &path,
        &format!(
            "SELECT count(*) FROM {KERNEL} WHERE demangledName NOT IN (SELECT id FROM StringIds)
               AND (shortName IS NULL OR shortName NOT IN (SELECT id FROM StringIds))"
        ),
    );
    let with_id = count(
        &path,
        &format!("SELECT count(*) FROM {KERNEL} WHERE demangledName = {id}"),
    );
    assert!(unknown > 0);
    let line =
        format!("{unknown} kernel names point at missing strings (shown as <unknown name #ID>)");
    let trace = load(&path);
    assert!(
        has_message(&trace.warnings, &line),
        "{:?}",
        trace.warnings.messages()
    );
    let shown = format!("<unknown name #{id}>");
    let named = (0..trace.kernels.spans.len())
        .filter(|&i| trace.str(trace.kernels.spans.name[i]) == shown)
        .count() as u64;
    assert_eq!(named, with_id);

    let p = path.to_string_lossy().into_owned();
    let (ok, out, err) = run(&[
        "summary",
        &p,
        "--report",
        "cuda_gpu_kern_sum",
        "--format",
        "csv",
    ]);
    assert!(ok, "{err}");
    let row = out
        .lines()
        .find(|l| l.trim_end().ends_with(&shown))
        .unwrap_or_else(|| panic!("no row named {shown}:\n{out}"));
    // Instances is the third column.
    assert_eq!(
        row.split(',').nth(2),
        Some(with_id.to_string().as_str()),
        "{row}"
    );
    assert!(err.contains(&format!("warning: {p}: {line}")), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_its_string_table_every_name_is_unknown_not_empty() {
    let (dir, path) = damaged_copy("no-string-table", "moe", "DROP TABLE StringIds;");
    let kernels = count(
        &path,
        &format!(
            "SELECT count(*) FROM {KERNEL} WHERE coalesce(demangledName, shortName) IS NOT NULL"
        ),
    );
    let api = count(
        &path,
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE nameId IS NOT NULL",
    );
    let trace = load(&path);
    let lines = trace.warnings.messages();
    for line in [
        format!("{kernels} kernel names point at missing strings (shown as <unknown name #ID>)"),
        format!(
            "{api} CUDA runtime API names point at missing strings (shown as <unknown name #ID>)"
        ),
    ] {
        assert!(lines.contains(&line), "{line:?} not in {lines:?}");
    }
    assert!(
        (0..trace.kernels.spans.len()).all(|i| trace
            .str(trace.kernels.spans.name[i])
            .starts_with("<unknown name #")),
        "every kernel is named <unknown name #ID>"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_directory_is_refused_within_a_second() {
    let dir = common::scratch_dir("a-directory");
    let folder = dir.join("trace.sqlite");
    std::fs::create_dir_all(&folder).expect("make a folder");
    let t = Instant::now();
    match load::load_file(&folder) {
        Err(e @ LoadError::IsDirectory { .. }) => {
            assert!(
                e.to_string().contains("trace.sqlite: is a directory"),
                "{e}"
            )
        }
        other => panic!("expected IsDirectory, got {:?}", other.map(|_| ())),
    }
    let f = folder.to_string_lossy().into_owned();
    let (ok, _, err) = run(&["summary", &f]);
    assert!(!ok);
    assert!(err.contains("is a directory, not a trace file"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Loads `path` on another thread, failing the test if it takes longer than `limit` (a load
/// that waits on a writer's lock would never end).
fn load_within(path: &Path, limit: Duration) -> Result<Trace, LoadError> {
    let (send, receive) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = send.send(load::load_file(&path));
    });
    receive
        .recv_timeout(limit)
        .expect("the load waited on the writer")
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_file_a_writer_holds_loads_what_was_committed() {
    let (dir, path) = damaged_copy("being-written", "moe", "");
    let committed = count(&path, &format!("SELECT count(*) FROM {KERNEL}"));
    let before = listing(&dir);
    // A writer in the middle of a transaction, holding the database's exclusive lock.
    let writer = Connection::open(&path).expect("open the writer");
    writer
        .execute_batch(&format!(
            "BEGIN EXCLUSIVE; INSERT INTO {KERNEL} SELECT * FROM {KERNEL} LIMIT 10;"
        ))
        .expect("write without committing");
    let trace = load_within(&path, Duration::from_secs(20)).expect("loads what is there");
    assert_eq!(trace.kernels.spans.len() as u64, committed);
    writer.execute_batch("ROLLBACK;").expect("roll back");
    drop(writer);
    assert_eq!(
        listing(&dir),
        before,
        "a -journal, -wal or -shm file was left"
    );

    // A WAL-mode file whose writer has committed into the WAL but not checkpointed: the file
    // itself is what is there; the load neither waits nor writes.
    let (dir_wal, wal) = damaged_copy("being-written-wal", "moe", "PRAGMA journal_mode = WAL;");
    let in_file = count(&wal, &format!("SELECT count(*) FROM {KERNEL}"));
    let writer = Connection::open(&wal).expect("open the writer");
    writer
        .execute_batch(&format!(
            "PRAGMA wal_autocheckpoint = 0; INSERT INTO {KERNEL} SELECT * FROM {KERNEL} LIMIT 10;"
        ))
        .expect("commit into the WAL");
    writer
        .execute_batch(&format!("BEGIN IMMEDIATE; DELETE FROM {KERNEL};"))
        .expect("a second write in progress");
    let trace = load_within(&wal, Duration::from_secs(20)).expect("loads what is there");
    assert_eq!(trace.kernels.spans.len() as u64, in_file);
    writer.execute_batch("ROLLBACK;").expect("roll back");
    drop(writer);
    let left: Vec<String> = listing(&dir_wal)
        .into_iter()
        .filter(|f| f.ends_with("-wal") || f.ends_with("-shm") || f.ends_with("-journal"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir_wal);
}

struct Badge {
    warnings: LoadWarnings,
    open: bool,
    drawn: bool,
}

fn badge_harness(warnings: LoadWarnings) -> Harness<'static, Badge> {
    Harness::builder()
        .with_size(Vec2::new(900.0, 600.0))
        .build_ui_state(
            |ui, b: &mut Badge| {
                // At the bottom, as in a status bar, clear of the window it opens.
                ui.with_layout(egui::Layout::bottom_up(egui::Align::Min), |ui| {
                    b.drawn = warnings::badge(ui, &b.warnings, &mut b.open);
                });
                warnings::window(ui.ctx(), &b.warnings, &mut b.open);
            },
            Badge {
                warnings,
                open: false,
                drawn: false,
            },
        )
}

#[test]
fn the_warning_badge_opens_the_list_of_reasons() {
    let (dir, path) = damaged_copy(
        "badge",
        "moe",
        &format!(
            "{KERNELS_WITHOUT_CONSTRAINTS}
             UPDATE {KERNEL} SET end = NULL WHERE rowid % 5 = 0;
             UPDATE {KERNEL} SET end = start - 1 WHERE rowid % 5 = 1;"
        ),
    );
    let no_end = count(
        &path,
        &format!("SELECT count(*) FROM {KERNEL} WHERE end IS NULL"),
    );
    let backwards = count(
        &path,
        &format!("SELECT count(*) FROM {KERNEL} WHERE end < start"),
    );
    let trace = load(&path);
    let lines = [
        format!("{no_end} kernel rows have no end time (kept as instants)"),
        format!("{backwards} kernel rows end before they start (skipped)"),
    ];
    // Two reasons, so the badge says 2.
    let badge = warnings::badge_text(&trace.warnings);
    assert_eq!(badge, format!("{} {}", warnings::SIGN, lines.len()));
    let mut h = badge_harness(trace.warnings.clone());
    h.run();
    assert!(h.state().drawn);
    assert!(h.query_by_label(warnings::WINDOW_TITLE).is_none());
    h.get_by_label(&badge).click();
    h.run();
    assert!(h.state().open);
    h.get_by_label(warnings::WINDOW_TITLE);
    for line in &lines {
        h.get_by_label(line);
    }
    // The badge closes it again.
    h.get_by_label(&badge).click();
    h.run();
    assert!(!h.state().open);
    assert!(h.query_by_label(&lines[0]).is_none());
    // Esc closes it too, as it closes every other window (issue 33, item 5).
    h.get_by_label(&badge).click();
    h.run();
    assert!(h.state().open);
    h.key_press(egui::Key::Escape);
    h.run();
    assert!(!h.state().open);
    assert!(h.query_by_label(warnings::WINDOW_TITLE).is_none());

    // A trace read cleanly shows no badge.
    let clean = load(&common::fixture("moe"));
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings.messages());
    let mut h = badge_harness(clean.warnings.clone());
    h.run();
    assert!(!h.state().drawn);
    assert!(h.query_by_label_contains(warnings::SIGN).is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_window_shows_the_badge_for_a_damaged_trace_and_none_for_a_clean_one() {
    let (dir, path) = damaged_copy(
        "badge-window",
        "moe",
        &format!(
            "{KERNELS_WITHOUT_CONSTRAINTS} UPDATE {KERNEL} SET end = NULL WHERE rowid % 3 = 0;"
        ),
    );
    let no_end = count(
        &path,
        &format!("SELECT COUNT(*) FROM {KERNEL} WHERE end IS NULL"),
    );
    assert!(no_end > 0);
    let mut h = common::ui::harness(Some(path.clone()));
    common::ui::wait_for_load(&mut h);
    let w = h.state().trace().expect("loaded").warnings.clone();
    let line = w
        .messages()
        .into_iter()
        .find(|m| m.starts_with(&format!("{no_end} kernel rows have no end time")))
        .expect("the no-end reason");
    // The status bar has the badge; clicking it lists the reasons in a window.
    assert!(h.query_by_label_contains(&line).is_none());
    h.get_by_label(&warnings::badge_text(&w)).click();
    h.step();
    h.step();
    assert!(h.query_by_label_contains(&line).is_some());

    // A clean trace: no badge.
    let clean = common::ui::opened("moe_export2023");
    let cw = &clean.state().trace().expect("loaded").warnings;
    assert!(cw.is_empty(), "{:?}", cw.messages());
    assert!(
        clean
            .query_by_label_contains("rows skipped or repaired")
            .is_none()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_demangled_name_missing_from_the_strings_falls_back_to_the_short_name_with_a_warning() {
    // The demangled names of the first kernel's name point nowhere; its short name stays.
    let (dir, path) = damaged_copy(
        "missing-demangled",
        "moe",
        &format!(
            "UPDATE {KERNEL} SET demangledName = (SELECT max(id) + 1 FROM StringIds)
               WHERE demangledName = (SELECT demangledName FROM {KERNEL} ORDER BY rowid LIMIT 1);"
        ),
    );
    let fallen_back = count(
        &path,
        &format!(
            "SELECT count(*) FROM {KERNEL} WHERE demangledName NOT IN (SELECT id FROM StringIds)
               AND shortName IN (SELECT id FROM StringIds)"
        ),
    );
    assert!(fallen_back > 0);
    let trace = load(&path);
    let line = format!(
        "{fallen_back} kernel {} a demangled name missing from StringIds (shown by the short name)",
        if fallen_back == 1 {
            "row has"
        } else {
            "rows have"
        }
    );
    assert!(
        has_message(&trace.warnings, &line),
        "{:?}",
        trace.warnings.messages()
    );
    let _ = std::fs::remove_dir_all(dir);
}
