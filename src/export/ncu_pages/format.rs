//! Numbers as ncu's CSV pages print them. In base units (`--print-units base`, and every
//! metric without a unit) a whole number prints with thousands separators (`16,896`), any other
//! with two decimals (`877,953,397.43`). In auto units a metric with a unit prints with six
//! decimals and no separators in the column's scaled unit (`0.989246` Gbyte), an integer kind in
//! an unscaled column as a bare integer (`65536`), and a column whose largest value is zero
//! as `0`.

/// `digits` (an optional `-`, digits, an optional fraction) with a `,` between each group of
/// three digits of its integer part.
pub fn separated(digits: &str) -> String {
    let (sign, rest) = match digits.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", digits),
    };
    let (int, frac) = match rest.find('.') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut out = String::with_capacity(digits.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(frac);
    out
}

/// A float in base units: whole numbers with separators, others with two decimals.
pub fn base_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let text = if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    };
    // ncu keeps the sign of a negative value that rounds to zero here (`-0.00`).
    separated(&text)
}

/// An unsigned integer in base units.
pub fn base_integer(v: u64) -> String {
    separated(&v.to_string())
}

/// A float in a unit column of the auto-units page: `v / factor` with six decimals (ncu
/// multiplies by the inverse of the scale).
pub fn scaled_float(v: f64, factor: f64) -> String {
    if v.is_nan() {
        // Scaled, a NaN keeps its sign (`-nan` in a `ms` column; `nan` in base units).
        let signed = factor != 1.0 && v.is_sign_negative();
        return if signed { "-nan" } else { "nan" }.to_string();
    }
    let x = if factor == 1.0 { v } else { v * (1.0 / factor) };
    no_negative_zero(&format!("{x:.6}")).to_string()
}

/// `-0`, `-0.00` … print without their sign, as ncu prints them.
fn no_negative_zero(text: &str) -> &str {
    match text.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest,
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_decimals() {
        assert_eq!(separated("16896"), "16,896");
        assert_eq!(separated("-1234567.5"), "-1,234,567.5");
        assert_eq!(base_float(877_953_397.425_452_2), "877,953,397.43");
        assert_eq!(base_float(16896.0), "16,896");
        assert_eq!(base_float(-0.001), "-0.00");
        assert_eq!(base_integer(1_980_000), "1,980,000");
        assert_eq!(scaled_float(989_245_559.719_732_8, 1e9), "0.989246");
        assert_eq!(scaled_float(32.0, 1.0), "32.000000");
    }
}
