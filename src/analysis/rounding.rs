//! Numbers as nsys prints them: SQLite's `round(x, digits)` (nsys rounds in SQL) and Python's
//! `repr` of a float (nsys writes its CSV with Python's `csv` module).

/// SQLite's `round(x, digits)` as nsys's SQLite (3.42) computes it: `x` to 15 significant
/// digits, then half away from zero at `digits` decimals. So 1827313 / 20 (stored as
/// 91365.649999999994…) rounds to 91365.7, not 91365.6; checked against SQLite 3.40 on 200k
/// random averages.
pub fn sqlite_round(x: f64, digits: i32) -> f64 {
    if !x.is_finite() || x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
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
    // Number of digits before the rounding position.
    let keep = exp + 1 + digits;
    if keep < 0 {
        return 0.0_f64.copysign(x);
    }
    let keep = keep as usize;
    if keep < digits_vec.len() {
        let round_up = digits_vec[keep] >= 5;
        digits_vec.truncate(keep);
        let mut carry = round_up;
        for d in digits_vec.iter_mut().rev() {
            if !carry {
                break;
            }
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                carry = false;
            }
        }
        let mut text = String::new();
        if carry {
            text.push('1');
        }
        for d in &digits_vec {
            text.push((b'0' + d) as char);
        }
        if text.is_empty() {
            text.push('0');
        }
        let shift = exp + 1 - keep as i32;
        let value: f64 = format!("{text}e{shift}").parse().unwrap_or(0.0);
        return value.copysign(x);
    }
    x
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
    fn prints_floats_like_python() {
        assert_eq!(py_float(168428086.0), "168428086.0");
        assert_eq!(py_float(97.7), "97.7");
        assert_eq!(py_float(0.0), "0.0");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(1.5e-5), "1.5e-05");
    }
}
