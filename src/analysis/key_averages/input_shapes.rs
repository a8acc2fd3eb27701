//! `str(input_shapes)` as PyTorch prints it, from the `Input Dims` text of a Kineto trace: the
//! key `key_averages(group_by_input_shape=True)` groups by.

/// `str(input_shapes)` for the `Input Dims` text of a trace. PyTorch's `shapes()` holds one list
/// of sizes per argument and an empty one for anything else, a list of tensors included, where
/// the trace's `Input Dims` writes the list's shapes (`[[[244, 512], [261, 512]], []]` is keyed
/// `[[], []]`); Python prints `, ` between items. No text (a kernel, a CUDA call) is `[]`.
pub fn python_input_shapes(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "[]".to_string();
    }
    match parse_shapes(text) {
        Some(args) => {
            let args: Vec<String> = args
                .iter()
                .map(|sizes| match sizes {
                    Some(sizes) => format!("[{}]", sizes.join(", ")),
                    None => "[]".to_string(),
                })
                .collect();
            format!("[{}]", args.join(", "))
        }
        None => text.to_string(),
    }
}

/// One argument of an `Input Dims` text: its sizes, `None` when it nests lists.
type ArgumentSizes<'a> = Option<Vec<&'a str>>;

/// The arguments of an `Input Dims` text; `None` when the text is not a list of lists.
fn parse_shapes(text: &str) -> Option<Vec<ArgumentSizes<'_>>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut nested = false;
    let mut arg_start = None;
    for (k, ch) in inner.char_indices() {
        match ch {
            '[' => {
                if depth == 0 {
                    arg_start = Some(k);
                    nested = false;
                } else {
                    nested = true;
                }
                depth += 1;
            }
            ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let body = inner.get(arg_start? + 1..k)?;
                    args.push(if nested {
                        None
                    } else {
                        let sizes: Vec<&str> = body
                            .split(',')
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .collect();
                        if sizes.iter().any(|s| s.parse::<i64>().is_err()) {
                            return None;
                        }
                        Some(sizes)
                    });
                    arg_start = None;
                }
            }
            ',' | ' ' if depth == 0 => {}
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    (depth == 0).then_some(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn shapes_text_is_reprinted_or_kept() {
        assert_eq!(python_input_shapes(""), "[]");
        assert_eq!(python_input_shapes("[]"), "[]");
        assert_eq!(
            python_input_shapes("[[], [8,256], []]"),
            "[[], [8, 256], []]"
        );
        assert_eq!(python_input_shapes("[[[1], [2]], [[]]]"), "[[], []]");
        assert_eq!(python_input_shapes("not a list"), "not a list");
        assert_eq!(python_input_shapes("[[1, x]]"), "[[1, x]]");
        assert_eq!(python_input_shapes("[[1]"), "[[1]");
    }
}
