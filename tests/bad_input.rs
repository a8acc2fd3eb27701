//! Bad input gives a clear error naming the file, odd rows are counted not fatal, and loading
//! never changes the user's file or writes anything beside it.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::Path;

use sightline::load::{self, LoadError};

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("list dir")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

#[test]
fn loading_leaves_the_file_and_its_folder_untouched() {
    let dir = common::scratch_dir("readonly");
    let path = dir.join("moe.sqlite");
    std::fs::copy(common::fixture("moe"), &path).expect("copy");
    let before = std::fs::read(&path).expect("read");
    let files_before = listing(&dir);
    let trace = load::load_file(&path).expect("load");
    assert!(trace.event_count() > 0);
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "file bytes changed"
    );
    assert_eq!(
        listing(&dir),
        files_before,
        "a journal or other file appeared beside the trace"
    );
    // A read-only file loads too (nothing needs write access).
    let mut perms = std::fs::metadata(&path).expect("meta").permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).expect("chmod");
    assert!(load::load_file(&path).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_bad_input_gives_its_error_naming_the_file() {
    let dir = common::scratch_dir("bad");
    // Missing file.
    let missing = dir.join("nope.sqlite");
    let e = load::load_file(&missing).expect_err("missing");
    assert!(matches!(e, LoadError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("nope.sqlite"));
    // A directory.
    let e = load::load_file(&dir).expect_err("dir");
    assert!(matches!(e, LoadError::IsDirectory { .. }), "{e}");
    // Not SQLite at all.
    let text = dir.join("notes.sqlite");
    std::fs::write(&text, "this is not a database\n".repeat(100)).expect("write");
    let e = load::load_file(&text).expect_err("text");
    assert!(matches!(e, LoadError::NotSqlite { .. }), "{e}");
    assert!(e.to_string().contains("notes.sqlite"));
    // Empty file.
    let empty = dir.join("empty.sqlite");
    std::fs::write(&empty, b"").expect("write");
    assert!(matches!(
        load::load_file(&empty),
        Err(LoadError::NotSqlite { .. })
    ));
    // A damaged .nsys-rep report: without nsys, say how to convert it; with nsys, that its
    // `nsys export` failed (tests/cli_nsys_rep.rs covers both with a stand-in nsys).
    let rep = dir.join("run.nsys-rep");
    std::fs::write(&rep, b"QDSTRM binary report").expect("write");
    let e = load::load_file(&rep).expect_err("rep");
    assert!(
        matches!(e, LoadError::NsysRep { .. } | LoadError::NsysExport { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("nsys export --type=sqlite"), "{e}");
    // SQLite, but not an nsys export.
    let other = dir.join("other.sqlite");
    {
        let c = rusqlite::Connection::open(&other).expect("create");
        c.execute_batch(
            "CREATE TABLE recipes(id INTEGER, name TEXT); INSERT INTO recipes VALUES (1, 'soup');",
        )
        .expect("fill");
    }
    let e = load::load_file(&other).expect_err("other");
    assert!(matches!(e, LoadError::NotNsys { .. }), "{e}");
    assert!(
        e.to_string().contains("other.sqlite") && e.to_string().contains("StringIds"),
        "{e}"
    );
    // Truncated export: the header promises pages that are not there.
    let truncated = dir.join("truncated.sqlite");
    let bytes = std::fs::read(common::fixture("stress")).expect("read");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).expect("write");
    let e = load::load_file(&truncated).expect_err("truncated");
    assert!(
        matches!(e, LoadError::Corrupt { .. } | LoadError::Table { .. }),
        "truncated file gave {e:?}"
    );
    assert!(e.to_string().contains("truncated.sqlite"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn odd_rows_are_counted_as_warnings_not_fatal() {
    let dir = common::scratch_dir("odd");
    let path = dir.join("odd.sqlite");
    std::fs::copy(common::fixture("moe"), &path).expect("copy");
    let clean = load::load_file(&path).expect("load clean");
    assert_eq!(clean.warnings.total(), 0, "{:?}", clean.warnings);
    {
        // Damage a copy of a real export the way broken captures are damaged (the schema's
        // NOT NULL constraints keep GPU rows from losing their end).
        let c = rusqlite::Connection::open(&path).expect("open copy");
        c.execute_batch(
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 2 OFFSET 10);
             UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 99 WHERE rowid IN (SELECT rowid FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 4);
             UPDATE NVTX_EVENTS SET text = CAST(X'C3284142' AS TEXT) WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1);
             UPDATE NVTX_EVENTS SET end = NULL WHERE rowid IN (SELECT rowid FROM NVTX_EVENTS WHERE eventType = 59 LIMIT 1 OFFSET 5);",
        )
        .expect("damage");
    }
    let odd = load::load_file(&path).expect("odd rows must not stop the load");
    let w = &odd.warnings.entries;
    let count = |table: &str, what: &str| {
        w.iter()
            .filter(|e| e.table == table && e.message().contains(what))
            .map(|e| e.count)
            .sum::<u64>()
    };
    assert_eq!(
        count("CUPTI_ACTIVITY_KIND_KERNEL", "end before they start"),
        2,
        "{w:?}"
    );
    assert_eq!(
        count("CUPTI_ACTIVITY_KIND_MEMCPY", "unknown copyKind"),
        4,
        "{w:?}"
    );
    assert_eq!(count("NVTX_EVENTS", "not UTF-8"), 1, "{w:?}");
    assert_eq!(count("NVTX_EVENTS", "never closed"), 1, "{w:?}");
    // Kernels with end < start are dropped, the rest kept.
    assert_eq!(odd.kernels.spans.len(), clean.kernels.spans.len() - 2);
    assert_eq!(odd.memcpys.spans.len(), clean.memcpys.spans.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_named_pipe_or_a_directory_is_refused_at_once() {
    let dir = common::scratch_dir("fifo");
    let fifo = dir.join("x.sqlite");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    // In the library: no writer will ever open the pipe, so any attempt to read it would hang.
    let t0 = std::time::Instant::now();
    match load::load_file(&fifo) {
        Err(e @ LoadError::NotRegularFile { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("named pipe") && msg.contains("x.sqlite"),
                "{msg}"
            );
        }
        other => panic!("expected NotRegularFile, got {:?}", other.map(|_| ())),
    }
    // On the command line, within a second, for the pipe and for a directory.
    for path in [&fifo, &dir] {
        let t = std::time::Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
            .arg("summary")
            .arg(path)
            .output()
            .expect("run sightline");
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("named pipe") || err.contains("is a directory"),
            "{err}"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
    }
    assert!(t0.elapsed() < std::time::Duration::from_secs(2));
}
