//! The window: an eframe app that opens a trace any way a person would and draws its timeline.
//!
//! [`app`] holds the state and the frame loop; [`timeline`] the timeline widget (input,
//! tooltips, menus) over the rows, painter and navigation of [`crate::timeline`]; [`panels`] the
//! details and search; [`theme`] the colours and legend; [`loader`] loads off the UI thread;
//! [`desktop`] the XDG integration;
//! [`columns`] the tables' names cut to fit and their resizable, remembered column widths;
//! [`gap_tooltip`] what an idle gap says about itself (Gaps tab and hatching); [`details_dock`]
//! the details panel's size and splitter; [`shortcuts`] the window's own keys (Ctrl+O, Ctrl+F);
//! [`run`] a run of ranks (several traces on one clock) in one tab; [`ncu_attach`] an Nsight
//! Compute report attached to a tab's timeline.

pub mod about;
pub mod app;
pub mod columns;
pub mod compare;
pub mod desktop;
pub mod details_dock;
pub mod file_dialog;
pub mod gap_tooltip;
pub mod loader;
pub mod ncu;
pub mod ncu_attach;
pub mod panels;
pub mod run;
pub mod save_report;
pub mod settings;
pub mod shortcuts;
pub mod theme;
pub mod timeline;
pub mod workspace;

pub use app::SightlineApp;

use std::path::PathBuf;

/// Opens the window with `files` in tabs (comparing the first two when `compare`) and returns
/// when it is closed.
pub fn run_window(
    files: Vec<PathBuf>,
    compare: bool,
    align: Option<crate::analysis::align::Alignment>,
    run: Vec<PathBuf>,
    ncu: Option<PathBuf>,
    no_cache: bool,
) -> anyhow::Result<()> {
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("Sightline")
        .with_app_id("sightline")
        .with_inner_size([1500.0, 900.0])
        .with_drag_and_drop(true);
    if let Some(icon) = desktop::window_icon() {
        viewport = viewport.with_icon(std::sync::Arc::new(icon));
    }
    let options = eframe::NativeOptions {
        viewport,
        // Size and position; the rest is in `settings` (app.ron in eframe::storage_dir).
        persist_window: true,
        ..Default::default()
    };
    eframe::run_native(
        "Sightline",
        options,
        Box::new(move |cc| {
            crate::timeline::fonts::install_cjk_fallback(&cc.egui_ctx);
            let settings = cc
                .storage
                .map(settings::Settings::load)
                .unwrap_or_default();
            settings.apply_theme(&cc.egui_ctx);
            let mut app = SightlineApp::with_files(files, compare).with_settings(settings);
            app.pending_alignment = align;
            app.digest_cache = !no_cache;
            if !run.is_empty() {
                app.pending_runs.push(run);
            }
            if let Some(report) = ncu {
                app.attach_ncu_to_first_tab(report);
            }
            Ok(Box::new(app))
        }),
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "cannot open the window: {e}\n(no display? `sightline summary TRACE`, `gaps` and `export` work without one)"
        )
    })
}
