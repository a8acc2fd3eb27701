//! The unit of every metric of reports not made here, against NVIDIA's own reader
//! (`pip install ncu-report`: `action[name].unit()`, tests/scripts/ncu_units_dump.py): the base
//! unit Sightline prints on the raw page (`--print-units base`) for each metric of each report,
//! compared with the reader's.
//!
//! The reader is close to ncu's own pages but not equal to them: on the held-out detailed-set
//! report `ncu_ws_baseline` its units equal those ncu 2025.3.1 printed on its raw page for 1,123
//! of 1,124 metrics (`idc__requests.sum`: the reader `request`, ncu none), and on the shared
//! reports ncu prints none for `….peak_sustained_elapsed.per_second` where the reader says
//! `hz`, `1/s`, `block/s`. Both resolve some units through NVIDIA's metric database, loaded
//! lazily: ncu prints `sector` / `inst` for
//! `derived__memory_l2_theoretical_sectors_global_excessive` and
//! `sass__inst_executed_register_spilling_mem_{local,shared}` on a report with PM sampling and
//! `byte` on one without (`tests/captures/run_ncu_units_device.sh`: on an H200, the PmSampling
//! section alone flips them), and the reader says `byte` for them in a fresh process but
//! `inst` after it has read some other reports. Sightline prints the database's units; the
//! reader runs once per report here, so that its answer does not depend on the order. The
//! counts are measured and printed, by pair of units, and asserted no worse than measured:
//! 180 public reports, 133,484 units equal, 273 differ at first; 133,771 / 243 after the raw
//! page's unit fixes of `tests/ncu_public_pages.rs` (2026-12-02).
//!
//! Reads the reports kept as fixtures (`tests/fixtures/ncu_public/`, `tests/fixtures/ncu_ws/`)
//! and, when `SIGHTLINE_PUBLIC_NCU_REPORTS` names a folder, the public collection
//! (docs/ncu_public_reports.tsv). Skips loudly without the reader.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::ncu_reader::{nvidia_reader_python, other_reports, run_reader_script};
use sightline::analysis::ncu::units::metric_unit;
use sightline::export::ncu_pages::raw::metric_columns;

/// Units compared: equal, and each differing pair (Sightline, reader) with the metrics.
#[derive(Default)]
struct Tally {
    reports: usize,
    equal: usize,
    differ: BTreeMap<(String, String), BTreeSet<String>>,
    differing: usize,
}

#[test]
fn every_metrics_unit_against_nvidias_reader() {
    let Some(python) = nvidia_reader_python() else {
        return;
    };
    let scratch = std::env::temp_dir().join(format!("sightline-ncu-units-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    let reports = other_reports(&scratch);
    // One process per report: the reader's units depend on what it loaded before (after some
    // reports, `sass__inst_executed_register_spilling_mem_local` of `ncu_ws_baseline` is `inst`;
    // alone, `byte`, as ncu prints it for that report alone).
    let mut lines = Vec::new();
    for report in &reports {
        let dump = scratch.join("units.jsonl");
        run_reader_script(&python, "ncu_units_dump.py", &[&dump, &report.path]);
        lines.push((report.fixture, std::fs::read_to_string(&dump).unwrap()));
    }
    let (mut fixtures, mut collected) = (Tally::default(), Tally::default());
    for (fixture, line) in &lines {
        let row: serde_json::Value = serde_json::from_str(line.trim_end()).unwrap();
        assert!(row.get("error").is_none(), "NVIDIA's reader: {row}");
        let path = Path::new(row["report"].as_str().unwrap());
        let theirs = row["units"].as_object().unwrap();
        let report = common::load_ncu(path);
        let tally = if *fixture {
            &mut fixtures
        } else {
            &mut collected
        };
        tally.reports += 1;
        for (id, name) in metric_columns(&report) {
            let Some(unit) = theirs.get(name).and_then(|u| u.as_str()) else {
                continue;
            };
            let ours = metric_unit(&report, id, name);
            if ours == unit {
                tally.equal += 1;
            } else {
                tally.differing += 1;
                tally
                    .differ
                    .entry((ours, unit.to_string()))
                    .or_default()
                    .insert(name.to_string());
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    for (what, t) in [("fixtures", &fixtures), ("collection", &collected)] {
        eprintln!(
            "{what}: {} reports, {} metric units equal NVIDIA's reader, {} differ",
            t.reports, t.equal, t.differing
        );
        for ((ours, theirs), names) in &t.differ {
            let some: Vec<&String> = names.iter().take(3).collect();
            eprintln!(
                "  Sightline {ours:?}, reader {theirs:?}: {} metrics {some:?}",
                names.len()
            );
        }
    }
    // The fixtures, measured: 2,919 equal; 9 differ, each where ncu's own page is known to print
    // Sightline's unit (the shared reports' `peak_sustained_elapsed.per_second` and
    // `idc__requests`) or the reader's lazily loaded database is the difference (above).
    assert!(fixtures.reports >= 4, "{}", fixtures.reports);
    assert!(fixtures.equal >= 2_919, "{}", fixtures.equal);
    assert!(fixtures.differing <= 9, "{} differ", fixtures.differing);
    if collected.reports > 0 {
        // Measured 2026-12-02 on the 180 public reports: 133,484 equal, 273 differ.
        assert!(collected.equal >= 133_484, "{}", collected.equal);
        assert!(collected.differing <= 273, "{}", collected.differing);
    }
}
