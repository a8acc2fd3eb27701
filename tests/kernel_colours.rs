//! Kernel colours never read as copy colours (issue 25, item 11): the timeline model's colour of
//! every kernel name of every shared trace (nsys exports and PyTorch profiler traces) keeps its
//! hue out of the arc from the legend's Host→Device blue to its Peer→Peer purple (where
//! transformer's kernels were once a blue-violet (94, 94, 217)), out of the greens near
//! Device→Host and the oranges near Device→Device. The legend hues are read from the palettes.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;

use sightline::trace::Trace;
use sightline::ui::theme::Palette;
use sightline::ui::timeline::TimelineModel;

/// Hue of an RGB colour, in degrees.
fn hue_of(c: egui::Color32) -> f32 {
    let [r, g, b] = [c.r(), c.g(), c.b()].map(|v| f32::from(v) / 255.0);
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let d = max - min;
    if d == 0.0 {
        return 0.0;
    }
    let h = if max == r {
        ((g - b) / d).rem_euclid(6.0)
    } else if max == g {
        (b - r) / d + 2.0
    } else {
        (r - g) / d + 4.0
    };
    h * 60.0
}

fn every_shared_trace() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "moe",
        "transformer",
        "ws_baseline",
        "cpu_side",
        "p2p_2gpu",
        "stress",
    ]
    .iter()
    .map(|n| common::fixture(n))
    .collect();
    v.extend(common::shared_exports());
    if let Some(dir) = common::shared_traces() {
        let mut torch: Vec<PathBuf> = std::fs::read_dir(dir.join("pytorch"))
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        torch.retain(|p| p.to_string_lossy().ends_with(".json.gz"));
        torch.sort();
        v.extend(torch);
    }
    v
}

#[test]
fn no_kernel_colour_reads_as_a_copy_colour() {
    let margin = sightline::ui::theme::HUE_MARGIN;
    let mut checked = 0;
    for path in every_shared_trace() {
        let trace: Trace = sightline::load::load_file(&path).expect("load");
        let model = TimelineModel::new(&trace);
        let mut names: Vec<u32> = trace.kernels.spans.name.clone();
        names.sort_unstable();
        names.dedup();
        for p in [Palette::dark(), Palette::light()] {
            // The band the legend's Host→Device blue and Peer→Peer purple span, widened by the
            // margin (less a degree for 8-bit rounding); the greens within 28° of Device→Host
            // green, and its yellow side to 45° (moe's gemm kernels were once a lime
            // (126, 202, 78), hue 97°, among its device-to-host copies) and the oranges within 22° of Device→Device orange; and the margin around
            // every copy colour.
            let (blue, purple) = (hue_of(p.memcpy_htod), hue_of(p.memcpy_ptop));
            let copies = [
                (p.memcpy_htod, margin),
                (p.memcpy_dtoh, 28.0),
                (p.memcpy_dtod, 22.0),
                (p.memcpy_ptop, margin),
            ]
            .map(|(c, m)| (hue_of(c), m));
            for &name in &names {
                let c = model.kernel_color(name);
                let k = hue_of(c);
                assert!(
                    !(blue - margin + 1.0..=purple + margin - 1.0).contains(&k),
                    "{}: {} in {c:?} (hue {k}) between {blue} and {purple}",
                    path.display(),
                    trace.str(name)
                );
                // Nor a magenta between the P2P purple and the migrations' rose.
                let rose = hue_of(p.um_migration);
                assert!(
                    !(purple + 1.0..=rose - 1.0).contains(&k),
                    "{}: hue {k} between P2P purple {purple} and migration rose {rose}",
                    trace.str(name)
                );
                let green = hue_of(p.memcpy_dtoh);
                assert!(
                    !(green - 45.0 + 1.0..=green).contains(&k),
                    "{}: {} in {c:?} (hue {k}) a yellow-green beside Device→Host {green}",
                    path.display(),
                    trace.str(name)
                );
                for (l, m) in copies {
                    let d = (k - l).rem_euclid(360.0);
                    assert!(
                        d.min(360.0 - d) > m - 1.0,
                        "{}: hue {k} near {l}",
                        trace.str(name)
                    );
                }
                checked += 1;
            }
        }
    }
    // The six fixtures give 42 (names × two palettes); with ../shared/traces, hundreds.
    let least = if common::shared_traces().is_some() {
        100
    } else {
        40
    };
    println!("{checked} kernel colours checked");
    assert!(checked > least, "{checked} kernel colours checked");
    // Transformer's kernels were drawn in (94, 94, 217), between the two blues.
    let trace = sightline::load::load_file(&common::fixture("transformer")).unwrap();
    let model = TimelineModel::new(&trace);
    assert!(
        trace
            .kernels
            .spans
            .name
            .iter()
            .all(|&n| model.kernel_color(n) != egui::Color32::from_rgb(94, 94, 217))
    );
}
