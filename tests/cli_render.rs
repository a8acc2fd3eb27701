//! `sightline render` run as a user on a server runs it: no DISPLAY, no WAYLAND_DISPLAY. The PNG
//! has the size asked for and shows the trace (legend colours where the SQL says copies are, none
//! where it says there are none); the SVG is well-formed and titles its rows; bad input is a
//! clear error, never a panic.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sightline::ui::theme::Palette;
use sightline::ui::timeline::TITLE_WIDTH_PX;

/// Runs `sightline render` with no display in the environment.
fn render(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("render")
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run sightline render")
}

fn render_ok(args: &[&str]) {
    let out = render(args);
    assert!(
        out.status.success(),
        "sightline render {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (width, height, RGBA pixels) of a PNG file, decoded by the `png` crate.
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open the PNG"));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buf).expect("the PNG's pixels");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Pixels of exactly this colour (opaque).
fn count_colour(rgba: &[u8], colour: egui::Color32) -> usize {
    let want = colour.to_srgba_unmultiplied();
    rgba.chunks_exact(4).filter(|p| *p == want).count()
}

/// Pixels of exactly this colour right of the row titles (the event area).
fn count_colour_in_events(rgba: &[u8], width: u32, colour: egui::Color32) -> usize {
    let want = colour.to_srgba_unmultiplied();
    rgba.chunks_exact(4)
        .enumerate()
        .filter(|(i, p)| (i % width as usize) as f32 >= TITLE_WIDTH_PX && *p == want)
        .count()
}

/// The longest Host-to-Device copy of moe: (start, end, stream), by SQL.
fn longest_htod(path: &Path) -> (i64, i64, i64) {
    common::open_ro(path)
        .query_row(
            "SELECT start, end, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1
             ORDER BY end - start DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("moe has Host-to-Device copies")
}

/// The longest stretch with no Host-to-Device copy running, between two of them, with the number
/// of Device-to-Host copies overlapping it: all by SQL (and a walk over the sorted copies).
fn longest_htod_gap(path: &Path) -> ((i64, i64), i64) {
    let conn = common::open_ro(path);
    let mut stmt = conn
        .prepare(
            "SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 ORDER BY start",
        )
        .unwrap();
    let copies: Vec<(i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut busy_until = copies[0].1;
    let mut best = (0, 0);
    for &(start, end) in &copies[1..] {
        if start - busy_until > best.1 - best.0 {
            best = (busy_until, start);
        }
        busy_until = busy_until.max(end);
    }
    let dtoh: i64 = conn
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY
             WHERE copyKind = 2 AND start < ?2 AND end > ?1",
            [best.0, best.1],
            |r| r.get(0),
        )
        .unwrap();
    (best, dtoh)
}

fn out_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

#[test]
fn png_has_the_requested_size_and_shows_the_copy_in_its_legend_colour() {
    let trace = common::fixture("moe");
    let (start, end, _) = longest_htod(&trace);
    let dir = common::scratch_dir("render-png");
    let (width, height) = (1200u32, 700u32);
    for (theme, palette) in [("dark", Palette::dark()), ("light", Palette::light())] {
        let out = out_file(&dir, &format!("copy_{theme}.png"));
        render_ok(&[
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--range",
            &format!("{start}:{end}"),
            "--width",
            &width.to_string(),
            "--height",
            &height.to_string(),
            "--theme",
            theme,
        ]);
        let (w, h, rgba) = decode_png(&out);
        assert_eq!((w, h), (width, height));
        // The view is the copy: it spans the whole event area in its stream's row, at least
        // half of that row's height (bars leave a margin), so at least one full-width run of
        // its colour per pixel row of half a row.
        let event_width = width as usize - TITLE_WIDTH_PX as usize;
        let htod = count_colour_in_events(&rgba, width, palette.memcpy_htod);
        assert!(
            htod >= event_width * 10,
            "{theme}: {htod} pixels of the Host-to-Device colour, expected ≥ {}",
            event_width * 10
        );
        // The theme's own row colours are there (it is not the other theme).
        assert!(count_colour(&rgba, palette.row_even) > 0, "{theme}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_range_without_host_to_device_copies_has_none_of_their_colour() {
    let trace = common::fixture("moe");
    let ((a, b), dtoh) = longest_htod_gap(&trace);
    assert!(
        b > a && dtoh > 0,
        "moe has a stretch of D2H copies between its H2D copies"
    );
    let dir = common::scratch_dir("render-gap");
    let out = out_file(&dir, "gap.png");
    // A small margin inside the gap, so a copy ending at its very edge is not half a pixel in.
    let margin = (b - a) / 100;
    render_ok(&[
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--range",
        &format!("{}:{}", a + margin, b - margin),
    ]);
    let (w, h, rgba) = decode_png(&out);
    assert_eq!((w, h), (1600, 900), "the default size");
    let palette = Palette::dark();
    assert_eq!(count_colour(&rgba, palette.memcpy_htod), 0);
    assert!(
        count_colour_in_events(&rgba, w, palette.memcpy_dtoh) > 0,
        "the {dtoh} Device-to-Host copies of the range are drawn"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The texts of every `<text>` of an SVG, after checking that the whole document parses with
/// balanced tags under one `<svg>` root.
fn svg_texts(svg: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut depth, mut roots) = (0i64, 0);
    let mut texts: Vec<String> = Vec::new();
    let mut in_text = false;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                if depth == 0 {
                    assert_eq!(e.name().as_ref(), b"svg");
                    roots += 1;
                }
                in_text = e.name().as_ref() == b"text";
                if in_text {
                    texts.push(String::new());
                }
                depth += 1;
            }
            Ok(Event::End(_)) => {
                depth -= 1;
                in_text = false;
            }
            Ok(Event::Text(t)) if in_text => {
                let raw = String::from_utf8_lossy(&t.into_inner()).into_owned();
                texts.last_mut().unwrap().push_str(&raw);
            }
            Ok(Event::GeneralRef(r)) if in_text => {
                let name = String::from_utf8_lossy(&r.into_inner()).into_owned();
                let c = match name.as_str() {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unexpected entity &{other};"),
                };
                texts.last_mut().unwrap().push_str(c);
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("the SVG does not parse: {e}"),
        }
    }
    assert_eq!(depth, 0, "unbalanced tags");
    assert_eq!(roots, 1);
    texts
}

#[test]
fn svg_is_well_formed_and_titles_the_rows() {
    let trace = common::fixture("moe");
    let (_, _, stream) = longest_htod(&trace);
    let dir = common::scratch_dir("render-svg");
    let out = out_file(&dir, "moe.svg");
    render_ok(&[trace.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let svg = std::fs::read_to_string(&out).unwrap();
    let texts = svg_texts(&svg);
    let title = format!("Stream {stream}");
    assert!(
        texts
            .iter()
            .any(|t| t == &title || t.starts_with(&format!("{title} "))),
        "no <text> titles the row '{title}': {texts:?}"
    );
    assert!(texts.iter().any(|t| t == "CUDA API"), "{texts:?}");
    assert!(svg.contains(r#"width="1600" height="900""#));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rows_keeps_the_matching_rows_with_their_headers() {
    let trace = common::fixture("moe");
    let conn = common::open_ro(&trace);
    // The process that made the CUDA calls, by SQL: its header must stay above its rows.
    let pid: i64 = conn
        .query_row(
            "SELECT (globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let dir = common::scratch_dir("render-rows");
    let out = out_file(&dir, "api.svg");
    render_ok(&[
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "^cuda api$",
    ]);
    let texts = svg_texts(&std::fs::read_to_string(&out).unwrap());
    assert!(texts.iter().any(|t| t == "CUDA API"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.ends_with(&format!("[{pid}]"))),
        "the process header [{pid}] stays: {texts:?}"
    );
    for gone in ["Stream", "OS runtime", "NVTX", "GPU memory in use"] {
        assert!(
            !texts.iter().any(|t| t.starts_with(gone)),
            "'{gone}' rows should be gone: {texts:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_matching_group_header_keeps_its_whole_group() {
    let trace = common::fixture("moe");
    let conn = common::open_ro(&trace);
    // Every stream that ran a kernel, a copy or a memset, by SQL: each has a row under its GPU.
    let mut stmt = conn
        .prepare(
            "SELECT streamId FROM CUPTI_ACTIVITY_KIND_KERNEL
             UNION SELECT streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY
             UNION SELECT streamId FROM CUPTI_ACTIVITY_KIND_MEMSET",
        )
        .unwrap();
    let streams: Vec<i64> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!streams.is_empty());
    let dir = common::scratch_dir("render-group");
    let out = out_file(&dir, "gpu.svg");
    render_ok(&[
        trace.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--rows",
        "^gpu 0 · nvidia",
    ]);
    let texts = svg_texts(&std::fs::read_to_string(&out).unwrap());
    for stream in streams {
        let title = format!("Stream {stream}");
        assert!(
            texts
                .iter()
                .any(|t| t == &title || t.starts_with(&format!("{title} "))),
            "'{title}' kept with its GPU: {texts:?}"
        );
    }
    assert!(!texts.iter().any(|t| t == "CUDA API"), "{texts:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let trace = common::fixture("moe");
    let trace = trace.to_str().unwrap();
    let dir = common::scratch_dir("render-errors");
    let png = out_file(&dir, "x.png");
    let png = png.to_str().unwrap();
    let missing_dir = dir.join("no/such/folder/x.png");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![trace, "--out", png, "--range", "5s:1s"],
            "ends before it starts",
        ),
        (
            vec![trace, "--out", png, "--range", "1000s:2000s"],
            "does not overlap",
        ),
        (vec![trace, "--out", png, "--range", "banana"], "START:END"),
        (vec![trace, "--out", "x.jpg"], ".png or .svg"),
        (vec![trace, "--out", png, "--width", "10"], "out of bounds"),
        (
            vec![trace, "--out", png, "--rows", "no row is called this"],
            "no row title matches",
        ),
        (
            vec![trace, "--out", png, "--rows", "(unclosed"],
            "not a valid regex",
        ),
        (
            vec![trace, "--out", missing_dir.to_str().unwrap()],
            "does not exist",
        ),
        (vec!["/no/such/trace.sqlite", "--out", png], "trace.sqlite"),
    ];
    for (args, message) in cases {
        let out = render(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
        assert!(
            stderr.contains(message),
            "{args:?}: '{message}' not in: {stderr}"
        );
    }
    assert!(!Path::new(png).exists(), "no image is written on an error");
    let _ = std::fs::remove_dir_all(&dir);
}
