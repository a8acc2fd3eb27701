//! Time ranges and which events fall in them.

/// A half-open time range `[start, end)` in ns from the trace's zero; a missing side is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeRange {
    pub start_ns: Option<i64>,
    pub end_ns: Option<i64>,
}

impl TimeRange {
    /// The whole trace.
    pub const ALL: TimeRange = TimeRange {
        start_ns: None,
        end_ns: None,
    };

    pub fn new(start_ns: i64, end_ns: i64) -> Self {
        Self {
            start_ns: Some(start_ns),
            end_ns: Some(end_ns),
        }
    }

    /// An event belongs to the range when its start lies in `[start, end)`.
    pub fn contains(&self, t_ns: i64) -> bool {
        self.start_ns.is_none_or(|s| t_ns >= s) && self.end_ns.is_none_or(|e| t_ns < e)
    }

    /// Clamps open sides to `[first, last]` (inclusive end made exclusive by +1).
    pub fn resolve(&self, first_ns: i64, last_ns: i64) -> (i64, i64) {
        (
            self.start_ns.unwrap_or(first_ns),
            self.end_ns.unwrap_or(last_ns.saturating_add(1)),
        )
    }
}

/// Parses a time such as `1.5s`, `200ms`, `30us`, `12ns` or `12` (ns).
pub fn parse_time_ns(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (number, scale) = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ]
    .iter()
    .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|n| (n.trim(), *scale)))
    .unwrap_or((t, 1.0));
    if scale == 1.0
        && let Ok(v) = number.parse::<i64>()
    {
        return Ok(v);
    }
    let v: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a time (examples: 1500, 20us, 1.2ms, 0.5s)"))?;
    if !v.is_finite() {
        return Err(format!("'{text}' is not a finite time"));
    }
    Ok((v * scale).round() as i64)
}

/// Parses `START:END` where either side may be empty.
pub fn parse_range(text: &str) -> Result<TimeRange, String> {
    let (a, b) = text.split_once(':').ok_or_else(|| {
        format!("range '{text}' must look like START:END, e.g. 1.2s:1.5s or 100ms:")
    })?;
    let side = |s: &str| -> Result<Option<i64>, String> {
        if s.trim().is_empty() {
            Ok(None)
        } else {
            parse_time_ns(s).map(Some)
        }
    };
    let range = TimeRange {
        start_ns: side(a)?,
        end_ns: side(b)?,
    };
    if let (Some(s), Some(e)) = (range.start_ns, range.end_ns)
        && e < s
    {
        return Err(format!("range '{text}' ends before it starts"));
    }
    Ok(range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times_with_units() {
        assert_eq!(parse_time_ns("1500"), Ok(1500));
        assert_eq!(parse_time_ns("20us"), Ok(20_000));
        assert_eq!(parse_time_ns("1.2ms"), Ok(1_200_000));
        assert_eq!(parse_time_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time_ns("7ns"), Ok(7));
        assert!(parse_time_ns("abc").is_err());
        assert!(parse_time_ns("1.5 parsecs").is_err());
    }

    #[test]
    fn parses_ranges_with_open_sides() {
        assert_eq!(
            parse_range("1.2s:1.5s"),
            Ok(TimeRange::new(1_200_000_000, 1_500_000_000))
        );
        let r = parse_range("100ms:").unwrap_or_default();
        assert_eq!((r.start_ns, r.end_ns), (Some(100_000_000), None));
        let r = parse_range(":5us").unwrap_or_default();
        assert_eq!((r.start_ns, r.end_ns), (None, Some(5000)));
        assert!(parse_range("5s:1s").is_err());
        assert!(parse_range("5s").is_err());
        assert!(r.contains(4999) && !r.contains(5000));
    }
}
