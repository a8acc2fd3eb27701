//! The command line: `sightline [TRACE]` opens the window; subcommands print reports for servers
//! with no display. Everything here prints; nothing draws.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand, ValueEnum};

use crate::analysis::{self, Filter, NsysFormat, TimeRange};
use crate::load;
use crate::trace::Needs;

mod analysis_commands;
mod diff_commands;
mod digest_command;
pub use digest_command::DigestArgs;
mod html_report_command;
mod ncu_commands;
mod ncu_diff_command;
mod ncu_join_command;
pub use ncu_join_command::{COLUMNS as NCU_JOIN_COLUMNS, rows as ncu_join_rows};
mod ncu_source_command;
mod ordered_work;
mod output_pipes;
// The gaps table's header, also the columns of the Python package's `Trace.gaps()`.
pub use analysis_commands::{CAUSE_COLUMNS, ExclusionArgs, ExportArgs, GAP_COLUMNS, GapsArgs};
pub use diff_commands::DiffArgs;
mod perf_commands;
mod ranks_command;
mod render_command;
mod report_commands;
mod run_files;
mod samples_export;
mod sql_command;
pub use perf_commands::{BenchArgs, GenTraceArgs};
pub use render_command::{RenderArgs, Theme, frame_of as render_frame};
pub use report_commands::AnalyzeArgs;
pub use sql_command::SqlArgs;

