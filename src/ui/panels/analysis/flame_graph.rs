//! The flame graph of the CPU samples tab, drawn with the egui painter from the top-down tree of
//! [`crate::analysis::cpu_samples::Profile`]: an icicle (the root on top, callees below, as
//! Nsight Systems and speedscope draw it), each node as wide as its total samples, coloured by
//! its module (hue) and function (shade) so the same function keeps its colour between
//! selections, its name clipped to its rectangle.
//!
//! The graph is laid out from the zoomed node: that node spans the full width, its ancestors sit
//! above it full width and dimmed, and nodes narrower than half a pixel are not laid out (nor
//! their callees), so a frame costs what is on screen, not what is in the profile.

use egui::text::{LayoutJob, TextWrapping};
use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Ui, vec2};

use crate::analysis::cpu_samples::Profile;
use crate::trace::Trace;

/// Height of one level of the graph.
pub const LEVEL_PX: f32 = 18.0;
/// Narrowest rectangle laid out; its callees are narrower still.
const MIN_WIDTH_PX: f32 = 0.5;
/// Narrowest rectangle given a label.
const MIN_LABEL_PX: f32 = 24.0;

/// A laid-out node of the graph.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlameRect {
    /// Node of [`Profile::tree`].
    pub node: u32,
    /// In the graph's own coordinates (x from 0 to the width, y from 0 down).
    pub rect: Rect,
    /// An ancestor of the zoomed node (drawn dimmed).
    pub ancestor: bool,
}

/// What a click on the graph hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlameClick {
    Node(u32),
    /// The graph, outside every rectangle.
    Background,
}

/// The rectangles of `profile`'s tree for a graph `width_px` wide zoomed into `zoom`, ancestors
/// first, then the zoomed node and its callees depth first.
pub fn layout(profile: &Profile, zoom: u32, width_px: f32) -> Vec<FlameRect> {
    let mut out = Vec::new();
    let Some(z) = profile.tree.get(zoom as usize) else {
        return out;
    };
    let mut ancestors = Vec::new();
    let mut n = z.parent;
    if zoom != 0 {
        loop {
            ancestors.push(n);
            if n == 0 {
                break;
            }
            n = profile.tree.get(n as usize).map_or(0, |p| p.parent);
        }
    }
    let top = ancestors.len();
    for (level, &a) in ancestors.iter().rev().enumerate() {
        out.push(FlameRect {
            node: a,
            rect: level_rect(level, 0.0, width_px),
            ancestor: true,
        });
    }
    if z.total_samples == 0 {
        return out;
    }
    // Depth first, each node's callees left to right biggest first (the tree's order).
    let mut stack = vec![(zoom, top, 0.0f32, width_px)];
    while let Some((node, level, x0, w)) = stack.pop() {
        out.push(FlameRect {
            node,
            rect: level_rect(level, x0, w),
            ancestor: false,
        });
        let Some(c) = profile.tree.get(node as usize) else {
            continue;
        };
        let per_sample = w / c.total_samples.max(1) as f32;
        let mut x = x0;
        let mut children = Vec::new();
        for &child in &c.children {
            let cw = profile
                .tree
                .get(child as usize)
                .map_or(0.0, |k| k.total_samples as f32 * per_sample);
            if cw >= MIN_WIDTH_PX {
                children.push((child, level + 1, x, cw));
            }
            x += cw;
        }
        stack.extend(children.into_iter().rev());
    }
    out
}

fn level_rect(level: usize, x0: f32, w: f32) -> Rect {
    Rect::from_min_size(
        Pos2::new(x0, level as f32 * LEVEL_PX),
        vec2(w, LEVEL_PX - 1.0),
    )
}

