//! `sightline summary REPORT.ncu-rep --report ncu_source [--print-source sass|cuda,sass|ptx]
//! [--kernel REGEX] [--launch N]`: ncu's Source page. Gathers the kernels' source data and SASS
//! ([`source_inputs_for`]: a pass over the report, each function disassembled once with
//! `nvdisasm` from the cubin it stores; for the CUDA view only the functions with a line table,
//! and their line tables), then writes the page.

use std::io::Write;

use anyhow::{Context, Result, bail};

use super::{SummaryArgs, load_for_cli};
use crate::analysis::ncu::source::{KernelSelection, source_metric_names};
use crate::export::ncu_pages::source::{SourceInput, SourceView, write};
use crate::load::ncu_rep::{Disassemble, source_inputs_for};
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
        let disassemble = match args.print_source {
            SourceView::Sass => Disassemble::All,
            SourceView::CudaSass => Disassemble::WithLineTables,
            SourceView::Ptx => Disassemble::Nothing,
        };
        let inputs = source_inputs_for(
            path,
            report,
            &ids,
            &source_metric_names(report),
            disassemble,
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
            lines: &inputs.lines,
        };
        let counts = write(report, &input, args.print_source, &ids, &mut out)?;
        if counts.cuda_not_printed > 0 {
            eprintln!(
                "note: {}: {} kernels have lines in CUDA source files the report does not hold \
                 (profile with --import-source yes); those lines are not printed",
                path.display(),
                counts.cuda_not_printed
            );
        }
    }
    out.flush()?;
    Ok(0)
}
