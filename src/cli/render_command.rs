//! `sightline render`: the timeline as a PNG or SVG file, with no display (servers, reports).
//! The drawing is the window's own, run headlessly by [`crate::render`].

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use regex::RegexBuilder;

use crate::analysis::TimeRange;
use crate::render::{self, DEFAULT_HEIGHT_PX, DEFAULT_WIDTH_PX, RenderOptions};
use crate::trace::Trace;

#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
}

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// The trace (.sqlite export, or .nsys-rep when nsys is on PATH).
    pub trace: PathBuf,
    /// Where to write the image: FILE.png (pixels) or FILE.svg (vectors).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The time span to show: START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us), `gpu`
    /// (from the first GPU operation to the end of the last, with 2 % of that on each side) or
    /// `all` (the whole trace). When left out: `gpu` where start-up dominates — the GPU work
    /// spans less than 80 % of the trace (e.g. a Python program importing for seconds before
    /// its first kernel) — else `all`; as the window's first view.
    #[arg(long)]
    pub range: Option<String>,
    /// Image width in pixels.
    #[arg(long, default_value_t = DEFAULT_WIDTH_PX)]
    pub width: u32,
    /// Image height in pixels (rows that do not fit are cut off, as in a window of that size).
    #[arg(long, default_value_t = DEFAULT_HEIGHT_PX)]
    pub height: u32,
    /// Only rows whose title matches REGEX (any case), e.g. `--rows 'Stream|CUDA API'`. Each kept
    /// row keeps the headers of its groups (GPU, process, thread), opened; a matching header (a
    /// GPU, a process, a thread, "Metrics") keeps its whole group.
    #[arg(long, value_name = "REGEX")]
    pub rows: Option<String>,
    /// Colours of the window's dark or light theme.
    #[arg(long, value_enum, default_value_t = Theme::Dark)]
    pub theme: Theme,
    /// Colour-blind-safe colours (Okabe–Ito based), as View → Colour-blind-safe colours.
    #[arg(long)]
    pub colour_blind: bool,
    /// Draw a query's intervals as a track, first on the timeline (repeatable): a query over the
    /// views of `sightline sql` whose result has `start` and `end` (or `ts` and `dur`) columns,
    /// optionally `name` (bar labels and colours) and `row` (one lane per value). `:sel_start`
    /// and `:sel_end` are the range drawn.
    #[arg(long, value_name = "QUERY")]
    pub sql_track: Vec<String>,
    /// Outline the critical path of iteration N (as `--report iterations` numbers them, from 0)
    /// and, unless --range is given, draw that iteration.
    #[arg(long, value_name = "ITERATION")]
    pub critical_path: Option<usize>,
    /// Stop a --sql-track query that runs longer than SECS seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    pub sql_timeout: f64,
}

/// The tracks of the `--sql-track` queries over `trace`, `:sel_start`/`:sel_end` bound to `range`.
fn sql_tracks(
    args: &RenderArgs,
    trace: &Trace,
    range: TimeRange,
) -> Result<Vec<std::sync::Arc<crate::sql::track::SqlTrack>>> {
    if args.sql_track.is_empty() {
        return Ok(Vec::new());
    }
    if !(args.sql_timeout.is_finite() && args.sql_timeout > 0.0) {
        bail!("--sql-timeout takes a positive number of seconds");
    }
    let db = crate::sql::SqlTrace::for_loaded(trace)?;
    let (start, end) = range.resolve(trace.first_ns, trace.last_ns);
    let params = [("sel_start", start), ("sel_end", end)];
    let timeout = std::time::Duration::from_secs_f64(args.sql_timeout);
    let mut out = Vec::new();
    for query in &args.sql_track {
        let result = db
            .query_with(
                query,
                &params,
                Some(crate::sql::track::MAX_PINNED_ROWS),
                timeout,
                None,
            )
            .with_context(|| format!("--sql-track '{query}'"))?;
        if result.truncated {
            eprintln!(
                "note: --sql-track '{query}': only the first {} rows are drawn",
                result.rows.len()
            );
        }
        let title = crate::sql::track::title_of(query);
        let track = crate::sql::track::SqlTrack::from_result(&title, query, &result)
            .with_context(|| format!("--sql-track '{query}'"))?;
        eprintln!(
            "--sql-track '{title}': {} intervals in {} lanes{}",
            track.intervals.len(),
            track.lanes.len(),
            match track.skipped {
                0 => String::new(),
                n => format!(" ({n} rows without a start and end left out)"),
            }
        );
        out.push(std::sync::Arc::new(track));
    }
    Ok(out)
}

/// Whether `out` names a PNG (else an SVG); anything else is refused before loading the trace.
fn wants_png(out: &std::path::Path) -> Result<bool> {
    let ext = out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("png") => Ok(true),
        Some("svg") => Ok(false),
        _ => bail!(
            "--out {}: the file name must end in .png or .svg",
            out.display()
        ),
    }
}

/// Where start-up dominates: the GPU work spans less than this share of the trace.
pub const GPU_SPAN_SHARE: f64 = 0.8;
/// Room left on each side of the GPU work by `--range gpu`, as a share of its span.
const GPU_MARGIN: f64 = 0.02;

/// What `--range` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Span {
    /// Left out: `Gpu` where start-up dominates, else `All`.
    Auto,
    All,
    Gpu,
    Range(TimeRange),
}

fn parse_span(range: Option<&str>) -> Result<Span> {
    Ok(match range.map(str::trim) {
        None => Span::Auto,
        Some("all") => Span::All,
        Some("gpu") => Span::Gpu,
        Some(r) => Span::Range(super::parse_range_arg(Some(r))?),
    })
}

