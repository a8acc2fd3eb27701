//! ncu's own CSV pages written by `export::ncu_pages`, compared cell by cell with what ncu
//! 2025.3.1 printed for the four shared reports (`../shared/traces/ncu/oracle/`): the raw page
//! in auto units (`NAME.raw.csv`) and in base units (`NAME.raw_base.csv`), the details page
//! (`NAME.details.csv.gz`) and the per-kernel summary (`NAME.summary.csv`): 4 reports × 4
//! files = 16 files checked. Each comparison prints how many cells and rows match and which columns
//! differ; the asserts hold what is exact (header, row count, kernel ids, the fixed columns but
//! the kernel name, every value of base units, every value of a column whose unit Sightline
//! derives as ncu's in auto units but for three rounding ties, every kernel name: 2282 cells)
//! and floors under the rest (units: 11882 of 11902), so that a regression fails.
//!
//! Without `../shared`: the report of `tests/captures/ncu_names.cu` (kernels made to tell apart
//! how ncu simplifies names) prints its raw, details and summary pages byte for byte as ncu
//! 2025.3.1 did (`tests/fixtures/ncu_names/`), so do the two of `ncu_names_common.cu` (a
//! namespace every kernel uses) their raw pages, and every kernel name of the PyTorch pair's raw
//! page (`tests/fixtures/ncu_kt_pair.*`) is ncu's.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use common::load_ncu as load;

use std::collections::BTreeMap;
use std::path::Path;

use sightline::export::ncu_pages::{self, NcuPage, UnitMode};
use sightline::trace::ncu::NcuReport;

const REPORTS: [&str; 4] = [
    "ncu_graphs_roofline",
    "ncu_moe_dram",
    "ncu_moe_full",
    "ncu_train_gemm",
];

/// What one page's comparison found.
#[derive(Default)]
struct Tally {
    cells: usize,
    equal: usize,
    rows_equal: usize,
    /// Column name → (cells that differ, first difference: row, ours, ncu's).
    differ: BTreeMap<String, (usize, (usize, String, String))>,
}

fn compare(ours: &[Vec<String>], oracle: &[Vec<String>]) -> Tally {
    let mut t = Tally::default();
    let header = &oracle[0];
    for (r, (a, b)) in ours.iter().zip(oracle).enumerate() {
        if a == b {
            t.rows_equal += 1;
        }
        for (c, name) in header.iter().enumerate() {
            let (x, y) = (a.get(c).cloned().unwrap_or_default(), b[c].clone());
            t.cells += 1;
            if x == y {
                t.equal += 1;
            } else {
                let e = t.differ.entry(name.clone()).or_insert((0, (r, x, y)));
                e.0 += 1;
            }
        }
    }
    t
}

fn print_tally(what: &str, t: &Tally, rows: usize) {
    eprintln!(
        "{what}: {}/{} cells, {}/{rows} rows equal; {} columns differ",
        t.equal,
        t.cells,
        t.rows_equal,
        t.differ.len()
    );
    let mut worst: Vec<_> = t.differ.iter().collect();
    worst.sort_by_key(|(_, (n, _))| std::cmp::Reverse(*n));
    for (name, (n, (r, x, y))) in worst.iter().take(8) {
        let cut = |s: &str| s.chars().take(90).collect::<String>();
        eprintln!(
            "    {n} × {name} (row {r}: ours {:?}, ncu {:?})",
            cut(x),
            cut(y)
        );
    }
}

fn page(report: &NcuReport, mode: UnitMode) -> String {
    page_of(report, NcuPage::Raw, mode)
}

fn page_of(report: &NcuReport, which: NcuPage, mode: UnitMode) -> String {
    let mut out = Vec::new();
    ncu_pages::write_page(report, which, mode, None, &mut out).expect("write");
    String::from_utf8(out).expect("utf-8")
}

