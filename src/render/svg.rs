//! Writes the shapes of a headless egui frame as SVG (`sightline render --out FILE.svg`): the
//! vector twin of [`super::raster`], from the same shapes before tessellation.
//!
//! Rectangles, lines, paths, circles, ellipses, bands and Béziers map to their SVG elements; text
//! becomes one `<text>` per galley row, in its colour and size, stretched to the width egui laid
//! it out at (`textLength`) so an elided label still ends where the window's does; meshes become
//! triangles; clip rectangles become shared `<clipPath>`s. Colours are written unmultiplied with an
//! opacity.

use std::collections::HashMap;
use std::fmt::Write as _;

use egui::epaint::{
    ClippedShape, ColorMode, CubicBezierShape, Galley, PathShape, QuadraticBezierShape, RectShape,
    TextShape,
};
use egui::{Color32, FontFamily, Pos2, Rect, Shape, Stroke, StrokeKind};

/// The SVG document of `shapes` on a `width_px × height_px` canvas filled with `background`.
pub fn to_svg(
    shapes: &[ClippedShape],
    width_px: u32,
    height_px: u32,
    background: Color32,
) -> String {
    let mut w = SvgWriter {
        out: String::new(),
        canvas: Rect::from_min_size(Pos2::ZERO, egui::vec2(width_px as f32, height_px as f32)),
        clips: HashMap::new(),
        open_clip: None,
    };
    let _ = writeln!(
        w.out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width_px}" height="{height_px}" viewBox="0 0 {width_px} {height_px}">"#
    );
    let _ = writeln!(
        w.out,
        r#"<rect x="0" y="0" width="{width_px}" height="{height_px}"{}/>"#,
        paint("fill", background)
    );
    for clipped in shapes {
        w.set_clip(clipped.clip_rect);
        w.shape(&clipped.shape);
    }
    w.close_clip();
    w.out.push_str("</svg>\n");
    w.out
}

struct SvgWriter {
    out: String,
    canvas: Rect,
    /// Clip rectangles already defined, by their exact bits, with their id.
    clips: HashMap<[u32; 4], usize>,
    /// The clip of the open `<g>`, when one is open (`None` inside: no clipping needed).
    open_clip: Option<Option<usize>>,
}

