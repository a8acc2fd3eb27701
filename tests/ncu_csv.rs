//! ncu's CSV pages as input (`load::ncu_csv`): for every shared report, `oracle/NAME.raw.csv`
//! (units for display) and `oracle/NAME.raw_base.csv` (base units) load, through
//! `load::load_file`'s detection by content, to the kernels of the `.ncu-rep` with its metric
//! values, equal within the precision ncu printed (the raw page's units scaled back to the
//! report's base units); `NAME.details.csv.gz` to the same kernels; and a copy of a raw page
//! rewritten with continental separators (`27.595.520`, `1.234,56`) to the same values.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::Path;
use std::sync::Arc;

use sightline::load;
use sightline::trace::ncu::{MetricValue, NcuReport};

const REPORTS: [&str; 4] = [
    "ncu_graphs_roofline",
    "ncu_moe_dram",
    "ncu_moe_full",
    "ncu_train_gemm",
];

fn report_of(path: &Path) -> NcuReport {
    let trace = load::load_file(path).unwrap_or_else(|e| panic!("{e}"));
    let report = trace.ncu.expect("an Nsight Compute report");
    Arc::try_unwrap(report).unwrap_or_else(|_| panic!("one owner"))
}

/// Seconds, bytes and hertz per unit, for a unit part the pages print.
fn part_scale(part: &str) -> Option<(f64, &str)> {
    const TIME: [(&str, f64); 4] = [("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    if let Some(&(_, f)) = TIME.iter().find(|(u, _)| *u == part) {
        return Some((f, "s"));
    }
    let prefixes = [("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12)];
    for (p, f) in prefixes {
        if let Some(base) = part.strip_prefix(p)
            && matches!(base, "byte" | "hz" | "cycle" | "inst" | "sector")
        {
            return Some((f, base));
        }
    }
    Some((1.0, part))
}

/// How many base units one `unit` is (`Gbyte/s` against `byte/s`: 1e9).
fn scale(unit: &str, base: &str) -> f64 {
    if unit == base {
        return 1.0;
    }
    let ratio = |u: &str| -> (f64, String) {
        let mut parts = u.splitn(2, '/');
        let (num, num_base) = part_scale(parts.next().unwrap_or("")).unwrap();
        match parts.next() {
            Some(den) => {
                let (d, d_base) = part_scale(den).unwrap();
                // ncu prints `%/Kbyte` values that are the `%/byte` value / 1000 (its
                // prefix scales a per-byte unit as it would a byte count), unlike
                // `sector/us` (the `sector/s` value / 1e6).
                let d = if d_base == "byte" { 1.0 / d } else { d };
                (num / d, format!("{num_base}/{d_base}"))
            }
            None => (num, num_base.to_string()),
        }
    };
    let ((u, uk), (b, bk)) = (ratio(unit), ratio(base));
    assert_eq!(uk, bk, "{unit} against {base}");
    u / b
}

/// The printed precision of a cell: half a unit of its last digit.
fn half_last_digit(cell: &str, decimal: char) -> f64 {
    match cell.rfind(decimal) {
        Some(i) => 0.5 * 10f64.powi(-((cell.len() - i - 1) as i32)),
        None => 0.5,
    }
}

/// The page's own cells, read here with the csv crate: header, units, rows.
fn cells(path: &Path) -> Vec<Vec<String>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .unwrap();
    reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

struct Compared {
    numbers: u64,
    texts: u64,
    /// What differs, in words.
    differ: Vec<String>,
}

/// Checks a raw page's kernels and values against the report's; `base` is the base-units
/// page's units row (to scale the display units back).
fn compare_raw(
    name: &str,
    rep: &NcuReport,
    page: &NcuReport,
    page_cells: &[Vec<String>],
    base_units: &[String],
    decimal: char,
) -> Compared {
    assert_eq!(page.workloads.len(), rep.workloads.len(), "{name}: kernels");
    let header = &page_cells[0];
    let mut compared = Compared {
        numbers: 0,
        texts: 0,
        differ: Vec::new(),
    };
    for (k, (w, r)) in page.workloads.iter().zip(&rep.workloads).enumerate() {
        let what = format!("{name} kernel {k}");
        assert_eq!(w.id, r.id, "{what}");
        assert_eq!(w.pid, r.pid, "{what}");
        // ncu prints a shortened demangled name (`at::<unnamed>::` for
        // `at::native::<unnamed>::`, `4` for `(int)4`): its function name is in it.
        assert!(w.demangled_name.contains(&r.function_name), "{what}");
        assert_eq!((w.context, w.stream), (r.context, r.stream), "{what}");
        assert_eq!((w.grid, w.block), (r.grid, r.block), "{what}");
        let row = &page_cells[k + 2];
        for (c, metric) in header.iter().enumerate() {
            let Some(id) = page.metric_id(metric) else {
                continue;
            };
            let Some(ours) = w.metric(id) else { continue };
            let Some(theirs) = rep.value(r, metric) else {
                continue;
            };
            let cell = &row[c];
            match (ours.as_f64(), theirs) {
                (_, MetricValue::Str(s)) => {
                    // A text that looks like a number is read as one: compare the cell,
                    // with the separators put back for the continental copy.
                    let text = match ours {
                        MetricValue::Str(t) => t.clone(),
                        _ if decimal == ',' => cell
                            .chars()
                            .map(|ch| match ch {
                                ',' => '.',
                                '.' => ',',
                                other => other,
                            })
                            .collect(),
                        _ => cell.clone(),
                    };
                    if &text == s {
                        compared.texts += 1;
                    } else {
                        compared
                            .differ
                            .push(format!("{what} {metric}: {text:?} {s:?}"));
                    }
                }
                (Some(v), t) => {
                    let Some(t) = t.as_f64() else { continue };
                    let unit = page.units.get(&id).map(String::as_str).unwrap_or("");
                    let f = scale(unit, base_units.get(c).map(String::as_str).unwrap_or(""));
                    let tolerance = half_last_digit(cell, decimal) * f + t.abs() * 1e-12;
                    // ncu prints a counter that came out negative (-2 sectors, a replay
                    // difference) as 0.
                    let clamped = t < 0.0 && v == 0.0;
                    let close =
                        (v * f - t).abs() <= tolerance || (v.is_nan() && t.is_nan()) || clamped;
                    if close {
                        compared.numbers += 1;
                    } else {
                        let m = format!("{what} {metric}: page {cell} {unit}, report {t}");
                        compared.differ.push(m);
                    }
                }
                (None, _) => {
                    let m = format!("{what} {metric}: page {cell:?}, report {theirs:?}");
                    compared.differ.push(m);
                }
            }
        }
    }
    compared
}

/// The page with continental separators: `,` ↔ `.` in every numeric cell.
fn continental(path: &Path, out: &Path) {
    let rows = cells(path);
    let mut writer = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_path(out)
        .unwrap();
    for row in rows {
        let row: Vec<String> = row
            .iter()
            .map(|c| {
                let digits = c.strip_prefix('-').unwrap_or(c);
                let numeric = digits.chars().next().is_some_and(|ch| ch.is_ascii_digit())
                    && digits
                        .chars()
                        .all(|ch| ch.is_ascii_digit() || ch == ',' || ch == '.');
                if numeric {
                    c.chars()
                        .map(|ch| match ch {
                            ',' => '.',
                            '.' => ',',
                            other => other,
                        })
                        .collect()
                } else {
                    c.clone()
                }
            })
            .collect();
        writer.write_record(&row).unwrap();
    }
    writer.flush().unwrap();
}

#[test]
fn raw_and_details_pages_load_to_the_reports_kernels_and_values() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let scratch = common::scratch_dir("ncu-csv");
    for name in REPORTS {
        let rep = report_of(&dir.join(format!("{name}.ncu-rep.gz")));
        let oracle = dir.join("oracle");
        let base_path = oracle.join(format!("{name}.raw_base.csv"));
        let base_cells = cells(&base_path);
        for page_name in ["raw", "raw_base"] {
            let path = oracle.join(format!("{name}.{page_name}.csv"));
            let page = report_of(&path);
            let page_cells = cells(&path);
            let c = compare_raw(name, &rep, &page, &page_cells, &base_cells[1], '.');
            eprintln!(
                "{name}.{page_name}.csv: {} kernels, {} numbers and {} texts equal the report's",
                page.workloads.len(),
                c.numbers,
                c.texts
            );
            for m in c.differ.iter().take(8) {
                eprintln!("  differs: {m}");
            }
            assert!(
                c.differ.is_empty(),
                "{name} {page_name}: {} differ",
                c.differ.len()
            );
            assert!(c.numbers > 1000, "{name} {page_name}");
        }
        // Continental separators, decided from the whole file.
        let de = scratch.join(format!("{name}.de.csv"));
        continental(&oracle.join(format!("{name}.raw.csv")), &de);
        let page = report_of(&de);
        let c = compare_raw(name, &rep, &page, &cells(&de), &base_cells[1], ',');
        eprintln!("{name}: the continental copy: {} numbers equal", c.numbers);
        assert!(
            c.differ.is_empty(),
            "{name} continental: {:?}",
            &c.differ[..3.min(c.differ.len())]
        );
        // The details page (gzipped, as shared): the same kernels.
        let details = oracle.join(format!("{name}.details.csv.gz"));
        let page = report_of(&details);
        assert_eq!(page.workloads.len(), rep.workloads.len(), "{name} details");
        for (w, r) in page.workloads.iter().zip(&rep.workloads) {
            assert_eq!(
                (w.id, w.pid, w.grid, w.block),
                (r.id, r.pid, r.grid, r.block),
                "{name} details"
            );
            assert!(
                w.demangled_name.contains(&r.function_name),
                "{name} details"
            );
            assert!(!w.metrics.is_empty(), "{name} details kernel {}", w.id);
        }
        eprintln!(
            "{name}.details.csv.gz: {} kernels, {} metric labels",
            page.workloads.len(),
            page.metric_names.len()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn a_csv_page_is_told_by_its_first_line_not_its_name() {
    let dir = common::scratch_dir("ncu-csv-detect");
    let page = dir.join("kernels.txt");
    std::fs::write(
        &page,
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n\
         \"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"ns\"\n\
         \"0\",\"12\",\"python3\",\"host\",\"k\",\"1\",\"7\",\"(64, 1, 1)\",\"(2, 1, 1)\",\"0\",\"9.0\",\"27,595,520\"\n",
    )
    .unwrap();
    let r = report_of(&page);
    assert_eq!(r.workloads.len(), 1);
    let w = &r.workloads[0];
    assert_eq!((w.pid, w.grid, w.block), (12, [2, 1, 1], [64, 1, 1]));
    assert_eq!(
        r.value(w, "gpu__time_duration.sum"),
        Some(&MetricValue::U64(27_595_520))
    );
    let id = r.metric_id("gpu__time_duration.sum").unwrap();
    assert_eq!(r.units.get(&id).map(String::as_str), Some("ns"));
    // Another CSV is not claimed.
    let other = dir.join("other.csv");
    std::fs::write(&other, "\"a\",\"b\"\n1,2\n").unwrap();
    assert!(load::load_file(&other).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
