//! The run's line above its rows: its loading progress and Cancel, the clock used, the
//! straggler, search across every rank (its events and its pinned SQL intervals; Next expands the
//! rank of the next match), expand and collapse all, show all.

use egui::Ui;

use super::RunTab;
use super::view::LATE;
use crate::ui::panels::search::SearchHit;
use crate::ui::timeline::sql_tracks;

/// The run's line above its rows: the clock used, the straggler, search across ranks, expand
/// and collapse all.
pub fn show(ui: &mut Ui, run: &mut RunTab) {
    ui.horizontal_wrapped(|ui| {
        ui.add_space(6.0);
        ui.strong(run.title());
        if run.is_loading() {
            ui.spinner();
            ui.label(format!("loading {:.0}%", run.progress() * 100.0));
            if ui.button("Cancel").clicked() {
                run.cancel(Some(ui.ctx()));
            }
        } else if run.analysing() {
            ui.spinner();
            ui.label("matching collectives…");
        }
        if let Some(e) = &run.analysis_error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        if let Some(a) = &run.analysis {
            ui.separator();
            ui.label(format!("Clock: {}", a.alignment.short()))
                .on_hover_text(
                    "How the ranks' times were put on one clock; shift a rank by hand in the panel",
                );
            ui.separator();
            // Occurrences no other rank shares are left out of the verdict: say how many.
            let unmatched: usize = a.collectives.unmatched.iter().sum();
            let left_out = if unmatched > 0 {
                format!("; {unmatched} on one rank only, left out")
            } else {
                String::new()
            };
            match a.straggler {
                Some((k, n)) => ui.colored_label(
                    LATE,
                    format!(
                        "Straggler: rank {} (last at {n} of {} collectives, matched by {}{left_out})",
                        a.ranks.get(k).map_or(0, |r| r.rank),
                        a.instances().len(),
                        a.collectives.matching.label()
                    ),
                )
                .on_hover_text(&a.verdict),
                None => ui
                    .label(format!(
                        "No straggler ({} collectives matched{left_out})",
                        a.instances().len()
                    ))
                    .on_hover_text(&a.verdict),
            };
        }
        ui.separator();
        let label = ui
            .label("Search expanded ranks")
            .on_hover_text("Search reads events: it covers the expanded ranks (a collapsed rank holds only its summary)");
        let edit = ui
            .add(egui::TextEdit::singleline(&mut run.query).desired_width(160.0))
            .labelled_by(label.id);
        if edit.changed() {
            run.refresh_search();
        }
        if !run.query.is_empty() {
            let n: usize = run
                .ranks
                .iter()
                .map(|r| r.search.matches.len() + r.search.sql_matches.len())
                .sum();
            ui.weak(format!("{n} matches"));
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Next").clicked() || enter) && n > 0 {
                next_match(run);
            }
        }
        ui.separator();
        let expand = ui.button("Expand all").on_hover_text(format!(
            "Loads the ranks' events (at most {} ranks: each expanded rank holds its whole trace)",
            super::detail::EXPAND_ALL_MAX
        ));
        if expand.clicked() {
            run.expand_all();
        }
        if ui.button("Collapse all").clicked() {
            run.collapse_all();
        }
        if ui.button("Show all").on_hover_text("Home").clicked() {
            run.show_all();
        }
    });
}

impl RunTab {
    /// Searches every rank for the run's query: its events, and its pinned SQL tracks' intervals
    /// (outlined on its rows).
    pub fn refresh_search(&mut self) {
        for r in &mut self.ranks {
            r.search.query = self.query.clone();
            if let Some(t) = &r.trace {
                r.search.refresh(t);
            }
            if let Some(model) = &r.model {
                r.search.refresh_sql(&model.sql_tracks);
                r.state.sql_search_matches = r.search.sql_matches.clone();
            }
        }
    }
}

/// The first search match (any rank, pinned SQL intervals included) starting after the middle of
/// the view: its rank expanded, the match selected and brought into view.
pub fn next_match(run: &mut RunTab) {
    let mid = (run.view.0 + run.view.1) / 2.0;
    let mut best: Option<(i64, usize, SearchHit)> = None;
    for (k, r) in run.ranks.iter().enumerate() {
        let Some(t) = &r.trace else { continue };
        let o = run.offset_ns(k);
        let i = r
            .search
            .matches
            .partition_point(|m| ((m.start_ns(t) + o) as f64) <= mid);
        if let Some(&m) = r.search.matches.get(i) {
            let at = m.start_ns(t) + o;
            if best.is_none_or(|(b, _, _)| at < b) {
                best = Some((at, k, SearchHit::Event(m)));
            }
        }
        let Some(model) = &r.model else { continue };
        for &h in r.search.sql_matches.iter() {
            let Some((start, _)) = sql_tracks::span_of(model, h) else {
                continue;
            };
            let at = start + o;
            // An event first where both start together, as the search box steps.
            if (at as f64) > mid && best.is_none_or(|(b, _, _)| at < b) {
                best = Some((at, k, SearchHit::Pinned(h)));
            }
        }
    }
    let Some((_, k, hit)) = best else { return };
    let r = &mut run.ranks[k];
    r.expanded = true;
    if let (Some(t), Some(model)) = (r.trace.clone(), r.model.as_ref()) {
        match hit {
            SearchHit::Event(m) => r.state.reveal_match(&t, model, m),
            SearchHit::Pinned(h) => r.state.reveal_pinned(model, h),
        }
    }
    run.sync();
}
