//! Property tests (proptest) against brute force: the interval index finds exactly the events
//! overlapping a window, its level-of-detail walk accounts for every one of them, a thread's
//! running time in a window is the clipped sum of its intervals, and the statistics of a report
//! row (total, count, min, max, median, mean, sample standard deviation) equal their definitions
//! computed the slow way.

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use sightline::analysis::Summary;
use sightline::index::{LodItem, SpanIndex};
use sightline::trace::thread_states::running_ns_in;

/// Events sorted by start, with durations from zero (instants) up, overlapping freely.
fn events() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    prop::collection::vec((0i64..1_000, 0i64..300), 0..600).prop_map(|v| {
        let mut t = 0;
        let (mut s, mut e) = (Vec::new(), Vec::new());
        for (gap, dur) in v {
            t += gap / 4;
            s.push(t);
            e.push(t + dur);
        }
        (s, e)
    })
}

fn overlaps(s: i64, e: i64, t0: i64, t1: i64) -> bool {
    if s == e {
        t0 <= s && s < t1
    } else {
        s < t1 && e > t0
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn index_finds_exactly_the_overlapping_events(
        (s, e) in events(),
        a in -100i64..200_000,
        len in 0i64..50_000,
    ) {
        let index = SpanIndex::build(&s, &e);
        let got = index.overlapping(&s, &e, a, a + len);
        let want: Vec<usize> = (0..s.len()).filter(|&i| overlaps(s[i], e[i], a, a + len)).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn lod_walk_accounts_for_every_overlapping_event(
        (s, e) in events(),
        a in -100i64..200_000,
        len in 1i64..50_000,
        merge in 0i64..2_000,
    ) {
        let index = SpanIndex::build(&s, &e);
        let (mut singles, mut blocks) = (Vec::new(), Vec::new());
        index.walk(&s, &e, a, a + len, merge, &mut |item| match item {
            LodItem::Event(i) => singles.push(i),
            LodItem::Merged(b) => blocks.push(b),
        });
        for &i in &singles {
            prop_assert!(overlaps(s[i], e[i], a, a + len));
        }
        for b in &blocks {
            prop_assert!(b.max_end_ns - b.start_ns < merge, "merged only when narrow");
        }
        // Every overlapping event is drawn alone or lies inside a merged block.
        for i in (0..s.len()).filter(|&i| overlaps(s[i], e[i], a, a + len)) {
            let covered = singles.contains(&i)
                || blocks.iter().any(|b| b.start_ns <= s[i] && e[i] <= b.max_end_ns);
            prop_assert!(covered, "event {} [{}, {}) lost", i, s[i], e[i]);
        }
    }

    #[test]
    fn running_time_in_a_window_is_the_clipped_sum(
        v in prop::collection::vec((1i64..500, 0i64..500), 0..300),
        a in -100i64..100_000,
        len in 0i64..60_000,
    ) {
        // Disjoint running intervals, as sched pairing makes them.
        let mut t = 0;
        let (mut s, mut e) = (Vec::new(), Vec::new());
        for (gap, dur) in v {
            t += gap;
            s.push(t);
            t += dur;
            e.push(t);
        }
        let want: i64 = s.iter().zip(&e).map(|(&x, &y)| (y.min(a + len) - x.max(a)).max(0)).sum();
        prop_assert_eq!(running_ns_in(&s, &e, a, a + len), want);
    }

    #[test]
    fn summary_statistics_match_their_definitions(
        mut v in prop::collection::vec(-1_000_000i64..1_000_000_000, 1..400),
    ) {
        let original = v.clone();
        let got = Summary::of(&mut v);
        let n = original.len();
        prop_assert_eq!(got.count, n as u64);
        prop_assert_eq!(got.total, original.iter().sum::<i64>());
        prop_assert_eq!(got.min, *original.iter().min().unwrap());
        prop_assert_eq!(got.max, *original.iter().max().unwrap());
        // Median: the value with as many at or below as at or above (middle two averaged).
        let below = |x: f64| original.iter().filter(|&&y| (y as f64) <= x).count();
        let above = |x: f64| original.iter().filter(|&&y| (y as f64) >= x).count();
        prop_assert!(below(got.median) * 2 >= n && above(got.median) * 2 >= n);
        let mean = original.iter().map(|&y| y as f64).sum::<f64>() / n as f64;
        prop_assert!((got.avg - mean).abs() <= 1e-6 * mean.abs().max(1.0));
        let var = if n < 2 {
            0.0
        } else {
            original.iter().map(|&y| (y as f64 - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        };
        prop_assert!((got.stddev - var.sqrt()).abs() <= 1e-6 * var.sqrt().max(1.0));
    }
}
