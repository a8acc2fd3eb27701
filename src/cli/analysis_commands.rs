//! The analysis subcommands beside `summary`: warm-up exclusion flags (shared by every
//! subcommand that filters), the copy/compute `overlap` report, `gaps` and `export`.

use crate::export::fit_width::Fit;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use super::{Format, parse_range_arg};
use crate::analysis::{
    self, AttributionScope, ExclusionRule, Filter, GapOptions, MeasureOver, SelectionEdge,
    WarmupExclusion,
};
use crate::export::{events_csv, text_table};
use crate::trace::{Needs, Trace};

/// How wide a terminal table's names are: cut so that a line fits 200 characters by default.
#[derive(clap::Args, Debug, Default, Clone, Copy)]
pub struct NameFitArgs {
    /// Print names (kernels, ranges, operators) whole in terminal tables; by default they are
    /// cut so that a line fits 200 characters (`--format csv` always prints them whole).
    #[arg(long)]
    pub wide: bool,
    /// Cut names in terminal tables to at most N characters (instead of fitting 200 columns).
    #[arg(long, value_name = "N", conflicts_with = "wide")]
    pub name_width: Option<usize>,
}

impl NameFitArgs {
    pub fn fit(&self) -> crate::export::fit_width::Fit {
        crate::export::fit_width::Fit::of_args(self.wide, self.name_width)
    }
}

/// Warm-up exclusion: drop everything attributed to chosen NVTX ranges (a GPU op by the CPU
/// start of its launching call, in the same process).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ExclusionArgs {
    /// Drop everything attributed to NVTX ranges named warmup / warm-up / warm_up (any case).
    #[arg(long)]
    pub exclude_warmup: bool,
    /// Drop everything attributed to NVTX ranges whose name matches REGEX (unanchored).
    #[arg(long, value_name = "REGEX")]
    pub exclude_nvtx: Option<String>,
    /// Drop the first N instances (per process) of the NVTX range named by --iteration.
    #[arg(long, value_name = "N", requires = "iteration")]
    pub skip_first: Option<usize>,
    /// Name regex of the repeated iteration range for --skip-first, e.g. 'step_.*'.
    #[arg(long, value_name = "REGEX", requires = "skip_first")]
    pub iteration: Option<String>,
}

impl ExclusionArgs {
    /// The rules these flags ask for; an error names a bad regex.
    pub fn rules(&self) -> Result<Vec<ExclusionRule>> {
        let mut rules = Vec::new();
        if self.exclude_warmup {
            rules.push(ExclusionRule::WarmupNames);
        }
        if let Some(p) = &self.exclude_nvtx {
            rules.push(
                ExclusionRule::name_regex(p).map_err(|e| bad_regex("--exclude-nvtx", p, &e))?,
            );
        }
        if let (Some(n), Some(p)) = (self.skip_first, &self.iteration) {
            rules.push(
                ExclusionRule::first_iterations(p, n)
                    .map_err(|e| bad_regex("--iteration", p, &e))?,
            );
        }
        Ok(rules)
    }
}

/// One line for a bad pattern: the regex crate's own message spans several lines.
fn bad_regex(flag: &str, pattern: &str, e: &regex::Error) -> anyhow::Error {
    let text = e.to_string();
    let why = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .trim_start_matches("error: ");
    anyhow::anyhow!("{flag}: '{pattern}' is not a valid regex ({why})")
}

/// Applies `rules` to `trace`, saying on stderr what was excluded; `None` when there are none.
pub fn apply_exclusion(trace: &Trace, rules: &[ExclusionRule]) -> Option<WarmupExclusion> {
    if rules.is_empty() {
        return None;
    }
    let exclusion = analysis::exclude_warmup(trace, rules, AttributionScope::Process);
    let described: Vec<String> = rules.iter().map(ExclusionRule::describe).collect();
    if exclusion.ranges.is_empty() {
        eprintln!(
            "note: {} has no {}; nothing excluded",
            trace.path.display(),
            described.join(" or ")
        );
    } else {
        let [k, mc, ms, api, nvtx, osrt] = exclusion.counts();
        eprintln!(
            "note: excluded {} NVTX range(s) ({}): {k} kernels, {mc} memcpys, {ms} memsets, \
             {api} API calls, {nvtx} NVTX ranges, {osrt} OS runtime calls",
            exclusion.ranges.len(),
            described.join(" or "),
        );
    }
    Some(exclusion)
}

