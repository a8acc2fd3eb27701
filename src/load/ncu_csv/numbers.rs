//! Numbers as ncu's CSV pages print them: with thousands separators (`27,595,520`), in the
//! locale of the machine that ran `ncu --import` (`27.595.520`, `1.234,56`), or `n/a`, `nan`,
//! empty. The separators are decided once per file, from how all of its numbers are written:
//! a cell alone can be ambiguous (`1,980` is 1980 or 1.98).

use crate::trace::ncu::MetricValue;

/// Which character groups thousands and which one starts the decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberStyle {
    pub thousands: char,
    pub decimal: char,
}

impl NumberStyle {
    pub const ENGLISH: NumberStyle = NumberStyle {
        thousands: ',',
        decimal: '.',
    };
    pub const CONTINENTAL: NumberStyle = NumberStyle {
        thousands: '.',
        decimal: ',',
    };
}

/// Whether a cell is written as a number: digits with `,` and `.` between them, maybe a sign.
fn is_numeric(cell: &str) -> bool {
    let digits = cell.strip_prefix('-').unwrap_or(cell);
    let b = digits.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_digit()
        && b[b.len() - 1].is_ascii_digit()
        && b.iter()
            .all(|c| c.is_ascii_digit() || *c == b',' || *c == b'.')
}

/// Evidence, from one numeric cell, for English (+1) or continental (-1) separators; 0 when
/// the cell could be either (`1,980`) or has no separator.
fn vote(cell: &str) -> i64 {
    let (commas, dots) = (cell.matches(',').count(), cell.matches('.').count());
    match (commas, dots) {
        (0, 0) => 0,
        (c, d) if c > 0 && d > 0 => {
            // Both: the last one is the decimal separator.
            if cell.rfind('.') > cell.rfind(',') {
                1
            } else {
                -1
            }
        }
        (c, 0) if c > 1 => 1,
        (0, d) if d > 1 => -1,
        (1, 0) => {
            let after = cell.len() - cell.rfind(',').map_or(0, |i| i + 1);
            if after == 3 { 0 } else { -1 }
        }
        _ => {
            let after = cell.len() - cell.rfind('.').map_or(0, |i| i + 1);
            if after == 3 { 0 } else { 1 }
        }
    }
}

/// Decides a file's separators from its cells: English unless most of the telling cells say
/// otherwise (an ambiguous `1,980` alone is read the English way, as ncu writes it by default).
pub fn detect_style<'a>(cells: impl Iterator<Item = &'a str>) -> NumberStyle {
    let score: i64 = cells.filter(|c| is_numeric(c)).map(vote).sum();
    if score < 0 {
        NumberStyle::CONTINENTAL
    } else {
        NumberStyle::ENGLISH
    }
}

/// A cell as a metric value: an integer, a decimal, or the text; `None` for `n/a`, `no data`
/// and empty cells (ncu has no value there).
pub fn parse_value(cell: &str, style: NumberStyle) -> Option<MetricValue> {
    let cell = cell.trim();
    // `no data`: an instanced metric with no instances (an empty list in the report).
    if cell.is_empty() || cell.eq_ignore_ascii_case("n/a") || cell.eq_ignore_ascii_case("no data") {
        return None;
    }
    if cell.eq_ignore_ascii_case("nan") {
        return Some(MetricValue::F64(f64::NAN));
    }
    if !is_numeric(cell) {
        return Some(MetricValue::Str(cell.to_string()));
    }
    let plain: String = cell
        .chars()
        .filter(|&c| c != style.thousands)
        .map(|c| if c == style.decimal { '.' } else { c })
        .collect();
    if !plain.contains('.')
        && let Ok(v) = plain.parse::<u64>()
    {
        return Some(MetricValue::U64(v));
    }
    match plain.parse::<f64>() {
        Ok(v) => Some(MetricValue::F64(v)),
        Err(_) => Some(MetricValue::Str(cell.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_are_decided_by_the_telling_cells() {
        let en = ["27,595,520", "1,980", "3.19", "0"];
        assert_eq!(detect_style(en.into_iter()), NumberStyle::ENGLISH);
        let de = ["27.595.520", "1.980", "3,19", "0"];
        assert_eq!(detect_style(de.into_iter()), NumberStyle::CONTINENTAL);
        // Only ambiguous cells: English, as ncu prints by default.
        assert_eq!(detect_style(["1,980"].into_iter()), NumberStyle::ENGLISH);
    }

    #[test]
    fn cells_become_values() {
        let en = NumberStyle::ENGLISH;
        let de = NumberStyle::CONTINENTAL;
        assert_eq!(
            parse_value("27,595,520", en),
            Some(MetricValue::U64(27_595_520))
        );
        assert_eq!(
            parse_value("27.595.520", de),
            Some(MetricValue::U64(27_595_520))
        );
        assert_eq!(parse_value("1.234,56", de), Some(MetricValue::F64(1234.56)));
        assert_eq!(parse_value("1,234.56", en), Some(MetricValue::F64(1234.56)));
        assert_eq!(parse_value("-3.5", en), Some(MetricValue::F64(-3.5)));
        assert_eq!(parse_value("n/a", en), None);
        assert_eq!(parse_value("no data", en), None);
        assert_eq!(parse_value("", en), None);
        assert!(matches!(parse_value("nan", en), Some(MetricValue::F64(v)) if v.is_nan()));
        assert_eq!(
            parse_value("No-CC", en),
            Some(MetricValue::Str("No-CC".into()))
        );
    }
}
