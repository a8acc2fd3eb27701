//! Formats a [`ReportTable`] cell for cell as `nsys stats --format csv` (Nsight Systems 2023.4)
//! prints it: SQLite's `round(x, 1)` for averages, medians, deviations and percentages, Python's
//! `repr` of the resulting float, and sizes converted to decimal MB with 3 decimals.

use std::io::Write;

use crate::analysis::{Report, ReportTable};

/// Header of each report, as nsys prints it.
pub fn header(report: Report) -> Vec<&'static str> {
    let ns = |count: &'static str, name: &'static str| {
        vec![
            "Time (%)",
            "Total Time (ns)",
            count,
            "Avg (ns)",
            "Med (ns)",
            "Min (ns)",
            "Max (ns)",
            "StdDev (ns)",
            name,
        ]
    };
    match report {
        Report::Kernels => ns("Instances", "Name"),
        Report::CudaApi => ns("Num Calls", "Name"),
        Report::MemoryTime => ns("Count", "Operation"),
        Report::MemorySize => vec![
            "Total (MB)",
            "Count",
            "Avg (MB)",
            "Med (MB)",
            "Min (MB)",
            "Max (MB)",
            "StdDev (MB)",
            "Operation",
        ],
        Report::Nvtx => {
            let mut h = ns("Instances", "Style");
            h.push("Range");
            h
        }
    }
}

/// The cells of every row, as strings.
pub fn rows(table: &ReportTable) -> Vec<Vec<String>> {
    table
        .rows
        .iter()
        .map(|row| {
            let s = &row.stats;
            if table.report == Report::MemorySize {
                let mb = |bytes: f64| format!("{:.3}", bytes / 1e6);
                return vec![
                    mb(s.total as f64),
                    s.count.to_string(),
                    mb(s.avg),
                    mb(s.median),
                    mb(s.min as f64),
                    mb(s.max as f64),
                    mb(s.stddev),
                    row.name.clone(),
                ];
            }
            let mut cells = vec![
                py_float(sqlite_round(row.percent, 1)),
                s.total.to_string(),
                s.count.to_string(),
                py_float(sqlite_round(s.avg, 1)),
                py_float(sqlite_round(s.median, 1)),
                s.min.to_string(),
                s.max.to_string(),
                py_float(sqlite_round(s.stddev, 1)),
            ];
            if let Some(style) = row.style {
                cells.push(style.label().to_string());
            }
            cells.push(row.name.clone());
            cells
        })
        .collect()
}

/// Writes the report as CSV: one header row, then the rows (RFC 4180 quoting).
pub fn write_csv(table: &ReportTable, out: impl Write) -> csv::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(out);
    w.write_record(header(table.report))?;
    for r in rows(table) {
        w.write_record(&r)?;
    }
    w.flush()?;
    Ok(())
}

/// SQLite's `round(x, digits)`: it prints `x` with at most 16 significant digits (`%!.*f`),
/// rounding half away from zero, and reads the text back.
pub fn sqlite_round(x: f64, digits: i32) -> f64 {
    if !x.is_finite() || x.abs() >= 4_503_599_627_370_496.0 {
        return x;
    }
    let sci = format!("{:.15e}", x.abs()); // d.ddddddddddddddde±x: 16 significant digits
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
        assert_eq!(sqlite_round(0.15, 1), 0.2); // 0.1499999… printed to 16 digits is 0.15
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
