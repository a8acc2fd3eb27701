//! A small software rasteriser for egui's triangle meshes, so `sightline render` can write a PNG
//! on a machine with no display and no GPU.
//!
//! It does what egui's own GPU backends do, on the CPU: each triangle of a
//! [`ClippedPrimitive`] is filled within its clip rectangle, the colour at a pixel centre is the
//! vertex colours interpolated with barycentric weights times the texture sampled (bilinearly) at
//! the interpolated uv (the font atlas for text, its white texel for everything else), and the
//! result is blended "over" the image with premultiplied alpha — in gamma space, as egui expects
//! (`epaint`'s colours are premultiplied sRGB). Shared triangle edges follow a fill rule so a pixel
//! on an edge is drawn once, which keeps egui's anti-aliasing feathers free of seams.
//!
//! The image is cut into horizontal bands drawn in parallel (rayon); within a band the primitives
//! are drawn in paint order.

use std::collections::HashMap;
use std::io::Write;

use egui::epaint::{ClippedPrimitive, Mesh, Primitive, Vertex};
use egui::{Color32, ColorImage, Pos2, Rect, TextureId};
use rayon::prelude::*;

/// Rows of pixels per parallel band.
const BAND_ROWS: usize = 32;

/// An RGBA image, premultiplied alpha, channels in `0.0..=1.0` (gamma-encoded, like egui's).
#[derive(Debug, Clone)]
pub struct Canvas {
    pub width_px: usize,
    pub height_px: usize,
    /// Row by row from the top, `[r, g, b, a]` premultiplied.
    pub pixels: Vec<[f32; 4]>,
}

impl Canvas {
    /// A canvas filled with `background`.
    pub fn new(width_px: usize, height_px: usize, background: Color32) -> Self {
        Self {
            width_px,
            height_px,
            pixels: vec![premultiplied(background); width_px * height_px],
        }
    }

    /// Draws `primitives` in order; meshes use `textures` (a missing texture samples as white;
    /// paint callbacks, which need a GPU, are skipped).
    pub fn draw(
        &mut self,
        primitives: &[ClippedPrimitive],
        textures: &HashMap<TextureId, ColorImage>,
    ) {
        let width = self.width_px;
        if width == 0 {
            return;
        }
        self.pixels
            .par_chunks_mut(width * BAND_ROWS)
            .enumerate()
            .for_each(|(band, pixels)| {
                let top = band * BAND_ROWS;
                let mut target = Band {
                    width,
                    top,
                    rows: pixels.len() / width,
                    pixels,
                };
                for p in primitives {
                    if let Primitive::Mesh(mesh) = &p.primitive {
                        let texture = textures.get(&mesh.texture_id);
                        target.draw_mesh(mesh, p.clip_rect, texture);
                    }
                }
            });
    }

    /// The image as 8-bit RGBA with straight (not premultiplied) alpha, as PNG stores it.
    pub fn to_rgba8(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pixels.len() * 4);
        for p in &self.pixels {
            let a = p[3].clamp(0.0, 1.0);
            let un = |c: f32| {
                if a > 0.0 { to_u8((c / a).min(1.0)) } else { 0 }
            };
            out.extend_from_slice(&[un(p[0]), un(p[1]), un(p[2]), to_u8(a)]);
        }
        out
    }

    /// Encodes the image as an 8-bit RGBA PNG into `out`.
    pub fn write_png(&self, out: impl Write) -> Result<(), png::EncodingError> {
        let width = u32::try_from(self.width_px).unwrap_or(u32::MAX);
        let height = u32::try_from(self.height_px).unwrap_or(u32::MAX);
        let mut encoder = png::Encoder::new(out, width, height);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        // A rendered timeline is large flat areas: fast compression already shrinks it well.
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&self.to_rgba8())?;
        writer.finish()
    }
}

fn to_u8(c: f32) -> u8 {
    (c.clamp(0.0, 1.0) * 255.0).round() as u8
}

fn premultiplied(c: Color32) -> [f32; 4] {
    let [r, g, b, a] = c.to_array();
    [r, g, b, a].map(|v| f32::from(v) / 255.0)
}

