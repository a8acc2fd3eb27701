//! ncu's line charts (the Occupancy section's "Impact of Varying …") as points
//! (`analysis::ncu::line_chart`), on every shared report: each line's points are the values ncu's
//! own details page lists for it (`oracle/*.details.csv.gz` prints `SUM (v1; v2; …)` in the
//! instances' order, scaled to the unit it prints), and the block-size chart marks the kernel's
//! own block size (the page's Block Size column).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::load_ncu as load;

use std::collections::HashMap;
use std::path::Path;

use sightline::analysis::ncu::line_chart::line_chart;

/// ncu's listed points of each (kernel ID, chart label, line label): the values printed in
/// `SUM (v1; v2; …)`, and the kernel's block size.
type Printed = HashMap<(u32, String, String), Vec<String>>;

fn printed_points(details: &Path) -> (Printed, HashMap<u32, f64>) {
    let mut reader = common::gz_csv(details);
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (id, block, item, label, value) = (
        col("ID"),
        col("Block Size"),
        col("Body Item Label"),
        col("Metric Name"),
        col("Metric Value"),
    );
    let mut points = HashMap::new();
    let mut blocks = HashMap::new();
    for row in reader.records().map(|r| r.expect("row")) {
        let (Some(k), Some(v)) = (row.get(id), row.get(value)) else {
            continue;
        };
        let Ok(k) = k.parse::<u32>() else { continue };
        if let Some(b) = row.get(block) {
            let volume: f64 = b
                .trim_matches(|c| c == '(' || c == ')')
                .split(',')
                .filter_map(|x| x.trim().parse::<f64>().ok())
                .product();
            blocks.insert(k, volume);
        }
        if let Some((_, list)) = v.split_once(" (")
            && let Some(list) = list.strip_suffix(')')
        {
            points.insert(
                (k, row[item].to_string(), row[label].to_string()),
                list.split("; ").map(str::to_string).collect(),
            );
        }
    }
    (points, blocks)
}

#[test]
fn line_charts_are_the_points_ncu_lists() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let (mut reports, mut charts, mut lines, mut points) = (0, 0, 0, 0);
    for name in [
        "ncu_lineinfo",
        "ncu_moe_full",
        "ncu_train_gemm",
        "ncu_moe_dram",
        "ncu_graphs_roofline",
    ] {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let (printed, blocks) = printed_points(&dir.join(format!("oracle/{name}.details.csv.gz")));
        reports += 1;
        for w in &report.workloads {
            for section in report.sections_in_order(w) {
                for item in section.bodies.iter().flat_map(|b| &b.items) {
                    let Some(chart) = line_chart(&report, w, item) else {
                        continue;
                    };
                    charts += 1;
                    for line in &chart.lines {
                        let key = (w.id, chart.label.clone(), line.label.clone());
                        let listed = printed
                            .get(&key)
                            .unwrap_or_else(|| panic!("{name}: ncu lists no points for {key:?}"));
                        assert_eq!(listed.len(), line.points.len(), "{name} {key:?}");
                        // ncu scales the values to the unit it prints (`%/Kbyte`): one power of
                        // 1000 for the whole line.
                        let printed_sum: f64 = listed
                            .iter()
                            .map(|t| t.replace(',', "").parse::<f64>().unwrap())
                            .sum();
                        let ours_sum: f64 = line.points.iter().map(|p| p[1]).sum();
                        let factor = if ours_sum == 0.0 {
                            1.0
                        } else {
                            1000f64.powf((printed_sum / ours_sum).log(1000.0).round())
                        };
                        for (p, t) in line.points.iter().zip(listed) {
                            let decimals = t.split_once('.').map_or(0, |(_, d)| d.len());
                            let v: f64 = t.replace(',', "").parse().unwrap();
                            let tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
                            assert!(
                                (p[1] * factor - v).abs() <= tolerance,
                                "{name} {key:?}: {} vs printed {t}",
                                p[1] * factor
                            );
                            points += 1;
                        }
                        lines += 1;
                    }
                    if chart.label.contains("Block Size") {
                        let block = blocks[&w.id];
                        assert!(
                            chart.marks.iter().any(|(_, x)| *x == block),
                            "{name} kernel {}: block size {block} not marked: {:?}",
                            w.id,
                            chart.marks
                        );
                        let line = &chart.lines[0];
                        assert!(line.at(block).is_some(), "{name}: no point at the kernel");
                    }
                }
            }
        }
    }
    println!(
        "{reports} reports: {charts} line charts, {lines} lines, {points} points equal ncu's lists"
    );
    assert!(
        charts > 0 && points > 1000,
        "{charts} charts, {points} points"
    );
}
