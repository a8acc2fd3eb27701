//! The colour-blind-safe palette (issue 11 item 6), checked with a simulation of colour vision
//! written here, apart from Sightline's own (which uses Machado et al. 2009): Viénot, Brettel and
//! Mollon (1999) dichromat projection in LMS space, then CIE 1976 ΔE in CIELAB (D65).
//!
//! - every pair of legend colours stays apart for deuteranopes and protanopes (and the standard
//!   palette does not: the reason for the option);
//! - kernels of real traces (every kernel name of the fixtures and of `../shared/traces`, read
//!   with rusqlite) are drawn in colours unlike every legend colour, and communication kernels in
//!   a family of their own;
//! - in the window (egui_kittest), choosing the palette repaints copies and kernels with it, and
//!   communication kernels of a real two-GPU trace (p2p_2gpu, its kernel named communication in
//!   the Overlap tab) take the communication family.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::ui::{opened, settle};
use egui::{Color32, Shape, epaint::ClippedShape};
use egui_kittest::kittest::Queryable;
use rusqlite::Connection;
use sightline::analysis::comm_overlap::default_comm_regex;
use sightline::timeline::painter::event_style;
use sightline::ui::theme::{
    self, Palette, PaletteKind, colour_blind_comm_colours, comm_kernel_color, kernel_color,
};
use sightline::ui::timeline::{EventKind, EventRef};

/// Smallest ΔE between two legend colours, for any of the three visions.
const LEGEND_MIN_DELTA_E: f32 = 20.0;
/// Smallest ΔE between a kernel colour and a legend or communication colour.
const KERNEL_MIN_DELTA_E: f32 = 12.0;
/// Smallest ΔE between a communication kernel's colour and a legend colour other than
/// communication's own.
const COMM_MIN_DELTA_E: f32 = 15.0;

#[derive(Clone, Copy, Debug)]
enum Vision {
    Normal,
    Protanope,
    Deuteranope,
}

const VISIONS: [Vision; 3] = [Vision::Normal, Vision::Protanope, Vision::Deuteranope];

fn to_linear(v: u8) -> f64 {
    let c = f64::from(v) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear RGB as a dichromat sees it (Viénot, Brettel & Mollon 1999, their LMS matrices).
fn seen(c: Color32, vision: Vision) -> [f64; 3] {
    let [r, g, b] = [c.r(), c.g(), c.b()].map(to_linear);
    let mut l = 17.8824 * r + 43.5161 * g + 4.11935 * b;
    let mut m = 3.45565 * r + 27.1554 * g + 3.86714 * b;
    let s = 0.0299566 * r + 0.184309 * g + 1.46709 * b;
    match vision {
        Vision::Normal => {}
        Vision::Protanope => l = 2.02344 * m - 2.52581 * s,
        Vision::Deuteranope => m = 0.494207 * l + 1.24827 * s,
    }
    [
        0.0809444479 * l - 0.130504409 * m + 0.116721066 * s,
        -0.0102485335 * l + 0.0540193266 * m - 0.113614708 * s,
        -0.000365296938 * l - 0.00412161469 * m + 0.693511405 * s,
    ]
    .map(|v| v.clamp(0.0, 1.0))
}

fn cielab([r, g, b]: [f64; 3]) -> [f64; 3] {
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 216.0 / 24389.0 {
            t.cbrt()
        } else {
            (24389.0 / 27.0 * t + 16.0) / 116.0
        }
    };
    [
        116.0 * f(y) - 16.0,
        500.0 * (f(x) - f(y)),
        200.0 * (f(y) - f(z)),
    ]
}

/// The smallest ΔE between `a` and `b` over normal vision, protanopia and deuteranopia.
fn worst_delta_e(a: Color32, b: Color32) -> f32 {
    VISIONS
        .iter()
        .map(|&v| {
            let (la, lb) = (cielab(seen(a, v)), cielab(seen(b, v)));
            ((la[0] - lb[0]).powi(2) + (la[1] - lb[1]).powi(2) + (la[2] - lb[2]).powi(2)).sqrt()
        })
        .fold(f64::INFINITY, f64::min) as f32
}

