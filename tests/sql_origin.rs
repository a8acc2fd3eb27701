//! Issue 36 item 10: a PyTorch trace's times are epoch ns in SQL (16 digits); the `origin` view
//! gives the time the window's axis counts from, so `start - (SELECT start FROM origin)` reads
//! as the window shows. An nsys export counts from 0, as its window does.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

fn one_number(trace: &str, query: &str) -> i64 {
    let path = match trace.ends_with(".gz") {
        true => common::fixtures().join(trace),
        false => common::fixture(trace),
    };
    let out = common::sightline_stdout(&["sql", path.to_str().unwrap(), query, "--format", "csv"]);
    let value = out.lines().nth(1).expect("a row");
    value.trim().parse().unwrap_or_else(|_| panic!("{out}"))
}

#[test]
fn origin_is_where_the_window_counts_from() {
    let pytorch = "kt_pair.pt.trace.json.gz";
    let first_kernel = one_number(pytorch, "SELECT min(start) FROM kernels");
    assert!(
        first_kernel > 1_000_000_000_000_000,
        "epoch ns: {first_kernel}"
    );
    let origin = one_number(pytorch, "SELECT start FROM origin");
    let trace = sightline::load::load_file(&common::fixtures().join(pytorch)).unwrap();
    assert_eq!(origin, trace.first_ns);
    let relative = one_number(
        pytorch,
        "SELECT min(start) - (SELECT start FROM origin) FROM kernels",
    );
    assert_eq!(relative, first_kernel - trace.first_ns);
    assert!((0..10_000_000_000).contains(&relative), "{relative}");
    assert_eq!(one_number("moe", "SELECT start FROM origin"), 0);
}
