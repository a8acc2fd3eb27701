//! Half-open time intervals `[start, end)` in ns and the set operations the GPU analyses need:
//! union (busy time of many overlapping ops), intersection (copy/compute overlap), clipping to a
//! range, and the holes between busy intervals (idle gaps).

/// A half-open interval `[start_ns, end_ns)`.
pub type Interval = (i64, i64);

/// The union of `spans` as sorted, disjoint, non-touching intervals. Empty spans are dropped;
/// intervals that only touch (`a.end == b.start`) are merged, since no time lies between them.
pub fn union(mut spans: Vec<Interval>) -> Vec<Interval> {
    spans.retain(|&(s, e)| e > s);
    spans.sort_unstable();
    let mut out: Vec<Interval> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of disjoint intervals.
pub fn total_ns(intervals: &[Interval]) -> i64 {
    intervals.iter().map(|&(s, e)| e - s).sum()
}

/// The intersection of two unions (each sorted and disjoint), by a merge walk.
pub fn intersect(a: &[Interval], b: &[Interval]) -> Vec<Interval> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The parts of sorted disjoint `intervals` that lie in `[lo, hi)`.
pub fn clip(intervals: &[Interval], lo: i64, hi: i64) -> Vec<Interval> {
    intervals
        .iter()
        .filter_map(|&(s, e)| {
            let (s, e) = (s.max(lo), e.min(hi));
            (e > s).then_some((s, e))
        })
        .collect()
}

/// The parts of `a` not covered by `b` (both sorted and disjoint).
pub fn subtract(a: &[Interval], b: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut s = s;
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > s {
                out.push((s, b[k].0));
            }
            s = s.max(b[k].1);
            k += 1;
        }
        if e > s {
            out.push((s, e));
        }
    }
    out
}

/// The holes between consecutive intervals of a union (sorted, disjoint): `[a.end, b.start)`.
pub fn holes(union: &[Interval]) -> Vec<Interval> {
    union
        .windows(2)
        .filter_map(|w| (w[1].0 > w[0].1).then_some((w[0].1, w[1].0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over unit time steps: which ns in [0, 64) are covered.
    fn covered(spans: &[Interval]) -> Vec<bool> {
        (0..64)
            .map(|t| spans.iter().any(|&(s, e)| t >= s && t < e))
            .collect()
    }

    #[test]
    fn union_merges_overlapping_and_touching() {
        assert_eq!(
            union(vec![(5, 8), (1, 3), (2, 4), (4, 5), (10, 12), (11, 11)]),
            vec![(1, 8), (10, 12)]
        );
        assert_eq!(union(vec![]), vec![]);
        assert_eq!(union(vec![(3, 3)]), vec![]);
        assert_eq!(union(vec![(0, 10), (2, 3)]), vec![(0, 10)]);
    }

    #[test]
    fn set_operations_match_brute_force() {
        // A small deterministic pseudo-random generator (no dev-dependency needed).
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |m: i64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as i64
        };
        for _ in 0..200 {
            let mut spans = |n: usize| -> Vec<Interval> {
                (0..n)
                    .map(|_| {
                        let s = next(60);
                        (s, s + next(8))
                    })
                    .collect()
            };
            let a_raw = spans(6);
            let b_raw = spans(6);
            let (a, b) = (union(a_raw.clone()), union(b_raw.clone()));
            assert_eq!(covered(&a), covered(&a_raw));
            assert!(a.windows(2).all(|w| w[0].1 < w[1].0), "disjoint, sorted");
            let both: Vec<bool> = covered(&a_raw)
                .iter()
                .zip(covered(&b_raw))
                .map(|(x, y)| *x && y)
                .collect();
            let inter = intersect(&a, &b);
            assert_eq!(covered(&inter), both);
            assert_eq!(total_ns(&inter), both.iter().filter(|&&x| x).count() as i64);
            let minus: Vec<bool> = covered(&a_raw)
                .iter()
                .zip(covered(&b_raw))
                .map(|(x, y)| *x && !y)
                .collect();
            let diff = subtract(&a, &b);
            assert_eq!(covered(&diff), minus);
            assert!(diff.windows(2).all(|w| w[0].1 <= w[1].0));
            let (lo, hi) = (next(30), 30 + next(30));
            let clipped = clip(&a, lo, hi);
            let expect: Vec<bool> = covered(&a)
                .iter()
                .enumerate()
                .map(|(t, &c)| c && (t as i64) >= lo && (t as i64) < hi)
                .collect();
            assert_eq!(covered(&clipped), expect);
            // Holes plus union tile [first start, last end) exactly.
            if let (Some(first), Some(last)) = (a.first(), a.last()) {
                assert_eq!(total_ns(&holes(&a)) + total_ns(&a), last.1 - first.0);
                assert!(intersect(&holes(&a), &a).is_empty());
            }
        }
    }
}