/// The fixed columns.
const FIXED: [&str; 13] = [
    "ID",
    "Kernel Name",
    "Process ID",
    "Process Name",
    "Host Name",
    "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

#[test]
fn raw_pages_match_ncu() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let (mut names_equal, mut names) = (0, 0);
    let (mut units_equal, mut units) = (0, 0);
    for name in REPORTS {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        for (mode, file) in [(UnitMode::Auto, "raw"), (UnitMode::Base, "raw_base")] {
            let oracle_text =
                common::read_text(&dir.join("oracle").join(format!("{name}.{file}.csv")));
            let text = page(&report, mode);
            let (ours, oracle) = (common::csv_rows(&text), common::csv_rows(&oracle_text));
            let t = compare(&ours, &oracle);
            print_tally(&format!("{name}.{file}"), &t, oracle.len());
            assert_eq!(ours.len(), oracle.len(), "{name}.{file}: rows");
            assert_eq!(ours[0], oracle[0], "{name}.{file}: header");
            assert_eq!(
                text.lines().next(),
                oracle_text.lines().next(),
                "{name}.{file}: header bytes"
            );
            let header = &oracle[0];
            for (c, col) in header.iter().enumerate() {
                if FIXED.contains(&col.as_str()) {
                    for r in 2..oracle.len() {
                        assert_eq!(ours[r][c], oracle[r][c], "{name}.{file} {col} row {r}");
                    }
                }
            }
            let kernel = header.iter().position(|h| h == "Kernel Name").unwrap();
            for r in 2..oracle.len() {
                names += 1;
                names_equal += usize::from(ours[r][kernel] == oracle[r][kernel]);
            }
            // Values: every one in base units; in auto units every one of a column whose unit
            // is ncu's but three: moe_full's workload 90 runs l1tex, sm and smsp at exactly
            // 1,523,437,500 hz (6,435 cycles in 4,224 ns), which ncu prints `1.523437` Ghz; it
            // breaks its other exact ties (34.1796875 → `34.179688`) to even, as Sightline does.
            let first_metric = header.iter().position(|h| h == "CC").unwrap() + 1;
            let mut wrong = 0;
            for c in first_metric..header.len() {
                units += 1;
                units_equal += usize::from(ours[1][c] == oracle[1][c]);
                if mode == UnitMode::Auto && ours[1][c] != oracle[1][c] {
                    continue;
                }
                for r in 2..oracle.len() {
                    if ours[r][c] != oracle[r][c] {
                        wrong += 1;
                        if wrong <= 5 {
                            eprintln!(
                                "  {name}.{file} {} row {r}: ours {:?}, ncu {:?}",
                                header[c], ours[r][c], oracle[r][c]
                            );
                        }
                    }
                }
            }
            let allowed = if mode == UnitMode::Auto { 3 } else { 0 };
            assert!(wrong <= allowed, "{name}.{file}: {wrong} values differ");
        }
    }
    eprintln!("kernel names: {names_equal}/{names} equal; units: {units_equal}/{units} equal");
    // Measured: 2282/2282 names, 11902/11902 units (2025.3.1 oracle).
    assert_eq!(names_equal, names, "kernel names");
    assert_eq!(units_equal, units, "units");
}

/// Rows keyed by `key` (with an occurrence number for repeats).
fn keyed(
    rows: &[Vec<String>],
    key: impl Fn(&[String]) -> Vec<String>,
) -> BTreeMap<Vec<String>, Vec<String>> {
    let mut seen: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    // ncu prints some sections' notes as bare lines between the rows: those are left out.
    for row in rows.iter().skip(1).filter(|r| r.len() > 11) {
        let mut k = key(row);
        let n = seen.entry(k.clone()).or_insert(0);
        *n += 1;
        k.push(n.to_string());
        out.insert(k, row.clone());
    }
    out
}

