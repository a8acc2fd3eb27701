//! `sightline diff BASE NEW`: one report's per-name deltas between two runs (two Nsight Compute
//! reports: [`super::ncu_diff_command`]), or `--report
//! headline` for whole-run figures, optionally per step (`--per-step REGEX`: divided by the
//! number of NVTX ranges matching REGEX in each run). The headline's iterations are those of
//! `--per-step`, else of the outermost repeated NVTX range both runs have (as the compare view
//! aligns on). The arithmetic is [`crate::analysis::diff`] and [`crate::analysis::headline`];
//! this file loads, computes the reports and prints.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Result, bail};
use regex::Regex;

use super::analysis_commands::{ExclusionArgs, apply_exclusion};
use super::{Format, load_for_cli, parse_range_arg, report_commands};
use crate::analysis::align::{self, Alignment};
use crate::analysis::diff;
use crate::analysis::headline::{self, Figure, Iteration};
use crate::analysis::{self, Filter, NsysFormat, ReportInput, Table, TimeRange};
use crate::export::{nsys_csv, text_table};
use crate::trace::Trace;

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The baseline trace; with `--run`, a rank of the run (`0`, `rank:0` or `rank0`).
    pub base: PathBuf,
    /// The new (optimised) trace; with `--run`, a rank of the run.
    pub new: PathBuf,
    /// The traces of one run (files or folders, as `sightline ranks` takes them): BASE and NEW
    /// are then two of its ranks, found as `sightline ranks` finds them (distributedInfo, the
    /// process environment, the file name).
    #[arg(long, num_args = 1.., value_name = "TRACE")]
    pub run: Vec<PathBuf>,
    /// Report to compare per name (`cuda_gpu_kern_sum`, `cuda_api_sum`, `cuda_gpu_mem_time_sum`,
    /// `cuda_gpu_mem_size_sum`, `nvtx_sum`, `nvtx_gpu_proj_sum`, …), or `headline`. Default: the
    /// headline, then the kernels (`cuda_gpu_kern_sum`); with `--format csv`, the kernels.
    #[arg(long)]
    pub report: Option<String>,
    /// Divide counts and totals by the number of NVTX ranges matching REGEX in each run (runs of
    /// different length then compare per iteration).
    #[arg(long, value_name = "REGEX")]
    pub per_step: Option<String>,
    /// Only events starting in START:END, in both runs.
    #[arg(long)]
    pub range: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Compute the report as this Nsight Systems release prints it, in both runs: `2023.4` or
    /// `2025.3`. Default: the newer of the two runs' defaults (each the newest of these not newer
    /// than the nsys that wrote it), so both name NVTX ranges alike.
    #[arg(long, value_name = "RELEASE", value_parser = NsysFormat::parse)]
    pub nsys_format: Option<NsysFormat>,
    #[command(flatten)]
    pub exclusion: ExclusionArgs,
}

/// One loaded run with what the diff needs of it.
struct Run {
    trace: Trace,
    exclusion: Option<analysis::WarmupExclusion>,
}

impl Run {
    fn filter(&self, range: TimeRange) -> Filter<'_> {
        Filter {
            range,
            excluded: self.exclusion.as_ref().map(|e| &e.excluded),
        }
    }
}

/// Whole-run figures of one run.
fn headline_of(run: &Run, range: TimeRange, iteration: Option<&Iteration>) -> Vec<Figure> {
    headline::headline(&run.trace, &run.filter(range), iteration)
}

/// The headline's iteration range: `--per-step`'s, else the outermost repeated NVTX range of
/// both runs (the compare view's default alignment), said on stderr.
fn iteration_of(per_step: Option<(&str, &Regex)>, base: &Run, new: &Run) -> Option<Iteration> {
    if let Some((text, regex)) = per_step {
        return Some(Iteration {
            label: text.to_string(),
            regex: regex.clone(),
        });
    }
    let Alignment::Nvtx { name, .. } = align::default_alignment(&base.trace, &new.trace) else {
        return None;
    };
    let regex = align::instance_regex(&name)?;
    eprintln!(
        "note: iterations: '{name}', the outermost repeated NVTX range of both runs \
         (--per-step REGEX chooses others)"
    );
    Some(Iteration { label: name, regex })
}

