//! Rules ranked as ncu-ui ranks them, on `ncu_moe_full`: by estimated speedup, every global
//! estimate (a share of the whole kernel's time) before every local one, in the one ordering
//! (`analysis::ncu::kernels::speedup_order`) that the kernel table's top rule, the timeline's ncu
//! details and the names worth optimising share. Checked against ncu's own details page
//! (`oracle/ncu_moe_full.details.csv.gz`: `Estimated Speedup Type`, `Estimated Speedup`).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::load_ncu as load;

use std::collections::HashMap;
use std::path::Path;

use sightline::analysis::ncu::{facts, kernels};

/// The largest global estimated speedup ncu prints for each kernel ID.
fn largest_global_by_id(details: &Path) -> HashMap<u32, f64> {
    let mut reader = common::gz_csv(details);
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (id, kind, value) = (
        col("ID"),
        col("Estimated Speedup Type"),
        col("Estimated Speedup"),
    );
    let mut out: HashMap<u32, f64> = HashMap::new();
    for row in reader.records().flatten() {
        if row.len() != header.len() || row.get(kind) != Some("global") {
            continue;
        }
        let (Some(Ok(id)), Some(Ok(v))) = (
            row.get(id).map(str::parse::<u32>),
            row.get(value).map(|v| v.replace(',', "").parse::<f64>()),
        ) else {
            continue;
        };
        let best = out.entry(id).or_insert(v);
        *best = best.max(v);
    }
    out
}

#[test]
fn global_speedups_rank_before_local_ones() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let report = load(&dir.join("ncu_moe_full.ncu-rep.gz"));
    let oracle = largest_global_by_id(&dir.join("oracle/ncu_moe_full.details.csv.gz"));
    // Kernel 0: ncu marks HighPipeUtilization's 93.44 % local; the top rule is the Launch
    // Configuration's Small Grid, 51.52 % global.
    let w0 = &report.workloads[0];
    let f0 = facts::workload_facts(&report, w0);
    let first = &f0.rules[0];
    assert_eq!(first.speedup_kind(), "global", "{first:?}");
    assert!(
        (first.speedup_pct.unwrap_or(0.0) - 51.52).abs() < 0.01,
        "{first:?}"
    );
    assert!(f0.rules.iter().any(
        |r| r.speedup_kind() == "local" && (r.speedup_pct.unwrap_or(0.0) - 93.44).abs() < 0.01
    ));
    let (mut ranked, mut with_global) = (0, 0);
    for w in &report.workloads {
        let f = facts::workload_facts(&report, w);
        let kinds: Vec<&str> = f.rules.iter().map(|r| r.speedup_kind()).collect();
        let rank = |k: &str| match k {
            "global" => 0,
            "local" => 1,
            _ => 2,
        };
        assert!(
            kinds.windows(2).all(|p| rank(p[0]) <= rank(p[1])),
            "kernel {}: {kinds:?}",
            w.id
        );
        for pair in f.rules.windows(2) {
            if pair[0].speedup_kind() == pair[1].speedup_kind() {
                assert!(
                    pair[0].speedup_pct >= pair[1].speedup_pct,
                    "kernel {}",
                    w.id
                );
            }
        }
        // The kernel table's top rule is the details' first rule, and its global speedup the
        // largest ncu prints for the kernel.
        let top = kernels::top_rule(w);
        if let (Some(top), Some(first)) = (&top, f.rules.iter().find(|r| r.speedup.is_some())) {
            assert_eq!(Some(top.speedup_pct), first.speedup_pct, "kernel {}", w.id);
            assert_eq!(top.kind, first.speedup_kind(), "kernel {}", w.id);
        }
        if let Some(&best) = oracle.get(&w.id) {
            let top = top.expect("a kernel with a global estimate has a top rule");
            assert_eq!(top.kind, "global", "kernel {}", w.id);
            // ncu prints four significant digits.
            assert!(
                (top.speedup_pct - best).abs() <= best.abs() * 5e-4 + 1e-9,
                "kernel {}: top {} against ncu's {best}",
                w.id,
                top.speedup_pct
            );
            with_global += 1;
        }
        ranked += 1;
    }
    eprintln!(
        "{ranked} kernels' rules ranked global before local; {with_global} top rules equal the \
         largest global speedup on ncu's details page; kernel 0: {} {:.2} % {}",
        first.title,
        first.speedup_pct.unwrap_or(0.0),
        first.speedup_kind()
    );
}
