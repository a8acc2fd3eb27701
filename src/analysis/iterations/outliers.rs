//! Which iterations (and heatmap cells) are outliers: a duration above
//! `median + 3 × MAD` of the values it is compared with, MAD being the median absolute deviation
//! from the median — a robust spread that one slow iteration cannot inflate the way it inflates a
//! standard deviation. When the values are nearly identical MAD is close to 0 and any jitter
//! would count (short CPU ranges around asynchronous launches jitter by 10 % from one iteration
//! to the next), so the spread used is at least 5 % of the median: an outlier is at least 15 %
//! above it. Fewer than 3 values give no threshold: nothing to be an outlier against.

/// How many MADs above the median an outlier lies.
pub const MAD_FACTOR: i64 = 3;
/// The least spread used, as a fraction of the median (1/20).
pub const MIN_SPREAD_DIVISOR: i64 = 20;

/// The median of `values` (the lower middle for an even count); `None` when empty.
pub fn median(values: &mut [i64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let mid = (values.len() - 1) / 2;
    let (_, m, _) = values.select_nth_unstable(mid);
    Some(*m)
}

/// The outlier threshold of `values` (see the module comment).
pub fn threshold_ns(values: impl Iterator<Item = i64>) -> Option<i64> {
    let mut v: Vec<i64> = values.collect();
    if v.len() < 3 {
        return None;
    }
    let m = median(&mut v)?;
    let mut deviations: Vec<i64> = v.iter().map(|&x| (x - m).abs()).collect();
    let mad = median(&mut deviations)?;
    let spread = mad.max(m.abs() / MIN_SPREAD_DIVISOR);
    Some(m.saturating_add(spread.saturating_mul(MAD_FACTOR)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slow_value_is_an_outlier_and_jitter_is_not() {
        // Median 100, deviations 0,10,10,20,20,100 → MAD 10 (lower middle), spread
        // max(10, 5) = 10.
        let t = threshold_ns([100, 110, 90, 120, 80, 200].into_iter());
        assert_eq!(t, Some(130));
        // Identical values: the spread is 5 % of the median.
        assert_eq!(threshold_ns([1000; 5].into_iter()), Some(1150));
        assert_eq!(threshold_ns([5, 6].into_iter()), None);
        let mut v = [3, 1, 2, 4];
        assert_eq!(median(&mut v), Some(2));
    }
}
