//! Tables and columns come and go between nsys versions. A copy of a real export with optional
//! tables and columns removed must still load, and the reports that do not depend on what was
//! removed must still equal `nsys stats`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::Report;
use sightline::load;

#[test]
fn export_without_optional_tables_and_columns_still_loads_and_reports_the_same() {
    let dir = common::scratch_dir("schema");
    let path = dir.join("moe_stripped.sqlite");
    std::fs::copy(common::fixture("moe"), &path).expect("copy");
    {
        let c = rusqlite::Connection::open(&path).expect("open copy");
        c.execute_batch(
            "DROP TABLE ThreadNames;
             DROP TABLE PROCESSES;
             DROP TABLE TARGET_INFO_GPU;
             DROP TABLE TARGET_INFO_SESSION_START_TIME;
             DROP TABLE ENUM_CUDA_MEMCPY_OPER;
             DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS;
             DROP TABLE OSRT_API;
             ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN shortName;
             ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN registersPerThread;
             ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN gridZ;
             ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN srcDeviceId;
             ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY DROP COLUMN dstKind;
             ALTER TABLE NVTX_EVENTS DROP COLUMN textId;
             ALTER TABLE NVTX_EVENTS DROP COLUMN color;",
        )
        .expect("strip");
    }
    let full = load::load_file(&common::fixture("moe")).expect("load original");
    let stripped = load::load_file(&path).expect("stripped export must load");
    assert_eq!(stripped.kernels.spans.len(), full.kernels.spans.len());
    assert_eq!(stripped.memcpys.spans.len(), full.memcpys.spans.len());
    assert_eq!(stripped.nvtx.spans.len(), full.nvtx.spans.len());
    assert!(stripped.gpus.is_empty() && stripped.processes.is_empty());
    assert!(stripped.osrt.spans.is_empty() && stripped.memory_usage.is_empty());
    assert_eq!(stripped.session_start_utc_ns, None);
    assert!(
        stripped
            .kernels
            .registers_per_thread
            .iter()
            .all(|&r| r == 0)
    );
    // The reports read none of what was removed: they equal the golden CSVs still.
    let golden = common::fixtures().join("golden").join("moe");
    let (checked, failures) = common::check_against_golden(&stripped, &golden);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, Report::ALL.len());
    let _ = std::fs::remove_dir_all(&dir);
}