/// The filter for a range and an optional exclusion.
fn filter_of(range: analysis::TimeRange, exclusion: Option<&WarmupExclusion>) -> Filter<'_> {
    Filter {
        range,
        excluded: exclusion.map(|e| &e.excluded),
    }
}

/// Splits `overlap` out of a `--report` list: (asked for overlap, the other reports).
pub fn take_overlap(reports: &str) -> (bool, String) {
    let names: Vec<&str> = reports.split(',').map(str::trim).collect();
    let rest: Vec<&str> = names.iter().copied().filter(|n| *n != "overlap").collect();
    (rest.len() != names.len(), rest.join(","))
}

/// Header of `--report overlap`.
pub const OVERLAP_COLUMNS: [&str; 6] = [
    "Device",
    "Busy (%)",
    "Kernel Time (ns)",
    "Memory Op Time (ns)",
    "Overlap Time (ns)",
    "Copy/Compute Overlap (%)",
];

/// A percentage rounded to 0.1; empty when undefined.
fn percent(p: Option<f64>) -> String {
    p.map_or(String::new(), |p| format!("{p:.1}"))
}

/// Prints the copy/compute overlap report (see [`crate::analysis::overlap`] for definitions).
pub fn print_overlap(
    trace: &Trace,
    filter: &Filter,
    format: Format,
    titled: bool,
    out: &mut impl Write,
) -> Result<()> {
    let rows: Vec<Vec<String>> = analysis::copy_compute_overlap(trace, filter)
        .iter()
        .filter(|o| o.window.is_some())
        .map(|o| {
            vec![
                o.device.to_string(),
                percent(o.busy_percent()),
                o.kernel_ns.to_string(),
                o.memory_ns.to_string(),
                o.overlap_ns.to_string(),
                percent(o.overlap_percent()),
            ]
        })
        .collect();
    if rows.is_empty() {
        eprintln!(
            "overlap: {} has no GPU activity{}",
            trace.path.display(),
            if filter.range == analysis::TimeRange::ALL {
                ""
            } else {
                " in this range"
            }
        );
        return Ok(());
    }
    write_rows(
        &OVERLAP_COLUMNS,
        &rows,
        format,
        titled.then_some("overlap"),
        "Copy/Compute Overlap",
        Fit::Whole,
        out,
    )
}