fn colour_blind_palettes() -> [Palette; 2] {
    [
        Palette::new(true, PaletteKind::ColourBlind),
        Palette::new(false, PaletteKind::ColourBlind),
    ]
}

/// The closest pair of legend colours of `palette`: (ΔE, name, name).
fn closest_legend_pair(palette: &Palette) -> (f32, &'static str, &'static str) {
    let legend = palette.legend();
    let mut closest = (f32::INFINITY, "", "");
    for (i, &(a, ca)) in legend.iter().enumerate() {
        for &(b, cb) in &legend[i + 1..] {
            let d = worst_delta_e(ca, cb);
            if d < closest.0 {
                closest = (d, a, b);
            }
        }
    }
    closest
}

#[test]
fn legend_colours_stay_apart_for_deuteranopes_and_protanopes() {
    for palette in colour_blind_palettes() {
        assert_eq!(palette.kind, PaletteKind::ColourBlind);
        let (d, a, b) = closest_legend_pair(&palette);
        assert!(
            d >= LEGEND_MIN_DELTA_E,
            "dark {}: {a} and {b} only ΔE {d:.1} apart",
            palette.dark
        );
        // Every legend colour stands out from the rows it is drawn on.
        for (name, c) in palette.legend() {
            for row in [palette.row_even, palette.row_odd] {
                let d = worst_delta_e(c, row);
                assert!(d >= LEGEND_MIN_DELTA_E, "{name} on its row: ΔE {d:.1}");
            }
        }
        let names: Vec<&str> = palette.legend().iter().map(|&(n, _)| n).collect();
        assert!(names.contains(&"Communication"), "{names:?}");
    }
    // The standard palettes keep nsys-ui's colours, which a deuteranope cannot all tell apart.
    for palette in [Palette::dark(), Palette::light()] {
        assert_eq!(palette.kind, PaletteKind::Standard);
        let (d, a, b) = closest_legend_pair(&palette);
        assert!(
            d < LEGEND_MIN_DELTA_E,
            "standard palette: closest {a}/{b} at ΔE {d:.1}"
        );
    }
    assert_eq!(
        Palette::new(true, PaletteKind::Standard),
        Palette::dark(),
        "the standard kind is the palette the window always had"
    );
}

/// Every distinct kernel name in the fixtures and the shared traces, read with rusqlite.
fn real_kernel_names() -> BTreeSet<String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(common::fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .collect();
    paths.extend(common::shared_exports());
    let mut names = BTreeSet::new();
    for path in paths {
        let db =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let Ok(mut q) = db.prepare(
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        ) else {
            continue; // no kernel table in this export
        };
        let rows = q.query_map([], |r| r.get::<_, String>(0)).unwrap();
        names.extend(rows.map(Result::unwrap));
    }
    names
}

#[test]
fn kernels_of_real_traces_never_look_like_a_legend_colour() {
    let real = real_kernel_names();
    // The fixtures alone have a dozen names; with ../shared/traces there are many more.
    let least = if common::shared_traces().is_some() {
        50
    } else {
        10
    };
    println!("{} real kernel names", real.len());
    assert!(real.len() > least, "{} kernel names", real.len());
    // And names no trace had, to cover the hash's range.
    let names: BTreeSet<String> = real
        .into_iter()
        .chain((0..3000).map(|i| format!("kernel_{i}")))
        .collect();
    for palette in colour_blind_palettes() {
        let legend = palette.legend();
        let comm_family = colour_blind_comm_colours();
        let mut fills = BTreeSet::new();
        for name in &names {
            let fill = palette.kernel_fill(kernel_color(name));
            fills.insert(fill.to_array());
            for &(legend_name, c) in &legend {
                let d = worst_delta_e(fill, c);
                assert!(
                    d >= KERNEL_MIN_DELTA_E,
                    "{name}: ΔE {d:.1} from {legend_name}"
                );
            }
            // And unlike every communication kernel.
            for &c in comm_family {
                let d = worst_delta_e(fill, c);
                assert!(d >= KERNEL_MIN_DELTA_E, "{name}: ΔE {d:.1} from {c:?}");
            }
            // The same kernel name, taken as communication: the communication family, unlike
            // every other legend colour.
            let comm = palette.kernel_fill(comm_kernel_color(name));
            assert!(comm_family.contains(&comm), "{name}: {comm:?}");
            for &(legend_name, c) in &legend {
                if legend_name != "Communication" {
                    let d = worst_delta_e(comm, c);
                    assert!(
                        d >= COMM_MIN_DELTA_E,
                        "comm {name}: ΔE {d:.1} from {legend_name}"
                    );
                }
            }
        }
        // Kernels still differ from one another.
        assert!(fills.len() > 150, "{} distinct kernel colours", fills.len());
    }
}

