//! The command line's Nsight Compute pages: `sightline summary REPORT.ncu-rep --report ncu_raw`
//! (also `ncu_details`, `ncu_summary`) prints what `ncu --import REPORT --csv` prints, and the
//! clear errors when an ncu page is asked of an Nsight Systems trace or an nsys report of an
//! ncu report.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};

use super::load_for_cli;
use crate::export::ncu_pages::{self, NcuPage, UnitMode};
use crate::trace::{Needs, Trace, TraceFormat};

/// The ncu pages a `--report` list asks for; `None` when it names none. A list that mixes ncu
/// pages and nsys reports is refused.
pub fn requested_pages(report: &str) -> Result<Option<Vec<NcuPage>>> {
    let names: Vec<&str> = report.split(',').map(str::trim).collect();
    let pages: Vec<NcuPage> = names
        .iter()
        .filter_map(|n| NcuPage::from_report_name(n))
        .collect();
    if pages.is_empty() {
        return Ok(None);
    }
    if pages.len() != names.len() {
        bail!(
            "--report '{report}': the ncu pages ({}) are not printed together with nsys reports",
            NcuPage::NAMES.join(", ")
        );
    }
    Ok(Some(pages))
}

/// Refuses an nsys report of an Nsight Compute report, naming the pages it has.
pub fn refuse_nsys_report(trace: &Trace, path: &Path) -> Result<()> {
    if trace.format == TraceFormat::NsightCompute {
        bail!(
            "{}: an Nsight Compute report has no nsys reports; ask for one of its pages: \
             --report {}",
            path.display(),
            NcuPage::NAMES.join(", --report ")
        );
    }
    Ok(())
}

/// Prints ncu pages of each report in turn (CSV whatever `--format` says: ncu's pages are
/// CSV).
pub fn print_pages(paths: &[std::path::PathBuf], pages: &[NcuPage], mode: UnitMode) -> Result<i32> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    for path in paths {
        let trace = load_for_cli(path, Needs::ALL)?;
        let Some(report) = trace.ncu.as_deref() else {
            bail!(
                "{}: the ncu pages ({}) are pages of an Nsight Compute report (.ncu-rep); this \
                 is an Nsight Systems trace (its reports: sightline summary --help-reports)",
                path.display(),
                NcuPage::NAMES.join(", ")
            );
        };
        if paths.len() > 1 {
            writeln!(out, "# {}", path.display())?;
        }
        for &page in pages {
            ncu_pages::write_page(report, page, mode, &mut out)?;
        }
    }
    out.flush()?;
    Ok(0)
}
