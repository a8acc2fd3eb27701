//! View → Compare…: the dialog that picks the baseline and the new run among the loaded tabs.
//! It opens on the two most recently opened traces (the older of them as the baseline), as a
//! person who just opened two runs to compare them expects.

use egui::Id;

use crate::ui::workspace::TraceTab;

/// The two most recently opened loaded tabs as (baseline, new) indices into `tabs`: the newest
/// is the new run, the one opened before it the baseline; one loaded tab is compared with
/// itself; `None` without any.
pub fn recent_pair(tabs: &[TraceTab]) -> Option<(usize, usize)> {
    let mut loaded: Vec<usize> = (0..tabs.len())
        .filter(|&i| tabs[i].document.is_some())
        .collect();
    // Tab ids grow with each tab opened.
    loaded.sort_by_key(|&i| std::cmp::Reverse(tabs[i].id));
    match loaded.as_slice() {
        [] => None,
        [only] => Some((*only, *only)),
        [newest, before, ..] => Some((*before, *newest)),
    }
}

/// Draws the dialog while `open`; `choice` holds the picks between frames (`None`: not picked
/// yet, the dialog starts from [`recent_pair`]). Returns the pair to compare when Compare is
/// clicked.
pub fn show(
    ctx: &egui::Context,
    tabs: &[TraceTab],
    choice: &mut Option<(usize, usize)>,
    open: &mut bool,
) -> Option<(usize, usize)> {
    let loaded: Vec<usize> = (0..tabs.len())
        .filter(|&i| tabs[i].document.is_some())
        .collect();
    let valid = |(b, n): (usize, usize)| loaded.contains(&b) && loaded.contains(&n);
    let (mut base, mut new) = choice
        .filter(|&c| valid(c))
        .or_else(|| recent_pair(tabs))
        .unwrap_or((0, 0));
    let mut start = None;
    egui::Window::new("Compare runs")
        .id(Id::unique("sightline_compare_dialog"))
        .open(open)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            if loaded.is_empty() {
                ui.label("Open two traces first (File → Open…, or drop them on the window).");
                return;
            }
            egui::Grid::new("sightline_compare_pick").show(ui, |ui| {
                for (label, pick) in [("Baseline (top)", &mut base), ("New (bottom)", &mut new)] {
                    let l = ui.label(label);
                    egui::ComboBox::from_id_salt(label)
                        .selected_text(tabs.get(*pick).map_or_else(String::new, TraceTab::title))
                        .show_ui(ui, |ui| {
                            for &i in &loaded {
                                ui.selectable_value(pick, i, tabs[i].title());
                            }
                        })
                        .response
                        .labelled_by(l.id);
                    ui.end_row();
                }
            });
            if base == new {
                ui.weak("Comparing a trace with itself: every delta is zero.");
            }
            if ui.button("Compare").clicked() {
                start = Some((base, new));
            }
        });
    *choice = Some((base, new));
    start
}
