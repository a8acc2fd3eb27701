//! Printing registered reports (`summary`) and rules (`analyze`): parsing nsys-style specs
//! (`name:opt=value`), computing each over the trace and writing it as nsys's CSV or as an aligned
//! table. Empty results print nothing on stdout and say why on stderr, as nsys does.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Result, bail};

use super::ordered_work::OrderedWork;
use super::output_pipes::{OutputPipes, PipeWriter};
use super::{Format, parse_range_arg};
use crate::analysis::reports::{self, ReportOptions, StatsReport};
use crate::analysis::rules::{self, Rule, RuleInput};
use crate::analysis::table::{Cell, RowSink, SharedSink};
use crate::analysis::{Filter, NsysFormat, ReportInput, Table, TimeRange, unreadable};
use crate::export::fit_width::Fit;
use crate::export::{nsys_csv, text_table};
use crate::trace::{Needs, Trace};

/// A report to print, with its options.
pub struct ReportRequest {
    pub report: &'static dyn StatsReport,
    pub options: ReportOptions,
    /// Asked for by name (an empty result is then worth a word on stderr).
    pub named: bool,
}

/// Parses a `--report` list; `all` is every registered report.
pub fn parse_reports(text: &str) -> Result<Vec<ReportRequest>> {
    let mut out = Vec::new();
    for spec in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if spec == "all" {
            out.extend(reports::REPORTS.iter().map(|&report| ReportRequest {
                report,
                options: ReportOptions::default(),
                named: false,
            }));
            continue;
        }
        let name = spec.split(':').next().unwrap_or_default();
        if let Some(current) = reports::current_name(name) {
            eprintln!(
                "note: report '{name}' is an older name of '{current}' (Nsight Systems 2025.3 no \
                 longer accepts it)"
            );
        }
        let (report, options) = reports::parse_spec(spec).map_err(anyhow::Error::msg)?;
        out.push(ReportRequest {
            report,
            options,
            named: true,
        });
    }
    Ok(out)
}

/// `summary` with no `--report`: the row dumps ([`reports::is_row_dump`]: the `*_trace` reports,
/// one line per event, 189,143 lines for stress; `critical_path_segments`) are left out, as `nsys stats` leaves them out by default. Returns the names left out.
pub fn leave_out_row_dumps(requests: &mut Vec<ReportRequest>) -> Vec<&'static str> {
    let left_out = requests
        .iter()
        .filter(|r| reports::is_row_dump(r.report))
        .map(|r| r.report.name())
        .collect();
    requests.retain(|r| !reports::is_row_dump(r.report));
    left_out
}

/// Says on stderr, once the reports are printed, which row dumps were left out and how to get
/// them.
pub fn say_left_out(left_out: &[&str]) {
    if let Some(first) = left_out.first() {
        eprintln!(
            "note: the row dumps ({}) are left out; `--report all` prints them too, or name one \
             (`--report {first}`)",
            left_out.join(", ")
        );
    }
}

/// `--comm REGEX`: the communication pattern of every `comm_overlap` request that names none
/// itself; a pattern that is not a valid regex is refused before any trace is loaded.
pub fn set_comm_pattern(requests: &mut [ReportRequest], pattern: &str) -> Result<()> {
    crate::analysis::comm_overlap::comm_regex(pattern)
        .map_err(|e| anyhow::anyhow!("--comm '{pattern}' is not a valid regex: {e}"))?;
    for r in requests
        .iter_mut()
        .filter(|r| r.report.name() == "comm_overlap" && !r.options.has("comm"))
    {
        r.options
            .values
            .push(("comm".to_string(), pattern.to_string()));
    }
    Ok(())
}

/// `--family REGEX`: every `iterations` or `critical_path*` request without its own `family=`
/// takes that family.
pub fn set_family_pattern(requests: &mut [ReportRequest], pattern: &str) -> Result<()> {
    regex::Regex::new(pattern)
        .map_err(|e| anyhow::anyhow!("--family '{pattern}' is not a valid regex: {e}"))?;
    for r in requests.iter_mut().filter(|r| {
        matches!(
            r.report.name(),
            "iterations" | "critical_path" | "critical_path_segments"
        ) && !r.options.has("family")
    }) {
        r.options
            .values
            .push(("family".to_string(), pattern.to_string()));
    }
    Ok(())
}

