//! Criterion benches of the summary reports ([`sightline::analysis::compute`]) over the whole
//! trace and over a tenth of it, on a generated 200k-event trace (written to the temp dir).
//! Run with `cargo bench --bench stats`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sightline::analysis::{self, Filter, Report, TimeRange};
use sightline::synth::{self, GenOptions};

fn reports(c: &mut Criterion) {
    let path = std::env::temp_dir().join(format!(
        "sightline-bench-stats-{}.sqlite",
        std::process::id()
    ));
    let options = GenOptions {
        events: 200_000,
        ..GenOptions::default()
    };
    if let Err(e) = synth::generate(&path, &options, true) {
        eprintln!("cannot generate the bench trace: {e}");
        return;
    }
    let trace = match sightline::load::load_file(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot load the bench trace: {e}");
            return;
        }
    };
    let _ = std::fs::remove_file(&path);
    let span = trace.last_ns - trace.first_ns;
    let tenth = TimeRange::new(
        trace.first_ns + span / 2,
        trace.first_ns + span / 2 + span / 10,
    );
    let mut group = c.benchmark_group("stats_200k");
    for report in Report::ALL {
        for (label, range) in [("all", TimeRange::ALL), ("tenth", tenth)] {
            group.bench_with_input(BenchmarkId::new(report.id(), label), &range, |b, &range| {
                b.iter(|| analysis::compute(black_box(&trace), report, &Filter::range(range)))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, reports);
criterion_main!(benches);
