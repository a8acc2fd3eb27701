//! `sightline report TRACE [--baseline BASE] --out FILE.html`: the one-page HTML report of a run
//! ([`crate::report`]), compared with a baseline when given. This file loads, applies the range
//! and warm-up exclusion, and writes the page.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use super::analysis_commands::apply_exclusion;
use super::{load_for_cli, parse_range_arg};
use crate::analysis::ExclusionRule;
use crate::report::{self, RunInput};
use crate::trace::Needs;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The trace (.sqlite export, .nsys-rep when nsys is on PATH, or a PyTorch profiler trace).
    pub trace: PathBuf,
    /// A baseline run to compare with: every metric and top table side by side, with deltas.
    #[arg(long, value_name = "BASE")]
    pub baseline: Option<PathBuf>,
    /// Where to write the page (FILE.html).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Leave out everything attributed to NVTX ranges named warmup / warm-up / warm_up (any
    /// case), in both runs.
    #[arg(long)]
    pub exclude_warmup: bool,
    /// Only events starting in START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us), in both
    /// runs. Default: the whole trace.
    #[arg(long)]
    pub range: Option<String>,
    /// An Nsight Compute report (.ncu-rep, .ncu-rep.gz) of the same program as TRACE: fills the
    /// Memory bandwidth (DRAM) row from the profiled kernels when the trace has no GPU metrics, and
    /// adds the charts (occupancy, hierarchical roofline) of the profiled kernels that took the
    /// most time on the timeline.
    #[arg(long, value_name = "REPORT")]
    pub ncu: Option<PathBuf>,
}

pub fn report(args: &ReportArgs) -> Result<i32> {
    let ext = args
        .out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if !matches!(ext.as_deref(), Some("html" | "htm")) {
        bail!(
            "--out {}: the file name must end in .html",
            args.out.display()
        );
    }
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = if args.exclude_warmup {
        vec![ExclusionRule::WarmupNames]
    } else {
        Vec::new()
    };
    let trace = load_for_cli(&args.trace, Needs::ALL)?;
    let exclusion = apply_exclusion(&trace, &rules);
    let base = match &args.baseline {
        Some(path) => {
            let t = load_for_cli(path, Needs::ALL)?;
            let e = apply_exclusion(&t, &rules);
            Some((t, e))
        }
        None => None,
    };
    let input = |trace, exclusion| RunInput {
        trace,
        range,
        exclusion,
        pictures: true,
    };
    let mut built = report::build(
        input(&trace, exclusion.as_ref()),
        base.as_ref().map(|(t, e)| input(t, e.as_ref())),
    );
    if let Some(path) = &args.ncu {
        let ncu = super::ncu_join_command::load_ncu_report(path)?;
        let join = crate::analysis::ncu::join(&trace, &ncu);
        eprintln!(
            "{}: {} of {} profiled kernels matched to {}",
            path.display(),
            join.matched_count(),
            ncu.workloads.len(),
            args.trace.display()
        );
        report::ncu_dram::fill_dram_from_ncu(&mut built.run, &trace, &ncu, &join);
        built.run.ncu_kernels = report::ncu_charts::gather(&trace, &ncu, &join);
    }
    let page = report::html::page(&built);
    std::fs::write(&args.out, page)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    eprintln!("wrote {}", args.out.display());
    Ok(0)
}