#[derive(Parser, Debug)]
#[command(
    name = "sightline",
    version,
    about = "A light, fast viewer for GPU traces: Nsight Systems exports (.sqlite, .nsys-rep), PyTorch profiler traces (.pt.trace.json[.gz]) and Nsight Compute reports (.ncu-rep)",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// Traces to open in the window, one tab each: .sqlite exports (or .nsys-rep when nsys is
    /// on PATH), PyTorch profiler traces (.json, .json.gz), Nsight Compute reports (.ncu-rep).
    pub traces: Vec<PathBuf>,
    /// Open BASE and NEW and compare them: two timelines on one time axis, with their diff.
    #[arg(long, num_args = 2, value_names = ["BASE", "NEW"])]
    pub compare: Option<Vec<PathBuf>>,
    /// With --compare: align the runs on `session` (start), `gpu` (first GPU operation), or an
    /// NVTX range `NAME` / `NAME#N` (instance N from 0; a `*` in NAME stands for a number, so
    /// `token_*#1` is the second of token_0, token_1, …). Default: the first instance after
    /// warm-up of the outermost repeated range (an iteration: the one least often inside
    /// another), else the first GPU operation.
    #[arg(long, value_name = "SPEC", requires = "compare")]
    pub align: Option<String>,
    /// Attach an Nsight Compute report (.ncu-rep, .ncu-rep.gz) of the same program to the first
    /// trace's tab: each profiled kernel's ncu numbers in its details.
    #[arg(long, value_name = "REPORT", conflicts_with_all = ["compare", "ranks"])]
    pub ncu: Option<PathBuf>,
    /// Open the traces of one run's ranks (one per rank) as one run: one tab, one clock.
    #[arg(long, num_args = 1.., value_name = "FILE", conflicts_with = "compare")]
    pub ranks: Option<Vec<PathBuf>>,
    /// Runs of ranks neither read nor write the digest cache (every trace is read).
    #[arg(long)]
    pub no_cache: bool,
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
    /// Print the `nsys stats` reports of a trace.
    Summary(SummaryArgs),
    /// Run `nsys analyze` expert-system rules on a trace.
    Analyze(AnalyzeArgs),
    /// List GPU idle gaps (no kernel, memcpy or memset on any stream), longest first.
    Gaps(GapsArgs),
    /// Compare two runs: per-name deltas of a report (default kernels), or `--report headline`.
    Diff(DiffArgs),
    /// Write the events of a trace (or of a range) to a CSV file, one row per event.
    Export(ExportArgs),
    /// Write a synthetic trace with the schema of a real export (for benchmarks and tests).
    GenTrace(GenTraceArgs),
    /// Load a trace and report load time against a bare SQLite scan, memory and frame-build time.
    Bench(BenchArgs),
    /// Draw the timeline into a PNG or SVG file, with no display.
    Render(RenderArgs),
    /// Run a read-only SQL query over the trace's views (kernels, memcpy, api, ranges, …).
    Sql(SqlArgs),
    /// The traces of one run's ranks on one clock: per-rank GPU time, collectives, stragglers.
    Ranks(ranks_command::RanksArgs),
    /// Reduce each trace of a run to its rank's digest (Parquet files in a folder), on this
    /// machine or as one task of many (a Slurm job array, srun, torchrun, a Kubernetes Indexed
    /// Job); `ranks DIGESTS/` and the window then open the run without its traces.
    Digest(digest_command::DigestArgs),
    /// Write one self-contained HTML page of a run's performance: metrics against targets,
    /// findings, top tables, pictures; with --baseline, both runs side by side.
    Report(html_report_command::ReportArgs),
}

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
}

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    /// The trace(s): .sqlite exports or .nsys-rep reports, PyTorch profiler traces (.json,
    /// .json.gz), Nsight Compute reports (.ncu-rep, for the ncu_* pages); several are reported
    /// in turn.
    #[arg(required = true, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Report(s), comma-separated, each `NAME[:OPTION…]` as nsys takes them
    /// (`cuda_gpu_kern_sum:base`), or `all` (every report the trace has data for, the row dumps
    /// `*_trace` and `critical_path_segments` included); also `overlap` (copy/compute overlap
    /// per GPU; not part of `all`).
    /// Default: every summary report, without the row dumps (as `nsys stats` leaves them out).
    /// `sightline summary --help-reports` lists them.
    #[arg(long)]
    pub report: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Only events starting in START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us).
    #[arg(long)]
    pub range: Option<String>,
    /// Kernels whose name matches REGEX (any case) are communication in `comm_overlap` (default:
    /// NCCL/RCCL kernels and all-reduce, all-gather, reduce-scatter, all-to-all names); the same
    /// as `comm_overlap:comm=REGEX`, without the `:`/`,` the spec splits on.
    #[arg(long, value_name = "REGEX")]
    pub comm: Option<String>,
    /// `torch_ops` (PyTorch's key_averages) splits its rows by input shape, as
    /// `key_averages(group_by_input_shape=True)`; the same as `torch_ops:group_by_input_shape`.
    #[arg(long)]
    pub group_by_input_shape: bool,
    /// `iterations`: the family of repeated ranges to list — a family as the trace names it
    /// (`step_*`, `ProfilerStep*`), else a regex over the range text; the same as
    /// `iterations:family=REGEX`, without the `:`/`,` the spec splits on. Default: the
    /// outermost repeated family. An iteration's Kernels and GPU Time are the work launched by
    /// any thread of its process (the autograd thread's backward pass included) while it ran.
    #[arg(long, value_name = "REGEX")]
    pub family: Option<String>,
    /// Print as this Nsight Systems release prints: `2023.4` or `2025.3` (NVTX range names,
    /// SQLite's rounding, empty zero context/stream in cuda_gpu_trace, source columns in
    /// um_cpu_page_faults_sum). Default: the newest of these not newer than the nsys that wrote
    /// the export (2023.4 when unknown).
    #[arg(long, value_name = "RELEASE", value_parser = NsysFormat::parse)]
    pub nsys_format: Option<NsysFormat>,
    /// Nsight Compute pages (`ncu_raw`, `ncu_details`, `ncu_summary`): `auto` scales units as
    /// ncu does by default (`Gbyte/s`, `us`), `base` prints base units (`ncu --print-units
    /// base`).
    #[arg(long, value_name = "MODE", value_parser = crate::export::ncu_pages::UnitMode::parse, default_value = "auto")]
    pub print_units: crate::export::ncu_pages::UnitMode,
    /// `ncu_source`: the view ncu's `--print-source` names: `sass` (default), `cuda,sass`, `ptx`.
    #[arg(long, value_name = "VIEW", value_parser = crate::export::ncu_pages::source::SourceView::parse, default_value = "sass")]
    pub print_source: crate::export::ncu_pages::source::SourceView,
    /// `ncu_source`, `ncu_details`: only kernels whose name matches REGEX (ncu's `-k regex:REGEX`; the
    /// `regex:` prefix may be given).
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// `ncu_source`, `ncu_details`: of the kernels `--kernel` selects, only launch N, from 0 (ncu's
    /// `--launch-skip N --launch-count 1`).
    #[arg(long, value_name = "N")]
    pub launch: Option<usize>,
    /// An Nsight Compute report (.ncu-rep, .ncu-rep.gz) of the same program, for `ncu_join`:
    /// each profiled kernel with the timeline kernel it measured. Without `--report`, `ncu_join`
    /// is printed after the default reports.
    #[arg(long, value_name = "REPORT")]
    pub ncu: Option<PathBuf>,
    #[command(flatten)]
    pub exclusion: ExclusionArgs,
    #[command(flatten)]
    pub names: analysis_commands::NameFitArgs,
}

