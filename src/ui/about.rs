//! The About window (Help → About…): the icon, name, version and what Sightline is for, and for
//! the open trace where it came from — its path, the Nsight Systems version that exported it,
//! how many events it holds and on which GPUs.

use egui::{Align2, ColorImage, Id, TextureHandle, TextureOptions, Vec2};

use crate::export::text_table::group_thousands;
use crate::trace::Trace;

/// One line on what Sightline is, as the desktop entry's comment says it.
pub const DESCRIPTION: &str = "Light viewer for NVIDIA Nsight Systems traces (.nsys-rep, SQLite export), PyTorch profiler traces (.json, .json.gz) and Nsight Compute reports (.ncu-rep, .ncu-rep.gz, .ncu-repz, ncu CSV)";

/// Side of the icon in the window, in points.
const ICON_SIZE: f32 = 64.0;

/// Draws the About window while `*open`; its close button sets `*open` to false.
pub fn about_window(ctx: &egui::Context, open: &mut bool, trace: Option<&Trace>) {
    egui::Window::new("About Sightline")
        .id(Id::unique("sightline_about"))
        .open(open)
        .collapsible(false)
        .resizable(false)
        .anchor(Align2::CENTER_CENTER, [0.0, 0.0])
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                if let Some(icon) = icon_texture(ctx) {
                    ui.image((icon.id(), Vec2::splat(ICON_SIZE)));
                }
                ui.vertical(|ui| {
                    ui.heading("Sightline");
                    ui.label(format!("Version {}", env!("CARGO_PKG_VERSION")));
                    ui.label(DESCRIPTION);
                });
            });
            if let Some(trace) = trace {
                ui.separator();
                trace_grid(ui, trace);
            }
        });
}

fn trace_grid(ui: &mut egui::Ui, trace: &Trace) {
    egui::Grid::new("sightline_about_trace")
        .num_columns(2)
        .show(ui, |ui| {
            ui.strong("Trace");
            ui.label(trace.path.display().to_string());
            ui.end_row();
            ui.strong("Exported by");
            ui.label(match &trace.exporter_version {
                Some(version) => format!("Nsight Systems {version}"),
                None => "unknown".to_string(),
            });
            ui.end_row();
            ui.strong("Events");
            ui.label(group_thousands(&trace.event_count().to_string()));
            ui.end_row();
            ui.strong(if trace.gpus.len() == 1 { "GPU" } else { "GPUs" });
            ui.vertical(|ui| {
                if trace.gpus.is_empty() {
                    ui.label("none recorded");
                }
                for gpu in &trace.gpus {
                    ui.label(trace.gpu_title(gpu.device));
                }
            });
            ui.end_row();
        });
}

/// The icon as a texture, decoded once per context and kept in its memory; `None` (and no
/// icon drawn) if the embedded PNG cannot be decoded.
fn icon_texture(ctx: &egui::Context) -> Option<TextureHandle> {
    let id = Id::unique("sightline_about_icon");
    if let Some(texture) = ctx.data(|d| d.get_temp::<Option<TextureHandle>>(id)) {
        return texture;
    }
    // The 128 px PNG, drawn at 64 points, stays sharp on a 2× display.
    let texture = match eframe::icon_data::from_png_bytes(super::desktop::icon_png(128)) {
        Ok(icon) => Some(ctx.load_texture(
            "sightline_icon",
            ColorImage::from_rgba_unmultiplied(
                [icon.width as usize, icon.height as usize],
                &icon.rgba,
            ),
            TextureOptions::LINEAR,
        )),
        Err(e) => {
            eprintln!("warning: cannot decode the application icon: {e}");
            None
        }
    };
    ctx.data_mut(|d| d.insert_temp(id, texture.clone()));
    texture
}
