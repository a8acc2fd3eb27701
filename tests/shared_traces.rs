//! Walks every trace in `../shared/traces` (present on CI) and checks each report against the
//! golden CSVs made by `nsys stats` 2023.4, including exports from nsys versions 2021–2026.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::{self, Filter, Report};
use sightline::load;

#[test]
fn every_shared_trace_matches_its_golden_reports() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is not present beside the checkout; 0 files checked");
        return;
    };
    let mut files = 0;
    let mut reports = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .expect("read shared traces")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    entries.sort();
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_string();
        let trace = match load::load_file(&path) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{stem}: load failed: {e}"));
                continue;
            }
        };
        files += 1;
        let golden = dir.join("golden").join(&stem);
        if golden.is_dir() {
            let (n, f) = common::check_against_golden(&trace, &golden);
            reports += n;
            failures.extend(f);
            // Where nsys 2023.4 refused an old export (no ENUM tables), we still report.
            for report in Report::ALL {
                if let Some(common::Golden::NoOracle(_)) = common::golden(&golden, report) {
                    let has_memcpy =
                        !trace.memcpys.spans.is_empty() || !trace.memsets.spans.is_empty();
                    let rows = analysis::compute(&trace, report, &Filter::all()).rows.len();
                    if has_memcpy && rows == 0 {
                        failures.push(format!(
                            "{stem} {}: no rows although the trace has memory operations",
                            report.id()
                        ));
                    }
                }
            }
        }
    }
    println!("checked {files} shared trace files, {reports} reports against golden CSVs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(files > 0, "no .sqlite files found in {}", dir.display());
}