/// Runs a subcommand; returns the process exit code.
pub fn run(command: Command) -> Result<i32> {
    match command {
        Command::Summary(args) => summary(&args),
        Command::Analyze(args) => report_commands::analyze(&args),
        Command::Gaps(args) => analysis_commands::gaps(&args),
        Command::Diff(args) => diff_commands::diff(&args),
        Command::Export(args) => analysis_commands::export(&args),
        Command::GenTrace(args) => perf_commands::gen_trace(&args),
        Command::Bench(args) => perf_commands::bench(&args),
        Command::Render(args) => render_command::render(&args),
        Command::Sql(args) => sql_command::sql(&args),
        Command::Ranks(args) => ranks_command::ranks(&args),
        Command::Digest(args) => digest_command::digest(&args),
        Command::Report(args) => html_report_command::report(&args),
    }
}

/// Loads a trace for a subcommand and says on stderr, one line per reason, what the loader
/// skipped or repaired: numbers are trusted only when the tool says what it could not read.
/// Loads what `needs` reads of a trace for a command, printing the load warnings on stderr.
pub fn load_for_cli(
    path: &std::path::Path,
    needs: crate::trace::Needs,
) -> Result<crate::trace::Trace> {
    let cancel = std::sync::atomic::AtomicBool::new(false);
    // A report's conversion can take a while: say once that it runs (a reused one is silent).
    let progress = |p: &load::LoadProgress| {
        if p.phase == load::nsys_rep::CONVERTING_PHASE {
            eprintln!("{}: converting with nsys export…", path.display());
        }
    };
    let control = load::LoadControl {
        progress: &progress,
        cancel: &cancel,
        needs,
    };
    let trace = load::load_file_with(path, &control)?;
    for line in trace.warnings.messages() {
        eprintln!("warning: {}: {line}", path.display());
    }
    Ok(trace)
}

pub fn parse_range_arg(range: Option<&str>) -> Result<TimeRange> {
    match range {
        None => Ok(TimeRange::ALL),
        Some(r) => analysis::parse_range(r).map_err(anyhow::Error::msg),
    }
}