/// FNV-1a: a hash that stays the same across builds and runs, so colours do.
fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A node's fill: the hue from its module, a shade from its function; unresolved frames (the
/// address nsys exported) grey.
pub fn node_color(function: &str, module: &str, dark_mode: bool) -> Color32 {
    if function.starts_with("0x") || function.starts_with('[') {
        return if dark_mode {
            Color32::from_gray(110)
        } else {
            Color32::from_gray(190)
        };
    }
    let hue = (stable_hash(module) % 360) as f32 / 360.0;
    let shade = (stable_hash(function) % 100) as f32 / 100.0;
    let (s, v) = if dark_mode {
        (0.45 + 0.2 * shade, 0.62 + 0.12 * shade)
    } else {
        (0.30 + 0.2 * shade, 0.85 + 0.12 * shade)
    };
    egui::ecolor::Hsva::new(hue, s, v, 1.0).into()
}

/// Draws the graph of `profile` zoomed into `zoom` with `chosen` outlined, the whole width of
/// `ui`, and says what a click hit. Hovering a rectangle shows its function, module, total and
/// self samples and their share. `drawn` gets each node's rectangle on screen.
pub fn show(
    ui: &mut Ui,
    trace: &Trace,
    profile: &Profile,
    zoom: u32,
    chosen: Option<u32>,
    drawn: &mut Vec<(Rect, u32)>,
) -> Option<FlameClick> {
    let width = ui.available_width().max(120.0);
    let rects = layout(profile, zoom, width);
    let levels = rects
        .iter()
        .map(|r| (r.rect.max.y / LEVEL_PX).ceil() as usize)
        .max()
        .unwrap_or(1);
    let (area, response) =
        ui.allocate_exact_size(vec2(width, levels as f32 * LEVEL_PX), Sense::click());
    let painter = ui.painter_at(area);
    let dark = ui.visuals().dark_mode;
    let text_color = Color32::from_gray(20);
    let font = FontId::proportional(11.5);
    let offset = area.min.to_vec2();
    drawn.clear();
    drawn.extend(rects.iter().map(|r| (r.rect.translate(offset), r.node)));
    for r in &rects {
        let rect = r.rect.translate(offset);
        let (name, module) = node_names(trace, profile, r.node);
        let mut fill = if r.node == 0 {
            if dark {
                Color32::from_gray(90)
            } else {
                Color32::from_gray(215)
            }
        } else {
            node_color(name, module, dark)
        };
        if r.ancestor {
            fill = fill.gamma_multiply(0.5);
        }
        painter.rect_filled(rect, 1.0, fill);
        if rect.width() >= MIN_LABEL_PX {
            let label = if r.node == 0 {
                format!("all ({} samples)", profile.samples)
            } else {
                name.to_string()
            };
            // Ancestors are dimmed into the background: their labels take the theme's text colour.
            let color = if r.ancestor {
                ui.visuals().text_color()
            } else {
                text_color
            };
            let mut job = LayoutJob::simple_singleline(label, font.clone(), color);
            job.wrap = TextWrapping::truncate_at_width(rect.width() - 6.0);
            let galley = painter.layout_job(job);
            let pos = Align2::LEFT_CENTER
                .anchor_size(rect.left_center() + vec2(3.0, 0.0), galley.size())
                .min;
            painter.galley(pos, galley, color);
        }
    }
    if let Some(c) = chosen
        && let Some(r) = rects.iter().find(|r| r.node == c)
    {
        painter.rect_stroke(
            r.rect.translate(offset),
            1.0,
            Stroke::new(2.0, ui.visuals().selection.stroke.color),
            StrokeKind::Inside,
        );
    }
    let hit = |pos: Pos2| {
        let local = pos - offset;
        rects
            .iter()
            .rev()
            .find(|r| r.rect.contains(local))
            .map(|r| r.node)
    };
    let clicked = response.clicked();
    let click_pos = response.interact_pointer_pos();
    if let Some(node) = response.hover_pos().and_then(hit) {
        response.on_hover_ui_at_pointer(|ui| node_tooltip(ui, trace, profile, node));
    }
    clicked.then(|| {
        click_pos
            .and_then(hit)
            .map_or(FlameClick::Background, FlameClick::Node)
    })
}

/// A node's function and module ("all" for the root).
fn node_names<'t>(trace: &'t Trace, profile: &Profile, node: u32) -> (&'t str, &'t str) {
    match profile.tree.get(node as usize).and_then(|n| n.frame) {
        Some(f) => (trace.str(f.function), trace.str(f.module)),
        None => ("all", ""),
    }
}