pub(super) fn write_rows(
    header: &[&str],
    rows: &[Vec<String>],
    format: Format,
    id: Option<&str>,
    title: &str,
    fit: Fit,
    out: &mut impl Write,
) -> Result<()> {
    match format {
        Format::Csv => {
            if let Some(id) = id {
                writeln!(out, "# {id}")?;
            }
            let mut w = csv::Writer::from_writer(&mut *out);
            w.write_record(header)?;
            for r in rows {
                w.write_record(r)?;
            }
            w.flush()?;
        }
        Format::Table => {
            match id {
                Some(id) => writeln!(out, "\n {title} ({id}):\n")?,
                None => writeln!(out, "\n {title}:\n")?,
            }
            out.write_all(text_table::render_fit(header, rows, fit).as_bytes())?;
        }
    }
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct GapsArgs {
    /// The trace (.sqlite export, or an .nsys-rep report, converted with nsys export).
    pub trace: PathBuf,
    /// Shortest gap listed (ns, or with a unit: 100us, 1.5ms).
    #[arg(long, default_value = "100us")]
    pub min: String,
    /// List the gaps of each CUDA stream instead of those of the whole GPU.
    #[arg(long)]
    pub per_stream: bool,
    /// Add why each gap happened (launch-late, launch-overhead, dependency, graph-untraced,
    /// unknown); with --wide (or --format csv), also where a late launch's thread spent the gap:
    /// in sync calls, other CUDA calls, OS-runtime calls, untraced; and the ranges it was inside
    /// (NVTX, or a PyTorch trace's annotations and operators: outermost > innermost).
    #[arg(long)]
    pub causes: bool,
    /// The table in full: names up to 60 characters and, with --causes, the host-time split.
    /// Without it the table fits 120 columns: names are cut where the listed names agree (a
    /// kernel keeps its start, `[CUDA memcpy Device-to-Host]` its end). CSV is always whole.
    #[arg(long)]
    pub wide: bool,
    /// Only time inside START:END: idle time is measured over the whole range, operations
    /// running across an edge count up to it, and a gap cut by an edge says so (column Edge).
    #[arg(long)]
    pub range: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub exclusion: ExclusionArgs,
}

/// Header of `gaps`.
pub const GAP_COLUMNS: [&str; 7] = [
    "Device",
    "Stream",
    "Start (ns)",
    "End (ns)",
    "Duration (ns)",
    "Before",
    "After",
];

/// Columns `gaps --causes` adds.
pub const CAUSE_COLUMNS: [&str; 6] = [
    "Cause",
    "Sync (ns)",
    "CUDA API (ns)",
    "OS Runtime (ns)",
    "Untraced (ns)",
    "Host Inside",
];

/// `12.5 ms`, `830 µs`, `1.204 s`.
fn human_ns(ns: i64) -> String {
    let v = ns as f64;
    match ns.abs() {
        n if n >= 1_000_000_000 => format!("{:.3} s", v / 1e9),
        n if n >= 1_000_000 => format!("{:.3} ms", v / 1e6),
        n if n >= 1_000 => format!("{:.3} µs", v / 1e3),
        _ => format!("{ns} ns"),
    }
}

/// Width the `gaps` table fits without `--wide`, in characters.
pub const GAPS_TABLE_COLUMNS: usize = 120;

/// Shortens a long (demangled) name for the terminal table.
fn short(name: &str, max_chars: usize) -> String {
    crate::export::elide::elide(name, max_chars, 0)
}

/// `line` broken after its `; ` where it is longer than `width` characters, each continuation
/// indented by four spaces.
fn wrapped(line: &str, width: usize) -> String {
    let mut out = String::new();
    let mut current = String::new();
    for (i, part) in line.split("; ").enumerate() {
        let piece = if i == 0 {
            part.to_string()
        } else {
            format!("; {part}")
        };
        if !current.is_empty() && current.chars().count() + piece.chars().count() > width {
            out.push_str(&current);
            out.push_str(";\n");
            current = format!("    {}", piece.trim_start_matches("; "));
        } else {
            current.push_str(&piece);
        }
    }
    out.push_str(&current);
    out
}

/// Cuts the texts of columns `names` of `rows` so that the table of `header` and `rows` fits
/// `width` characters as [`text_table::render`] lays it out: the other columns keep their
/// widths, the named columns share what is left (at least 17 characters each: a copy's
/// direction, `[…Device-to-Host]`), each cut where
/// its names agree ([`crate::export::elide::elide_column`]).
fn fit_names(header: &[&str], rows: &mut [Vec<String>], names: &[usize], width: usize) {
    let shown = |c: usize| -> usize {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|v| text_table::group_thousands(v).chars().count())
            .chain(std::iter::once(header[c].chars().count()))
            .max()
            .unwrap_or(0)
    };
    let fixed: usize = (0..header.len())
        .filter(|c| !names.contains(c))
        .map(shown)
        .sum();
    // One leading space and two between columns.
    let spacing = 1 + 2 * header.len().saturating_sub(1);
    let left = width.saturating_sub(fixed + spacing);
    let each = (left / names.len().max(1)).max(17);
    let widths: Vec<usize> = names.iter().map(|&c| shown(c)).collect();
    for (&c, width) in names.iter().zip(widths) {
        if width <= each {
            continue;
        }
        let texts: Vec<String> = rows.iter().map(|r| r[c].clone()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        for (row, cut) in rows
            .iter_mut()
            .zip(crate::export::elide::elide_column(&refs, each))
        {
            row[c] = cut;
        }
    }
}

pub fn gaps(args: &GapsArgs) -> Result<i32> {
    let min_ns = analysis::parse_time_ns(&args.min).map_err(anyhow::Error::msg)?;
    if min_ns < 0 {
        bail!("--min must not be negative (got '{}')", args.min);
    }
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = args.exclusion.rules()?;
    let needs = if rules.is_empty() {
        analysis::gap_causes::NEEDS
    } else {
        Needs::ALL
    };
    let trace = super::load_for_cli(&args.trace, needs)?;
    let exclusion = apply_exclusion(&trace, &rules);
    let filter = filter_of(range, exclusion.as_ref());
    let options = GapOptions {
        min_ns,
        per_stream: args.per_stream,
        over: MeasureOver::Range,
    };
    let gaps = analysis::gpu_idle_gaps(&trace, &filter, &options);
    // Only a range has edges to cut gaps (column Edge: `selection start`, `selection end`,
    // `whole selection` or empty); without one the columns stay as they were.
    let with_edges = range != analysis::TimeRange::ALL;
    let table = args.format == Format::Table;
    let name_width = if table && args.wide { 60 } else { usize::MAX };
    // The table counts from the trace's origin, as the window's axis does: a PyTorch trace's
    // clock is epoch-based (19-digit times would leave the names a few characters). CSV keeps
    // the trace's own clock, as `export` and `sql` do.
    let origin_ns = if table { trace.time_origin_ns() } else { 0 };
    // The host-time split is for CSV and --wide; the narrow table keeps the cause.
    let host_split = args.causes && (args.wide || !table);
    let causes = args
        .causes
        .then(|| analysis::gap_causes::gap_causes(&trace, &gaps));
    let rows: Vec<Vec<String>> = gaps
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let mut row = vec![
                g.device.to_string(),
                g.stream.map_or(String::new(), |s| s.stream.to_string()),
                (g.start_ns - origin_ns).to_string(),
                (g.end_ns - origin_ns).to_string(),
                g.duration_ns().to_string(),
                short(g.before_name(&trace), name_width),
                short(g.after_name(&trace), name_width),
            ];
            row.extend(with_edges.then(|| g.edge.map_or("", SelectionEdge::label).to_string()));
            if let Some(c) = causes.as_ref().and_then(|c| c.get(i)) {
                row.push(c.cause.label().to_string());
                if !host_split {
                    return row;
                }
                match c.host {
                    Some(h) => row.extend(
                        [h.sync_ns, h.cuda_api_ns, h.osrt_ns, h.untraced_ns].map(|v| v.to_string()),
                    ),
                    None => row.extend(std::iter::repeat_n(String::new(), 4)),
                }
                row.push(c.inside_line(&trace));
            }
            row
        })
        .collect();
    let mut rows = rows;
    let mut columns: Vec<&str> = GAP_COLUMNS.to_vec();
    columns.extend(with_edges.then_some("Edge"));
    if host_split {
        columns.extend(CAUSE_COLUMNS);
    } else if args.causes {
        columns.push(CAUSE_COLUMNS[0]);
    }
    if table && !args.wide {
        fit_names(&columns, &mut rows, &[5, 6], GAPS_TABLE_COLUMNS);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let title = format!(
        "GPU Idle Gaps{} of at least {}, longest first",
        if args.per_stream { " per stream" } else { "" },
        human_ns(min_ns)
    );
    // The gaps table fits its own width above (two name columns, 120 characters).
    write_rows(
        &columns,
        &rows,
        args.format,
        None,
        &title,
        Fit::Whole,
        &mut out,
    )?;
    if args.format == Format::Table {
        let width = if args.wide {
            usize::MAX
        } else {
            GAPS_TABLE_COLUMNS
        };
        writeln!(out)?;
        for a in analysis::gpu_activity_over(&trace, &filter, options.over) {
            let Some((lo, hi)) = a.window else {
                writeln!(out, " GPU {}: no activity in this range", a.device)?;
                continue;
            };
            let listed: i64 = gaps
                .iter()
                .filter(|g| g.device == a.device)
                .map(|g| g.duration_ns())
                .sum();
            let (lo, hi) = (lo - origin_ns, hi - origin_ns);
            let line = format!(
                " GPU {}: busy {}% of {} measured (window {lo}..{hi} ns{}); idle {} in all{}",
                a.device,
                percent(a.busy_percent()),
                human_ns(a.measured_ns),
                if a.measured_ns < hi - lo {
                    ", less excluded time"
                } else {
                    ""
                },
                human_ns(a.idle_ns),
                if args.per_stream {
                    String::new()
                } else {
                    format!(", {} in the gaps listed", human_ns(listed))
                },
            );
            writeln!(out, "{}", wrapped(&line, width))?;
        }
        if origin_ns != 0 {
            let line = format!(
                " Times count from the trace's first event, {origin_ns} ns on its own clock \
                 (--format csv prints that clock)."
            );
            writeln!(out, "{}", wrapped(&line, width))?;
        }
        if let Some(causes) = &causes {
            let totals = analysis::gap_causes::totals_by_cause(&gaps, causes);
            for device in trace.devices() {
                let parts: Vec<String> = totals
                    .iter()
                    .filter(|t| t.device == device)
                    .map(|t| {
                        format!(
                            "{} {} gap{} {}",
                            t.cause.label(),
                            t.gaps,
                            if t.gaps == 1 { "" } else { "s" },
                            human_ns(t.total_ns)
                        )
                    })
                    .collect();
                if !parts.is_empty() {
                    let line = format!(" GPU {device} causes: {}", parts.join("; "));
                    writeln!(out, "{}", wrapped(&line, width))?;
                }
            }
        }
    }
    Ok(0)
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The trace (.sqlite export, or an .nsys-rep report, converted with nsys export).
    pub trace: PathBuf,
    /// The CSV file to write (with --folded: the folded stacks, or an SVG flame graph when the
    /// name ends in .svg).
    #[arg(long)]
    pub out: PathBuf,
    /// Only events starting in START:END.
    #[arg(long)]
    pub range: Option<String>,
    /// Event kinds, comma-separated, or `all`: kernel, memcpy, memset, graph (CUDA graphs traced
    /// as a whole, which add the columns `graph_id` and `graph_exec_id`), api, nvtx, osrt,
    /// page_fault (which adds the column `address`); also sample (CPU samples, one row each,
    /// named by the innermost function; not part of `all`).
    #[arg(long, default_value = "all")]
    pub kinds: String,
    /// With `--kinds sample`: write the samples' folded stacks (`root;…;leaf COUNT`) instead of
    /// CSV rows, or an SVG flame graph when --out ends in .svg.
    #[arg(long)]
    pub folded: bool,
    /// Add a last column `backtrace` to api and osrt rows: the function names of the call's
    /// stack, innermost first, joined by ` <- ` (empty when it has none).
    #[arg(long)]
    pub backtraces: bool,
    #[command(flatten)]
    pub exclusion: ExclusionArgs,
}

