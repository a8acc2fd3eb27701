//! What Esc takes back: the last thing placed on the timeline, one at a time — a ruler being
//! placed, then the latest of a ruler, the range selection, the selected event (or pinned
//! interval) and the chosen gap's mark. Things placed by one action (a gap's click marks the gap
//! and selects the work ending it) go back together.
//!
//! Placements are seen, not reported: each frame compares what is on the timeline with what was
//! there the frame before and stamps what appeared, so every way of placing a thing (a click,
//! the panel, a test) counts without each telling this module.

use super::TimelineState;
use crate::timeline::overlays::GapLink;
use crate::timeline::rows::EventRef;
use crate::timeline::sql_tracks::SqlHit;

/// What was on the timeline at the last look, and when each thing appeared (a frame count).
#[derive(Debug, Default, Clone)]
pub struct PlacedOrder {
    tick: u64,
    rulers: usize,
    range: Option<(i64, i64)>,
    selection: (Option<EventRef>, Option<SqlHit>),
    gap_link: Option<GapLink>,
    /// Stamp of each placed ruler, in placing order.
    ruler_stamps: Vec<u64>,
    range_stamp: u64,
    selection_stamp: u64,
    gap_stamp: u64,
}

/// One kind of thing Esc can take back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placed {
    Ruler,
    Range,
    Selection,
    Gap,
}

impl PlacedOrder {
    /// Stamps what appeared on `state` since the last look.
    pub fn look(&mut self, state: &TimelineState) {
        self.tick += 1;
        let now = self.tick;
        let rulers = state.ruler.rulers.len();
        self.ruler_stamps.truncate(rulers);
        while self.ruler_stamps.len() < rulers {
            self.ruler_stamps.push(now);
        }
        self.rulers = rulers;
        if state.range_selection != self.range {
            self.range = state.range_selection;
            self.range_stamp = now;
        }
        let selection = (state.selection, state.sql_selection);
        if selection != self.selection {
            self.selection = selection;
            self.selection_stamp = now;
        }
        if state.overlays.gap_link != self.gap_link {
            self.gap_link = state.overlays.gap_link;
            self.gap_stamp = now;
        }
    }

    /// The kinds placed last (one action may place several), among those on the timeline.
    fn last_placed(&self, state: &TimelineState) -> Vec<Placed> {
        let candidates = [
            (Placed::Ruler, self.ruler_stamps.last().copied()),
            (
                Placed::Range,
                state.range_selection.map(|_| self.range_stamp),
            ),
            (
                Placed::Selection,
                (state.selection.is_some() || state.sql_selection.is_some())
                    .then_some(self.selection_stamp),
            ),
            (Placed::Gap, state.overlays.gap_link.map(|_| self.gap_stamp)),
        ];
        let Some(latest) = candidates.iter().filter_map(|c| c.1).max() else {
            return Vec::new();
        };
        candidates
            .iter()
            .filter(|c| c.1 == Some(latest))
            .map(|c| c.0)
            .collect()
    }
}

/// Esc: a ruler being placed is dropped; else the last thing placed goes back (ruler mode ends
/// with its last ruler); with nothing placed, ruler mode ends.
pub fn take_back_last(state: &mut TimelineState) {
    if state.ruler.pending_ns.take().is_some() {
        return;
    }
    let mut order = std::mem::take(&mut state.placed);
    let last = order.last_placed(state);
    if last.is_empty() {
        state.ruler.active = false;
    }
    for placed in last {
        match placed {
            Placed::Ruler => {
                state.ruler.rulers.pop();
                if state.ruler.rulers.is_empty() {
                    state.ruler.active = false;
                }
            }
            Placed::Range => state.range_selection = None,
            Placed::Selection => {
                state.selection = None;
                state.sql_selection = None;
            }
            Placed::Gap => state.overlays.gap_link = None,
        }
    }
    order.look(state);
    state.placed = order;
}

/// Looks at `state` for what was placed since the last frame (see [`PlacedOrder::look`]).
pub fn look(state: &mut TimelineState) {
    let mut order = std::mem::take(&mut state.placed);
    order.look(state);
    state.placed = order;
}