fn summary(args: &SummaryArgs) -> Result<i32> {
    let report_list = args.report.as_deref().unwrap_or("all");
    if report_list.trim() == ncu_source_command::NAME {
        return ncu_source_command::print(args);
    }
    if let Some(pages) = ncu_commands::requested_pages(report_list)? {
        return ncu_commands::print_pages(args, &pages);
    }
    let (mut ncu_join, reports) = ncu_join_command::take_ncu_join(report_list);
    // `--ncu` is read by `ncu_join` alone: with no `--report` it joins the default set; with a
    // list that lacks it, nothing reads the report, and the user is told.
    if args.ncu.is_some() && !ncu_join {
        if args.report.is_none() {
            ncu_join = true;
        } else {
            eprintln!("note: --ncu is read by --report ncu_join only; add ncu_join to --report");
        }
    }
    let (overlap, other_reports) = analysis_commands::take_overlap(&reports);
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = args.exclusion.rules()?;
    let mut code = 0;
    let several_files = args.traces.len() > 1;
    // A bad report name is said before any trace is loaded.
    let ncu_report = match (&args.ncu, ncu_join) {
        (Some(path), _) => Some(ncu_join_command::load_ncu_report(path)?),
        (None, true) => anyhow::bail!("--report ncu_join needs --ncu REPORT (an .ncu-rep file)"),
        (None, false) => None,
    };
    let mut requests = if (overlap || ncu_join) && other_reports.is_empty() {
        Vec::new()
    } else {
        report_commands::parse_reports(&other_reports)?
    };
    let left_out = if args.report.is_none() {
        report_commands::leave_out_row_dumps(&mut requests)
    } else {
        Vec::new()
    };
    if let Some(pattern) = &args.comm {
        report_commands::set_comm_pattern(&mut requests, pattern)?;
    }
    if args.group_by_input_shape {
        report_commands::set_group_by_input_shape(&mut requests);
    }
    if let Some(pattern) = &args.family {
        report_commands::set_family_pattern(&mut requests, pattern)?;
    }
    // Only what the reports read is loaded; warm-up exclusion looks at everything.
    let mut needs = requests
        .iter()
        .fold(Needs::NONE, |n, r| n | r.report.needs(&r.options));
    if overlap {
        needs |= analysis::overlap::NEEDS;
    }
    if ncu_join {
        needs |= ncu_join_command::NEEDS;
    }
    if !rules.is_empty() {
        needs = Needs::ALL;
    }
    for (n, path) in args.traces.iter().enumerate() {
        let trace = load_for_cli(path, needs)?;
        ncu_commands::refuse_nsys_report(&trace, path)?;
        let exclusion = analysis_commands::apply_exclusion(&trace, &rules);
        let filter = Filter {
            range,
            excluded: exclusion.as_ref().map(|e| &e.excluded),
        };
        // Row dumps print hundreds of thousands of lines: write in large blocks.
        let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        if several_files {
            writeln!(out, "# {}", path.display())?;
        }
        let several = requests.len() + usize::from(overlap) + usize::from(ncu_join) > 1;
        let nsys_format = args
            .nsys_format
            .unwrap_or_else(|| NsysFormat::of_trace(&trace));
        code = code.max(report_commands::print_reports(
            &trace,
            &requests,
            &filter,
            report_commands::Printing {
                format: args.format,
                nsys_format,
                several,
                fit: args.names.fit(),
            },
            &mut out,
        )?);
        if overlap {
            analysis_commands::print_overlap(&trace, &filter, args.format, several, &mut out)?;
        }
        if let (true, Some(report)) = (ncu_join, &ncu_report) {
            ncu_join_command::print_ncu_join(
                &trace,
                report,
                args.format,
                several,
                args.names.fit(),
                &mut out,
            )?;
        }
        out.flush()?;
        report_commands::say_critical_path_notes(&trace, &requests);
        report_commands::say_op_efficiency_notes(&trace, &requests);
        drop(exclusion);
        if n + 1 == args.traces.len() {
            // The process ends here: its memory goes back with it, sooner than by freeing
            // every column of the model one by one.
            std::mem::forget(trace);
        }
    }
    report_commands::say_left_out(&left_out);
    Ok(code)
}

/// Entry point shared by `main`: parses arguments and dispatches.
pub fn main_with(cli: Cli) -> Result<i32> {
    match cli.command {
        Some(command) => run(command),
        None if cli.install_desktop => crate::ui::desktop::install_command(),
        None if cli.uninstall_desktop => crate::ui::desktop::uninstall_command(),
        None => {
            let compare = cli.compare.is_some();
            let mut files = cli.compare.unwrap_or_default();
            files.extend(cli.traces);
            let align = match &cli.align {
                Some(spec) => Some(
                    crate::analysis::align::parse_alignment(spec).map_err(anyhow::Error::msg)?,
                ),
                None => None,
            };
            crate::ui::run_window(
                files,
                compare,
                align,
                cli.ranks.unwrap_or_default(),
                cli.ncu,
                cli.no_cache,
            )?;
            Ok(0)
        }
    }
}
