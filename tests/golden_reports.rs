//! Every report of every bundled fixture equals the CSV `nsys stats` (2023.4) printed for it; the
//! current exports of `../shared/traces` (nsys 2025.3) equal what 2025.3.1 printed for them
//! (`golden-2025.3/`) by default, and what 2023.4.4 printed (`golden/`) as `--nsys-format 2023.4`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::{NsysFormat, Report};
use sightline::load;

const FIXTURES: [&str; 8] = [
    "transformer",
    "moe",
    "ws_baseline",
    "ws_streaming",
    "stress",
    "p2p_2gpu",
    "moe_export2023",
    "ws_streaming_export2023",
];

#[test]
fn fixture_reports_equal_nsys_stats_golden_csvs() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for name in FIXTURES {
        let trace = load::load_file(&common::fixture(name)).unwrap_or_else(|e| panic!("{e}"));
        let (n, f) =
            common::check_against_golden(&trace, &common::fixtures().join("golden").join(name));
        checked += n;
        failures.extend(f);
    }
    println!(
        "checked {checked} reports of {} fixtures against golden CSVs",
        FIXTURES.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked, FIXTURES.len() * Report::ALL.len());
}

#[test]
fn current_exports_equal_both_releases_golden_csvs() {
    let Some(dir) = common::shared_traces() else {
        println!("SKIPPED: ../shared/traces is not present beside the checkout; 0 files checked");
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir.join("golden-2025.3")) else {
        println!(
            "SKIPPED: no golden-2025.3 under {}; 0 files checked",
            dir.display()
        );
        return;
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    let (mut checked_2025, mut checked_2023) = (0, 0);
    let mut failures = Vec::new();
    for name in &names {
        let trace = load::load_file(&dir.join(format!("{name}.sqlite")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            NsysFormat::of_trace(&trace),
            NsysFormat::V2025_3,
            "{name}: written by {:?}",
            trace.exporter_version
        );
        // By default, as the nsys that wrote it prints.
        let golden = dir.join("golden-2025.3").join(name);
        for report in Report::ALL {
            if let Some(common::Golden::Csv(expected)) = common::golden(&golden, report)
                && common::report_csv(&trace, report) != expected
            {
                failures.push(format!("{name} {} (by default)", report.id()));
            }
        }
        let (n, f) = common::check_against_golden(&trace, &golden);
        checked_2025 += n;
        failures.extend(f);
        let (n, f) = common::check_against_golden(&trace, &dir.join("golden").join(name));
        checked_2023 += n;
        failures.extend(f);
    }
    println!(
        "checked {checked_2025} reports of {} current exports against golden-2025.3 and \
         {checked_2023} against golden (as 2023.4)",
        names.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(checked_2025, names.len() * Report::ALL.len());
}

#[test]
fn newer_schema_export_gives_the_same_reports_as_the_older_one() {
    for (old, new) in [
        ("moe", "moe_export2023"),
        ("ws_streaming", "ws_streaming_export2023"),
    ] {
        let a = load::load_file(&common::fixture(old)).unwrap_or_else(|e| panic!("{e}"));
        let b = load::load_file(&common::fixture(new)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.event_count(), b.event_count());
        for report in Report::ALL {
            assert_eq!(
                common::report_csv(&a, report),
                common::report_csv(&b, report),
                "{old} vs {new}: {}",
                report.id()
            );
        }
    }
}
