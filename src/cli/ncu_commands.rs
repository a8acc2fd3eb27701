//! The command line's Nsight Compute pages: `sightline summary REPORT.ncu-rep --report ncu_raw`
//! (also `ncu_details`, `ncu_summary`) prints what `ncu --import REPORT --csv` prints (the details
//! page, without `--format csv`, as ncu prints it for a terminal), and the clear errors when an ncu page is asked of an Nsight Systems trace or an nsys report of an
//! ncu report.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};

use super::load_for_cli;
use crate::export::ncu_pages::{self, NcuPage};
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

/// Prints ncu pages of each report in turn: CSV, but the details page, which prints as ncu
/// prints it for a terminal unless `--format csv` asks for its CSV. `--kernel` / `--launch`
/// pick the details page's kernels (as for `ncu_source`).
pub fn print_pages(args: &super::SummaryArgs, pages: &[NcuPage]) -> Result<i32> {
    let selection =
        crate::analysis::ncu::source::KernelSelection::parse(args.kernel.as_deref(), args.launch)
            .map_err(anyhow::Error::msg)?;
    let filtered = args.kernel.is_some() || args.launch.is_some();
    if filtered && pages.iter().any(|&p| p != NcuPage::Details) {
        bail!("--kernel and --launch pick the kernels of ncu_details and ncu_source only");
    }
    let csv = args.format == super::Format::Csv;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    for path in &args.traces {
        let trace = load_for_cli(path, Needs::ALL)?;
        let Some(report) = trace.ncu.as_deref() else {
            bail!(
                "{}: the ncu pages ({}) are pages of an Nsight Compute report (.ncu-rep); this \
                 is an Nsight Systems trace (its reports: sightline summary --help-reports)",
                path.display(),
                NcuPage::NAMES.join(", ")
            );
        };
        if args.traces.len() > 1 {
            writeln!(out, "# {}", path.display())?;
        }
        let ids = filtered.then(|| selection.select(report));
        if ids.as_ref().is_some_and(|ids| ids.is_empty()) {
            eprintln!(
                "note: {}: no kernel matches --kernel / --launch",
                path.display()
            );
        }
        for &page in pages {
            if page == NcuPage::Details && !csv {
                ncu_pages::details_text::write(report, args.print_units, ids.as_deref(), &mut out)?;
            } else {
                ncu_pages::write_page(report, page, args.print_units, ids.as_deref(), &mut out)?;
            }
        }
    }
    out.flush()?;
    Ok(0)
}
