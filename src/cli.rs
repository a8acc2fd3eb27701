//! The command line: `sightline [TRACE]` opens the window; subcommands print reports for servers
//! with no display. Everything here prints; nothing draws.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::{self, Filter, Report, TimeRange};
use crate::export::{nsys_csv, text_table};
use crate::load;

#[derive(Parser, Debug)]
#[command(
    name = "sightline",
    version,
    about = "A light, fast viewer for Nsight Systems traces (nsys export --type=sqlite)",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Trace to open in the window (.sqlite export).
    pub trace: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the `nsys stats` summary reports of a trace.
    Summary(SummaryArgs),
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
    /// cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum, nvtx_sum.
    #[arg(long, default_value = "all")]
    pub report: String,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Only events starting in START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us).
    #[arg(long)]
    pub range: Option<String>,
}

/// Runs a subcommand; returns the process exit code.
pub fn run(command: Command) -> Result<i32> {
    match command {
        Command::Summary(args) => summary(&args),
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
    let reports = parse_reports(&args.report)?;
    let range = parse_range_arg(args.range.as_deref())?;
    let trace = load::load_file(&args.trace)?;
    let filter = Filter::range(range);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let several = reports.len() > 1;
    for report in reports {
        let table = analysis::compute(&trace, report, &filter);
        if table.rows.is_empty() {
            eprintln!(
                "{}: {} does not contain {}{}",
                report.id(),
                trace.path.display(),
                report.missing_data(),
                if range == TimeRange::ALL { "" } else { " in this range" }
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
    Ok(0)
}

/// Entry point shared by `main`: parses arguments and dispatches.
pub fn main_with(cli: Cli) -> Result<i32> {
    match cli.command {
        Some(command) => run(command),
        None => {
            let _ = cli.trace;
            bail!("the timeline window is not built yet; use `sightline summary TRACE`")
        }
    }
}