/// The details page: rows keyed by (ID, section, item label, metric or rule name). Every row
/// Sightline writes is one of ncu's, equal to it and in its order. Measured: rows written of
/// ncu's 20496/20496 (graphs_roofline), 1912/1912 (moe_dram), 216261/216261 (moe_full),
/// 91671/91671 (train_gemm); every rule row equal (24, 0, 1448, 423).
const DETAILS_WRITTEN: [(&str, usize); 4] = [
    ("ncu_graphs_roofline", 20496),
    ("ncu_moe_dram", 1912),
    ("ncu_moe_full", 216261),
    ("ncu_train_gemm", 91671),
];

#[test]
fn details_pages_match_ncu() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    for name in REPORTS {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let oracle_text =
            common::read_text(&dir.join("oracle").join(format!("{name}.details.csv.gz")));
        let our_text = page_of(&report, NcuPage::Details, UnitMode::Auto);
        // The notes ncu prints on lines of their own (no NVLink connections: 113 in moe_full,
        // 48 in train_gemm), all of them.
        let notes = |t: &str| t.lines().filter(|l| l.starts_with("    ")).count();
        assert_eq!(notes(&our_text), notes(&oracle_text), "{name}: notes");
        let oracle = common::csv_rows(&oracle_text);
        let ours = common::csv_rows(&our_text);
        assert_eq!(ours[0], oracle[0], "{name}: header");
        let section = oracle[0].iter().position(|h| h == "Section Name").unwrap();
        let key = |r: &[String]| {
            let rule = r.get(section + 5).is_some_and(|s| !s.is_empty());
            let what = if rule { section + 5 } else { section + 2 };
            vec![
                r[0].clone(),
                r[section].clone(),
                r.get(section + 1).cloned().unwrap_or_default(),
                r.get(what).cloned().unwrap_or_default(),
            ]
        };
        let (a, b) = (keyed(&ours, key), keyed(&oracle, key));
        let mut equal = 0;
        let mut columns = vec![0usize; oracle[0].len()];
        let (mut rules, mut rules_equal) = (0, 0);
        for (k, row) in &a {
            let theirs = b
                .get(k)
                .unwrap_or_else(|| panic!("{name}: row {k:?} is not ncu's"));
            equal += usize::from(row == theirs);
            for (c, n) in columns.iter_mut().enumerate() {
                *n += usize::from(row.get(c) == theirs.get(c));
            }
            if row.get(section + 5).is_some_and(|s| !s.is_empty()) {
                rules += 1;
                rules_equal += usize::from(row[section..] == theirs[section..]);
            }
        }
        eprintln!(
            "{name}.details: {} of ncu's {} rows written, {equal} equal; rules {rules_equal}/{rules}",
            a.len(),
            b.len()
        );
        for (c, h) in oracle[0].iter().enumerate().skip(section) {
            eprintln!("    {h}: {}/{}", columns[c], a.len());
        }
        // Rule rows (name, type, description, speedup) are exact.
        assert_eq!(rules_equal, rules, "{name}: rule rows");
        assert!(rules > 0 || name == "ncu_moe_dram", "{name}: rules");
        // Measured: every unit and value written is ncu's.
        let (unit, value) = (section + 3, section + 4);
        assert_eq!(columns[unit], a.len(), "{name}: units");
        assert_eq!(columns[value], a.len(), "{name}: values");
        assert_eq!(equal, a.len(), "{name}: rows equal");
        let floor = DETAILS_WRITTEN
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |f| f.1);
        assert!(a.len() >= floor, "{name}: {} rows written", a.len());
        // The rows written are in ncu's order: they are a subsequence of ncu's rows.
        let mut theirs = oracle.iter();
        let in_order = ours.iter().all(|row| theirs.any(|r| r == row));
        assert!(in_order, "{name}: rows out of ncu's order");
    }
}