pub fn diff(args: &DiffArgs) -> Result<i32> {
    if args.run.is_empty()
        && (super::ncu_diff_command::is_ncu_report(&args.base)
            || super::ncu_diff_command::is_ncu_report(&args.new))
    {
        return super::ncu_diff_command::diff_reports(&args.base, &args.new, args.format);
    }
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = args.exclusion.rules()?;
    let step = match &args.per_step {
        Some(p) => Some(
            Regex::new(p)
                .map_err(|e| anyhow::anyhow!("--per-step '{p}' is not a valid regex: {e}"))?,
        ),
        None => None,
    };
    let report = args.report.as_deref().unwrap_or("cuda_gpu_kern_sum");
    // Without --report a table leads with the whole-run story, then the kernels.
    let lead_with_headline = args.report.is_none() && args.format == Format::Table;
    let headline = report == "headline";
    let request = if headline {
        None
    } else {
        let mut r = report_commands::parse_reports(report)?;
        if r.len() != 1 {
            bail!("diff compares one report at a time (got '{report}')");
        }
        r.pop()
    };
    let load = |path: &PathBuf| -> Result<Run> {
        let trace = load_for_cli(path, crate::trace::Needs::ALL)?;
        let exclusion = apply_exclusion(&trace, &rules);
        Ok(Run { trace, exclusion })
    };
    let (base_path, new_path) = if args.run.is_empty() {
        (args.base.clone(), args.new.clone())
    } else {
        super::run_files::two_ranks(&args.run, &args.base, &args.new)?
    };
    // What the table's title calls each: the paths given, or with `--run` the rank and its file.
    let label = |given: &PathBuf, path: &PathBuf| -> String {
        if args.run.is_empty() {
            given.display().to_string()
        } else {
            let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
            format!("{} ({})", given.display(), file.unwrap_or_default())
        }
    };
    let (base_label, new_label) = (label(&args.base, &base_path), label(&args.new, &new_path));
    let (base, new) = (load(&base_path)?, load(&new_path)?);
    let headline_rows = || {
        let per_step = args.per_step.as_deref().zip(step.as_ref());
        let iteration = iteration_of(per_step, &base, &new);
        let b = headline_of(&base, range, iteration.as_ref());
        let n = headline_of(&new, range, iteration.as_ref());
        headline::headline_rows(&b, &n)
    };
    let print_headline = |rows: &[diff::HeadlineRow]| -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "\n {base_label} vs {new_label} (headline):\n")?;
        out.write_all(headline_text_table(rows).as_bytes())?;
        Ok(())
    };
    if lead_with_headline {
        print_headline(&headline_rows())?;
    }

    let table = if let Some(request) = request {
        let nsys_format = args
            .nsys_format
            .unwrap_or_else(|| NsysFormat::of_traces(&[&base.trace, &new.trace]));
        let compute = |run: &Run| -> Table {
            request.report.compute(&ReportInput {
                trace: &run.trace,
                filter: &run.filter(range),
                options: &request.options,
                with_events: false,
                row_limit: None,
                nsys_format,
                sink: None,
            })
        };
        let (mut bt, mut nt) = (compute(&base), compute(&new));
        if base.trace.format != new.trace.format {
            // Two demanglers spell one kernel two ways: compare them in one spelling.
            diff::canonical_kernel_names(request.report.name(), &mut bt);
            diff::canonical_kernel_names(request.report.name(), &mut nt);
        }
        let unit = diff::diff_columns(&bt)
            .or_else(|| diff::diff_columns(&nt))
            .map(|c| c.unit)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} has no name, count and total columns to compare",
                    request.report.name()
                )
            })?;
        let steps = match &step {
            Some(re) => {
                let count =
                    |run: &Run| headline::step_durations(&run.trace, &run.filter(range), re).len();
                let (b, n) = (count(&base), count(&new));
                if b == 0 || n == 0 {
                    bail!(
                        "--per-step '{}': {} has {b} and {} has {n} matching NVTX ranges",
                        re.as_str(),
                        args.base.display(),
                        args.new.display()
                    );
                }
                eprintln!(
                    "note: per step: {b} steps in {}, {n} in {}",
                    args.base.display(),
                    args.new.display()
                );
                Some((b as f64, n as f64))
            }
            None => None,
        };
        let rows = diff::diff(&bt, &nt, steps).map_err(anyhow::Error::msg)?;
        diff::diff_table(&rows, unit, steps.is_some())
    } else {
        let rows = headline_rows();
        if args.format == Format::Table {
            print_headline(&rows)?;
            return Ok(0);
        }
        diff::headline_table(&rows)
    };

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Csv => nsys_csv::write_table_csv(&table, &mut out)?,
        Format::Table => {
            writeln!(out, "\n {base_label} vs {new_label} ({report}):\n")?;
            let header: Vec<&str> = table.columns.iter().map(String::as_str).collect();
            let text = text_table::render(&header, &nsys_csv::table_text_rows(&table));
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(0)
}

/// The headline as people read it: values with units, the change, its percent; value columns
/// right-aligned.
fn headline_text_table(rows: &[diff::HeadlineRow]) -> String {
    let header = ["Metric", "Base", "New", "Delta", "Delta (%)"];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let t = headline::headline_text(r);
            vec![t.metric, t.base, t.new, t.delta, t.delta_percent]
        })
        .collect();
    text_table::render_aligned(&header, &cells, &[false, true, true, true, true])
}
