//! A query's result as a timeline track ("pin as track"): the rows that have `start` and `end`
//! (or `ts` and `dur`) become intervals, named by a `name` column and put in lanes by a `row`
//! column (else stacked so that overlapping intervals never share a lane).
//!
//! Pure data: the window's timeline (`timeline::sql_tracks`) and `sightline render
//! --sql-track` draw it; times are the trace's own nanoseconds, as the views give them.

use std::collections::HashMap;
use std::ops::Range;

use rusqlite::types::Value;

use super::{QueryResult, cell_text};

/// The most lanes a track gets; a `row` column with more distinct values is refused.
pub const MAX_LANES: usize = 64;
/// The most rows of a result pinned as a track (the rest are left out, with a note).
pub const MAX_PINNED_ROWS: usize = 1_000_000;

/// A track's label from its query: the query on one line, cut at 48 characters.
pub fn title_of(query: &str) -> String {
    let one_line = query.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() > 48 {
        format!("{}…", one_line.chars().take(47).collect::<String>())
    } else {
        one_line
    }
}

/// Why a result cannot be pinned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrackError {
    #[error(
        "a track needs `start` and `end` (or `ts` and `dur`) columns in ns; this result has: {0}"
    )]
    NoTimeColumns(String),
    #[error("no row has a numeric start and an end at or after it")]
    NoIntervals,
    #[error("the `row` column has {0} distinct values; a track takes at most {MAX_LANES}")]
    TooManyLanes(usize),
}

/// One interval of a pinned result.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlInterval {
    pub start_ns: i64,
    pub end_ns: i64,
    /// The `name` column as text (empty without one).
    pub name: String,
    /// Index into [`SqlTrack::lanes`].
    pub lane: usize,
    /// The row the interval came from, in the result's order.
    pub row: usize,
}

/// A query's intervals, laid out in lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlTrack {
    /// What the timeline calls it (the pin's label).
    pub title: String,
    pub query: String,
    pub columns: Vec<String>,
    /// Every row's cells as text, for tooltips and details (index: [`SqlInterval::row`]).
    pub cells: Vec<Vec<String>>,
    /// Sorted by lane, then start.
    pub intervals: Vec<SqlInterval>,
    /// Each lane's label: its `row` value, or empty for stacked lanes.
    pub lanes: Vec<String>,
    lane_ranges: Vec<Range<usize>>,
    /// The longest interval of each lane (bounds the search for what is in view).
    lane_longest_ns: Vec<i64>,
    /// Rows left out: no numeric start, or an end before the start.
    pub skipped: usize,
}

fn column(columns: &[String], name: &str) -> Option<usize> {
    columns.iter().position(|c| c.eq_ignore_ascii_case(name))
}

fn as_ns(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Real(f) if f.is_finite() => Some(f.round() as i64),
        Value::Text(t) => t.trim().parse::<i64>().ok(),
        _ => None,
    }
}