/// The summary page: same header and row count, every group of ncu's (kernel name, block,
/// grid, section and metric), each with ncu's invocation count, minimum, maximum and average.
#[test]
fn summary_pages_match_ncu() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    for name in REPORTS {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let oracle_text =
            common::read_text(&dir.join("oracle").join(format!("{name}.summary.csv")));
        let oracle = common::csv_rows(&oracle_text);
        let text = page_of(&report, NcuPage::Summary, UnitMode::Auto);
        let ours = common::csv_rows(&text);
        assert_eq!(ours[0], oracle[0], "{name}: header");
        assert_eq!(ours.len(), oracle.len(), "{name}: rows");
        let key = |r: &[String]| {
            vec![
                r[3].clone(),
                r[4].clone(),
                r[5].clone(),
                r[9].clone(),
                r[10].clone(),
            ]
        };
        let (a, b) = (keyed(&ours, key), keyed(&oracle, key));
        let (mut common, mut equal, mut numbers) = (0, 0, 0);
        for (k, row) in &a {
            let Some(theirs) = b.get(k) else { continue };
            common += 1;
            equal += usize::from(row == theirs);
            for c in [8, 12, 13, 14] {
                assert_eq!(row[c], theirs[c], "{name}: {} of {k:?}", oracle[0][c]);
                numbers += 1;
            }
        }
        let in_place = ours.iter().zip(&oracle).filter(|(x, y)| x == y).count();
        eprintln!(
            "{name}.summary: {common}/{} rows matched by kernel, section and metric, {equal} equal \
             ({in_place} in place), {numbers} numbers equal",
            b.len()
        );
        // Every group is ncu's (the order is not yet).
        assert_eq!(common, b.len(), "{name}: kernels found");
    }
}

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every page of the names report as ncu printed it, byte for byte.
#[test]
fn names_report_pages_are_ncus() {
    let dir = fixture("ncu_names");
    let report = load(&dir.join("ncu_names.ncu-rep.gz"));
    for (which, file) in [
        (NcuPage::Raw, "raw"),
        (NcuPage::Details, "details"),
        (NcuPage::Summary, "summary"),
    ] {
        let oracle = common::read_text(&dir.join(format!("ncu_names.{file}.csv.gz")));
        let ours = page_of(&report, which, UnitMode::Auto);
        if ours != oracle {
            let (a, b) = (common::csv_rows(&ours), common::csv_rows(&oracle));
            for (r, (x, y)) in a.iter().zip(&b).enumerate().filter(|(_, (x, y))| x != y) {
                eprintln!("{file} row {r}:\n  ours {x:?}\n  ncu  {y:?}");
            }
            panic!("{file}: not ncu's page ({} rows, ncu {})", a.len(), b.len());
        }
    }
    eprintln!("ncu_names: raw, details and summary pages equal ncu's");
}

/// A namespace every kernel name of the report uses is dropped from every name, with the `<` or
/// `[` that opens what follows it (`common::<unnamed>::k3()` prints `unnamed>::k3()`); one C
/// kernel more (its name uses no namespace) keeps it (`tests/captures/ncu_names_common.cu`,
/// built both ways and profiled by ncu 2025.3.1 on the H200).
#[test]
fn a_namespace_every_kernel_uses_is_dropped_as_ncu_drops_it() {
    let dir = fixture("ncu_names");
    let mut names = 0;
    for name in ["ncu_names_common", "ncu_names_common_c"] {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let oracle = common::read_text(&dir.join(format!("{name}.raw.csv.gz")));
        let ours = page_of(&report, NcuPage::Raw, UnitMode::Auto);
        let (a, b) = (common::csv_rows(&ours), common::csv_rows(&oracle));
        let kernel = b[0].iter().position(|h| h == "Kernel Name").unwrap();
        let printed = |rows: &[Vec<String>]| -> Vec<String> {
            rows.iter().skip(2).map(|r| r[kernel].clone()).collect()
        };
        assert_eq!(printed(&a), printed(&b), "{name}");
        assert_eq!(ours, oracle, "{name}: the raw page byte for byte");
        names += b.len() - 2;
    }
    let oracle = common::read_text(&dir.join("ncu_names_common.raw.csv.gz"));
    assert!(
        oracle.contains("\"unnamed>::k3()\""),
        "the case is in ncu's page"
    );
    eprintln!("ncu_names_common(_c): {names} kernel names and both raw pages equal ncu's");
}

