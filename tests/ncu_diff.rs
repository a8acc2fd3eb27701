//! `sightline diff A.ncu-rep B.ncu-rep` on the shared reports of the same program
//! (`ncu_moe_full`: the first 113 kernels with every section; `ncu_moe_dram`: all 956 with two
//! metrics), checked against ncu's own raw pages of both (`oracle/*.raw_base.csv`): kernels pair
//! by name and invocation, the kernels only one report has are listed, and kernel 0's duration
//! change is ncu's two durations. A report against itself has no differences.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn diff(a: &Path, b: &Path) -> Vec<csv::StringRecord> {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["diff", "--format", "csv"])
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    csv::Reader::from_reader(out.stdout.as_slice())
        .records()
        .map(|r| r.unwrap())
        .collect()
}

/// (kernel name, invocation) → gpu__time_duration.sum, from ncu's raw page in base units.
fn durations(dir: &Path, name: &str) -> Vec<((String, usize), String)> {
    let path = dir.join("oracle").join(format!("{name}.raw_base.csv"));
    let rows: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap()
        .records()
        .map(|r| r.unwrap())
        .collect();
    let col = |c: &str| rows[0].iter().position(|h| h == c).unwrap();
    let (kernel, dur) = (col("Kernel Name"), col("gpu__time_duration.sum"));
    let mut seen: HashMap<String, usize> = HashMap::new();
    rows[2..]
        .iter()
        .map(|r| {
            let n = seen.entry(r[kernel].to_string()).or_default();
            let key = (r[kernel].to_string(), *n);
            *n += 1;
            (key, r[dur].replace(',', ""))
        })
        .collect()
}

#[test]
fn two_reports_of_one_program_differ_kernel_by_kernel() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let full = dir.join("ncu_moe_full.ncu-rep.gz");
    let dram = dir.join("ncu_moe_dram.ncu-rep.gz");
    assert!(diff(&full, &full).is_empty(), "a report against itself");

    let rows = diff(&full, &dram);
    let full_d = durations(&dir, "ncu_moe_full");
    let dram_d = durations(&dir, "ncu_moe_dram");
    let full_keys: std::collections::HashSet<_> = full_d.iter().map(|(k, _)| k.clone()).collect();
    let only_new = dram_d
        .iter()
        .filter(|(k, _)| !full_keys.contains(k))
        .count();
    let listed_only_new = rows
        .iter()
        .filter(|r| r[2].is_empty() && r[3].is_empty() && r[4] == *"(kernel)")
        .count();
    assert_eq!(listed_only_new, only_new);
    assert!(only_new >= 956 - 113, "{only_new}");
    // Kernel 0 is invocation 0 of its name in both: its duration row carries ncu's values.
    let (base_ns, new_ns) = (&full_d[0].1, &dram_d[0].1);
    assert_ne!(base_ns, new_ns, "two runs of one kernel");
    let row = rows
        .iter()
        .find(|r| &r[1] == "0" && &r[2] == "gpu__time_duration.sum")
        .expect("kernel 0's duration changed");
    assert_eq!(
        row[3].parse::<f64>().unwrap(),
        base_ns.parse::<f64>().unwrap()
    );
    assert_eq!(
        row[4].parse::<f64>().unwrap(),
        new_ns.parse::<f64>().unwrap()
    );
    // A metric only the full report has is listed with no new value.
    assert!(
        rows.iter().any(
            |r| &r[2] == "sm__throughput.avg.pct_of_peak_sustained_elapsed" && r[4].is_empty()
        )
    );
    eprintln!(
        "{} differences, {only_new} kernels only in ncu_moe_dram",
        rows.len()
    );
}