/// The span of `trace`'s GPU work with its margin, if it has any.
fn gpu_range(trace: &Trace) -> Option<TimeRange> {
    let (a, b) = trace.gpu_span()?;
    let margin = ((b - a) as f64 * GPU_MARGIN).round() as i64;
    Some(TimeRange::new(a - margin, b + margin))
}

/// Whether start-up (or tear-down) dominates `trace`: its GPU work spans less than
/// [`GPU_SPAN_SHARE`] of it.
pub fn startup_dominates(trace: &Trace) -> bool {
    trace.gpu_span().is_some_and(|(a, b)| {
        let whole = (trace.last_ns - trace.first_ns).max(1) as f64;
        ((b - a).max(1) as f64) < GPU_SPAN_SHARE * whole
    })
}

/// The time range to draw for `span`; says on stderr when it chose the GPU span by itself.
fn resolve(trace: &Trace, span: Span) -> Result<TimeRange> {
    let whole = TimeRange::new(trace.first_ns, trace.last_ns + 1);
    Ok(match span {
        Span::Range(r) => r,
        Span::All => whole,
        Span::Gpu => gpu_range(trace).ok_or_else(|| {
            anyhow::anyhow!("--range gpu: {} has no GPU operation", trace.path.display())
        })?,
        Span::Auto => match gpu_range(trace).filter(|_| startup_dominates(trace)) {
            Some(r) => {
                eprintln!(
                    "note: drawing the GPU work only (--range gpu): it spans less than {:.0} % of \
                     the trace; --range all draws everything",
                    GPU_SPAN_SHARE * 100.0
                );
                r
            }
            None => whole,
        },
    })
}

/// The critical path of iteration `n` of the trace's default family.
fn iteration_path(trace: &Trace, n: usize) -> Result<crate::analysis::critical_path::CriticalPath> {
    use crate::analysis::iterations::{self, FamilyChoice};
    let found = iterations::iterations(trace, TimeRange::ALL, &FamilyChoice::Default, None);
    let it = found.iterations.get(n).ok_or_else(|| {
        anyhow::anyhow!(
            "--critical-path {n}: {} has {} iterations{}",
            trace.path.display(),
            found.iterations.len(),
            if found.family.is_empty() {
                String::new()
            } else {
                format!(" of {} (numbered from 0)", found.family)
            }
        )
    })?;
    let path = crate::analysis::critical_path::step_paths(trace, std::slice::from_ref(it))
        .pop()
        .ok_or_else(|| anyhow::anyhow!("--critical-path {n}: no path"))?;
    eprintln!(
        "critical path of {} #{n} ({}): {} segments, bound by {}",
        found.family,
        it.name,
        path.segments.len(),
        path.bound_by().map_or("nothing", |p| p.label())
    );
    Ok(path)
}

/// `--rows REGEX`, matched in any case.
fn rows_regex(pattern: Option<&str>) -> Result<Option<regex::Regex>> {
    pattern
        .map(|p| {
            RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .with_context(|| format!("--rows '{p}' is not a valid regex"))
        })
        .transpose()
}

/// The timeline of `trace` as `sightline render` draws it for `args` (its range, size, rows,
/// theme, colours, SQL tracks and critical path; `args.trace` and `args.out` are not read):
/// shared by the command and Python's `Trace.render`.
pub fn frame_of(trace: &Trace, args: &RenderArgs) -> Result<render::RenderedFrame> {
    let span = parse_span(args.range.as_deref())?;
    let rows = rows_regex(args.rows.as_deref())?;
    let path = match args.critical_path {
        Some(n) => Some(iteration_path(trace, n)?),
        None => None,
    };
    let range = match (&path, args.range.is_none()) {
        (Some(p), true) => {
            let margin = ((p.end_ns - p.start_ns) as f64 * GPU_MARGIN).round() as i64;
            TimeRange::new(p.start_ns - margin, p.end_ns + margin)
        }
        _ => resolve(trace, span)?,
    };
    let sql_tracks = sql_tracks(args, trace, range)?;
    let options = RenderOptions {
        sql_tracks,
        width_px: args.width,
        height_px: args.height,
        range,
        rows,
        dark: args.theme == Theme::Dark,
        palette: if args.colour_blind {
            crate::timeline::PaletteKind::ColourBlind
        } else {
            crate::timeline::PaletteKind::Standard
        },
        critical_path: path.as_ref().map(crate::timeline::PathOverlay::of),
    };
    render::render(trace, &options)
        .with_context(|| format!("cannot render {}", trace.path.display()))
}

pub fn render(args: &RenderArgs) -> Result<i32> {
    let png = wants_png(&args.out)?;
    // Bad options are said before the trace is loaded.
    parse_span(args.range.as_deref())?;
    rows_regex(args.rows.as_deref())?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        bail!(
            "--out {}: the folder {} does not exist",
            args.out.display(),
            dir.display()
        );
    }
    let trace = super::load_for_cli(&args.trace, crate::trace::Needs::ALL)?;
    let frame = frame_of(&trace, args)?;
    if png {
        frame.write_png(&args.out)?;
    } else {
        frame.write_svg(&args.out)?;
    }
    eprintln!(
        "{}: {} rows, {} events and {} merged blocks drawn",
        args.out.display(),
        frame.rows_drawn,
        frame.events_drawn,
        frame.merged_drawn
    );
    Ok(0)
}
