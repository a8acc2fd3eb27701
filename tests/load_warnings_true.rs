//! Load warnings name real damage only (issue 33, item 5): in `cpu_side.sqlite` 5,148 GPU
//! operations have no CUDA call with their correlationId, and every one is a unified-memory
//! migration (copyKind 11–13), which the driver starts on a page fault and no call launches —
//! nothing is missing, so no warning says so. Checked against the file itself with SQLite.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::path::Path;

#[test]
fn migrations_launched_by_no_call_are_not_a_warning() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/cpu_side.sqlite");
    if !path.exists() {
        eprintln!("SKIPPED: {} is not there", path.display());
        return;
    }
    // Independently: the GPU operations with no CUDA call of the same correlationId, by kind.
    let db =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let unlinked = |sql: &str| -> i64 { db.query_row(sql, [], |r| r.get(0)).unwrap() };
    let no_call = "NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r \
                   WHERE r.correlationId = o.correlationId)";
    let migrations = unlinked(&format!(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY o WHERE copyKind BETWEEN 11 AND 13 AND {no_call}"
    ));
    let other_copies = unlinked(&format!(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY o WHERE copyKind NOT BETWEEN 11 AND 13 AND {no_call}"
    ));
    let kernels = unlinked(&format!(
        "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL o WHERE {no_call}"
    ));
    assert_eq!((migrations, other_copies, kernels), (5148, 0, 0));

    let trace = sightline::load::load_file(&path).unwrap();
    let messages = trace.warnings.messages();
    assert!(
        !messages
            .iter()
            .any(|m| m.contains("no launching CUDA API call")),
        "{messages:?}"
    );
    // The migrations are loaded, unlinked, as they are.
    let loaded_migrations = trace
        .memcpys
        .copy_kind
        .iter()
        .zip(&trace.memcpys.api_call)
        .filter(|(k, _)| k.is_unified_migration())
        .count();
    assert!(loaded_migrations >= 5148, "{loaded_migrations}");
}