/// What hovering a node shows: its function, module, total and self samples and their share.
pub fn node_facts(trace: &Trace, profile: &Profile, node: u32) -> Vec<String> {
    let Some(n) = profile.tree.get(node as usize) else {
        return Vec::new();
    };
    let (name, module) = node_names(trace, profile, node);
    let mut facts = vec![name.to_string()];
    if !module.is_empty() {
        facts.push(format!("Module: {module}"));
    }
    facts.push(format!(
        "Total: {} samples ({:.1} %)",
        n.total_samples,
        profile.percent(n.total_samples)
    ));
    facts.push(format!(
        "Self: {} samples ({:.1} %)",
        n.self_samples,
        profile.percent(n.self_samples)
    ));
    facts
}

fn node_tooltip(ui: &mut Ui, trace: &Trace, profile: &Profile, node: u32) {
    for (i, fact) in node_facts(trace, profile, node).into_iter().enumerate() {
        if i == 0 {
            ui.strong(fact);
        } else {
            ui.label(fact);
        }
    }
    ui.weak("Click to zoom in and outline its samples");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cpu_samples::CallNode;
    use crate::trace::Frame;

    fn node(
        frame: Option<u32>,
        parent: u32,
        children: Vec<u32>,
        total: u64,
        depth: u16,
    ) -> CallNode {
        CallNode {
            frame: frame.map(|f| Frame {
                function: f,
                module: 0,
            }),
            parent,
            children,
            total_samples: total,
            self_samples: 0,
            depth,
        }
    }

    /// root(10) → a(6) → c(6); root → b(4).
    fn profile() -> Profile {
        Profile {
            samples: 10,
            without_stack: 0,
            bottom_up: Vec::new(),
            tree: vec![
                node(None, 0, vec![1, 2], 10, 0),
                node(Some(1), 0, vec![3], 6, 1),
                node(Some(2), 0, vec![], 4, 1),
                node(Some(3), 1, vec![], 6, 2),
            ],
        }
    }

    #[test]
    fn widths_follow_total_samples_and_zoom_spans_the_width() {
        let p = profile();
        let all = layout(&p, 0, 100.0);
        let at = |rects: &[FlameRect], n: u32| {
            rects
                .iter()
                .find(|r| r.node == n)
                .map(|r| (r.rect.min.x, r.rect.width(), r.rect.min.y, r.ancestor))
        };
        assert_eq!(at(&all, 0), Some((0.0, 100.0, 0.0, false)));
        assert_eq!(at(&all, 1), Some((0.0, 60.0, LEVEL_PX, false)));
        assert_eq!(at(&all, 2), Some((60.0, 40.0, LEVEL_PX, false)));
        assert_eq!(at(&all, 3), Some((0.0, 60.0, 2.0 * LEVEL_PX, false)));

        let zoomed = layout(&p, 1, 100.0);
        assert_eq!(at(&zoomed, 0), Some((0.0, 100.0, 0.0, true)));
        assert_eq!(at(&zoomed, 1), Some((0.0, 100.0, LEVEL_PX, false)));
        assert_eq!(at(&zoomed, 3), Some((0.0, 100.0, 2.0 * LEVEL_PX, false)));
        assert_eq!(
            at(&zoomed, 2),
            None,
            "a sibling of the zoomed node is not drawn"
        );

        // Narrower than half a pixel: left out with its callees.
        let thin = layout(&p, 0, 1.0);
        assert_eq!(at(&thin, 2), None);
        assert!(at(&thin, 3).is_some());
    }

    #[test]
    fn colours_are_stable_and_follow_the_module() {
        let a = node_color("f", "libx.so", true);
        assert_eq!(a, node_color("f", "libx.so", true));
        assert_ne!(a, node_color("f", "liby.so", true));
        assert_eq!(
            node_color("0x7fa9", "m", true),
            node_color("0x1", "n", true)
        );
    }
}
