//! Fitting a terminal table to the terminal: its name columns (kernel, range, operator names:
//! the text columns) are cut so that a line holds every number, as PyTorch's
//! `key_averages().table()` cuts names at 55 characters. Names are cut where they agree with the
//! other names of their column ([`super::elide::elide_column`]), so two rows never read the same
//! when their names differ. `--format csv` and `--wide` print every name whole.

use std::collections::HashMap;

use super::elide::{differs_at_each, elide_column, elide_to_difference};
use super::text_table::group_thousands;

/// Width a terminal table fits by default, in characters.
pub const TERMINAL_COLUMNS: usize = 200;

/// Narrowest a name column is cut to: a copy's direction (`[…Device-to-Host]`) still reads.
const MIN_NAME_CHARS: usize = 20;

/// How a terminal table's name columns are shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Cut the name columns so that a line is at most this many characters (never a column
    /// below [`MIN_NAME_CHARS`]).
    Width(usize),
    /// Cut every name column to at most this many characters (`--name-width N`).
    Names(usize),
    /// Every name whole (`--wide`).
    Whole,
}

impl Fit {
    /// The fit `--wide` and `--name-width N` ask for; by default [`TERMINAL_COLUMNS`].
    pub fn of_args(wide: bool, name_width: Option<usize>) -> Fit {
        match (wide, name_width) {
            (true, _) => Fit::Whole,
            (false, Some(n)) => Fit::Names(n.max(1)),
            (false, None) => Fit::Width(TERMINAL_COLUMNS),
        }
    }
}

/// Whether a cell, as a terminal table shows it, reads as a number (right-aligned, never cut).
pub fn looks_numeric(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | 'e' | '+'))
}

/// Cuts the text columns of `rows` (the columns where some cell does not read as a number) as
/// `fit` says, for a table of `header` laid out with one leading space and two between columns.
/// Returns whether any name was cut.
pub fn fit_rows(header: &[&str], rows: &mut [Vec<String>], fit: Fit) -> bool {
    let names: Vec<usize> = (0..header.len())
        .filter(|&c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .any(|v| !v.is_empty() && !looks_numeric(v))
        })
        .collect();
    match fit {
        Fit::Whole => false,
        Fit::Names(n) => cut_columns(rows, &names.iter().map(|&c| (c, n)).collect::<Vec<_>>()),
        Fit::Width(width) => fit_columns(header, rows, &names, width),
    }
}

/// Cuts the columns `names` of `rows` so that the table fits `width` characters: the other
/// columns keep their widths; the named columns share what is left, a narrow one keeping its
/// width and giving the rest to the wider ones, none cut below [`MIN_NAME_CHARS`].
pub fn fit_columns(
    header: &[&str],
    rows: &mut [Vec<String>],
    names: &[usize],
    width: usize,
) -> bool {
    let shown = |c: usize| -> usize {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|v| group_thousands(v).chars().count())
            .chain(header.get(c).map(|h| h.chars().count()))
            .max()
            .unwrap_or(0)
    };
    let fixed: usize = (0..header.len())
        .filter(|c| !names.contains(c))
        .map(shown)
        .sum();
    // One leading space and two between columns.
    let spacing = 1 + 2 * header.len().saturating_sub(1);
    let mut left = width.saturating_sub(fixed + spacing);
    let mut by_width: Vec<(usize, usize)> = names.iter().map(|&c| (shown(c), c)).collect();
    by_width.sort_unstable();
    let mut cuts = Vec::new();
    for (i, &(w, c)) in by_width.iter().enumerate() {
        let share = left / (by_width.len() - i);
        if w <= share {
            left -= w;
        } else {
            let each = share.max(MIN_NAME_CHARS);
            cuts.push((c, each));
            left = left.saturating_sub(each);
        }
    }
    cut_columns(rows, &cuts)
}

