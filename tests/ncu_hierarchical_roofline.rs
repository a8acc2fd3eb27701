//! The hierarchical rooflines (`analysis::ncu::hierarchical`) on every shared report: each
//! quantity is built from the metrics ncu's own details page prints under that roofline's item
//! (`oracle/*.details.csv.gz`: every metric a ceiling or an achieved value uses equals the
//! printed one, scaled to the unit ncu prints), and the single-precision chart's DRAM ceiling
//! and achieved point are the FP32 roofline's (`analysis::ncu::roofline`, checked against ncu's
//! `SOLFPRoofline` rule).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::load_ncu as load;

use std::collections::HashMap;
use std::path::Path;

use sightline::analysis::ncu::hierarchical::{of_section, spec_values};
use sightline::analysis::ncu::roofline::{Precision, achieved, ceiling};
use sightline::analysis::ncu::shown;
use sightline::trace::ncu::{BodyItemKind, NcuReport, NcuWorkload, SectionMetric};

/// ncu's printed value of each (kernel ID, section, item label, metric label).
type Printed = HashMap<(u32, String, String, String), String>;

fn printed(details: &Path) -> Printed {
    let mut reader = common::gz_csv(details);
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (id, section, item, label, value) = (
        col("ID"),
        col("Section Name"),
        col("Body Item Label"),
        col("Metric Name"),
        col("Metric Value"),
    );
    let mut out = HashMap::new();
    for row in reader.records().map(|r| r.expect("row")) {
        let (Some(k), Some(v)) = (row.get(id), row.get(value)) else {
            continue;
        };
        let Ok(k) = k.parse::<u32>() else { continue };
        if !row[section].contains("Roofline") {
            continue;
        }
        out.insert(
            (
                k,
                row[section].to_string(),
                row[item].to_string(),
                row[label].to_string(),
            ),
            v.to_string(),
        );
    }
    out
}

/// Checks that `m`'s value for `w` is the one ncu printed (up to the unit's power of 1000 and
/// the printed decimals); returns false where ncu printed nothing for it.
fn equals_printed(
    report: &NcuReport,
    w: &NcuWorkload,
    m: &SectionMetric,
    key: (&str, &str),
    printed: &Printed,
    what: &str,
) -> bool {
    let (_, label, value) = shown(report, w, m).expect("a metric of a shown roofline");
    let ours = value.as_f64().expect("a number");
    let Some(text) = printed.get(&(w.id, key.0.to_string(), key.1.to_string(), label.clone()))
    else {
        return false;
    };
    let theirs: f64 = text.replace(',', "").parse().expect(text);
    let factor = if ours == 0.0 || theirs == 0.0 {
        1.0
    } else {
        1000f64.powf((theirs / ours).log(1000.0).round())
    };
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    let tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9 * theirs.abs();
    assert!(
        (ours * factor - theirs).abs() <= tolerance,
        "{what} {label}: {} vs printed {text}",
        ours * factor
    );
    true
}

#[test]
fn hierarchical_rooflines_are_built_from_the_metrics_ncu_prints() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let (mut charts, mut ceilings, mut points, mut metrics, mut fp32) = (0, 0, 0, 0, 0);
    for name in [
        "ncu_lineinfo",
        "ncu_moe_full",
        "ncu_train_gemm",
        "ncu_moe_dram",
        "ncu_graphs_roofline",
    ] {
        let report = load(&dir.join(format!("{name}.ncu-rep.gz")));
        let printed = printed(&dir.join(format!("oracle/{name}.details.csv.gz")));
        for w in &report.workloads {
            for section in report.sections_in_order(w) {
                let Some(chart) = of_section(&report, w, section) else {
                    continue;
                };
                charts += 1;
                for item in section.bodies.iter().flat_map(|b| &b.items) {
                    let (BodyItemKind::Roofline, Some(spec)) = (item.kind, &item.roofline) else {
                        continue;
                    };
                    let shown_here = if item.achieved {
                        chart.points.iter().any(|p| p.label == item.label)
                    } else {
                        chart.ceilings.iter().any(|c| c.label == item.label)
                    };
                    // An item of another architecture's operations (its metrics absent) is not drawn.
                    if !shown_here || spec_values(&report, w, spec).is_none() {
                        continue;
                    }
                    let what = format!("{name} kernel {} {} / {}", w.id, chart.title, item.label);
                    let all = spec
                        .work
                        .metrics
                        .iter()
                        .chain(&spec.work.frequency)
                        .chain(&spec.traffic.metrics)
                        .chain(&spec.traffic.frequency);
                    for m in all {
                        let key = (section.display_name.as_str(), item.label.as_str());
                        if equals_printed(&report, w, m, key, &printed, &what) {
                            metrics += 1;
                        }
                    }
                }
                ceilings += chart.ceilings.len();
                points += chart.points.len();
                if chart.title.ends_with("(Single Precision)") {
                    let (Ok(c), Some(dram)) = (
                        ceiling(&report, w, Precision::Fp32),
                        chart.ceilings.iter().find(|c| c.label == "DRAM Roofline"),
                    ) else {
                        continue;
                    };
                    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
                    assert!(close(c.peak_work, dram.peak_work), "{name}: {c:?} {dram:?}");
                    assert!(close(c.peak_traffic, dram.peak_traffic), "{name}");
                    let index = report.workloads.iter().position(|x| x.id == w.id).unwrap();
                    let a = achieved(&report, index, w, Precision::Fp32).unwrap();
                    let p = chart
                        .points
                        .iter()
                        .find(|p| p.label == "DRAM Achieved Value")
                        .expect("DRAM point");
                    assert!(
                        close(a.work, p.work) && close(a.traffic, p.traffic),
                        "{name}"
                    );
                    assert_eq!(chart.ceiling_of(p), Some(dram));
                    fp32 += 1;
                }
            }
        }
    }
    println!(
        "{charts} roofline charts ({ceilings} ceilings, {points} achieved points): {metrics} \
         metrics equal ncu's printed values; {fp32} single-precision DRAM ceilings and points \
         equal the FP32 roofline's"
    );
    assert!(
        charts > 100 && metrics > 1000 && fp32 > 10,
        "{charts} {metrics} {fp32}"
    );
}
