//! The About window: the version, and for an open trace its path, the Nsight Systems version that
//! exported it, its event count and GPUs — each checked against the export read here by SQL —
//! and "unknown" when the export does not say its version; its close button closes it.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::Path;

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::trace::Trace;
use sightline::ui::about::about_window;

struct About {
    open: bool,
    trace: Option<Trace>,
}

fn harness(trace: Option<Trace>) -> Harness<'static, About> {
    let mut h = Harness::builder()
        .with_size(Vec2::new(1000.0, 700.0))
        .build_ui_state(
            |ui, about: &mut About| about_window(ui.ctx(), &mut about.open, about.trace.as_ref()),
            About { open: true, trace },
        );
    h.run();
    h
}

fn load(path: &Path) -> Trace {
    sightline::load::load_file(path).expect("load fixture")
}

/// `EXPORT_PRODUCT_VERSION` from the metadata table, which 2022.x calls `EXPORT_META_DATA` and
/// 2023.x `META_DATA_EXPORT`.
fn exporter_version_by_sql(path: &Path) -> String {
    let conn = common::open_ro(path);
    let table = ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .find(|t| common::has_table(&conn, t))
        .expect("a metadata table");
    conn.query_row(
        &format!("SELECT value FROM {table} WHERE name = 'EXPORT_PRODUCT_VERSION'"),
        [],
        |row| row.get(0),
    )
    .expect("EXPORT_PRODUCT_VERSION")
}

/// Kernels, memcpys, memsets, CUDA API calls, NVTX marks and ranges (eventType 34, 59, 60, 70,
/// 71) and OS-runtime calls.
fn event_count_by_sql(path: &Path) -> i64 {
    let conn = common::open_ro(path);
    let mut total = 0;
    for (table, filter) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", ""),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", ""),
        ("CUPTI_ACTIVITY_KIND_MEMSET", ""),
        ("CUPTI_ACTIVITY_KIND_RUNTIME", ""),
        ("NVTX_EVENTS", " WHERE eventType IN (34, 59, 60, 70, 71)"),
        ("OSRT_API", ""),
    ] {
        if common::has_table(&conn, table) {
            let n: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {table}{filter}"), [], |r| {
                    r.get(0)
                })
                .expect("count");
            total += n;
        }
    }
    total
}

fn gpu_titles_by_sql(path: &Path) -> Vec<String> {
    let conn = common::open_ro(path);
    let mut stmt = conn
        .prepare("SELECT id, name FROM TARGET_INFO_GPU ORDER BY id")
        .expect("TARGET_INFO_GPU");
    stmt.query_map([], |r| {
        Ok(format!(
            "GPU {} · {}",
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?
        ))
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

fn with_commas(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn assert_shows_trace(path: &Path) {
    let h = harness(Some(load(path)));
    h.get_by_label("Sightline");
    h.get_by_label(&format!("Version {}", env!("CARGO_PKG_VERSION")));
    h.get_by_label(&path.display().to_string());
    h.get_by_label(&format!("Nsight Systems {}", exporter_version_by_sql(path)));
    h.get_by_label(&with_commas(event_count_by_sql(path)));
    let gpus = gpu_titles_by_sql(path);
    assert!(!gpus.is_empty());
    for gpu in gpus {
        h.get_by_label(&gpu);
    }
}

#[test]
fn about_shows_the_version_and_the_2023_exporter_of_the_open_trace() {
    // Nsight Systems 2023.4 writes META_DATA_EXPORT.
    assert_shows_trace(&common::fixture("moe_export2023"));
}

#[test]
fn about_shows_the_2022_exporter_and_both_gpus_of_a_two_gpu_trace() {
    // 2022.4 writes EXPORT_META_DATA; this capture ran on two GPUs.
    assert_shows_trace(&common::fixture("p2p_2gpu"));
}

#[test]
fn about_says_unknown_when_the_export_does_not_record_its_version() {
    let dir = common::scratch_dir("about");
    let copy = dir.join("no_metadata.sqlite");
    std::fs::copy(common::fixture("p2p_2gpu"), &copy).expect("copy fixture");
    rusqlite::Connection::open(&copy)
        .expect("open copy")
        .execute_batch("DROP TABLE EXPORT_META_DATA")
        .expect("drop the metadata table");
    let h = harness(Some(load(&copy)));
    h.get_by_label("unknown");
    assert!(h.query_by_label_contains("Nsight Systems 20").is_none());
    drop(h);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn about_without_a_trace_shows_the_version_only_and_closes() {
    let mut h = harness(None);
    h.get_by_label(&format!("Version {}", env!("CARGO_PKG_VERSION")));
    h.get_by_label(sightline::ui::about::DESCRIPTION);
    assert!(h.query_by_label("Trace").is_none());
    assert!(h.query_by_label("Exported by").is_none());
    h.get_by_label("Close window").click();
    h.run();
    assert!(!h.state().open);
    assert!(h.query_by_label("Sightline").is_none());
}