fn rect_fills(shapes: &[ClippedShape]) -> BTreeSet<[u8; 4]> {
    fn walk(shape: &Shape, out: &mut BTreeSet<[u8; 4]>) {
        match shape {
            Shape::Rect(r) => {
                out.insert(r.fill.to_array());
            }
            Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for s in shapes {
        walk(&s.shape, &mut out);
    }
    out
}

#[test]
fn choosing_the_palette_repaints_copies_and_communication_kernels_of_a_real_trace() {
    let path = common::fixture("p2p_2gpu");
    let mut h = opened("p2p_2gpu");
    let dark = h.ctx.theme() == egui::Theme::Dark;
    let standard = Palette::new(dark, PaletteKind::Standard);
    let colour_blind = Palette::new(dark, PaletteKind::ColourBlind);
    let drawn = rect_fills(&h.output().shapes);
    assert!(drawn.contains(&standard.memcpy_ptop.to_array()));
    assert!(!drawn.contains(&colour_blind.memcpy_ptop.to_array()));

    PaletteKind::set(&h.ctx, PaletteKind::ColourBlind);
    h.run();
    assert_eq!(PaletteKind::current(&h.ctx), PaletteKind::ColourBlind);
    let drawn = rect_fills(&h.output().shapes);
    assert!(drawn.contains(&colour_blind.memcpy_ptop.to_array()));
    assert!(!drawn.contains(&standard.memcpy_ptop.to_array()));
    // The legend names communication (its short name where the bar is narrow).
    assert!(h.query_by_label("Communication").is_some() || h.query_by_label("Comm").is_some());

    // The export's kernel names, and which of them the default pattern calls communication.
    let db =
        Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let kernel_names: Vec<String> = db
        .prepare(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(!kernel_names.is_empty());
    let kernel_fills = |h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>| {
        let d = h.state().tab().document.as_ref().unwrap();
        (0..d.trace.kernels.spans.name.len())
            .map(|i| {
                let name: String = d.trace.str(d.trace.kernels.spans.name[i]).to_string();
                let ev = EventRef::new(EventKind::Kernel, i);
                (name, event_style(&d.trace, &d.model, &colour_blind, ev).0)
            })
            .collect::<Vec<_>>()
    };
    let regex = default_comm_regex();
    for (name, fill) in kernel_fills(&h) {
        assert!(
            !regex.is_match(&name),
            "p2p_2gpu has no NCCL kernel: {name}"
        );
        assert_eq!(fill, colour_blind.kernel_fill(kernel_color(&name)));
        assert!(!colour_blind_comm_colours().contains(&fill), "{name}");
    }

    // Name the trace's kernels communication, as a person does in the Overlap tab.
    h.get_by_label("Overlap").click();
    settle(&mut h);
    h.get_by_label("Communication kernels (regex)").click();
    h.run();
    h.key_press(egui::Key::End);
    let kernel = kernel_names[0].split('(').next().unwrap().to_string();
    h.get_by_label("Communication kernels (regex)")
        .type_text(&format!("|{}", regex::escape(&kernel)));
    settle(&mut h);
    h.run();
    let fills = kernel_fills(&h);
    for (name, fill) in &fills {
        assert!(name.contains(&kernel));
        assert_eq!(*fill, colour_blind.kernel_fill(comm_kernel_color(name)));
        assert!(
            colour_blind_comm_colours().contains(fill),
            "{name}: {fill:?}"
        );
    }
    // Its standard colour is the crimson family.
    assert!(
        fills
            .iter()
            .all(|(n, _)| theme::comm_kernel_color(n) != kernel_color(n))
    );
}
