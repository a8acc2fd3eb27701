//! Every report of every bundled fixture equals the CSV `nsys stats` (2023.4) printed for it.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use sightline::analysis::Report;
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
