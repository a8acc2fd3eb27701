//! Criterion benches of the time index ([`sightline::index::SpanIndex`]): building the
//! level-of-detail pyramid, overlap queries at several window sizes, and a zoomed-out LOD walk.
//! Run with `cargo bench --bench index`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sightline::index::{LodItem, SpanIndex};

/// A stream-like track: `n` sorted events of 1–40 µs separated by 0–20 µs gaps, from a fixed LCG.
fn track(n: usize) -> (Vec<i64>, Vec<i64>) {
    let mut state = 42u64;
    let mut next = |bound: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % bound) as i64
    };
    let mut t = 0i64;
    let mut starts = Vec::with_capacity(n);
    let mut ends = Vec::with_capacity(n);
    for _ in 0..n {
        t += next(20_000);
        let d = 1_000 + next(39_000);
        starts.push(t);
        ends.push(t + d);
        t += d;
    }
    (starts, ends)
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("lod_build");
    for n in [10_000usize, 1_000_000] {
        let (s, e) = track(n);
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| SpanIndex::build(black_box(&s), black_box(&e)))
        });
    }
    group.finish();
}

fn overlap(c: &mut Criterion) {
    let (s, e) = track(1_000_000);
    let index = SpanIndex::build(&s, &e);
    let (first, last) = (s[0], e[e.len() - 1]);
    let mut group = c.benchmark_group("overlap_query_1M");
    for divisor in [10i64, 1_000, 100_000] {
        let width = (last - first) / divisor;
        let t0 = first + (last - first) / 3;
        group.bench_with_input(
            BenchmarkId::new("window", format!("1/{divisor}")),
            &width,
            |b, &w| {
                b.iter(|| {
                    let mut n = 0usize;
                    index
                        .for_each_overlapping(&s, &e, black_box(t0), black_box(t0 + w), |_| n += 1);
                    n
                })
            },
        );
    }
    group.finish();
}

fn lod_walk(c: &mut Criterion) {
    let (s, e) = track(1_000_000);
    let index = SpanIndex::build(&s, &e);
    let (first, last) = (s[0], e[e.len() - 1]);
    let mut group = c.benchmark_group("lod_walk_1M_1920px");
    for zoom in [1i64, 100] {
        let span = (last - first) / zoom;
        let t0 = first + (last - first - span) / 2;
        group.bench_with_input(BenchmarkId::new("zoom", zoom), &span, |b, &span| {
            b.iter(|| {
                let mut items = 0usize;
                index.walk(&s, &e, t0, t0 + span, span / 1920, &mut |item| {
                    black_box::<LodItem>(item);
                    items += 1;
                });
                items
            })
        });
    }
    group.finish();
}

criterion_group!(benches, build, overlap, lod_walk);
criterion_main!(benches);
