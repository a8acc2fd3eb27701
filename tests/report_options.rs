//! The kernel-naming report options (`base`, `mangled`, `nvtx-name` and the combinations nsys
//! allows) against the real Nsight Systems 2023.4.4: every file under
//! `tests/fixtures/golden_options/<trace>/<report>+<options>.csv|.sha256|.skipped` whose name
//! starts with a registered report was written by `nsys stats --report <report>:<options>
//! --format csv` (see the README.txt there), and our output must equal it byte for byte.
//! Files for rules (`analyze` specs) in the same folder belong to another test.
//!
//! A dump report whose plain output is still empty (not implemented yet) is counted apart and
//! printed, not failed, so the oracle files can land before the report does.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;

use sha2::{Digest, Sha256};
use sightline::analysis::{Filter, NsysFormat, ReportInput, reports};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::Trace;

/// What `sightline summary --report SPEC --format csv` prints.
fn csv_of(trace: &Trace, spec: &str) -> String {
    let (report, options) = reports::parse_spec(spec).expect("spec parses");
    let table = report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &options,
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::V2023_4,
        sink: None,
    });
    if table.is_empty() {
        return String::new();
    }
    let mut buf = Vec::new();
    nsys_csv::write_table_csv(&table, &mut buf).expect("write csv");
    String::from_utf8(buf).expect("utf-8")
}

/// SHA-256 as the capture script hashed the CSV: CRLF → LF, trimmed, one final newline.
fn sha256_hex(csv: &str) -> String {
    let text = format!("{}\n", csv.replace("\r\n", "\n").trim());
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn first_difference(expected: &str, ours: &str) -> String {
    let (mut exp, mut got) = (expected.lines(), ours.lines());
    for line in 1.. {
        match (exp.next(), got.next()) {
            (Some(a), Some(b)) if a == b => continue,
            (Some(a), Some(b)) => return format!("line {line}: expected `{a}`, got `{b}`"),
            (Some(a), None) => return format!("line {line}: expected `{a}`, got nothing"),
            (None, Some(b)) => return format!("line {line}: extra `{b}`"),
            (None, None) => break,
        }
    }
    "line ends differ".into()
}

#[test]
fn report_options_match_nsys() {
    let root = common::fixtures().join("golden_options");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("tests/fixtures/golden_options exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let (mut compared, mut not_yet, mut failures) = (0usize, Vec::new(), Vec::new());
    for dir in &dirs {
        let stem = dir.file_name().unwrap().to_string_lossy().to_string();
        let trace = load::load_file(&common::fixture(&stem)).expect("fixture trace loads");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        for path in files {
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let Some((spec, kind)) = file.rsplit_once('.') else {
                continue;
            };
            // The file is named after the spec with its ':' written '+' (README.txt there).
            let spec = spec.replace('+', ":");
            let spec = spec.as_str();
            let report = spec.split(':').next().unwrap_or_default();
            if reports::find(report).is_none() {
                continue; // a rule's oracle file
            }
            let expected = std::fs::read_to_string(&path).unwrap();
            let ours = csv_of(&trace, spec);
            if ours.is_empty() && kind != "skipped" && csv_of(&trace, report).is_empty() {
                not_yet.push(format!("{stem} {spec}"));
                continue;
            }
            compared += 1;
            let failure = match kind {
                "csv" => {
                    let expected = expected.replace("\r\n", "\n");
                    (ours != expected).then(|| first_difference(&expected, &ours))
                }
                "sha256" => {
                    let want = expected.split_whitespace().next().unwrap_or_default();
                    (sha256_hex(&ours) != want).then(|| {
                        format!(
                            "SHA-256 differs ({}; ours has {} lines)",
                            expected.trim(),
                            ours.lines().count()
                        )
                    })
                }
                "skipped" => (!ours.is_empty())
                    .then(|| format!("nsys printed nothing ({}), we print rows", expected.trim())),
                _ => None,
            };
            if let Some(f) = failure {
                failures.push(format!("{stem} {spec}: {f}"));
            }
        }
    }
    println!(
        "report options: {} traces, {compared} outputs compared with nsys 2023.4.4, {} left for \
         reports not implemented yet, {} failures",
        dirs.len(),
        not_yet.len(),
        failures.len()
    );
    for n in &not_yet {
        println!("  not implemented yet: {n}");
    }
    assert!(compared > 0, "no oracle file compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