/// The rows `top..top + rows` of the canvas, drawn by one thread.
struct Band<'a> {
    width: usize,
    top: usize,
    rows: usize,
    pixels: &'a mut [[f32; 4]],
}

/// Twice the signed area of the triangle `a b p` (positive when `p` is to one side of `a → b`).
fn edge(a: Pos2, b: Pos2, p: Pos2) -> f32 {
    (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
}

/// Whether a pixel centre lying exactly on the edge `a → b` belongs to this triangle. Two
/// triangles sharing an edge walk it in opposite directions, and exactly one of the two
/// directions passes, so such a pixel is drawn once, not blended twice.
fn owns_edge(a: Pos2, b: Pos2) -> bool {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    dy > 0.0 || (dy == 0.0 && dx < 0.0)
}

impl Band<'_> {
    fn draw_mesh(&mut self, mesh: &Mesh, clip: Rect, texture: Option<&ColorImage>) {
        // Scissor in whole pixels, as the GPU backends do, limited to this band.
        let x0 = clip.min.x.round().max(0.0) as usize;
        let x1 = (clip.max.x.round().max(0.0) as usize).min(self.width);
        let y0 = (clip.min.y.round().max(0.0) as usize).max(self.top);
        let y1 = (clip.max.y.round().max(0.0) as usize).min(self.top + self.rows);
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for tri in mesh.indices.chunks_exact(3) {
            let vertex = |i: u32| mesh.vertices.get(i as usize);
            let (Some(a), Some(b), Some(c)) = (vertex(tri[0]), vertex(tri[1]), vertex(tri[2]))
            else {
                continue;
            };
            self.draw_triangle([a, b, c], (x0, x1, y0, y1), texture);
        }
    }

    fn draw_triangle(
        &mut self,
        v: [&Vertex; 3],
        (x0, x1, y0, y1): (usize, usize, usize, usize),
        texture: Option<&ColorImage>,
    ) {
        let mut v = v;
        let mut area = edge(v[0].pos, v[1].pos, v[2].pos);
        if !area.is_finite() || area.abs() < 1e-6 {
            return;
        }
        if area < 0.0 {
            v.swap(1, 2);
            area = -area;
        }
        let (p0, p1, p2) = (v[0].pos, v[1].pos, v[2].pos);
        let min_x = p0.x.min(p1.x).min(p2.x);
        let max_x = p0.x.max(p1.x).max(p2.x);
        let min_y = p0.y.min(p1.y).min(p2.y);
        let max_y = p0.y.max(p1.y).max(p2.y);
        // Pixels whose centre (x + 0.5) can fall inside the triangle.
        let bx0 = ((min_x - 0.5).floor().max(0.0) as usize).max(x0);
        let bx1 = ((max_x + 0.5).ceil().max(0.0) as usize).min(x1);
        let by0 = ((min_y - 0.5).floor().max(0.0) as usize).max(y0);
        let by1 = ((max_y + 0.5).ceil().max(0.0) as usize).min(y1);
        if bx0 >= bx1 || by0 >= by1 {
            return;
        }
        let owns = [owns_edge(p1, p2), owns_edge(p2, p0), owns_edge(p0, p1)];
        let colors = v.map(|v| premultiplied(v.color));
        let inv_area = 1.0 / area;
        for y in by0..by1 {
            let row = (y - self.top) * self.width;
            for x in bx0..bx1 {
                let p = Pos2::new(x as f32 + 0.5, y as f32 + 0.5);
                let w = [edge(p1, p2, p), edge(p2, p0, p), edge(p0, p1, p)];
                let inside = w
                    .iter()
                    .zip(owns)
                    .all(|(&w, owns)| w > 0.0 || (w == 0.0 && owns));
                if !inside {
                    continue;
                }
                let l = w.map(|w| w * inv_area);
                let mut src = [0.0f32; 4];
                for (k, s) in src.iter_mut().enumerate() {
                    *s = l[0] * colors[0][k] + l[1] * colors[1][k] + l[2] * colors[2][k];
                }
                if let Some(tex) = texture {
                    let u = l[0] * v[0].uv.x + l[1] * v[1].uv.x + l[2] * v[2].uv.x;
                    let t = l[0] * v[0].uv.y + l[1] * v[1].uv.y + l[2] * v[2].uv.y;
                    let texel = sample_bilinear(tex, u, t);
                    for (s, t) in src.iter_mut().zip(texel) {
                        *s *= t;
                    }
                }
                let dst = &mut self.pixels[row + x];
                let keep = 1.0 - src[3].clamp(0.0, 1.0);
                for k in 0..4 {
                    dst[k] = (src[k] + dst[k] * keep).clamp(0.0, 1.0);
                }
            }
        }
    }
}

