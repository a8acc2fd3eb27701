//! The top of the window: the menu bar (File ▸, View ▸, the timeline's toggles, the legend) with
//! the load progress and status under it, and the tab bar of open traces.

use super::*;

impl SightlineApp {
    pub(super) fn top_bar(&mut self, ui: &mut Ui, palette: &Palette) {
        let compare_on = self.shown_compare().is_some();
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui
                    .add(
                        egui::Button::new("Open…")
                            .shortcut_text(ui.ctx().format_shortcut(&shortcuts::OPEN_SHORTCUT)),
                    )
                    .on_hover_text("Opens the trace in a new tab")
                    .clicked()
                {
                    ui.close();
                    file_dialog::open_trace(ui.ctx(), self.settings.last_folder.as_deref());
                }
                if ui
                    .button("Open run…")
                    .on_hover_text(
                        "Choose the traces of a run's ranks (several at once): they open as one run, in one tab",
                    )
                    .clicked()
                {
                    ui.close();
                    file_dialog::open_run(ui.ctx(), self.settings.last_folder.as_deref());
                }
                let can_attach = self.shown_compare().is_none() && self.tab().holds_timeline();
                if ui
                    .add_enabled(can_attach, egui::Button::new("Attach Nsight Compute report…"))
                    .on_hover_text(
                        "Join an .ncu-rep of the same program to this timeline: each profiled \
                         kernel's ncu numbers in its details (dropping the file on the tab does \
                         the same)",
                    )
                    .on_disabled_hover_text("Open a timeline trace (nsys or PyTorch) first")
                    .clicked()
                {
                    ui.close();
                    self.attaching_ncu = Some(self.tab().id);
                    file_dialog::open_trace(ui.ctx(), self.settings.last_folder.as_deref());
                }
                if let Some(path) = recent_files_menu(ui, &mut self.settings) {
                    self.open(path, Some(ui.ctx()));
                }
                if let Some(tab) = self.tabs.get(self.active) {
                    self.save_report.menu_item(ui, tab);
                }
                if ui.button("Close tab").clicked() {
                    ui.close();
                    let i = self.active;
                    self.close_tab(i);
                }
                if ui
                    .add(
                        egui::Button::new("Quit")
                            .shortcut_text(ui.ctx().format_shortcut(&QUIT_SHORTCUT)),
                    )
                    .clicked()
                {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
            ui.menu_button("View", |ui| {
                if ui.button("Show all (Home)").clicked() {
                    self.tab_mut().timeline.view.show_all();
                    ui.close();
                }
                if ui
                    .add_enabled(
                        self.tabs.iter().filter(|t| t.document.is_some()).count() >= 1,
                        egui::Button::new("Compare…"),
                    )
                    .on_hover_text("Two traces on one time axis, with per-name deltas")
                    .clicked()
                {
                    self.show_compare_dialog = true;
                    ui.close();
                }
                ui.checkbox(&mut self.show_details, "Details panel");
                ui.checkbox(&mut self.show_analysis, "Analysis panel");
                let ruler = &mut self.tab_mut().timeline.ruler;
                if ui.checkbox(&mut ruler.active, "Ruler (R)").changed() {
                    ruler.pending_ns = None;
                }
                let kind = PaletteKind::current(ui.ctx());
                let mut colour_blind = kind == PaletteKind::ColourBlind;
                if ui
                    .checkbox(&mut colour_blind, "Colour-blind-safe colours")
                    .on_hover_text(
                        "Okabe–Ito based colours that stay apart under deuteranopia and protanopia",
                    )
                    .changed()
                {
                    PaletteKind::set(
                        ui.ctx(),
                        if colour_blind {
                            PaletteKind::ColourBlind
                        } else {
                            PaletteKind::Standard
                        },
                    );
                }
                let dark = ui.visuals().dark_mode;
                if ui
                    .button(if dark { "Light theme" } else { "Dark theme" })
                    .clicked()
                {
                    ui.ctx().set_theme(if dark {
                        egui::Theme::Light
                    } else {
                        egui::Theme::Dark
                    });
                    ui.close();
                }
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keys… (?)").clicked() {
                    self.show_help = true;
                    ui.close();
                }
                if ui.button("About Sightline").clicked() {
                    self.show_about = true;
                    ui.close();
                }
            });
            let tab = self.tab_mut();
            // An Nsight Compute report's tab has no timeline: no search, arrows, ruler or legend.
            if !compare_on
                && let Some(d) = &tab.document
                && !is_ncu_report(&d.trace)
            {
                ui.separator();
                match search::show(ui, &d.trace, &d.model.sql_tracks, &mut tab.search) {
                    Some(search::SearchHit::Event(e)) => {
                        tab.timeline.reveal_match(&d.trace, &d.model, e);
                    }
                    Some(search::SearchHit::Pinned(h)) => tab.timeline.reveal_pinned(&d.model, h),
                    None => {}
                }
                tab.timeline.sql_search_matches = tab.search.sql_matches.clone();
                ui.toggle_value(&mut tab.timeline.launch_arrows, "Launch arrows")
                    .on_hover_text(
                        "An arrow from each CUDA call to the kernel it launched, for the kernels \
                         in view (thinned when zoomed out)",
                    );
                if ui
                    .toggle_value(&mut tab.timeline.ruler.active, "Ruler")
                    .on_hover_text("R: click two points or events to measure; Esc clears")
                    .changed()
                {
                    tab.timeline.ruler.pending_ns = None;
                }
            }
            if ui.button("?").on_hover_text("Keyboard and mouse").clicked() {
                self.show_help = !self.show_help;
            }
            // Last: on a narrow window the legend is what runs off the edge, not the controls.
            if self
                .tab()
                .document
                .as_ref()
                .is_some_and(|d| !is_ncu_report(&d.trace))
                || compare_on
            {
                ui.separator();
                legend(ui, palette);
            }
        });
        let tab = self.tab_mut();
        let mut cancel = false;
        if let Some(job) = &tab.job {
            let (phase, fraction) = job.progress();
            ui.horizontal(|ui| {
                ui.label(format!("Loading {}", job.path.display()));
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .desired_width(260.0)
                        .show_percentage()
                        .text(format!("{phase} · {:.0}%", fraction * 100.0)),
                );
                cancel = ui.button("Cancel").clicked();
            });
        }
        if cancel {
            tab.cancel_load();
        }
        if !compare_on {
            status_lines(ui, tab);
        }
    }

    /// One tab per open trace, with a close button, and the compare view's tab.
    pub(super) fn tab_bar(&mut self, ui: &mut Ui) {
        let mut select = None;
        let mut close = None;
        let (mut show_compare, mut close_compare) = (false, false);
        ui.horizontal_wrapped(|ui| {
            for (i, tab) in self.tabs.iter().enumerate() {
                let shown = !self.compare_shown && i == self.active;
                let mut label = tab.title();
                if tab.is_loading() {
                    label.push_str(" …");
                } else if tab.error.is_some() {
                    label.push_str(" (failed)");
                }
                let r = ui.selectable_label(shown, label);
                let r = match &tab.path {
                    Some(p) => r.on_hover_text(p.display().to_string()),
                    None => r,
                };
                if r.clicked() {
                    select = Some(i);
                }
                if ui
                    .small_button("×")
                    .on_hover_text("Close this trace (frees its memory)")
                    .clicked()
                {
                    close = Some(i);
                }
                ui.separator();
            }
            if let Some(cv) = &self.compare {
                let name = |id| self.tab_by_id(id).map_or_else(String::new, TraceTab::title);
                let label = format!("Compare: {} vs {}", name(cv.base), name(cv.new));
                if ui.selectable_label(self.compare_shown, label).clicked() {
                    show_compare = true;
                }
                if ui
                    .small_button("×")
                    .on_hover_text("Close the comparison")
                    .clicked()
                {
                    close_compare = true;
                }
            } else if self.tabs.iter().filter(|t| t.document.is_some()).count() >= 2
                && ui.button("Compare…").clicked()
            {
                self.show_compare_dialog = true;
            }
        });
        if let Some(i) = select {
            self.active = i;
            self.compare_shown = false;
        }
        if show_compare {
            self.compare_shown = true;
        }
        if close_compare {
            self.compare = None;
            self.compare_shown = false;
        }
        if let Some(i) = close {
            self.close_tab(i);
        }
    }
}

