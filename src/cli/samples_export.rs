//! `sightline export TRACE --kinds sample --folded --out FILE`: the CPU samples of the range as
//! folded stacks, or as an SVG flame graph (drawn by `inferno`) when FILE ends in `.svg`.

use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::analysis::{TimeRange, cpu_samples};
use crate::export::folded;
use crate::trace::Trace;

/// Says on stderr that warm-up exclusion does not reach CPU samples (they follow `--range` only),
/// when exclusion flags were given.
pub fn note_samples_not_excluded(excluding: bool) {
    if excluding {
        eprintln!(
            "note: warm-up exclusion does not apply to CPU samples; they follow --range only"
        );
    }
}

/// Writes the folded stacks (or the SVG) of every thread's samples taken in `range` to `out`.
pub fn export_folded(trace: &Trace, range: TimeRange, excluding: bool, out: &Path) -> Result<i32> {
    note_samples_not_excluded(excluding);
    let samples = cpu_samples::samples_in(
        trace,
        range.start_ns.unwrap_or(i64::MIN),
        range.end_ns.unwrap_or(i64::MAX),
        None,
    );
    let lines = cpu_samples::folded(trace, &samples);
    let with_stack: u64 = lines.iter().map(|l| l.1).sum();
    let svg = folded::is_svg_path(out);
    if svg && lines.is_empty() {
        bail!(
            "{}: no CPU samples with a call stack{}: no flame graph to draw",
            trace.path.display(),
            if range == TimeRange::ALL {
                ""
            } else {
                " in the range"
            }
        );
    }
    let file =
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let writer = std::io::BufWriter::new(file);
    let written = if svg {
        let name = trace
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let subtitle = format!("{name}: {with_stack} samples");
        folded::write_flame_graph_svg(&lines, "CPU samples", Some(subtitle), writer)
    } else {
        folded::write_folded(&lines, writer)
    };
    written.with_context(|| format!("writing {} failed", out.display()))?;
    let without = (samples.len() as u64).saturating_sub(with_stack);
    eprintln!(
        "wrote {} {} ({with_stack} samples; {without} without a call stack left out) to {}",
        lines.len(),
        if svg {
            "stacks as a flame graph"
        } else {
            "folded stacks"
        },
        out.display()
    );
    Ok(0)
}