/// What a trace cannot tell the critical path reports (unknown edges, what to record next
/// time), on stderr, once per trace that has any.
pub fn say_critical_path_notes(trace: &crate::trace::Trace, requests: &[ReportRequest]) {
    if !requests
        .iter()
        .any(|r| r.report.name().starts_with("critical_path"))
    {
        return;
    }
    use crate::analysis::critical_path;
    for note in critical_path::notes(trace) {
        eprintln!("critical path: {note}");
    }
}

/// What `op_efficiency` cannot say for this trace (an unknown GPU: no peaks), on stderr.
pub fn say_op_efficiency_notes(trace: &crate::trace::Trace, requests: &[ReportRequest]) {
    if !requests.iter().any(|r| r.report.name() == "op_efficiency") {
        return;
    }
    if let Some(note) = crate::analysis::op_efficiency::peaks::gpu_peaks(trace).note() {
        eprintln!("op_efficiency: {note}");
    }
}

/// `--group-by-input-shape`: every `torch_ops` request splits its rows by input shape.
pub fn set_group_by_input_shape(requests: &mut [ReportRequest]) {
    for r in requests
        .iter_mut()
        .filter(|r| r.report.name() == "torch_ops")
    {
        reports::torch_ops::group_by_input_shape(&mut r.options);
    }
}

/// How [`print_reports`] prints: the format, the nsys release printed as, whether several
/// reports are printed (each CSV then after `# NAME`), and how terminal tables fit their names.
#[derive(Clone, Copy, Debug)]
pub struct Printing {
    pub format: Format,
    pub nsys_format: NsysFormat,
    pub several: bool,
    pub fit: Fit,
}

/// Computes and prints each request; returns the exit code (0). Reports are computed and
/// written out as text on worker threads, as many at once as there are cores, and printed in the
/// order asked: a row dump takes as long to write as to compute, and the reports are independent.
/// Each writes into its own bounded pipe ([`OutputPipes`]) that the printer empties when its turn
/// comes, so output goes out as it is written; a worker takes the next report only while fewer
/// than twice as many wait to be printed, and waits while its pipe is full, so neither a slow
/// reader of stdout nor a report of gigabytes piles the output up in memory.
pub fn print_reports(
    trace: &Trace,
    requests: &[ReportRequest],
    filter: &Filter,
    printing: Printing,
    out: &mut impl Write,
) -> Result<i32> {
    let Printing {
        format,
        nsys_format,
        several,
        fit,
    } = printing;
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, requests.len().max(1));
    let ahead = 2 * workers;
    let ordered = OrderedWork::new(requests.len(), ahead);
    // At most about 64 MiB waiting in all the pipes ahead of the printer, 1 MiB each at least.
    let pipes = OutputPipes::new(requests.len(), ((64 << 20) / ahead).max(1 << 20));
    let render = |i: usize| -> Result<Option<()>> {
        // Taken first: however this returns, dropping it tells the printer the report is done.
        let text = pipes.writer(i);
        let request = &requests[i];
        if reports::format_lacks(request.report, trace) {
            return Ok(None);
        }
        let id = request.report.name();
        // A row dump written as CSV goes out row by row as it is computed, never held whole.
        if format == Format::Csv && request.report.streams() {
            let prefix = if several {
                format!("# {id}\n")
            } else {
                String::new()
            };
            let sink = Arc::new(Mutex::new(nsys_csv::CsvSink::new(text, &prefix)));
            let table = compute(trace, request, filter, nsys_format, Some(sink.clone()));
            let taken = sink
                .lock()
                .map_err(|_| anyhow::anyhow!("{id}: the report failed"))?
                .take()?;
            let Some((mut text, wrote)) = taken else {
                bail!("{id}: the report failed");
            };
            if wrote {
                return Ok(Some(()));
            }
            if table.is_empty() {
                return Ok(None);
            }
            // Rows kept rather than streamed (a report that fills its table another way).
            write_table(&table, "", id, format, several, Fit::Whole, &mut text)?;
            text.flush()?;
            return Ok(Some(()));
        }
        let mut table = compute(trace, request, filter, nsys_format, None);
        if table.is_empty() {
            return Ok(None);
        }
        let origin = trace.time_origin_ns();
        let shifted = format == Format::Table && count_from(&mut table, origin);
        let title = format!("{} ({id}):", request.report.title());
        let mut text = text;
        // A row dump is a list of events, not a table of names: its rows are never held.
        let fit = if request.report.row_dump() {
            Fit::Whole
        } else {
            fit
        };
        write_table(&table, &title, id, format, several, fit, &mut text)?;
        if shifted {
            writeln!(
                text,
                "\n Times count from the trace's first event, {origin} ns on its own clock \
                 (--format csv prints that clock)."
            )?;
        }
        text.flush()?;
        Ok(Some(()))
    };
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(i) = ordered.take() {
                    // A report that panics fails alone (the hook has said why); the printer
                    // must not wait for it forever (its pipe closes as the panic unwinds).
                    let result =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(i)))
                            .unwrap_or_else(|_| {
                                Err(anyhow::anyhow!(
                                    "{}: the report failed",
                                    requests[i].report.name()
                                ))
                            });
                    ordered.finish(i, result);
                }
            });
        }
        // On an error the workers are told to stop taking reports and writing; the scope waits
        // for them.
        let result = (|| -> Result<()> {
            for (i, request) in requests.iter().enumerate() {
                pipes.drain(i, out)?;
                match ordered.wait_for(i)? {
                    Some(()) => {}
                    None => {
                        // What was printed before comes before the word on stderr.
                        out.flush()?;
                        say_empty(trace, request, filter, several);
                    }
                }
            }
            Ok(())
        })();
        ordered.stop();
        pipes.abandon();
        result
    })?;
    Ok(0)
}

