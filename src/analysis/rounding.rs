//! Numbers as nsys prints them: SQLite's `round(x, digits)` (nsys rounds in SQL) and Python's
//! `repr` of a float (nsys writes its CSV with Python's `csv` module). Nsight Systems 2023.4
//! bundles SQLite 3.42 ([`sqlite_round`]); 2025.3 bundles 3.46, whose `round` decides a half by
//! the double's binary value ([`sqlite_round_3_46`]); [`super::NsysFormat::round`] picks one.

/// SQLite's `round(x, digits)` as nsys's SQLite (3.42) computes it: `x` to 15 significant
/// digits, then half away from zero at `digits` decimals. So 1827313 / 20 (stored as
/// 91365.649999999994…) rounds to 91365.7, not 91365.6; checked against SQLite 3.40 on 200k
/// random averages.
pub fn sqlite_round(x: f64, digits: i32) -> f64 {
    if !x.is_finite() || x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    far_from_half(x, digits).unwrap_or_else(|| sqlite_round_by_digits(x, digits))
}

/// `round(x, digits)` when `x` is far enough from a rounding boundary that SQLite's decimal
/// digits (15 or 19 of them) cannot decide differently from the binary value: the rounded
/// integer over 10^digits, a correctly rounded division, is the double nearest the decimal,
/// as the digit path's parse is. Report tables round millions of averages; the digit path
/// formats each.
fn far_from_half(x: f64, digits: i32) -> Option<f64> {
    const SCALE: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];
    let scale = *SCALE.get(usize::try_from(digits).ok()?)?;
    if digits == 0 {
        return None;
    }
    let y = x.abs() * scale;
    // Below 1e11 the product's error (an ulp, under 1e-5) is far inside the margin.
    if y >= 1e11 {
        return None;
    }
    let fraction = y - y.floor();
    if (fraction - 0.5).abs() < 1e-3 {
        return None;
    }
    Some((y.round() / scale).copysign(x))
}

fn sqlite_round_by_digits(x: f64, digits: i32) -> f64 {
    let sci = format!("{:.14e}", x.abs()); // d.dddddddddddddde±x: 15 significant digits
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return x;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits_vec: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    // Nothing to round when every one of the 15 digits is kept.
    if exp + 1 + digits >= digits_vec.len() as i32 {
        return x;
    }
    round_digits_half_up(&mut digits_vec, exp, digits).map_or(x, |v| v.copysign(x))
}

/// SQLite's `round(x, digits)` as SQLite 3.43 and later compute it (Nsight Systems 2025.3
/// bundles 3.46.0): `printf("%!.*f")` over the double's decimal expansion to about 19
/// significant digits (`sqlite3FpDecode`), then half away from zero at `digits` decimals; a
/// zero `digits` adds ±0.5 and truncates. So 1975716 / 240 (stored as 8232.149999999999636…)
/// rounds to 8232.1 where [`sqlite_round`] gives 8232.2; an exact half (2.25) still rounds up.
pub fn sqlite_round_3_46(x: f64, digits: i32) -> f64 {
    if !x.is_finite() || x.abs() > 4_503_599_627_370_496.0 {
        return x; // no fractional part to round
    }
    if digits <= 0 {
        let half = if x < 0.0 { -0.5 } else { 0.5 };
        return ((x + half) as i64) as f64;
    }
    if x == 0.0 {
        return 0.0;
    }
    far_from_half(x, digits).unwrap_or_else(|| sqlite_round_3_46_by_digits(x, digits))
}

