//! Aligned plain-text tables for the terminal: numbers right-aligned with thousands separators,
//! text left-aligned, like `nsys stats --format table`.

/// Longest cell a terminal table prints, in characters: longer text (an NVTX message of a few
/// megabytes) is cut with `…`. `--format csv` prints every cell whole.
pub const MAX_CELL_CHARS: usize = 1000;

use std::io::Write;

use crate::analysis::table::{Cell, Table};

/// Renders `header` and `rows` as an aligned table.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let cell = |r: usize, c: usize| rows[r].get(c).map(|v| capped(group_thousands(v)));
    let mut out = Vec::new();
    // Writing to memory does not fail.
    let _ = layout(header, rows.len(), cell, None, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Renders `header` and `rows` as a table with the columns `right` marks right-aligned (texts
/// such as `414.4 ms`, already formatted: no thousands are grouped).
pub fn render_aligned(header: &[&str], rows: &[Vec<String>], right: &[bool]) -> String {
    let cell = |r: usize, c: usize| rows[r].get(c).map(|v| capped(v.clone()));
    let right: Vec<bool> = (0..header.len())
        .map(|c| right.get(c).copied().unwrap_or(false))
        .collect();
    let mut out = Vec::new();
    let _ = layout(header, rows.len(), cell, Some(&right), &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes a report's table as [`render`] lays out its cells' text, line by line to `out`: each
/// cell is put into words as it is measured and again as it is written (at most
/// [`MAX_CELL_CHARS`] characters of it), so a table whose rows name a text of megabytes holds
/// neither the text per row nor the whole rendering.
pub fn write_table(header: &[&str], table: &Table, out: &mut dyn Write) -> std::io::Result<()> {
    let cell = |r: usize, c: usize| table.rows[r].cells.get(c).map(shown);
    layout(header, table.rows.len(), cell, None, out)
}

/// Writes a report's table as [`write_table`] does, its name columns cut as `fit` says
/// ([`super::fit_width`]). A fitted table holds its cells' text (a summary's rows, one per
/// name); [`Fit::Whole`] streams as [`write_table`] does.
pub fn write_table_fit(
    header: &[&str],
    table: &Table,
    fit: Fit,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if fit == Fit::Whole {
        return write_table(header, table, out);
    }
    let mut rows: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|r| r.cells.iter().map(shown).collect())
        .collect();
    fit_rows(header, &mut rows, fit);
    let cell = |r: usize, c: usize| rows[r].get(c).cloned();
    layout(header, rows.len(), cell, None, out)
}

/// Renders `header` and `rows` as [`render`] does, their name columns cut as `fit` says.
pub fn render_fit(header: &[&str], rows: &[Vec<String>], fit: Fit) -> String {
    if fit == Fit::Whole {
        return render(header, rows);
    }
    let mut shown: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|v| capped(group_thousands(v))).collect())
        .collect();
    fit_rows(header, &mut shown, fit);
    let cell = |r: usize, c: usize| shown[r].get(c).cloned();
    let mut out = Vec::new();
    let _ = layout(header, shown.len(), cell, None, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A cell as a terminal table shows it: thousands grouped, cut to [`MAX_CELL_CHARS`].
fn shown(cell: &Cell) -> String {
    match cell {
        // Only a text that starts like a number can be grouped; any other is cut as it is read.
        Cell::Text(t)
            if !t
                .chars()
                .next()
                .is_some_and(|c| c == '-' || c.is_ascii_digit()) =>
        {
            capped_chars(t.chars())
        }
        _ => capped(group_thousands(&cell.csv_text())),
    }
}

/// Lays out `rows` rows whose cell `(row, column)` reads `cell(row, column)`: the columns as wide
/// as their widest cell, right-aligned where `right` says (by default where every cell looks
/// like a number). Reads every cell twice (measure, then write) rather than holding them.
fn layout(
    header: &[&str],
    rows: usize,
    cell: impl Fn(usize, usize) -> Option<String>,
    right: Option<&[bool]>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    let mut numeric = vec![true; header.len()];
    for r in 0..rows {
        for c in 0..header.len() {
            if let Some(v) = cell(r, c) {
                widths[c] = widths[c].max(v.chars().count());
                numeric[c] &= looks_numeric(&v);
            }
        }
    }
    let numeric = right.unwrap_or(&numeric);
    let mut line = String::new();
    let mut write_line = |values: &mut dyn Iterator<Item = (usize, &str)>| {
        line.clear();
        line.push(' ');
        for (c, v) in values {
            if c > 0 {
                line.push_str("  ");
            }
            // Padded by hand: `format!`'s width is limited to u16::MAX.
            let pad = widths[c].saturating_sub(v.chars().count());
            if numeric[c] {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(v);
            } else {
                line.push_str(v);
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        // The leading space stays, as in ` {}` of the trimmed columns.
        let kept = line.trim_end().len().max(1);
        line.truncate(kept);
        line.push('\n');
        out.write_all(line.as_bytes())
    };
    write_line(&mut header.iter().copied().enumerate())?;
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    write_line(&mut dashes.iter().map(String::as_str).enumerate())?;
    for r in 0..rows {
        // A row shorter than the header ends where its cells end.
        let values: Vec<String> = (0..header.len()).map_while(|c| cell(r, c)).collect();
        write_line(&mut values.iter().map(String::as_str).enumerate())?;
    }
    Ok(())
}

/// `text` cut to [`MAX_CELL_CHARS`] characters, the last of them `…`.
fn capped(text: String) -> String {
    if text.chars().count() <= MAX_CELL_CHARS {
        return text;
    }
    capped_chars(text.chars())
}

/// The first [`MAX_CELL_CHARS`] of `chars`, the last of them `…` when there are more.
fn capped_chars(mut chars: impl Iterator<Item = char>) -> String {
    let mut cut: String = chars.by_ref().take(MAX_CELL_CHARS).collect();
    if chars.next().is_some() {
        cut.pop();
        cut.push('…');
    }
    cut
}

use super::fit_width::{Fit, fit_rows, looks_numeric};

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
    fn a_reports_table_is_laid_out_as_its_text_is() {
        use crate::analysis::table::{CellText, RowEvents};
        let name: std::sync::Arc<str> = "n".repeat(5000).into();
        let mut table = Table::new(&["Total", "Name", "Tree"]);
        for (total, level) in [(1_234_567, 1), (-5, 3)] {
            let indent = "--".repeat(level).into();
            table.push(
                vec![
                    Cell::Int(total),
                    Cell::text(std::sync::Arc::clone(&name)),
                    Cell::Text(CellText::joined([indent, std::sync::Arc::clone(&name)])),
                ],
                RowEvents::None,
            );
        }
        table.push(
            vec![Cell::Float(2.5), Cell::text("-7"), Cell::Null],
            RowEvents::None,
        );
        let mut out = Vec::new();
        write_table(&["Total", "Name", "Tree"], &table, &mut out).ok();
        let header = ["Total", "Name", "Tree"];
        let rows: Vec<Vec<String>> = table
            .rows
            .iter()
            .map(|r| r.cells.iter().map(Cell::csv_text).collect())
            .collect();
        assert_eq!(String::from_utf8_lossy(&out), render(&header, &rows));
        assert!(render(&header, &rows).contains(" 1,234,567  nnn"));
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
