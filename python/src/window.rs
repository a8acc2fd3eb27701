//! The timeline as a picture (`Trace.render`: `sightline render`'s drawing, the window's own
//! painter run with no display) and the window itself (`sightline.show`: the window the
//! command line opens, run in a Python process of its own by `sightline/_window.py`).

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use sightline::cli::{RenderArgs, Theme};

use crate::trace::{NAME as TRACE, Trace};
use crate::{arg, error, function, handle, object, without_gil};

/// `trace_render(t, range, width, height, rows, theme, colour_blind, critical_path, sql_tracks,
/// svg)`: the timeline as PNG bytes (or SVG text where `svg`), drawn as `sightline render
/// TRACE --out FILE` draws it with the same options.
fn render(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let item = args.get_item(0)?;
    let t: &Trace = handle(&item, TRACE)?;
    let theme: String = arg(args, 5)?;
    let svg: bool = arg(args, 9)?;
    let render = RenderArgs {
        trace: t.model.path.clone(),
        out: PathBuf::from(if svg { "timeline.svg" } else { "timeline.png" }),
        range: arg(args, 1)?,
        width: arg(args, 2)?,
        height: arg(args, 3)?,
        rows: arg(args, 4)?,
        theme: match theme.as_str() {
            "dark" => Theme::Dark,
            "light" => Theme::Light,
            other => {
                return Err(error(format!(
                    "theme takes 'dark' or 'light' (got '{other}')"
                )));
            }
        },
        colour_blind: arg(args, 6)?,
        critical_path: arg(args, 7)?,
        sql_track: arg(args, 8)?,
        sql_timeout: 30.0,
    };
    let bytes = without_gil(py, "drawing the timeline", || {
        let frame =
            sightline::cli::render_frame(&t.model, &render).map_err(|e| error(format!("{e:#}")))?;
        if svg {
            Ok(frame.to_svg().into_bytes())
        } else {
            frame.png_bytes().map_err(error)
        }
    })?;
    object(py, PyBytes::new(py, &bytes))
}

/// `window(files, compare, ranks, ncu, no_cache)`: the window as `sightline FILES…` (or
/// `--compare BASE NEW`, `--ranks FILE…`, `--ncu REPORT`) opens it; returns when it is closed.
/// Meant for a process of its own (`sightline.show` starts one): the window owns the thread
/// it runs on until it closes.
fn window(args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
    let py = args.py();
    let files: Vec<PathBuf> = arg(args, 0)?;
    let compare: bool = arg(args, 1)?;
    let ranks: Vec<PathBuf> = arg(args, 2)?;
    let ncu: Option<PathBuf> = arg(args, 3)?;
    let no_cache: bool = arg(args, 4)?;
    if compare && files.len() != 2 {
        return Err(error("compare takes two traces: BASE and NEW"));
    }
    without_gil(py, "the window", || {
        sightline::ui::run_window(files, compare, None, ranks, ncu, no_cache)
            .map_err(|e| error(format!("{e:#}")))
    })?;
    Ok(py.None())
}

/// `trace_render(…)`, `window(…)`.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    function(module, c"trace_render", render)?;
    function(module, c"window", window)
}
