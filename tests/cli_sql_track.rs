//! `sightline render TRACE --sql-track "QUERY"` (issue 22): a query's intervals drawn headless as
//! the first row of the image, each where the export's own tables put it; a query without time
//! columns is refused with a message that says what a track needs.

// Helpers fail the test on a broken fixture, which is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use sightline::ui::theme;
use sightline::ui::timeline::{AXIS_HEIGHT_PX, TITLE_WIDTH_PX};

fn render(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("render")
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run sightline render")
}

/// (width, RGBA pixels) of a PNG file.
fn decode_png(path: &Path) -> (u32, Vec<u8>) {
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("open the PNG"));
    let mut reader = png::Decoder::new(file).read_info().expect("a PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("a sane size")];
    let info = reader.next_frame(&mut buf).expect("the PNG's pixels");
    assert_eq!(info.color_type, png::ColorType::Rgba);
    buf.truncate(info.buffer_size());
    (info.width, buf)
}

fn pixel(rgba: &[u8], width: u32, x: f32, y: f32) -> [u8; 4] {
    let i = 4 * (y as usize * width as usize + x as usize);
    [rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]]
}

/// The `optimizer_step` ranges of transformer.sqlite from the export's own tables.
fn optimizer_steps() -> Vec<(i64, i64)> {
    let conn = common::open_ro(&common::fixture("transformer"));
    let mut stmt = conn
        .prepare(
            "SELECT n.start, n.\"end\" FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId \
             WHERE n.eventType = 59 AND COALESCE(n.text, s.value) = 'optimizer_step' \
             ORDER BY n.start",
        )
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

#[test]
fn a_query_track_is_drawn_first_with_its_intervals_where_the_export_has_them() {
    let steps = optimizer_steps();
    assert!(steps.len() >= 10, "{} optimizer_step ranges", steps.len());
    // From 2 ms before the first to the end of the last: the track's row is empty before it.
    let (t0, t1) = (steps[0].0 - 2_000_000, steps[steps.len() - 1].1);
    let dir = common::scratch_dir("sql_track");
    let out = dir.join("track.png");
    let width = 1600u32;
    let o = render(&[
        common::fixture("transformer").to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--range",
        &format!("{t0}:{t1}"),
        "--width",
        &width.to_string(),
        "--sql-track",
        "SELECT ts, dur FROM (SELECT start AS ts, dur FROM ranges WHERE name = 'optimizer_step')",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{} intervals in 1 lanes", steps.len())),
        "{stderr}"
    );
    let (w, rgba) = decode_png(&out);
    assert_eq!(w, width);
    // The first row, below the axis: bars from 2 px under its top to 2 px above its bottom.
    let y = AXIS_HEIGHT_PX + 4.0;
    let left = TITLE_WIDTH_PX;
    let px_per_ns = (width as f32 - left) / (t1 - t0) as f32;
    let x = |t: i64| left + (t - t0) as f32 * px_per_ns;
    // No `name` column: every bar has the track's colour, from its title.
    let title = sightline::sql::track::title_of(
        "SELECT ts, dur FROM (SELECT start AS ts, dur FROM ranges WHERE name = 'optimizer_step')",
    );
    let colour = theme::kernel_color(&title).to_srgba_unmultiplied();
    for &(start, end) in &steps {
        let (a, b) = (x(start), x(end));
        assert!(b - a > 6.0, "a bar {a}..{b} too narrow to test");
        for probe in [a + 2.0, (a + b) / 2.0, b - 2.0] {
            assert_eq!(
                pixel(&rgba, w, probe, y),
                colour,
                "no bar at x = {probe} for the range {start}..{end}"
            );
        }
    }
    // Before the first range, nothing of the track's colour.
    for probe in [left + 5.0, x(steps[0].0) - 3.0] {
        assert_ne!(pixel(&rgba, w, probe, y), colour, "x = {probe}");
    }
}

#[test]
fn a_query_without_time_columns_says_what_a_track_needs() {
    let dir = common::scratch_dir("sql_track_bad");
    let out = dir.join("bad.png");
    let o = render(&[
        common::fixture("moe").to_str().expect("utf-8"),
        "--out",
        out.to_str().expect("utf-8"),
        "--sql-track",
        "SELECT name, count(*) AS n FROM kernels GROUP BY name",
    ]);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("`start` and `end` (or `ts` and `dur`)") && stderr.contains("name, n"),
        "{stderr}"
    );
    assert!(!out.exists(), "no image is written");
}
