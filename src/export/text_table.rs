//! Aligned plain-text tables for the terminal: numbers right-aligned with thousands separators,
//! text left-aligned, like `nsys stats --format table`.

/// Longest cell a terminal table prints, in characters: longer text (an NVTX message of a few
/// megabytes) is cut with `…`. `--format csv` prints every cell whole.
pub const MAX_CELL_CHARS: usize = 1000;

/// Renders `header` and `rows` as an aligned table.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| capped(group_thousands(c))).collect())
        .collect();
    let numeric: Vec<bool> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .all(|r| r.get(c).is_none_or(|v| looks_numeric(v)))
        })
        .collect();
    layout(header, &cells, &numeric)
}

/// Renders `header` and `rows` as a table with the columns `right` marks right-aligned (texts
/// such as `414.4 ms`, already formatted: no thousands are grouped).
pub fn render_aligned(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| capped(c.clone())).collect())
        .collect();
    let right: Vec<bool> = (0..header.len())
        .map(|c| right.get(c).copied().unwrap_or(false))
        .collect();
    layout(header, &cells, &right)
}

fn layout(header: &[&str], cells: &[Vec<String>], numeric: &[bool]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .chain(std::iter::once(header[c].chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: Vec<&str>| -> String {
        let parts: Vec<String> = values
            .iter()
            .enumerate()
            .map(|(c, v)| {
                // Padded by hand: `format!`'s width is limited to u16::MAX.
                let pad = " ".repeat(widths[c].saturating_sub(v.chars().count()));
                if numeric[c] {
                    format!("{pad}{v}")
                } else {
                    format!("{v}{pad}")
                }
            })
            .collect();
        format!(" {}", parts.join("  ").trim_end())
    };
    let mut out = String::new();
    out.push_str(&line(header.to_vec()));
    out.push('\n');
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(dashes.iter().map(String::as_str).collect()));
    out.push('\n');
    for r in cells {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// `text` cut to [`MAX_CELL_CHARS`] characters, the last of them `…`.
fn capped(text: String) -> String {
    if text.chars().count() <= MAX_CELL_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}

fn looks_numeric(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | 'e' | '+'))
}

/// `1234567.5` → `1,234,567.5`; text that is not a plain number is returned unchanged.
pub fn group_thousands(v: &str) -> String {
    let (sign, body) = v.strip_prefix('-').map_or(("", v), |b| ("-", b));
    let (int, frac) = body
        .split_once('.')
        .map_or((body, None), |(i, f)| (i, Some(f)));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || frac.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit()))
    {
        return v.to_string();
    }
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_of_megabytes_is_cut_not_a_panic() {
        let huge = "x".repeat(3 << 20);
        let out = render(&["Range"], &[vec![huge]]);
        let line = out.lines().nth(2).unwrap_or("");
        assert_eq!(line.trim().chars().count(), MAX_CELL_CHARS);
        assert!(line.trim_end().ends_with('…'));
    }

    #[test]
    fn groups_and_aligns() {
        assert_eq!(group_thousands("1234567.5"), "1,234,567.5");
        assert_eq!(group_thousands("12"), "12");
        assert_eq!(group_thousands("gemm"), "gemm");
        let t = render(
            &["Total", "Name"],
            &[
                vec!["1000".into(), "a".into()],
                vec!["5".into(), "bb".into()],
            ],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[2], " 1,000  a");
        assert_eq!(lines[3], "     5  bb");
    }
}