impl SqlTrack {
    /// The track of `result`; `title` labels it on the timeline.
    pub fn from_result(title: &str, query: &str, result: &QueryResult) -> Result<Self, TrackError> {
        let cols = &result.columns;
        let (start_col, end_col, dur_col) = match (
            column(cols, "start"),
            column(cols, "end"),
            column(cols, "ts"),
            column(cols, "dur"),
        ) {
            (Some(s), Some(e), _, _) => (s, Some(e), None),
            (_, _, Some(t), Some(d)) => (t, None, Some(d)),
            _ => return Err(TrackError::NoTimeColumns(cols.join(", "))),
        };
        let name_col = column(cols, "name");
        let row_col = column(cols, "row");
        let mut skipped = 0;
        let mut intervals = Vec::with_capacity(result.rows.len());
        let mut lane_keys: Vec<Value> = Vec::new();
        let mut lane_of_key: HashMap<String, usize> = HashMap::new();
        for (i, row) in result.rows.iter().enumerate() {
            let start = row.get(start_col).and_then(as_ns);
            let end = match (end_col, dur_col) {
                (Some(e), _) => row.get(e).and_then(as_ns),
                (_, Some(d)) => row
                    .get(d)
                    .and_then(as_ns)
                    .and_then(|d| start.map(|s| s.saturating_add(d))),
                _ => None,
            };
            let (Some(start_ns), Some(end_ns)) = (start, end) else {
                skipped += 1;
                continue;
            };
            if end_ns < start_ns {
                skipped += 1;
                continue;
            }
            let lane = match row_col.and_then(|c| row.get(c)) {
                Some(v) => {
                    let key = cell_text(v);
                    *lane_of_key.entry(key).or_insert_with(|| {
                        lane_keys.push(v.clone());
                        lane_keys.len() - 1
                    })
                }
                None => 0,
            };
            intervals.push(SqlInterval {
                start_ns,
                end_ns,
                name: name_col
                    .and_then(|c| row.get(c))
                    .map(cell_text)
                    .unwrap_or_default(),
                lane,
                row: i,
            });
        }
        if intervals.is_empty() {
            return Err(TrackError::NoIntervals);
        }
        let lanes = if row_col.is_some() {
            if lane_keys.len() > MAX_LANES {
                return Err(TrackError::TooManyLanes(lane_keys.len()));
            }
            // Lanes in the `row` values' order (numbers as numbers), not first appearance.
            let mut order: Vec<usize> = (0..lane_keys.len()).collect();
            order.sort_by(|&a, &b| compare_values(&lane_keys[a], &lane_keys[b]));
            let mut rank = vec![0; order.len()];
            for (r, &k) in order.iter().enumerate() {
                rank[k] = r;
            }
            for iv in &mut intervals {
                iv.lane = rank[iv.lane];
            }
            order.iter().map(|&k| cell_text(&lane_keys[k])).collect()
        } else {
            stack(&mut intervals)
        };
        intervals.sort_by_key(|iv| (iv.lane, iv.start_ns, iv.end_ns));
        let mut lane_ranges = vec![0..0; lanes.len()];
        let mut lane_longest_ns = vec![0; lanes.len()];
        let mut at = 0;
        for (lane, range) in lane_ranges.iter_mut().enumerate() {
            let first = at;
            while at < intervals.len() && intervals[at].lane == lane {
                lane_longest_ns[lane] =
                    lane_longest_ns[lane].max(intervals[at].end_ns - intervals[at].start_ns);
                at += 1;
            }
            *range = first..at;
        }
        Ok(Self {
            title: title.to_string(),
            query: query.to_string(),
            columns: cols.clone(),
            cells: result
                .rows
                .iter()
                .map(|r| r.iter().map(cell_text).collect())
                .collect(),
            intervals,
            lanes,
            lane_ranges,
            lane_longest_ns,
            skipped,
        })
    }

    /// The intervals of `lane`, sorted by start.
    pub fn lane(&self, lane: usize) -> &[SqlInterval] {
        self.lane_ranges
            .get(lane)
            .and_then(|r| self.intervals.get(r.clone()))
            .unwrap_or(&[])
    }

    /// Indices into [`Self::intervals`] of the intervals of `lane` that overlap `[t0, t1]`.
    pub fn in_view(&self, lane: usize, t0: i64, t1: i64) -> Range<usize> {
        let Some(range) = self.lane_ranges.get(lane) else {
            return 0..0;
        };
        let ivs = self.lane(lane);
        let longest = self.lane_longest_ns.get(lane).copied().unwrap_or(0);
        let from = ivs.partition_point(|iv| iv.start_ns < t0.saturating_sub(longest));
        let to = ivs.partition_point(|iv| iv.start_ns <= t1);
        range.start + from..range.start + to.max(from)
    }

    /// The interval of `lane` nearest `t` within `tolerance_ns` (the shortest holding `t` first).
    pub fn at(&self, lane: usize, t: f64, tolerance_ns: f64) -> Option<usize> {
        let r = self.in_view(
            lane,
            (t - tolerance_ns).floor() as i64,
            (t + tolerance_ns).ceil() as i64,
        );
        r.filter(|&i| {
            let iv = &self.intervals[i];
            iv.start_ns as f64 <= t + tolerance_ns && iv.end_ns as f64 >= t - tolerance_ns
        })
        .min_by(|&a, &b| {
            let key = |i: usize| {
                let iv = &self.intervals[i];
                let (s, e) = (iv.start_ns as f64, iv.end_ns as f64);
                let distance = if t >= s && t <= e {
                    0.0
                } else {
                    (s - t).abs().min((e - t).abs())
                };
                (distance, iv.end_ns - iv.start_ns)
            };
            let (ka, kb) = (key(a), key(b));
            ka.0.total_cmp(&kb.0).then(ka.1.cmp(&kb.1))
        })
    }