pub fn export(args: &ExportArgs) -> Result<i32> {
    let kinds = events_csv::parse_kinds(&args.kinds).map_err(anyhow::Error::msg)?;
    if args.folded && kinds != [events_csv::EventKind::Sample] {
        bail!("--folded writes CPU samples only: use it with --kinds sample");
    }
    let range = parse_range_arg(args.range.as_deref())?;
    let rules = args.exclusion.rules()?;
    let mut needs = kinds.iter().fold(Needs::NONE, |n, k| n | k.needs());
    if args.backtraces {
        needs |= Needs::BACKTRACES;
    }
    if !rules.is_empty() {
        needs = Needs::ALL;
    }
    let trace = super::load_for_cli(&args.trace, needs)?;
    if args.folded {
        return super::samples_export::export_folded(&trace, range, !rules.is_empty(), &args.out);
    }
    let exclusion = apply_exclusion(&trace, &rules);
    if kinds.contains(&events_csv::EventKind::Sample) {
        super::samples_export::note_samples_not_excluded(!rules.is_empty());
    }
    let filter = filter_of(range, exclusion.as_ref());
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let options = events_csv::CsvOptions {
        backtraces: args.backtraces,
    };
    let rows = events_csv::write_events_csv_with(
        &trace,
        &filter,
        &kinds,
        options,
        std::io::BufWriter::new(file),
    )
    .with_context(|| format!("writing {} failed", args.out.display()))?;
    eprintln!("wrote {rows} events to {}", args.out.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_taken_out_of_report_lists() {
        assert_eq!(take_overlap("overlap"), (true, String::new()));
        assert_eq!(
            take_overlap("nvtx_sum, overlap"),
            (true, "nvtx_sum".to_string())
        );
        assert_eq!(take_overlap("all"), (false, "all".to_string()));
    }

    #[test]
    fn formats_durations_for_people() {
        assert_eq!(human_ns(950), "950 ns");
        assert_eq!(human_ns(100_000), "100.000 µs");
        assert_eq!(human_ns(12_500_000), "12.500 ms");
        assert_eq!(short("abcdef", 4), "abc…");
        assert_eq!(short("abc", 4), "abc");
    }

    #[test]
    fn long_lines_break_after_a_semicolon() {
        assert_eq!(wrapped("ab; cd; ef", 5), "ab;\n    cd;\n    ef");
        assert_eq!(wrapped("ab; cd", 100), "ab; cd");
    }

    #[test]
    fn names_are_cut_to_fit_the_width() {
        let header = ["Start (ns)", "Before", "After"];
        let long = "[CUDA memcpy Host-to-Device]".to_string();
        let mut rows = vec![
            vec!["1".into(), "x".repeat(80), long.clone()],
            vec![
                "2".into(),
                "y".repeat(80),
                "[CUDA memcpy Device-to-Host]".into(),
            ],
        ];
        fit_names(&header, &mut rows, &[1, 2], 50);
        let text = text_table::render(&header, &rows);
        assert!(text.lines().all(|l| l.chars().count() <= 50), "{text}");
        assert!(rows[1][2].ends_with("Host]"), "{rows:?}");
        assert_ne!(rows[0][2], rows[1][2]);
    }
}
