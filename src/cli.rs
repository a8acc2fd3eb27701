//! The command line: `sightline [TRACE]` opens the window; subcommands print reports for servers
//! with no display. Everything here prints; nothing draws.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::{self, Filter, Report, TimeRange};
use crate::export::{nsys_csv, text_table};
use crate::load;

mod analysis_commands;
pub use analysis_commands::{ExclusionArgs, ExportArgs, GapsArgs};
mod perf_commands;
pub use perf_commands::{BenchArgs, GenTraceArgs};

#[derive(Parser, Debug)]
#[command(
    name = "sightline",
    version,
    about = "A light, fast viewer for Nsight Systems traces (nsys export --type=sqlite)",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Trace to open in the window (.sqlite export, or .nsys-rep when nsys is on PATH).
    pub trace: Option<PathBuf>,
    /// Register Sightline with the desktop (XDG): opens *.nsys-rep, "Open with" for .sqlite.
    #[arg(long, conflicts_with = "uninstall_desktop")]
    pub install_desktop: bool,
    /// Remove what --install-desktop wrote.
    #[arg(long)]
    pub uninstall_desktop: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the `nsys stats` summary reports of a trace.
    Summary(SummaryArgs),
    /// List GPU idle gaps (no kernel, memcpy or memset on any stream), longest first.
    Gaps(GapsArgs),
    /// Write the events of a trace (or of a range) to a CSV file, one row per event.
    Export(ExportArgs),
    /// Write a synthetic trace with the schema of a real export (for benchmarks and tests).
    GenTrace(GenTraceArgs),
    /// Load a trace and report load time against a bare SQLite scan, memory and frame-build time.
    Bench(BenchArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
}

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    /// The trace (.sqlite export).
    pub trace: PathBuf,
    /// Report(s), comma-separated, or `all`: cuda_gpu_kern_sum, cuda_api_sum,
    /// cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum; and `overlap` (copy/compute
    /// overlap per GPU; not part of `all`).
    #[arg(long, default_value = "all")]
    pub report: String,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Only events starting in START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us).
    #[arg(long)]
    pub range: Option<String>,
    #[command(flatten)]
    pub exclusion: ExclusionArgs,
}

/// Runs a subcommand; returns the process exit code.
pub fn run(command: Command) -> Result<i32> {
    match command {
        Command::Summary(args) => summary(&args),
        Command::Gaps(args) => analysis_commands::gaps(&args),
        Command::Export(args) => analysis_commands::export(&args),
        Command::GenTrace(args) => perf_commands::gen_trace(&args),
        Command::Bench(args) => perf_commands::bench(&args),
    }
}

fn parse_reports(text: &str) -> Result<Vec<Report>> {
    if text.trim() == "all" {
        return Ok(Report::ALL.to_vec());
    }
    text.split(',')
        .map(|name| {
            let name = name.trim();
            Report::from_id(name).with_context(|| {
                let known: Vec<&str> = Report::ALL.iter().map(|r| r.id()).collect();
                format!("unknown report '{name}' (known: {}, all)", known.join(", "))
            })
        })
        .collect()
}

pub fn parse_range_arg(range: Option<&str>) -> Result<TimeRange> {
    match range {
        None => Ok(TimeRange::ALL),
        Some(r) => analysis::parse_range(r).map_err(anyhow::Error::msg),
    }
}

fn summary(args: &SummaryArgs) -> Result<i32> {
    let (overlap, other_reports) = analysis_commands::take_overlap(&args.report);
    let reports = if overlap && other_reports.is_empty() {
        Vec::new()
    } else {
        parse_reports(&other_reports)?
    };
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = args.exclusion.rules()?;
    let trace = load::load_file(&args.trace)?;
    let exclusion = analysis_commands::apply_exclusion(&trace, &rules);
    let filter = Filter {
        range,
        excluded: exclusion.as_ref().map(|e| &e.excluded),
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let several = reports.len() + usize::from(overlap) > 1;
    for report in reports {
        let table = analysis::compute(&trace, report, &filter);
        if table.rows.is_empty() {
            eprintln!(
                "{}: {} does not contain {}{}",
                report.id(),
                trace.path.display(),
                report.missing_data(),
                if range == TimeRange::ALL {
                    ""
                } else {
                    " in this range"
                }
            );
            continue;
        }
        match args.format {
            Format::Csv => {
                if several {
                    writeln!(out, "# {}", report.id())?;
                }
                nsys_csv::write_csv(&table, &mut out)?;
            }
            Format::Table => {
                writeln!(out, "\n {} ({}):\n", report.title(), report.id())?;
                let header = nsys_csv::header(report);
                let text = text_table::render(&header, &nsys_csv::rows(&table));
                out.write_all(text.as_bytes())?;
            }
        }
    }
    if overlap {
        analysis_commands::print_overlap(&trace, &filter, args.format, several, &mut out)?;
    }
    Ok(0)
}

/// Entry point shared by `main`: parses arguments and dispatches.
pub fn main_with(cli: Cli) -> Result<i32> {
    match cli.command {
        Some(command) => run(command),
        None if cli.install_desktop => crate::ui::desktop::install_command(),
        None if cli.uninstall_desktop => crate::ui::desktop::uninstall_command(),
        None => {
            crate::ui::run_window(cli.trace)?;
            Ok(0)
        }
    }
}
