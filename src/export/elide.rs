//! Shortening names to a width without losing what tells rows apart. A name is cut where it
//! agrees with the other names of its column: kernel names differ early and keep their start
//! (`fill_random_kernel(fl…`), while `[CUDA memcpy Host-to-Device]` and `[CUDA memcpy
//! Device-to-Host]` share their start and keep their end (`[CUDA…Device-to-Host]`). The terminal
//! tables cut by characters ([`elide_column`]); the window measures pixels and asks
//! [`keeps_end_each`] only which part to keep.

/// The ellipsis put where text was cut.
pub const ELLIPSIS: char = '…';

/// Share of the characters kept at the end when the end tells names apart: most of it, after a
/// few characters of the start (`[CUDA…`).
pub const END_SHARE: f32 = 0.7;

/// For each of `names`, whether it is told apart from the column's other names by its end
/// rather than its start: it shares a longer start than end with another name (the longest
/// common prefix and suffix with any other distinct name; a name alone keeps its start). nsys's
/// names of copies and memsets (`[CUDA memcpy Host-to-Device]`, in brackets) always keep their
/// end, where their direction is.
pub fn keeps_end_each(names: &[&str]) -> Vec<bool> {
    let mut distinct: Vec<&str> = names.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    // The longest common prefix of a name with any other is with a neighbour in sorted order.
    let longest = |sorted: &[String]| -> std::collections::HashMap<String, usize> {
        let mut out = std::collections::HashMap::new();
        for (i, x) in sorted.iter().enumerate() {
            let before = i.checked_sub(1).map_or(0, |j| common(&sorted[j], x));
            let after = sorted.get(i + 1).map_or(0, |y| common(x, y));
            out.insert(x.clone(), before.max(after));
        }
        out
    };
    let forward: Vec<String> = distinct.iter().map(|s| s.to_string()).collect();
    let prefix = longest(&forward);
    let mut backward: Vec<String> = distinct.iter().map(|s| s.chars().rev().collect()).collect();
    backward.sort_unstable();
    let suffix = longest(&backward);
    names
        .iter()
        .map(|n| {
            let p = prefix.get(*n).copied().unwrap_or(0);
            let rev: String = n.chars().rev().collect();
            let s = suffix.get(&rev).copied().unwrap_or(0);
            p > s || (n.starts_with('[') && n.ends_with(']'))
        })
        .collect()
}

/// `text` in at most `max_chars` characters: whole when it fits, else its start, `…`, and its
/// last `tail` characters (`tail` 0: cut at the end).
pub fn elide(text: &str, max_chars: usize, tail: usize) -> String {
    let n = text.chars().count();
    if n <= max_chars {
        return text.to_string();
    }
    if max_chars == 0 {
        return String::new();
    }
    let tail = tail.min(max_chars - 1);
    let head = max_chars - 1 - tail;
    let mut out: String = text.chars().take(head).collect();
    out.push(ELLIPSIS);
    out.extend(text.chars().skip(n - tail));
    out
}

/// Characters a name that keeps its end keeps of it at least, room permitting: the direction
/// of nsys's longest copy name, `Device-to-Device]`.
pub const MIN_TAIL_CHARS: usize = 17;

/// The characters [`elide`] keeps at the end of a name cut to `max_chars` in a column whose
/// names keep their end (`keep_end`; else 0): [`END_SHARE`] of them, at least
/// [`MIN_TAIL_CHARS`], and one character of the start (`[…Device-to-Host]`).
pub fn tail_chars(max_chars: usize, keep_end: bool) -> usize {
    if !keep_end {
        return 0;
    }
    let share = ((max_chars.saturating_sub(1)) as f32 * END_SHARE).round() as usize;
    share.max(MIN_TAIL_CHARS).min(max_chars.saturating_sub(2))
}

/// Every name of a column cut to `max_chars`, at the end or in the middle as
/// [`keeps_end_each`] decides for each.
pub fn elide_column(names: &[&str], max_chars: usize) -> Vec<String> {
    names
        .iter()
        .zip(keeps_end_each(names))
        .map(|(n, end)| elide(n, max_chars, tail_chars(max_chars, end)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_keep_their_end_and_kernels_their_start() {
        let copies = [
            "[CUDA memcpy Host-to-Device]",
            "[CUDA memcpy Device-to-Host]",
            "[CUDA memcpy Device-to-Device]",
            "[CUDA memset]",
        ];
        assert!(keeps_end_each(&copies)[..3].iter().all(|&e| e));
        let cut = elide_column(&copies, 20);
        assert!(cut.iter().all(|c| c.chars().count() <= 20), "{cut:?}");
        let mut distinct = cut.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "{cut:?}");
        assert!(cut[1].ends_with("Device-to-Host]"), "{cut:?}");
        assert_eq!(elide_column(&copies, 17)[1], "[…Device-to-Host]");
        let kernels = [
            "fill_random_kernel(float *, int, unsigned int)",
            "void gemm_tiled_kernel<(int)16>(const float *, const float *, float *, int)",
            "relu_kernel(float *, int)",
        ];
        assert!(keeps_end_each(&kernels).iter().all(|&e| !e));
        assert_eq!(elide_column(&kernels, 12)[0], "fill_random…");
        assert_eq!(keeps_end_each(&["only one"]), [false]);
        // In one column, a copy keeps its end and a kernel its start.
        let mixed = [copies[0], copies[1], kernels[0]];
        assert_eq!(keeps_end_each(&mixed), [true, true, false]);
    }

    #[test]
    fn elide_fits_and_keeps_short_text() {
        assert_eq!(elide("abc", 4, 2), "abc");
        assert_eq!(elide("abcdefgh", 5, 2), "ab…gh");
        assert_eq!(elide("abcdefgh", 5, 0), "abcd…");
        assert_eq!(elide("abcdefgh", 1, 3), "…");
        assert_eq!(elide("abcdefgh", 0, 0), "");
        assert_eq!(elide("αβγδεζ", 4, 1), "αβ…ζ");
    }
}