/// One report computed, its rows streamed to `sink` when given.
fn compute(
    trace: &Trace,
    request: &ReportRequest,
    filter: &Filter,
    nsys_format: NsysFormat,
    sink: Option<Arc<Mutex<nsys_csv::CsvSink<PipeWriter>>>>,
) -> Table {
    request.report.compute(&ReportInput {
        trace,
        filter,
        options: &request.options,
        with_events: false,
        row_limit: None,
        nsys_format,
        sink: sink.map(|s| SharedSink(s as Arc<Mutex<dyn RowSink>>)),
    })
}

/// Makes the times of `table`'s `Start (ns)` and `End (ns)` columns count from `origin` (a
/// PyTorch trace's first event: its clock counts from an epoch), as the window and the HTML
/// report count; returns whether any moved.
fn count_from(table: &mut Table, origin: i64) -> bool {
    let times: Vec<usize> = ["Start (ns)", "End (ns)"]
        .iter()
        .filter_map(|name| table.column(name))
        .collect();
    if origin == 0 || times.is_empty() {
        return false;
    }
    for row in &mut table.rows {
        for &c in &times {
            if let Some(Cell::Int(t)) = row.cells.get_mut(c) {
                *t -= origin;
            }
        }
    }
    true
}

/// Says on stderr why a report printed nothing: rows there but unreadable are worth a word even
/// in `--report all`; a report asked for by name (or alone) says what the trace lacks.
fn say_empty(trace: &Trace, request: &ReportRequest, filter: &Filter, several: bool) {
    let in_range = if filter.range == TimeRange::ALL {
        ""
    } else {
        " in this range"
    };
    if let Some(why) = unreadable::none_readable(trace, request.report.missing_data()) {
        eprintln!("{}: {} {why}", request.report.name(), trace.path.display());
    } else if request.named || !several {
        eprintln!(
            "{}: {} does not contain {}{in_range}",
            request.report.name(),
            trace.path.display(),
            request.report.missing_data(),
        );
    }
}

pub fn write_table(
    table: &Table,
    title: &str,
    id: &str,
    format: Format,
    several: bool,
    fit: Fit,
    out: &mut dyn Write,
) -> Result<()> {
    match format {
        Format::Csv => {
            if several {
                writeln!(out, "# {id}")?;
            }
            nsys_csv::write_table_csv(table, &mut *out)?;
        }
        Format::Table => {
            writeln!(out, "\n {title}\n")?;
            let header: Vec<&str> = table.columns.iter().map(String::as_str).collect();
            text_table::write_table_fit(&header, table, fit, out)?;
        }
    }
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// The trace (.sqlite export, or an .nsys-rep report, converted with nsys export).
    pub trace: PathBuf,
    /// Rule(s), comma-separated or repeated, each `NAME[:OPTION=VALUE…]` as nsys takes them
    /// (`gpu_gaps:gap=1:rows=-1`), or `all`. Every rule takes rows=, start=, end= (ns) and
    /// nvtx=RANGE[@DOMAIN].
    #[arg(long, default_value = "all")]
    pub rule: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Only events starting in START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us).
    #[arg(long)]
    pub range: Option<String>,
    /// Print as this Nsight Systems release prints: `2023.4` or `2025.3` (the rules are the same;
    /// SQLite's rounding differs). Default: the newest of these not newer than the nsys that
    /// wrote the export (2023.4 when unknown).
    #[arg(long, value_name = "RELEASE", value_parser = NsysFormat::parse)]
    pub nsys_format: Option<NsysFormat>,
    #[command(flatten)]
    pub names: super::analysis_commands::NameFitArgs,
}

