//! Issue 36 item 10: a trace of OS runtime calls only (`nsys profile --trace=osrt` of
//! `/bin/sleep`, no GPU) has one process whose threads are all quiet. Its OS runtime rows are
//! what there is to see: they show when the trace opens, not folded into "+N quiet threads"
//! with each thread collapsed inside.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::Command;

use sightline::load;
use sightline::ui::timeline::{RowKind, TimelineModel};

#[test]
fn a_process_whose_threads_are_all_quiet_shows_their_os_runtime_rows() {
    let Some(nsys) = sightline::load::nsys_rep::find_on_path("nsys") else {
        eprintln!("note: nsys is not on PATH: skipping");
        return;
    };
    let dir = common::scratch_dir("osrt-only-rows");
    let export = dir.join("sleep.sqlite");
    let made = Command::new(&nsys)
        .args(["export", "--type=sqlite", "--force-overwrite=true", "-o"])
        .arg(&export)
        .arg(common::fixtures().join("osrt_sleep_2022.nsys-rep"))
        .output()
        .expect("run nsys export");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let trace = load::load_file(&export).expect("load the export");
    assert!(!trace.osrt.spans.is_empty(), "OS runtime calls recorded");
    let model = TimelineModel::new(&trace);
    let titles: Vec<&str> = model.rows.iter().map(|r| r.title.as_str()).collect();
    assert!(
        !model
            .rows
            .iter()
            .any(|r| matches!(r.kind, RowKind::QuietThreads { .. })),
        "all threads folded away: {titles:?}"
    );
    let osrt: Vec<_> = model
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Osrt { .. }))
        .collect();
    assert!(!osrt.is_empty(), "{titles:?}");
    for row in osrt {
        let closed: Vec<_> = row
            .hidden_by
            .iter()
            .filter(|g| model.initially_collapsed.contains(g))
            .collect();
        assert!(closed.is_empty(), "'{}' hidden by {closed:?}", row.title);
    }
}