/// The texture at normalised `(u, v)`, bilinearly filtered, edges clamped (premultiplied).
fn sample_bilinear(tex: &ColorImage, u: f32, v: f32) -> [f32; 4] {
    let [w, h] = tex.size;
    if w == 0 || h == 0 || tex.pixels.len() < w * h {
        return [1.0; 4];
    }
    let x = (u * w as f32 - 0.5).clamp(0.0, (w - 1) as f32);
    let y = (v * h as f32 - 0.5).clamp(0.0, (h - 1) as f32);
    let (xi, yi) = (x.floor() as usize, y.floor() as usize);
    let (fx, fy) = (x - xi as f32, y - yi as f32);
    let (xj, yj) = ((xi + 1).min(w - 1), (yi + 1).min(h - 1));
    let at = |x: usize, y: usize| premultiplied(tex.pixels[y * w + x]);
    let (a, b, c, d) = (at(xi, yi), at(xj, yi), at(xi, yj), at(xj, yj));
    let mut out = [0.0; 4];
    for k in 0..4 {
        let top = a[k] + (b[k] - a[k]) * fx;
        let bottom = c[k] + (d[k] - c[k]) * fx;
        out[k] = top + (bottom - top) * fy;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::epaint::{Shape, TessellationOptions, Tessellator};
    use egui::{pos2, vec2};

    /// Tessellates `shape` with anti-aliasing off (hard edges) and draws it on a black canvas.
    fn draw_hard(shape: Shape, size: usize) -> Canvas {
        let options = TessellationOptions {
            feathering: false,
            ..Default::default()
        };
        let mut tess = Tessellator::new(1.0, options, [1, 1], Vec::new());
        let mut mesh = Mesh::default();
        tess.tessellate_shape(shape, &mut mesh);
        let clip = Rect::from_min_size(Pos2::ZERO, vec2(size as f32, size as f32));
        let prim = ClippedPrimitive {
            clip_rect: clip,
            primitive: Primitive::Mesh(mesh),
        };
        let mut canvas = Canvas::new(size, size, Color32::BLACK);
        canvas.draw(&[prim], &HashMap::new());
        canvas
    }

    fn rgba(canvas: &Canvas, x: usize, y: usize) -> [u8; 4] {
        let rgba = canvas.to_rgba8();
        let i = (y * canvas.width_px + x) * 4;
        [rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3]]
    }

    #[test]
    fn a_rect_covers_exactly_its_pixels() {
        let rect = Rect::from_min_max(pos2(3.0, 4.0), pos2(10.0, 9.0));
        let canvas = draw_hard(Shape::rect_filled(rect, 0.0, Color32::RED), 40);
        let mut covered = 0;
        for y in 0..40 {
            for x in 0..40 {
                let inside = rect.contains(pos2(x as f32 + 0.5, y as f32 + 0.5));
                let px = rgba(&canvas, x, y);
                assert_eq!(
                    px,
                    if inside {
                        [255, 0, 0, 255]
                    } else {
                        [0, 0, 0, 255]
                    }
                );
                covered += usize::from(inside);
            }
        }
        assert_eq!(covered, 7 * 5);
    }

    #[test]
    fn half_transparent_fill_blends_over_the_background() {
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(8.0, 8.0));
        // Premultiplied: white at half alpha.
        let half_white = Color32::from_rgba_premultiplied(128, 128, 128, 128);
        let canvas = draw_hard(Shape::rect_filled(rect, 0.0, half_white), 8);
        assert_eq!(rgba(&canvas, 4, 4), [128, 128, 128, 255]);
    }

    #[test]
    fn shared_edges_are_not_blended_twice() {
        // A translucent square split along its diagonal into two triangles: every pixel must
        // get the same colour, including those on the diagonal.
        let color = Color32::from_rgba_premultiplied(0, 100, 0, 100);
        let mut mesh = Mesh::default();
        for p in [
            pos2(0.0, 0.0),
            pos2(16.0, 0.0),
            pos2(16.0, 16.0),
            pos2(0.0, 16.0),
        ] {
            mesh.colored_vertex(p, color);
        }
        mesh.add_triangle(0, 1, 2);
        mesh.add_triangle(0, 2, 3);
        let prim = ClippedPrimitive {
            clip_rect: Rect::EVERYTHING,
            primitive: Primitive::Mesh(mesh),
        };
        let mut canvas = Canvas::new(16, 16, Color32::BLACK);
        canvas.draw(&[prim], &HashMap::new());
        let first = rgba(&canvas, 0, 0);
        assert_ne!(first, [0, 0, 0, 255]);
        for y in 0..16 {
            for x in 0..16 {
                assert_eq!(rgba(&canvas, x, y), first, "pixel {x},{y}");
            }
        }
    }

    #[test]
    fn clip_rect_limits_drawing() {
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(20.0, 20.0));
        let mut mesh = Mesh::default();
        let mut tess = Tessellator::new(
            1.0,
            TessellationOptions {
                feathering: false,
                ..Default::default()
            },
            [1, 1],
            Vec::new(),
        );
        tess.tessellate_shape(Shape::rect_filled(rect, 0.0, Color32::WHITE), &mut mesh);
        let prim = ClippedPrimitive {
            clip_rect: Rect::from_min_max(pos2(5.0, 5.0), pos2(10.0, 12.0)),
            primitive: Primitive::Mesh(mesh),
        };
        let mut canvas = Canvas::new(20, 20, Color32::BLACK);
        canvas.draw(&[prim], &HashMap::new());
        let white = canvas
            .to_rgba8()
            .chunks_exact(4)
            .filter(|p| p[0] == 255)
            .count();
        assert_eq!(white, 5 * 7);
        assert_eq!(rgba(&canvas, 5, 5), [255, 255, 255, 255]);
        assert_eq!(rgba(&canvas, 4, 5), [0, 0, 0, 255]);
    }

    #[test]
    fn textures_multiply_the_vertex_colour() {
        // A 2×1 texture: left texel opaque white, right texel transparent.
        let tex = ColorImage::new([2, 1], vec![Color32::WHITE, Color32::TRANSPARENT]);
        let id = TextureId::Managed(0);
        let mut mesh = Mesh::with_texture(id);
        let rect = Rect::from_min_max(pos2(0.0, 0.0), pos2(4.0, 4.0));
        // The left texel's centre everywhere: the rect takes the vertex colour.
        let uv = Rect::from_min_max(pos2(0.25, 0.5), pos2(0.25, 0.5));
        mesh.add_rect_with_uv(rect, uv, Color32::BLUE);
        let prim = ClippedPrimitive {
            clip_rect: Rect::EVERYTHING,
            primitive: Primitive::Mesh(mesh),
        };
        let mut canvas = Canvas::new(4, 4, Color32::BLACK);
        canvas.draw(&[prim], &HashMap::from([(id, tex)]));
        assert_eq!(rgba(&canvas, 2, 2), [0, 0, 255, 255]);
    }

    #[test]
    fn png_round_trips_size_and_pixels() {
        let canvas = draw_hard(
            Shape::rect_filled(
                Rect::from_min_max(pos2(0.0, 0.0), pos2(2.0, 2.0)),
                0.0,
                Color32::GREEN,
            ),
            6,
        );
        let mut bytes = Vec::new();
        assert!(canvas.write_png(&mut bytes).is_ok());
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let Ok(mut reader) = decoder.read_info() else {
            panic!("decode the PNG we wrote");
        };
        let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
        let Ok(info) = reader.next_frame(&mut buf) else {
            panic!("read the frame");
        };
        assert_eq!((info.width, info.height), (6, 6));
        assert_eq!(&buf[..4], &[0, 255, 0, 255]);
        assert_eq!(&buf[4 * 3..4 * 4], &[0, 0, 0, 255]);
    }
}
