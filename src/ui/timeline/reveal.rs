//! Bringing an event into view: selected, its row scrolled into sight (its groups expanded), and
//! the view zoomed — to fill the screen with it ([`TimelineState::reveal`], a link followed), or,
//! for a search match, keeping the zoom a person chose ([`TimelineState::reveal_match`]): the
//! same view when the match is already in it, else the match in the middle at a zoom that shows
//! what ran around it.

use super::TimelineState;
use crate::timeline::rows::{EventRef, TimelineModel};
use crate::timeline::{graph_brackets, painter};
use crate::trace::Trace;

/// A search match shown off-screen is centred in a view at least this many times its length,
/// so its neighbours show around it.
pub const MATCH_CONTEXT_LENGTHS: f64 = 8.0;

impl TimelineState {
    /// Selects `event` and brings it into view: zooms so it fills the middle of the screen and
    /// scrolls its row into sight (expanding its groups).
    pub fn reveal(&mut self, trace: &Trace, model: &TimelineModel, event: EventRef) {
        self.select_and_scroll_to(trace, model, event);
        self.view
            .zoom_to_event(event.start_ns(trace), event.end_ns(trace));
    }

    /// Selects the search match `event` and brings it into view without losing the context: the
    /// zoom stays when the match is already in view; otherwise the view is centred on it, as
    /// wide as it was and at least [`MATCH_CONTEXT_LENGTHS`] times the match.
    pub fn reveal_match(&mut self, trace: &Trace, model: &TimelineModel, event: EventRef) {
        self.select_and_scroll_to(trace, model, event);
        self.sql_selection = None;
        self.keep_in_view(event.start_ns(trace), event.end_ns(trace));
    }

    /// [`Self::reveal_match`] for an interval of a pinned query result: selected as a click
    /// selects it, its lane scrolled into sight (pinned tracks are the first rows).
    pub fn reveal_pinned(
        &mut self,
        model: &TimelineModel,
        hit: crate::timeline::sql_tracks::SqlHit,
    ) {
        let Some((start, end)) = crate::timeline::sql_tracks::span_of(model, hit) else {
            return;
        };
        self.selection = None;
        self.sql_selection = Some(hit);
        self.view.scroll_y = 0.0;
        self.keep_in_view(start, end);
    }

    /// The view as it is when `[start, end]` is in it, else centred on it (see
    /// [`Self::reveal_match`]).
    fn keep_in_view(&mut self, start: i64, end: i64) {
        let (start, end) = (start as f64, end as f64);
        if start >= self.view.start_ns && end <= self.view.end_ns {
            return;
        }
        let half = self
            .view
            .span_ns()
            .max((end - start) * MATCH_CONTEXT_LENGTHS)
            / 2.0;
        let mid = (start + end) / 2.0;
        self.view.zoom_to(mid - half, mid + half);
    }

    /// Shows the correlated events of `event` (the call that launched a GPU operation, or the
    /// operations a call launched): the first selected, the view spanning them and `event`.
    /// False when it has none.
    pub fn show_partners(&mut self, trace: &Trace, model: &TimelineModel, event: EventRef) -> bool {
        let partners = model.partners(trace, event);
        let Some(&first) = partners.first() else {
            return false;
        };
        let from = partners
            .iter()
            .map(|p| p.start_ns(trace))
            .fold(event.start_ns(trace), i64::min);
        let to = partners
            .iter()
            .map(|p| p.end_ns(trace))
            .fold(event.end_ns(trace), i64::max);
        self.select_and_scroll_to(trace, model, first);
        self.view.zoom_to_event(from, to);
        true
    }

    fn select_and_scroll_to(&mut self, trace: &Trace, model: &TimelineModel, event: EventRef) {
        self.selection = Some(event);
        if let Some(launch) = graph_brackets::launch_of_node(trace, event) {
            self.view.expanded_graphs.insert(launch as u32);
        }
        let Some(row) = model.row_of_event(trace, event) else {
            return;
        };
        for g in &model.rows[row].hidden_by {
            self.view.collapsed.remove(g);
        }
        let (placements, _) = painter::layout_rows(model, &self.view, 0.0);
        if let Some(p) = placements.iter().find(|p| p.row == row) {
            let y = p.top + self.view.scroll_y;
            let visible_h = self.last_event_area.height().max(100.0);
            if y < self.view.scroll_y || y + p.height > self.view.scroll_y + visible_h {
                self.view.scroll_y = (y - visible_h / 3.0).max(0.0);
            }
        }
    }
}
