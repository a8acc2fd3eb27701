//! `summary R --report ncu_details` as ncu prints the details page for a terminal (no
//! `--csv`), against what ncu 2025.3.1 printed for the shared reports
//! (`../shared/traces/ncu/oracle/NAME.details.txt.gz`: 4 files), line for line; and its kernel
//! filter (`--kernel REGEX`, `--launch N`, the flags `ncu_source` takes) on both forms of the page.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use std::io::Read;
use std::path::Path;

fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("open"))
        .read_to_string(&mut text)
        .expect("gunzip");
    text
}

#[test]
fn terminal_details_page_is_ncus() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("oracle")).expect("oracle") {
        let path = entry.expect("entry").path();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(name) = file.strip_suffix(".details.txt.gz") else {
            continue;
        };
        let report = dir.join(format!("{name}.ncu-rep.gz"));
        let ours = common::sightline_stdout(&[
            "summary",
            report.to_str().unwrap(),
            "--report",
            "ncu_details",
        ]);
        let theirs = gunzip(&path);
        let (a, b): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        if let Some(i) = first {
            panic!(
                "{name}: line {} differs\n ours: {:?}\n  ncu: {:?}",
                i + 1,
                a[i],
                b[i]
            );
        }
        assert_eq!(a.len(), b.len(), "{name}: line count");
        assert_eq!(ours, theirs, "{name}: bytes");
        eprintln!("{name}: {} lines equal to ncu's", b.len());
        checked += 1;
    }
    eprintln!("{checked} of ncu's terminal details pages compared");
    assert!(checked >= 4, "only {checked} pages compared");
}

#[test]
fn kernel_filter_picks_the_details_pages_kernels() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let report = dir.join("ncu_moe_full.ncu-rep.gz");
    let report = report.to_str().unwrap();
    // The terminal page: each kernel has its line "  NAME (grid)x(block), Context …".
    let kernels = |text: &str| {
        text.lines()
            .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.contains(", Context "))
            .count()
    };
    let all = common::sightline_stdout(&["summary", report, "--report", "ncu_details"]);
    let reduce = common::sightline_stdout(&[
        "summary",
        report,
        "--report",
        "ncu_details",
        "--kernel",
        "regex:reduce_kernel",
    ]);
    let second = common::sightline_stdout(&[
        "summary",
        report,
        "--report",
        "ncu_details",
        "--kernel",
        "reduce_kernel",
        "--launch",
        "1",
    ]);
    assert_eq!(kernels(&all), 113);
    let n = kernels(&reduce);
    assert!(n > 1 && n < 113, "{n} reduce kernels");
    assert!(
        reduce
            .lines()
            .filter(|l| l.contains(", Context "))
            .all(|l| l.contains("reduce_kernel"))
    );
    assert_eq!(kernels(&second), 1);
    // Launch 1 is the second kernel of the filtered page, with the same lines.
    let blocks: Vec<&str> = reduce.split("\n  ").collect();
    assert!(
        second.contains(blocks[2].trim_end()),
        "launch 1 is not the second reduce kernel"
    );
    // The CSV page: the same kernels, their ID in the first column.
    let csv = common::sightline_stdout(&[
        "summary",
        report,
        "--report",
        "ncu_details",
        "--format",
        "csv",
        "--kernel",
        "reduce_kernel",
    ]);
    // A metric row starts with its kernel's ID; the page also holds ncu's NVLink note and NUMA
    // table lines, which do not.
    let ids: std::collections::BTreeSet<u32> = csv
        .lines()
        .skip(1)
        .filter(|l| l.matches("\",\"").count() > 10)
        .filter_map(|l| l.split(',').next()?.trim_matches('"').parse().ok())
        .collect();
    assert_eq!(ids.len(), n, "CSV kernels: {ids:?}");
    eprintln!("moe_full: 113 kernels, {n} match reduce_kernel on both pages; --launch 1 picks one");
}
