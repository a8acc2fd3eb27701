//! Nsight Compute reports (`load::ncu_rep`) read from `../shared/traces/ncu/`, checked against
//! what ncu itself printed for them (`oracle/*.raw.csv`): the workloads, their names, place and
//! launch shape, and every metric value that ncu prints unscaled.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use common::load_ncu as load;

use std::path::Path;

pub const REPORTS: [&str; 4] = [
    "ncu_graphs_roofline",
    "ncu_moe_dram",
    "ncu_moe_full",
    "ncu_train_gemm",
];

fn oracle_rows(dir: &Path, name: &str) -> Vec<csv::StringRecord> {
    let path = dir.join("oracle").join(format!("{name}.raw_base.csv"));
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    reader.records().map(|r| r.expect("oracle row")).collect()
}

#[test]
fn every_shared_report_has_the_kernels_ncu_lists() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    for name in REPORTS {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let rows = oracle_rows(&dir, name);
        let header = &rows[0];
        let col = |c: &str| header.iter().position(|h| h == c).expect(c);
        let (pid, grid, block, ctx, stream) = (
            col("Process ID"),
            col("Grid Size"),
            col("Block Size"),
            col("Context"),
            col("Stream"),
        );
        assert_eq!(report.workloads.len(), rows.len() - 2, "{name}");
        let mut integers_checked = 0;
        for (w, row) in report.workloads.iter().zip(&rows[2..]) {
            assert_eq!(row[0], w.id.to_string(), "{name}");
            assert_eq!(row[pid], w.pid.to_string(), "{name}");
            let shape = |v: [u64; 3]| format!("({}, {}, {})", v[0], v[1], v[2]);
            assert_eq!(row[grid], shape(w.grid), "{name} grid of {}", w.id);
            assert_eq!(row[block], shape(w.block), "{name} block of {}", w.id);
            assert_eq!(row[ctx], w.context.to_string(), "{name}");
            assert_eq!(row[stream], w.stream.to_string(), "{name}");
            // Integer metrics ncu prints in base units: the same number, separators aside.
            for (c, metric) in header.iter().enumerate().skip(col("CC") + 1) {
                let Some(id) = report.metric_id(metric) else {
                    continue;
                };
                let value = match w.metric(id) {
                    Some(sightline::trace::ncu::MetricValue::U64(v)) => *v,
                    Some(sightline::trace::ncu::MetricValue::U32(v)) => u64::from(*v),
                    _ => continue,
                };
                let printed = row[c].replace(',', "");
                if rows[1][c].is_empty() || printed.is_empty() || printed.contains('.') {
                    continue;
                }
                assert_eq!(printed, value.to_string(), "{name} {metric} of {}", w.id);
                integers_checked += 1;
            }
        }
        assert!(integers_checked > 100, "{name}: {integers_checked}");
        eprintln!(
            "{name}: {} kernels, {} metric names, {} section definitions, {integers_checked} integer values equal ncu's",
            report.workloads.len(),
            report.metric_names.len(),
            report.sections.len()
        );
    }
}