/// The PyTorch pair's kernels, named as ncu names them on its raw page.
#[test]
fn pytorch_pair_kernel_names_are_ncus() {
    let report = load(&fixture("ncu_kt_pair.ncu-repz"));
    let oracle = common::csv_rows(&common::read_text(&fixture("ncu_kt_pair.raw.csv.gz")));
    let ours = common::csv_rows(&page(&report, UnitMode::Auto));
    let kernel = oracle[0].iter().position(|h| h == "Kernel Name").unwrap();
    assert_eq!(ours.len(), oracle.len());
    for (r, (a, b)) in ours.iter().zip(&oracle).enumerate().skip(2) {
        assert_eq!(a[kernel], b[kernel], "row {r}");
    }
    eprintln!("ncu_kt_pair: {} kernel names equal ncu's", oracle.len() - 2);
}

/// The shared reports' pages that are ncu's byte for byte, and how many of the 16 are: the
/// pages listed must stay so.
#[test]
fn shared_pages_byte_for_byte() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    const EXACT: [(&str, &str); 15] = [
        ("ncu_moe_dram", "raw"),
        ("ncu_moe_dram", "raw_base"),
        ("ncu_moe_dram", "summary"),
        ("ncu_moe_dram", "details"),
        ("ncu_graphs_roofline", "raw"),
        ("ncu_graphs_roofline", "raw_base"),
        ("ncu_graphs_roofline", "summary"),
        ("ncu_graphs_roofline", "details"),
        ("ncu_moe_full", "raw_base"),
        ("ncu_moe_full", "summary"),
        ("ncu_moe_full", "details"),
        ("ncu_train_gemm", "raw"),
        ("ncu_train_gemm", "raw_base"),
        ("ncu_train_gemm", "summary"),
        ("ncu_train_gemm", "details"),
    ];
    let mut equal = Vec::new();
    for name in REPORTS {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        for (which, mode, file) in [
            (NcuPage::Raw, UnitMode::Auto, "raw.csv"),
            (NcuPage::Raw, UnitMode::Base, "raw_base.csv"),
            (NcuPage::Summary, UnitMode::Auto, "summary.csv"),
            (NcuPage::Details, UnitMode::Auto, "details.csv.gz"),
        ] {
            let oracle = common::read_text(&dir.join("oracle").join(format!("{name}.{file}")));
            if page_of(&report, which, mode) == oracle {
                equal.push((name, file.split('.').next().unwrap_or(file)));
            }
        }
    }
    eprintln!("{} of 16 pages byte for byte: {equal:?}", equal.len());
    for page in EXACT {
        assert!(equal.contains(&page), "{page:?} is no longer ncu's");
    }
}

/// A GPU whose NVLink links go to an NVSwitch (the report says so: `nvlink__is_nvswitch_connected`
/// is 1) gets ncu's note in place of the NVLink topology, not the no-links note nor the warning
/// ncu prints for links to other GPUs: the public H800 report kept as a fixture (its five
/// kernels; ncu 2025.3.1's page of it, machine-local, has the note five times and no warning:
/// `tests/ncu_public_pages.rs`).
#[test]
fn an_nvswitch_gpu_gets_ncus_note_in_place_of_the_topology() {
    let report = load(&fixture(
        "ncu_public/flyinglandlord_sglang_profile.ncu-repz",
    ));
    let switched = report
        .workloads
        .iter()
        .filter(|w| report.number(w, "nvlink__is_nvswitch_connected") == Some(1.0))
        .count();
    assert_eq!(switched, report.workloads.len());
    assert_eq!(switched, 5);
    let page = page_of(&report, NcuPage::Details, UnitMode::Auto);
    assert_eq!(
        page.matches("\n    Not supported for NVSwitch.\n\n")
            .count(),
        switched
    );
    assert!(!page.contains("==WARNING== NVLink"));
    assert!(!page.contains("does not have any NVLink"));
}