/// Cuts column `c` of every row to `max` characters for each `(c, max)` of `cuts`.
fn cut_columns(rows: &mut [Vec<String>], cuts: &[(usize, usize)]) -> bool {
    let mut cut_any = false;
    for &(c, max) in cuts {
        if !rows
            .iter()
            .any(|r| r.get(c).is_some_and(|v| v.chars().count() > max))
        {
            continue;
        }
        let texts: Vec<String> = rows
            .iter()
            .map(|r| r.get(c).cloned().unwrap_or_default())
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (row, cut) in rows.iter_mut().zip(distinct_cuts(&refs, max)) {
            if let Some(cell) = row.get_mut(c) {
                *cell = cut;
            }
        }
        cut_any = true;
    }
    cut_any
}

/// `names` cut to `max` characters each by [`elide_column`]; names that differ but were cut
/// alike (long kernel names sharing both their start and their end) are cut again to show where
/// they differ ([`elide_to_difference`]).
fn distinct_cuts(names: &[&str], max: usize) -> Vec<String> {
    let mut cuts = elide_column(names, max);
    let mut by_cut: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, cut) in cuts.iter().enumerate() {
        by_cut.entry(cut.as_str()).or_default().push(i);
    }
    let clashes: Vec<Vec<usize>> = by_cut
        .into_values()
        .filter(|rows| rows.iter().any(|&i| names[i] != names[rows[0]]))
        .collect();
    for rows in clashes {
        let group: Vec<&str> = rows.iter().map(|&i| names[i]).collect();
        for (&i, at) in rows.iter().zip(differs_at_each(&group)) {
            cuts[i] = elide_to_difference(names[i], max, at);
        }
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::text_table::render;

    fn table() -> (Vec<&'static str>, Vec<Vec<String>>) {
        let long = |s: &str| format!("{s}_{}", "x".repeat(300));
        let rows = vec![
            vec!["12345".into(), long("gemm_a"), "ok".into()],
            vec!["7".into(), long("gemm_b"), "ok".into()],
            vec![
                "5".into(),
                "[CUDA memcpy Host-to-Device]".into(),
                String::new(),
            ],
        ];
        (vec!["Total", "Name", "Flag"], rows)
    }

    #[test]
    fn a_wide_name_is_cut_to_fit_and_rows_stay_apart() {
        let (header, mut rows) = table();
        assert!(fit_rows(&header, &mut rows, Fit::Width(80)));
        let text = render(&header, &rows);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert_ne!(
            rows[0][1], rows[1][1],
            "two names that differ read the same"
        );
        // The narrow text column keeps its width; numbers are never cut.
        assert_eq!(rows[0][2], "ok");
        assert_eq!(rows[1][0], "7");
    }

    #[test]
    fn names_sharing_start_and_end_are_cut_where_they_differ() {
        let name = |mid: &str| {
            let (a, b) = ("x".repeat(200), "y".repeat(200));
            format!("void at::native::kernel<128, 2, {a}{mid}>(int, {b})::{{lambda(int)#1}})")
        };
        let names = [name("add"), name("mul"), name("gelu_backward")];
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(elide_column(&refs, 55)[0], elide_column(&refs, 55)[1]);
        let cuts = distinct_cuts(&refs, 55);
        assert!(cuts.iter().all(|c| c.chars().count() <= 55), "{cuts:?}");
        let mut distinct = cuts.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 3, "{cuts:?}");
    }

    #[test]
    fn wide_keeps_names_and_name_width_caps_them() {
        let (header, rows) = table();
        let mut whole = rows.clone();
        assert!(!fit_rows(&header, &mut whole, Fit::Whole));
        assert_eq!(whole, rows);
        let mut capped = rows.clone();
        fit_rows(&header, &mut capped, Fit::Names(40));
        assert!(capped.iter().flatten().all(|v| v.chars().count() <= 40));
        assert_eq!(Fit::of_args(false, None), Fit::Width(TERMINAL_COLUMNS));
        assert_eq!(Fit::of_args(true, Some(9)), Fit::Whole);
    }
}