    /// `column: value` lines of an interval's row, for a tooltip.
    pub fn row_lines(&self, interval: usize) -> Vec<(String, String)> {
        let Some(iv) = self.intervals.get(interval) else {
            return Vec::new();
        };
        let cells = self.cells.get(iv.row).map_or(&[][..], Vec::as_slice);
        self.columns
            .iter()
            .cloned()
            .zip(cells.iter().cloned())
            .collect()
    }
}

/// Stacks intervals into lanes where none overlaps another of its lane (the first lane whose
/// last interval has ended); returns the lanes' (empty) labels.
fn stack(intervals: &mut [SqlInterval]) -> Vec<String> {
    let mut order: Vec<usize> = (0..intervals.len()).collect();
    order.sort_by_key(|&i| {
        (
            intervals[i].start_ns,
            std::cmp::Reverse(intervals[i].end_ns),
        )
    });
    let mut lane_end: Vec<i64> = Vec::new();
    for i in order {
        let iv = &mut intervals[i];
        let lane = match lane_end.iter().position(|&end| end <= iv.start_ns) {
            Some(l) => l,
            None if lane_end.len() < MAX_LANES => {
                lane_end.push(i64::MIN);
                lane_end.len() - 1
            }
            // Past the cap the rest share the last lane (drawn over each other).
            None => MAX_LANES - 1,
        };
        lane_end[lane] = lane_end[lane].max(iv.end_ns);
        iv.lane = lane;
    }
    vec![String::new(); lane_end.len().max(1)]
}

/// SQLite's order of values: NULL, numbers, text, blobs.
pub fn compare_values(a: &Value, b: &Value) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Integer(_) | Value::Real(_) => 1,
            Value::Text(_) => 2,
            Value::Blob(_) => 3,
        }
    }
    match (a, b) {
        (Value::Integer(x), Value::Integer(y)) => x.cmp(y),
        (Value::Integer(x), Value::Real(y)) => (*x as f64).total_cmp(y),
        (Value::Real(x), Value::Integer(y)) => x.total_cmp(&(*y as f64)),
        (Value::Real(x), Value::Real(y)) => x.total_cmp(y),
        (Value::Text(x), Value::Text(y)) => x.cmp(y),
        (Value::Blob(x), Value::Blob(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)).then(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(columns: &[&str], rows: Vec<Vec<Value>>) -> QueryResult {
        QueryResult {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
            truncated: false,
        }
    }

    #[test]
    fn overlapping_intervals_get_their_own_lanes_and_ts_dur_reads_as_start_end() {
        let r = result(
            &["ts", "dur", "name"],
            vec![
                vec![
                    Value::Integer(0),
                    Value::Integer(10),
                    Value::Text("a".into()),
                ],
                vec![
                    Value::Integer(5),
                    Value::Integer(10),
                    Value::Text("b".into()),
                ],
                vec![
                    Value::Integer(12),
                    Value::Integer(3),
                    Value::Text("c".into()),
                ],
                vec![
                    Value::Null,
                    Value::Integer(3),
                    Value::Text("skipped".into()),
                ],
            ],
        );
        let t = SqlTrack::from_result("t", "q", &r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.lanes.len(), 2);
        assert_eq!(t.skipped, 1);
        let lane0: Vec<&str> = t.lane(0).iter().map(|i| i.name.as_str()).collect();
        assert_eq!(lane0, ["a", "c"]);
        assert_eq!(t.lane(1)[0].end_ns, 15);
        // Only "a" and "b" overlap [6, 8]; the nearest to 11 within 2 ns is "c" in lane 0.
        assert_eq!(t.in_view(0, 6, 8).len() + t.in_view(1, 6, 8).len(), 2);
        let near = t.at(0, 11.0, 2.0).map(|i| t.intervals[i].name.clone());
        assert_eq!(near.as_deref(), Some("c"));
    }

    #[test]
    fn a_row_column_names_the_lanes_in_order_and_no_time_columns_is_refused() {
        let r = result(
            &["start", "end", "row"],
            vec![
                vec![Value::Integer(0), Value::Integer(1), Value::Integer(10)],
                vec![Value::Integer(0), Value::Integer(1), Value::Integer(2)],
            ],
        );
        let t = SqlTrack::from_result("t", "q", &r).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.lanes, ["2", "10"]);
        let bad = result(&["a"], vec![vec![Value::Integer(0)]]);
        assert!(matches!(
            SqlTrack::from_result("t", "q", &bad),
            Err(TrackError::NoTimeColumns(_))
        ));
    }
}
