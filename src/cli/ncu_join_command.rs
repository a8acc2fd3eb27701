//! `sightline summary TRACE --ncu REPORT --report ncu_join`: one row per profiled kernel of an
//! Nsight Compute report, in ncu's ID order, with the timeline kernel it measured (see
//! [`crate::analysis::ncu::join`] for what is matched on). Also loads the report for the other
//! commands that take `--ncu`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use super::{Format, analysis_commands};
use crate::analysis::ncu::{self, NcuJoin};
use crate::load;
use crate::trace::ncu::NcuReport;
use crate::trace::{Needs, Trace};

/// The report's name in `--report`.
pub const REPORT_NAME: &str = "ncu_join";

/// Header of `--report ncu_join`.
pub const COLUMNS: [&str; 8] = [
    "ID",
    "Kernel Name",
    "Matched",
    "Correlation ID",
    "Start (ns)",
    "Duration (ns)",
    "Device",
    "Stream",
];

/// What the join reads of the trace: kernels with their place and shape, and the launching calls
/// with the NVTX ranges around them (the NVTX check).
pub const NEEDS: Needs = Needs::KERNELS
    .union(Needs::KERNEL_CONFIG)
    .union(Needs::GPU_LINKS)
    .union(Needs::API_CALLS)
    .union(Needs::NVTX);

/// Takes `ncu_join` out of a `--report` list: (asked for, the other names).
pub fn take_ncu_join(reports: &str) -> (bool, String) {
    let names: Vec<&str> = reports.split(',').map(str::trim).collect();
    let rest: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| *n != REPORT_NAME)
        .collect();
    (rest.len() != names.len(), rest.join(","))
}

/// Loads an Nsight Compute report for a command, printing its load warnings on stderr.
pub fn load_ncu_report(path: &Path) -> Result<NcuReport> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let control = load::LoadControl {
        progress: &|_| {},
        cancel: &cancel,
        needs: Needs::ALL,
    };
    let report = load::ncu_rep::load_report(path, &control)
        .with_context(|| format!("cannot read the Nsight Compute report {}", path.display()))?;
    for line in report.warnings.messages() {
        eprintln!("warning: {}: {line}", path.display());
    }
    Ok(report)
}

/// The rows of `ncu_join`, in ncu's ID order.
pub fn rows(trace: &Trace, report: &NcuReport, join: &NcuJoin) -> Vec<Vec<String>> {
    let k = &trace.kernels;
    report
        .workloads
        .iter()
        .zip(&join.matches)
        .map(|(w, m)| {
            let mut row = vec![
                w.id.to_string(),
                w.display_name().to_string(),
                if m.outcome.is_matched() { "yes" } else { "no" }.to_string(),
            ];
            match m.kernel.map(|i| i as usize) {
                Some(i) if i < k.spans.len() => {
                    let stream = ncu::join::stream_key_of_kernel(trace, i);
                    row.extend([
                        k.correlation_id
                            .get(i)
                            .map_or(String::new(), u32::to_string),
                        k.spans.start_ns[i].to_string(),
                        k.spans.duration_ns(i).to_string(),
                        stream.map_or(String::new(), |s| s.device.to_string()),
                        stream.map_or(String::new(), |s| s.stream.to_string()),
                    ]);
                }
                _ => row.extend(std::iter::repeat_n(String::new(), 5)),
            }
            row
        })
        .collect()
}

/// Prints `ncu_join`, and on stderr how many workloads matched and why the others did not.
pub fn print_ncu_join(
    trace: &Trace,
    report: &NcuReport,
    format: Format,
    titled: bool,
    fit: crate::export::fit_width::Fit,
    out: &mut impl Write,
) -> Result<()> {
    let join = ncu::join(trace, report);
    let rows = rows(trace, report, &join);
    eprintln!(
        "ncu_join: {} of {} profiled kernels matched to {}",
        join.matched_count(),
        report.workloads.len(),
        trace.path.display()
    );
    for m in join
        .matches
        .iter()
        .filter(|m| !m.outcome.is_matched())
        .take(1)
    {
        eprintln!("ncu_join: unmatched, e.g.: {}", m.outcome.label());
    }
    for note in &join.notes {
        eprintln!("ncu_join: note: {note}");
    }
    analysis_commands::write_rows(
        &COLUMNS,
        &rows,
        format,
        titled.then_some(REPORT_NAME),
        "Nsight Compute kernels on the timeline",
        fit,
        out,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_join_is_taken_out_of_the_list() {
        assert_eq!(take_ncu_join("ncu_join"), (true, String::new()));
        assert_eq!(
            take_ncu_join("cuda_gpu_kern_sum, ncu_join"),
            (true, "cuda_gpu_kern_sum".to_string())
        );
        assert_eq!(take_ncu_join("all"), (false, "all".to_string()));
    }
}