fn sqlite_round_3_46_by_digits(x: f64, digits: i32) -> f64 {
    // The exact expansion, cut (not rounded) to the 19 digits sqlite3FpDecode's u64 holds.
    let sci = format!("{:.40e}", x.abs());
    let Some((mantissa, exp)) = sci.split_once('e') else {
        return x;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits_vec: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .take(19)
        .collect();
    round_digits_half_up(&mut digits_vec, exp, digits).map_or(x, |v| v.copysign(x))
}

/// Rounds the significant digits `d` (the first one at 10^`exp`) half up at `digits`
/// decimals and reads the result back; `None` when the digits do not parse.
fn round_digits_half_up(d: &mut Vec<u8>, exp: i32, digits: i32) -> Option<f64> {
    let keep = exp + 1 + digits;
    if keep < 0 {
        return Some(0.0);
    }
    let keep = keep as usize;
    if keep >= d.len() {
        let text: String = d.iter().map(|&x| (b'0' + x) as char).collect();
        return format!("{text}e{}", exp + 1 - d.len() as i32).parse().ok();
    }
    let mut carry = d[keep] >= 5;
    d.truncate(keep);
    for x in d.iter_mut().rev() {
        if !carry {
            break;
        }
        if *x == 9 {
            *x = 0;
        } else {
            *x += 1;
            carry = false;
        }
    }
    let mut text = String::new();
    if carry {
        text.push('1');
    }
    text.extend(d.iter().map(|&x| (b'0' + x) as char));
    if text.is_empty() {
        text.push('0');
    }
    let shift = exp + 1 - keep as i32;
    format!("{text}e{shift}").parse().ok()
}

/// Python's `repr` of a float: the shortest text that reads back the same, always with a
/// decimal point or an exponent.
pub fn py_float(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    if x.abs() >= 1e16 || x.abs() < 1e-4 {
        // Python switches to exponent notation here: 1e+16, 1.5e-05.
        let s = format!("{x:e}");
        if let Some((m, e)) = s.split_once('e') {
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            return format!("{m}e{sign}{digits:0>2}");
        }
        return s;
    }
    let s = format!("{x}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_like_sqlite() {
        assert_eq!(sqlite_round(105523.25, 1), 105523.3); // half away from zero, not to even
        assert_eq!(sqlite_round(2.25, 1), 2.3);
        assert_eq!(sqlite_round(0.04999, 1), 0.0);
        assert_eq!(sqlite_round(99.96, 1), 100.0);
        assert_eq!(sqlite_round(-1.25, 1), -1.3);
        assert_eq!(sqlite_round(82657.5, 1), 82657.5);
        assert_eq!(sqlite_round(0.15, 1), 0.2); // 0.1499999… to 15 digits is 0.15
        assert_eq!(sqlite_round(1827313.0 / 20.0, 1), 91365.7); // 91365.64999999999…
    }

    #[test]
    fn the_shortcut_rounds_as_the_digits_do() {
        // A deterministic spread of averages: n / k for durations and counts nsys sees.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for _ in 0..300_000 {
            let n = (next() % 10_000_000_000) as f64;
            let k = (next() % 5000 + 1) as f64;
            let x = if next() % 7 == 0 { -n / k } else { n / k };
            for digits in 1..=3 {
                if let Some(fast) = far_from_half(x, digits) {
                    assert_eq!(fast, sqlite_round_by_digits(x, digits), "{x} at {digits}");
                    assert_eq!(
                        fast,
                        sqlite_round_3_46_by_digits(x, digits),
                        "{x} at {digits}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 800_000, "{checked}");
    }

    #[test]
    fn rounds_like_sqlite_3_46() {
        assert_eq!(sqlite_round_3_46(1975716.0 / 240.0, 1), 8232.1); // 8232.14999999999963…
        assert_eq!(sqlite_round(1975716.0 / 240.0, 1), 8232.2);
        assert_eq!(sqlite_round_3_46(105523.25, 1), 105523.3); // an exact half: away from zero
        assert_eq!(sqlite_round_3_46(-1.25, 1), -1.3);
        assert_eq!(sqlite_round_3_46(0.15, 1), 0.1); // 0.1499999…
        assert_eq!(sqlite_round_3_46(0.04999, 1), 0.0);
        assert_eq!(sqlite_round_3_46(0.06, 1), 0.1);
        assert_eq!(sqlite_round_3_46(99.96, 1), 100.0);
        assert_eq!(sqlite_round_3_46(82657.5, 1), 82657.5);
        assert_eq!(sqlite_round_3_46(2.5, 0), 3.0);
        assert_eq!(sqlite_round_3_46(12.0, 1), 12.0);
    }

    /// The SQLite that rusqlite bundles (3.50) rounds as 3.46 does (`roundFunc` and
    /// `sqlite3FpDecode` as of 3.43): compare on averages such as nsys rounds.
    #[test]
    fn agrees_with_the_bundled_sqlite() {
        let Ok(conn) = rusqlite::Connection::open_in_memory() else {
            panic!("in-memory SQLite");
        };
        let mut stmt = match conn.prepare("SELECT round(?1, ?2)") {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        };
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for i in 0..50_000 {
            let total = (next() % 10_000_000_000) as f64;
            let count = (next() % 2000 + 1) as f64;
            let x = if i % 7 == 0 {
                -total / count
            } else {
                total / count
            };
            let digits = if i % 5 == 0 { 3 } else { 1 };
            let want: f64 = match stmt.query_row((x, digits), |r| r.get(0)) {
                Ok(v) => v,
                Err(e) => panic!("{e}"),
            };
            assert_eq!(sqlite_round_3_46(x, digits), want, "round({x:?}, {digits})");
            checked += 1;
        }
        assert_eq!(checked, 50_000);
    }

    #[test]
    fn prints_floats_like_python() {
        assert_eq!(py_float(168428086.0), "168428086.0");
        assert_eq!(py_float(97.7), "97.7");
        assert_eq!(py_float(0.0), "0.0");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(1.5e-5), "1.5e-05");
    }
}