/// ` NAME="#rrggbb"` plus ` NAME-opacity` when translucent, or ` NAME="none"`.
fn paint(name: &str, color: Color32) -> String {
    let [r, g, b, a] = color.to_srgba_unmultiplied();
    if a == 0 {
        return format!(r#" {name}="none""#);
    }
    let mut s = format!(r##" {name}="#{r:02x}{g:02x}{b:02x}""##);
    if a < 255 {
        let _ = write!(s, r#" {name}-opacity="{:.3}""#, f32::from(a) / 255.0);
    }
    s
}

fn stroke_attrs(stroke: Stroke) -> String {
    if stroke.width <= 0.0 || stroke.color.a() == 0 {
        return r#" stroke="none""#.to_string();
    }
    format!(
        r#"{} stroke-width="{}""#,
        paint("stroke", stroke.color),
        num(stroke.width)
    )
}

/// A coordinate with at most 2 decimals and no trailing zeros.
fn num(v: f32) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

fn points_attr(points: &[Pos2]) -> String {
    let mut s = String::new();
    for p in points {
        let _ = write!(s, "{},{} ", num(p.x), num(p.y));
    }
    s.trim_end().to_string()
}

fn escape(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => s.push(c),
        }
    }
    s
}

impl SvgWriter {
    /// Opens a `<g>` clipped to `clip` unless the open one already is (consecutive shapes with
    /// one clip share a group); a clip covering the canvas needs none.
    fn set_clip(&mut self, clip: Rect) {
        let clip = clip.intersect(self.canvas);
        let id = if clip.contains_rect(self.canvas) {
            None
        } else {
            let key = [clip.min.x, clip.min.y, clip.max.x, clip.max.y].map(f32::to_bits);
            let next = self.clips.len();
            let id = *self.clips.entry(key).or_insert(next);
            if id == next {
                let (x, y) = (clip.min.x, clip.min.y);
                let (w, h) = (clip.width().max(0.0), clip.height().max(0.0));
                self.close_clip();
                let _ = writeln!(
                    self.out,
                    r#"<clipPath id="c{id}"><rect x="{}" y="{}" width="{}" height="{}"/></clipPath>"#,
                    num(x),
                    num(y),
                    num(w),
                    num(h)
                );
            }
            Some(id)
        };
        if self.open_clip == Some(id) {
            return;
        }
        self.close_clip();
        match id {
            Some(id) => {
                let _ = writeln!(self.out, r#"<g clip-path="url(#c{id})">"#);
            }
            None => self.out.push_str("<g>\n"),
        }
        self.open_clip = Some(id);
    }

    fn close_clip(&mut self) {
        if self.open_clip.take().is_some() {
            self.out.push_str("</g>\n");
        }
    }

    fn shape(&mut self, shape: &Shape) {
        match shape {
            Shape::Noop | Shape::Callback(_) => {}
            Shape::Vec(shapes) => {
                for s in shapes {
                    self.shape(s);
                }
            }
            Shape::Rect(r) => self.rect(r),
            Shape::LineSegment { points, stroke } => {
                if stroke.width > 0.0 && stroke.color.a() > 0 {
                    let _ = writeln!(
                        self.out,
                        r#"<line x1="{}" y1="{}" x2="{}" y2="{}"{}/>"#,
                        num(points[0].x),
                        num(points[0].y),
                        num(points[1].x),
                        num(points[1].y),
                        stroke_attrs(*stroke)
                    );
                }
            }
            Shape::Path(p) => self.path(p),
            Shape::Circle(c) => {
                let _ = writeln!(
                    self.out,
                    r#"<circle cx="{}" cy="{}" r="{}"{}{}/>"#,
                    num(c.center.x),
                    num(c.center.y),
                    num(c.radius),
                    paint("fill", c.fill),
                    stroke_attrs(c.stroke)
                );
            }
            Shape::Ellipse(e) => {
                let _ = writeln!(
                    self.out,
                    r#"<ellipse cx="{}" cy="{}" rx="{}" ry="{}"{}{}/>"#,
                    num(e.center.x),
                    num(e.center.y),
                    num(e.radius.x),
                    num(e.radius.y),
                    paint("fill", e.fill),
                    stroke_attrs(e.stroke)
                );
            }
            Shape::Band(band) => {
                // The upper edge left to right, then the lower edge back.
                let mut points: Vec<Pos2> = band
                    .points
                    .iter()
                    .map(|p| Pos2::new(p.x, p.y.min))
                    .collect();
                points.extend(band.points.iter().rev().map(|p| Pos2::new(p.x, p.y.max)));
                let _ = writeln!(
                    self.out,
                    r#"<polygon points="{}"{}{}/>"#,
                    points_attr(&points),
                    paint("fill", band.fill),
                    stroke_attrs(band.stroke)
                );
            }
            Shape::Text(t) => self.text(t),
            Shape::Mesh(mesh) => {
                for tri in mesh.indices.chunks_exact(3) {
                    let v: Vec<_> = tri
                        .iter()
                        .filter_map(|&i| mesh.vertices.get(i as usize))
                        .collect();
                    if v.len() < 3 {
                        continue;
                    }
                    let points: Vec<Pos2> = v.iter().map(|v| v.pos).collect();
                    let _ = writeln!(
                        self.out,
                        r#"<polygon points="{}"{}/>"#,
                        points_attr(&points),
                        paint("fill", v[0].color)
                    );
                }
            }
            Shape::QuadraticBezier(q) => self.quadratic(q),
            Shape::CubicBezier(c) => self.cubic(c),
        }
    }

    fn rect(&mut self, r: &RectShape) {
        let fill = paint("fill", r.fill);
        let radius = f32::from(r.corner_radius.nw);
        // Square bars side by side (events, merged blocks, row backgrounds) are drawn with crisp
        // edges, as egui snaps them to pixels: anti-aliased, their shared edges show seams.
        let rx = if radius > 0.0 {
            format!(r#" rx="{}""#, num(radius))
        } else {
            r#" shape-rendering="crispEdges""#.to_string()
        };
        let _ = writeln!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}"{rx}{fill}/>"#,
            num(r.rect.min.x),
            num(r.rect.min.y),
            num(r.rect.width().max(0.0)),
            num(r.rect.height().max(0.0)),
        );
        if r.stroke.width > 0.0 && r.stroke.color.a() > 0 {
            // SVG strokes are centred on the outline: move it to where egui puts the stroke.
            let outline = match r.stroke_kind {
                StrokeKind::Inside => r.rect.shrink(r.stroke.width / 2.0),
                StrokeKind::Middle => r.rect,
                StrokeKind::Outside => r.rect.expand(r.stroke.width / 2.0),
            };
            let _ = writeln!(
                self.out,
                r#"<rect x="{}" y="{}" width="{}" height="{}"{rx} fill="none"{}/>"#,
                num(outline.min.x),
                num(outline.min.y),
                num(outline.width().max(0.0)),
                num(outline.height().max(0.0)),
                stroke_attrs(r.stroke)
            );
        }
    }

    fn path(&mut self, p: &PathShape) {
        if p.points.len() < 2 {
            return;
        }
        let stroke_color = match &p.stroke.color {
            ColorMode::Solid(c) => *c,
            // A colour computed per point: its colour at the first point stands for it.
            ColorMode::UV(f) => f(Rect::from_points(&p.points), p.points[0]),
        };
        let stroke = stroke_attrs(Stroke::new(p.stroke.width, stroke_color));
        let (element, fill) = if p.closed {
            ("polygon", paint("fill", p.fill))
        } else {
            ("polyline", r#" fill="none""#.to_string())
        };
        let _ = writeln!(
            self.out,
            r#"<{element} points="{}"{fill}{stroke}/>"#,
            points_attr(&p.points)
        );
    }

    fn quadratic(&mut self, q: &QuadraticBezierShape) {
        let [a, b, c] = q.points;
        let close = if q.closed { " Z" } else { "" };
        let _ = writeln!(
            self.out,
            r#"<path d="M {} {} Q {} {} {} {}{close}"{}{}/>"#,
            num(a.x),
            num(a.y),
            num(b.x),
            num(b.y),
            num(c.x),
            num(c.y),
            paint("fill", q.fill),
            stroke_attrs(Stroke::new(q.stroke.width, solid(&q.stroke.color)))
        );
    }

    fn cubic(&mut self, c: &CubicBezierShape) {
        let [a, b, d, e] = c.points;
        let close = if c.closed { " Z" } else { "" };
        let _ = writeln!(
            self.out,
            r#"<path d="M {} {} C {} {} {} {} {} {}{close}"{}{}/>"#,
            num(a.x),
            num(a.y),
            num(b.x),
            num(b.y),
            num(d.x),
            num(d.y),
            num(e.x),
            num(e.y),
            paint("fill", c.fill),
            stroke_attrs(Stroke::new(c.stroke.width, solid(&c.stroke.color)))
        );
    }

    /// One `<text>` per row of the galley, at the row's baseline.
    fn text(&mut self, t: &TextShape) {
        let galley: &Galley = &t.galley;
        let section = galley.job.sections.first();
        let size = section.map_or(12.0, |s| s.format.font_id.size);
        let family = match section.map(|s| &s.format.font_id.family) {
            Some(FontFamily::Monospace) => "monospace",
            _ => "sans-serif",
        };
        let rotate = if t.angle != 0.0 {
            format!(
                r#" transform="rotate({} {} {})""#,
                num(t.angle.to_degrees()),
                num(t.pos.x),
                num(t.pos.y)
            )
        } else {
            String::new()
        };
        for placed in &galley.rows {
            let row = &placed.row;
            let (Some(first), Some(last)) = (row.glyphs.first(), row.glyphs.last()) else {
                continue;
            };
            let text = row.text();
            if text.trim().is_empty() {
                continue;
            }
            let color = t.override_text_color.unwrap_or_else(|| {
                let vertex_color = row
                    .visuals
                    .mesh
                    .vertices
                    .get(first.first_vertex as usize)
                    .map(|v| v.color);
                match vertex_color {
                    Some(c) if c != Color32::PLACEHOLDER => c,
                    _ => t.fallback_color,
                }
            });
            let color = color.gamma_multiply(t.opacity_factor.clamp(0.0, 1.0));
            let origin = t.pos + placed.pos.to_vec2();
            let x = origin.x + first.pos.x;
            let baseline = origin.y + first.pos.y;
            let length = last.max_x() - first.pos.x;
            let _ = writeln!(
                self.out,
                r#"<text x="{}" y="{}" font-family="{family}" font-size="{}" textLength="{}" lengthAdjust="spacingAndGlyphs" xml:space="preserve"{}{rotate}>{}</text>"#,
                num(x),
                num(baseline),
                num(size),
                num(length.max(0.0)),
                paint("fill", color),
                escape(&text)
            );
        }
    }
}

fn solid(color: &ColorMode) -> Color32 {
    match color {
        ColorMode::Solid(c) => *c,
        ColorMode::UV(_) => Color32::GRAY,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::pos2;

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(1.234_567), "1.23");
    }

    #[test]
    fn translucent_colours_get_an_opacity() {
        assert_eq!(
            paint("fill", Color32::from_rgb(255, 0, 16)),
            r##" fill="#ff0010""##
        );
        assert_eq!(paint("fill", Color32::TRANSPARENT), r#" fill="none""#);
        let half = Color32::from_rgba_unmultiplied(255, 255, 255, 128);
        assert!(paint("fill", half).contains(r#"fill-opacity="0.502""#));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            escape("a<b & \"c\">\u{1}"),
            "a&lt;b &amp; &quot;c&quot;&gt;"
        );
    }

    #[test]
    fn shapes_share_a_clip_path_per_rectangle() {
        let clip = Rect::from_min_max(pos2(10.0, 10.0), pos2(50.0, 50.0));
        let rect = Shape::rect_filled(
            Rect::from_min_max(pos2(0.0, 0.0), pos2(20.0, 20.0)),
            0.0,
            Color32::RED,
        );
        let shapes: Vec<ClippedShape> = (0..3)
            .map(|_| ClippedShape {
                clip_rect: clip,
                shape: rect.clone(),
                transform_after_tessellation: Default::default(),
            })
            .collect();
        let svg = to_svg(&shapes, 100, 100, Color32::BLACK);
        assert_eq!(svg.matches("<clipPath").count(), 1);
        assert_eq!(svg.matches(r#"clip-path="url(#c0)""#).count(), 1);
        assert_eq!(svg.matches(r##"fill="#ff0000""##).count(), 3);
        assert_eq!(svg.matches("<g").count(), svg.matches("</g>").count());
    }
}