/// File → Open Recent ▸, most recent first, the missing files pruned as it opens; the file
/// chosen.
fn recent_files_menu(ui: &mut Ui, settings: &mut Settings) -> Option<PathBuf> {
    let mut chosen = None;
    ui.add_enabled_ui(!settings.recent_files.is_empty(), |ui| {
        ui.menu_button("Open Recent", |ui| {
            settings.prune_missing_recent();
            // Whole paths: the same file name in two folders (two runs' report1.sqlite) is usual.
            for path in &settings.recent_files {
                if ui.button(path.display().to_string()).clicked() {
                    chosen = Some(path.clone());
                    ui.close();
                }
            }
            if settings.recent_files.is_empty() {
                ui.weak("No recent files");
            }
        });
    });
    chosen
}

/// The colour legend; where the bar has no room for its names (a 1600 px window with the search
/// count showing cut "Communication" in a new user's first hour), nsys's short names, each with
/// its full name on hover.
fn legend(ui: &mut Ui, palette: &Palette) {
    let entries = palette.legend();
    let body = egui::TextStyle::Body.resolve(ui.style());
    let color = ui.visuals().text_color();
    let spacing = ui.spacing().item_spacing.x;
    let needed: f32 = entries
        .iter()
        .map(|(name, _)| {
            let text = ui.fonts_mut(|f| f.layout_no_wrap(name.to_string(), body.clone(), color));
            12.0 + text.size().x + 2.0 * spacing
        })
        .sum();
    let short = needed > ui.available_width();
    for (name, color) in entries {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        ui.painter().rect_filled(rect, 2.0, color);
        if short {
            ui.label(short_legend_name(name)).on_hover_text(name);
        } else {
            ui.label(name);
        }
    }
}

/// A legend entry's short name: the copy directions as nsys names them in `[CUDA memcpy HtoD]`.
fn short_legend_name(name: &str) -> &str {
    match name {
        "Host to Device" => "HtoD",
        "Device to Host" => "DtoH",
        "Device to Device" => "DtoD",
        "Peer to Peer" => "PtoP",
        "Unified memory migration" => "UM migration",
        "Communication" => "Comm",
        other => other,
    }
}

/// Whether a tab's trace is an Nsight Compute report (a kernel table, no timeline).
fn is_ncu_report(trace: &crate::trace::Trace) -> bool {
    trace.format == crate::trace::TraceFormat::NsightCompute
}
