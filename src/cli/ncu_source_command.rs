//! `sightline summary REPORT.ncu-rep --report ncu_source [--print-source sass|cuda,sass|ptx]
//! [--kernel REGEX] [--launch N]`: ncu's Source page. Gathers the kernels' source data and SASS
//! ([`source_inputs`]: a pass over the report, each function disassembled once with `nvdisasm`
//! from the cubin it stores), then writes the page.

use std::io::Write;

use anyhow::{Context, Result, bail};

use super::{SummaryArgs, load_for_cli};
use crate::analysis::ncu::source::{KernelSelection, source_metric_names};
use crate::export::ncu_pages::source::{SourceInput, SourceView, write};
use crate::load::ncu_rep::source_inputs;
use crate::trace::Needs;

/// The `--report` name of the page.
pub const NAME: &str = "ncu_source";

pub fn print(args: &SummaryArgs) -> Result<i32> {
    let selection =
        KernelSelection::parse(args.kernel.as_deref(), args.launch).map_err(anyhow::Error::msg)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for path in &args.traces {
        let trace = load_for_cli(path, Needs::ALL)?;
        let Some(report) = trace.ncu.as_deref() else {
            bail!(
                "{}: ncu_source is a page of an Nsight Compute report (.ncu-rep); this is an \
                 Nsight Systems trace",
                path.display()
            );
        };
        let ids = selection.select(report);
        let inputs = source_inputs(
            path,
            report,
            &ids,
            &source_metric_names(report),
            args.print_source == SourceView::Sass,
        )
        .with_context(|| format!("{}: reading the source data", path.display()))?;
        for warning in &inputs.warnings {
            eprintln!("warning: {}: {warning}", path.display());
        }
        if args.traces.len() > 1 {
            writeln!(out, "# {}", path.display())?;
        }
        let input = SourceInput {
            data: &inputs.data,
            sass: &inputs.sass,
            lineinfo: &inputs.lineinfo,
            ptx: &inputs.ptx,
        };
        let counts = write(report, &input, args.print_source, &ids, &mut out)?;
        if counts.cuda_not_printed > 0 {
            eprintln!(
                "note: {}: {} kernels have a line table; their CUDA source view is not printed \
                 yet (--print-source sass prints their SASS)",
                path.display(),
                counts.cuda_not_printed
            );
        }
    }
    out.flush()?;
    Ok(0)
}
