//! `sightline render`: the timeline as a PNG or SVG file, with no display (servers, reports).
//! The drawing is the window's own, run headlessly by [`crate::render`].

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use regex::RegexBuilder;

use crate::render::{self, DEFAULT_HEIGHT_PX, DEFAULT_WIDTH_PX, RenderOptions};

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
    /// The time span to show, START:END (ns, or with a unit: 1.2s:1.5s, 100ms:, :20us); the
    /// whole trace when left out.
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

pub fn render(args: &RenderArgs) -> Result<i32> {
    let png = wants_png(&args.out)?;
    let range = super::parse_range_arg(args.range.as_deref())?;
    let rows = match &args.rows {
        Some(pattern) => Some(
            RegexBuilder::new(pattern)
                .case_insensitive(true)
                .build()
                .with_context(|| format!("--rows '{pattern}' is not a valid regex"))?,
        ),
        None => None,
    };
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
    let options = RenderOptions {
        width_px: args.width,
        height_px: args.height,
        range,
        rows,
        dark: args.theme == Theme::Dark,
        palette: if args.colour_blind {
            crate::ui::theme::PaletteKind::ColourBlind
        } else {
            crate::ui::theme::PaletteKind::Standard
        },
    };
    let frame = render::render(&trace, &options)
        .with_context(|| format!("cannot render {}", args.trace.display()))?;
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
