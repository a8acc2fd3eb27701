//! A rule message's text as ncu prints it. Rules write links in their messages
//! (`@section:LaunchStats:Launch Statistics@`, `@url:Profiling Guide:https://…@`); ncu's
//! details page shows a section link as its label and a web link as `label (address)`.

/// `text` with ncu's `@kind:…@` links written out.
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('@') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('@') else {
            break;
        };
        let link = &after[..end];
        let shown = match link.split_once(':') {
            Some(("url", body)) => match body.split_once(':') {
                Some((label, address)) => Some(format!("{label} ({address})")),
                None => Some(body.to_string()),
            },
            Some((kind, body)) if kind.chars().all(|c| c.is_ascii_alphabetic()) => Some(
                body.rsplit_once(':')
                    .map_or(body, |(_, label)| label)
                    .to_string(),
            ),
            _ => None,
        };
        match shown {
            Some(s) => {
                out.push_str(&rest[..start]);
                out.push_str(&s);
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[..=start]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::plain;

    /// Kernel 0 of `ncu_moe_full`, as ncu's details page prints the messages.
    #[test]
    fn links_read_as_ncu_prints_them() {
        assert_eq!(
            plain("Look at @section:LaunchStats:Launch Statistics@ for more details."),
            "Look at Launch Statistics for more details."
        );
        assert_eq!(
            plain("See the @url:Profiling Guide:https://docs.nvidia.com/x.html#roofline@ for more"),
            "See the Profiling Guide (https://docs.nvidia.com/x.html#roofline) for more"
        );
        assert_eq!(plain("a@b and 3 @ 4"), "a@b and 3 @ 4");
    }
}
