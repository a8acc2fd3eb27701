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

/// Names sharing at least this many characters at their start are one family (see
/// [`differs_at_each`]).
pub const FAMILY_CHARS: usize = 16;
/// Neighbours (in sorted order) looked at on each side when finding a name's family.
const FAMILY_SCAN: usize = 64;

/// For each of `names`, where its family starts to differ: the fewest characters it shares at
/// its start with any name sharing at least [`FAMILY_CHARS`] with it; a name with no such
/// family, the most it shares with any other (0 alone). PyTorch's cuBLAS kernels
/// (`sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize…`, `…_tn_n_tilesize…`) share 33 characters,
/// more than a narrow column shows; shown from there, both the layout (`nn`, `tn`) and the tile
/// size that follows tell them apart.
pub fn differs_at_each(names: &[&str]) -> Vec<usize> {
    let mut distinct: Vec<&str> = names.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let common = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let mut at = std::collections::HashMap::new();
    for (i, x) in distinct.iter().enumerate() {
        let neighbours = (i.saturating_sub(FAMILY_SCAN)..i)
            .rev()
            .chain(i + 1..(i + 1 + FAMILY_SCAN).min(distinct.len()));
        let mut most = 0;
        let mut family_least: Option<usize> = None;
        for j in neighbours {
            let c = common(x, distinct[j]);
            most = most.max(c);
            if c >= FAMILY_CHARS {
                family_least = Some(family_least.map_or(c, |l| l.min(c)));
            }
        }
        at.insert(*x, family_least.unwrap_or(most));
    }
    names
        .iter()
        .map(|n| at.get(n).copied().unwrap_or(0))
        .collect()
}

/// Characters of the start kept before the jump to where a name differs (`sm80…`).
pub const JUMP_HEAD_CHARS: usize = 4;
/// Characters kept before the first one that differs, so the differing part reads in context.
const JUMP_CONTEXT_CHARS: usize = 1;

/// `text` in at most `max_chars` characters, keeping what tells it from a name sharing its first
/// `differs_at` characters: whole when it fits; its start cut at the end when the difference
/// falls inside; else [`JUMP_HEAD_CHARS`] of its start, `…`, and the text from just before the
/// difference on (cut with `…` when still too long).
pub fn elide_to_difference(text: &str, max_chars: usize, differs_at: usize) -> String {
    let n = text.chars().count();
    if n <= max_chars {
        return text.to_string();
    }
    let from = differs_at.saturating_sub(JUMP_CONTEXT_CHARS);
    // Room for the head, two ellipses and a few characters of the difference.
    if differs_at < max_chars.saturating_sub(1)
        || max_chars < JUMP_HEAD_CHARS + 6
        || from <= JUMP_HEAD_CHARS
    {
        return elide(text, max_chars, 0);
    }
    let mut out: String = text.chars().take(JUMP_HEAD_CHARS).collect();
    out.push(ELLIPSIS);
    let room = max_chars - JUMP_HEAD_CHARS - 1;
    let rest: Vec<char> = text.chars().skip(from).collect();
    if rest.len() <= room {
        out.extend(rest);
    } else {
        out.extend(rest.iter().take(room - 1));
        out.push(ELLIPSIS);
    }
    out
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

/// `text` cut to `max_chars` keeping its end: as [`elide`] with [`tail_chars`], except that a
/// cut falling inside a word moves to the word's edge, so the shared words go and the differing
/// one stays whole: `[…Device-to-Host]` or `[CUDA…Device-to-Host]`, never `[C…y Device-to-Host]`.
/// Without a space in the end kept, as [`elide`] cuts.
pub fn elide_keeping_end(text: &str, max_chars: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    if n <= max_chars {
        return text.to_string();
    }
    let tail = tail_chars(max_chars, true);
    let cut = elide(text, max_chars, tail);
    if max_chars < 3 {
        return cut;
    }
    // The end kept starts after the first space inside it (the last words whole).
    let tail_start = n - tail.min(max_chars - 1);
    let Some(space) = (tail_start - 1..n).find(|&i| chars[i] == ' ') else {
        return cut;
    };
    let tail_start = space + 1;
    // The start kept ends at a word's edge: before a space or after a bracket, else one character.
    let room = max_chars - 1 - (n - tail_start);
    let head = (1..=room.min(tail_start))
        .rev()
        .find(|&h| chars.get(h) == Some(&' ') || !chars[h - 1].is_alphanumeric())
        .unwrap_or(1);
    let mut out: String = chars[..head]
        .iter()
        .collect::<String>()
        .trim_end()
        .to_string();
    out.push(ELLIPSIS);
    out.extend(&chars[tail_start..]);
    out
}

/// Every name of a column cut to `max_chars`, at the end or in the middle as
/// [`keeps_end_each`] decides for each.
pub fn elide_column(names: &[&str], max_chars: usize) -> Vec<String> {
    names
        .iter()
        .zip(keeps_end_each(names))
        .map(|(n, end)| match end {
            true => elide_keeping_end(n, max_chars),
            false => elide(n, max_chars, 0),
        })
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
        // Cut at a word's edge, never inside `memcpy` (issue 36 item 10).
        assert_eq!(elide_column(&copies, 20)[1], "[…Device-to-Host]");
        assert_eq!(elide_column(&copies, 21)[1], "[CUDA…Device-to-Host]");
        assert_eq!(elide_keeping_end(copies[0], 24), "[CUDA…Host-to-Device]");
        assert_eq!(elide_keeping_end(copies[2], 20), "[…Device-to-Device]");
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
    fn names_sharing_a_long_start_jump_to_where_they_differ() {
        let gemms = [
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1",
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1",
            "relu_kernel(float *, int)",
        ];
        let at = differs_at_each(&gemms);
        assert_eq!(at, [33, 33, 0]);
        let cut: Vec<String> = gemms
            .iter()
            .zip(&at)
            .map(|(g, &d)| elide_to_difference(g, 24, d))
            .collect();
        assert!(
            cut[0].starts_with("sm80…") && cut[0].contains("_nn_n_tilesize128"),
            "{cut:?}"
        );
        assert!(cut.iter().all(|c| c.chars().count() <= 24), "{cut:?}");
        assert_ne!(cut[0], cut[1]);
        assert!(cut[1].contains("tn_n"), "{cut:?}");
        // A difference inside what fits: the start, as before.
        assert_eq!(elide_to_difference(gemms[2], 12, at[2]), "relu_kernel…");
        assert_eq!(elide_to_difference("short", 12, 3), "short");
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