/// `sightline analyze`.
pub fn analyze(args: &AnalyzeArgs) -> Result<i32> {
    let mut requests: Vec<(&'static dyn Rule, ReportOptions)> = Vec::new();
    for spec in args
        .rule
        .iter()
        .flat_map(|r| r.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        if spec == "all" {
            requests.extend(rules::RULES.iter().map(|&r| (r, ReportOptions::default())));
        } else {
            let name = spec.split(':').next().unwrap_or_default();
            if let Some(current) = rules::current_name(name) {
                eprintln!(
                    "note: rule '{name}' is an older name of '{current}' (Nsight Systems 2025.3 \
                     no longer accepts it)"
                );
            }
            requests.push(rules::parse_spec(spec).map_err(anyhow::Error::msg)?);
        }
    }
    if requests.is_empty() {
        bail!("no rule given (known: {})", rule_names());
    }
    let range = parse_range_arg(args.range.as_deref())?;
    let needs = requests
        .iter()
        .fold(Needs::NONE, |n, (rule, options)| n | rule.needs(options));
    let trace = super::load_for_cli(&args.trace, needs)?;
    let filter = Filter::range(range);
    let nsys_format = args
        .nsys_format
        .unwrap_or_else(|| NsysFormat::of_trace(&trace));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let several = requests.len() > 1;
    for (rule, options) in &requests {
        let table = rule
            .compute(&RuleInput {
                trace: &trace,
                filter: &filter,
                options,
                nsys_format,
            })
            .map_err(|e| anyhow::anyhow!("{}: {e}", rule.name()))?;
        if table.is_empty() {
            eprintln!(
                "{}: {}: {}",
                rule.name(),
                trace.path.display(),
                rule.no_result()
            );
            if rule.name() == "gpu_gaps" && options.value("gap").is_none() {
                eprintln!("{}", shorter_gaps_note(&trace, &filter));
            }
            continue;
        }
        let title = match args.format {
            Format::Table => format!("{} ({}):\n\n {}", rule.title(), rule.name(), rule.advice()),
            Format::Csv => String::new(),
        };
        write_table(
            &table,
            &title,
            rule.name(),
            args.format,
            several,
            args.names.fit(),
            &mut out,
        )?;
    }
    // The process ends here: its memory goes back with it, sooner than by freeing every column
    // of the model one by one (as `summary` does).
    std::mem::forget(trace);
    Ok(0)
}

/// What to run when `gpu_gaps` finds nothing at nsys's default of 500 ms (said on stderr: stdout
/// stays what nsys prints): a shorter `gap=`, or `sightline gaps` and what it would list.
fn shorter_gaps_note(trace: &crate::trace::Trace, filter: &Filter) -> String {
    let options = crate::analysis::GapOptions::default();
    let gaps = crate::analysis::gpu_idle_gaps(trace, filter, &options);
    let found = match gaps.iter().map(|g| g.duration_ns()).max() {
        Some(longest) => format!(
            "{} here, the longest {}",
            gaps.len(),
            crate::analysis::headline::format_ns(longest as f64)
        ),
        None => "none here".to_string(),
    };
    format!(
        "note: gpu_gaps looks for GPU idle time over 500 ms, nsys's default; \
         `--rule gpu_gaps:gap=MS` sets a shorter threshold (e.g. gap=1), and \
         `sightline gaps {}` lists every gap of {} µs or more, with its cause ({found})",
        trace.path.display(),
        options.min_ns / 1000
    )
}

fn rule_names() -> String {
    rules::RULES
        .iter()
        .map(|r| r.name())
        .collect::<Vec<_>>()
        .join(", ")
}
