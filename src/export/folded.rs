//! CPU samples as folded stacks (`root;…;leaf COUNT`, the format flamegraph.pl, inferno and
//! speedscope read) and as an SVG flame graph drawn by the `inferno` crate from those same lines:
//! what `sightline export TRACE --kinds sample --folded --out FILE[.svg]` writes. The lines come
//! from [`crate::analysis::cpu_samples::folded`].

use std::io::Write;

use crate::analysis::cpu_samples;

/// Does `path` name an SVG file (`.svg`, any case)?
pub fn is_svg_path(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
}

/// Writes the folded lines, one `stack count` per line.
pub fn write_folded(lines: &[(String, u64)], mut out: impl Write) -> std::io::Result<()> {
    out.write_all(cpu_samples::folded_text(lines).as_bytes())?;
    out.flush()
}

/// Draws the folded lines as an SVG flame graph (root at the bottom, as flamegraph.pl draws it),
/// titled `title`, with `subtitle` under it. An error when there are no lines: inferno draws
/// nothing from no samples.
pub fn write_flame_graph_svg(
    lines: &[(String, u64)],
    title: &str,
    subtitle: Option<String>,
    out: impl Write,
) -> std::io::Result<()> {
    if lines.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no CPU samples with a call stack: nothing to draw",
        ));
    }
    let text = cpu_samples::folded_text(lines);
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.subtitle = subtitle;
    options.count_name = "samples".to_string();
    // Colours by a hash of the function name: the same function has the same colour in every
    // graph, and the output does not depend on a random generator.
    options.hash = true;
    inferno::flamegraph::from_lines(&mut options, text.lines(), out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_an_svg_naming_the_functions() {
        let lines = vec![
            ("main;work;inner".to_string(), 3),
            ("main;idle".to_string(), 1),
        ];
        let mut svg = Vec::new();
        let drawn = write_flame_graph_svg(&lines, "CPU samples", None, &mut svg);
        assert!(drawn.is_ok(), "{drawn:?}");
        let svg = String::from_utf8_lossy(&svg);
        assert!(svg.contains("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("inner") && svg.contains("idle"));
        assert!(write_flame_graph_svg(&[], "t", None, &mut Vec::new()).is_err());
        assert!(is_svg_path(std::path::Path::new("a/b.SVG")));
        assert!(!is_svg_path(std::path::Path::new("a/b.folded")));
    }
}
