//! The search box: substring (case-insensitive) or regular-expression search over event names
//! (the names the rows show, CUDA graph executions and launches included), with a match count
//! and next/previous that select and reveal each match (keeping the zoom, see
//! [`crate::ui::timeline::TimelineState::reveal_match`]). Ctrl+F and `/` focus it. Intervals of
//! pinned query results are matched too, and next/previous step through them in time order with
//! the trace's own events.

use std::sync::Arc;

use egui::Ui;
use regex::Regex;

use crate::sql::track::SqlTrack;
use crate::trace::Trace;
use crate::ui::timeline::sql_tracks::SqlHit;
use crate::ui::timeline::{EventKind, EventRef};

/// Drops from `matches` each CUDA call that lies inside a longer matching call of the same
/// thread and correlationId: nsys 2023.4 records the runtime's versioned entry
/// (`cudaLaunchKernel_v7000`) inside the `cudaLaunchKernel` the program made, and stepping to it
/// showed a record without the backtrace and the kernel link (a click selects the outer call
/// too).
fn drop_nested_versioned_calls(trace: &Trace, matches: &mut Vec<EventRef>) {
    let calls = &trace.api_calls;
    let key = |i: usize| Some((*calls.global_tid.get(i)?, *calls.correlation_id.get(i)?));
    let span = |i: usize| Some((*calls.spans.start_ns.get(i)?, *calls.spans.end_ns.get(i)?));
    // The longest matching call of each thread and correlationId.
    let mut outer: std::collections::HashMap<(i64, u32), (i64, usize)> =
        std::collections::HashMap::new();
    for e in matches.iter().filter(|e| e.kind == EventKind::ApiCall) {
        let i = e.index as usize;
        let (Some(k), Some((s, t))) = (key(i), span(i)) else {
            continue;
        };
        let longest = outer.entry(k).or_insert((t - s, i));
        if t - s > longest.0 {
            *longest = (t - s, i);
        }
    }
    matches.retain(|e| {
        let i = e.index as usize;
        if e.kind != EventKind::ApiCall {
            return true;
        }
        let (Some(k), Some((s, t))) = (key(i), span(i)) else {
            return true;
        };
        match outer.get(&k).and_then(|&(_, o)| Some((o, span(o)?))) {
            Some((o, (os, ot))) if o != i => !(os <= s && t <= ot),
            _ => true,
        }
    });
}

/// Tells whether a name matches the query.
type NameMatcher = Box<dyn Fn(&str) -> bool>;

/// A match next/previous went to: an event of the trace, or an interval of a pinned track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchHit {
    Event(EventRef),
    Pinned(SqlHit),
}

/// The search's query, its options and its results.
#[derive(Debug, Clone, Default)]
pub struct SearchState {
    pub query: String,
    pub use_regex: bool,
    /// Every matching event, sorted by start time.
    pub matches: Vec<EventRef>,
    /// Which match next/previous last went to: its place among the events and the pinned
    /// intervals together, in time order (an event first where they start together).
    pub current: Option<usize>,
    /// Why the regular expression does not compile.
    pub error: Option<String>,
    searched: Option<(String, bool)>,
    /// Ctrl+F, `/` or "Search this name": the box takes the keyboard on its next frame.
    pub focus_requested: bool,
    /// Intervals of pinned query results whose name matches (outlined, and stepped through).
    pub sql_matches: Arc<Vec<SqlHit>>,
    /// `sql_matches` by start time (start, hit), for stepping.
    sql_order: Vec<(i64, SqlHit)>,
    /// What `sql_matches` was computed for: query, mode and the tracks (by address).
    sql_searched: Option<(String, bool, Vec<usize>)>,
}

/// The search box's widget id, to focus it (and for tests to see that it has the focus).
pub fn search_box_id() -> egui::Id {
    egui::Id::unique("sightline_search_box")
}

impl SearchState {
    /// Recomputes the matches if the query or mode changed since the last search.
    pub fn refresh(&mut self, trace: &Trace) {
        let key = (self.query.clone(), self.use_regex);
        if self.searched.as_ref() == Some(&key) {
            return;
        }
        self.searched = Some(key);
        self.current = None;
        self.error = None;
        self.matches.clear();
        if self.query.is_empty() {
            return;
        }
        let name_matches = match self.name_matcher() {
            Ok(m) => m,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        let flags: Vec<bool> = (0..trace.strings.len())
            .map(|id| {
                let s = trace.strings.get(id as u32);
                !s.is_empty() && name_matches(s)
            })
            .collect();
        let hit = |id: u32| flags.get(id as usize).copied().unwrap_or(false);
        let mut out = Vec::new();
        for (i, (&name, &short)) in trace
            .kernels
            .spans
            .name
            .iter()
            .zip(&trace.kernels.short_name)
            .enumerate()
        {
            if hit(name) || hit(short) {
                out.push(EventRef::new(EventKind::Kernel, i));
            }
        }
        let tables = [
            (EventKind::Memcpy, &trace.memcpys.spans),
            (EventKind::Memset, &trace.memsets.spans),
            (EventKind::ApiCall, &trace.api_calls.spans),
            (EventKind::Nvtx, &trace.nvtx.spans),
            (EventKind::Osrt, &trace.osrt.spans),
            // What their blocks show: "CUDA graph N" (graph-level trace), "CUDA graph · 40
            // nodes" (a node-level launch).
            (EventKind::Graph, &trace.graphs.spans),
            (EventKind::GraphLaunch, &trace.graph_launches.spans),
        ];
        for (kind, spans) in tables {
            out.extend(
                spans
                    .name
                    .iter()
                    .enumerate()
                    .filter(|&(_, &n)| hit(n))
                    .map(|(i, _)| EventRef::new(kind, i)),
            );
        }
        drop_nested_versioned_calls(trace, &mut out);
        out.sort_by_key(|e| (e.start_ns(trace), e.kind, e.index));
        self.matches = out;
    }

    /// Recomputes the matches among pinned tracks' intervals when the query, the mode or the
    /// tracks changed.
    pub fn refresh_sql(&mut self, tracks: &[Arc<SqlTrack>]) {
        let key = (
            self.query.clone(),
            self.use_regex,
            tracks.iter().map(|t| Arc::as_ptr(t) as usize).collect(),
        );
        if self.sql_searched.as_ref() == Some(&key) {
            return;
        }
        self.sql_searched = Some(key);
        let mut out = Vec::new();
        let mut order = Vec::new();
        if let (false, Ok(matches)) = (self.query.is_empty(), self.name_matcher()) {
            for (track, t) in tracks.iter().enumerate() {
                for (interval, iv) in t.intervals.iter().enumerate() {
                    if !iv.name.is_empty() && matches(&iv.name) {
                        out.push(SqlHit { track, interval });
                        order.push((iv.start_ns, SqlHit { track, interval }));
                    }
                }
            }
        }
        order.sort_by_key(|&(start, h)| (start, h.track, h.interval));
        if order != self.sql_order {
            self.current = None;
        }
        self.sql_order = order;
        self.sql_matches = Arc::new(out);
    }

    fn name_matcher(&self) -> Result<NameMatcher, String> {
        if self.use_regex {
            let re = Regex::new(&self.query).map_err(|e| format!("invalid regex: {e}"))?;
            Ok(Box::new(move |s| re.is_match(s)))
        } else {
            let needle = self.query.to_lowercase();
            Ok(Box::new(move |s| s.to_lowercase().contains(&needle)))
        }
    }

    /// Drops the results (a new trace was opened); the query stays and is run again.
    pub fn forget_results(&mut self) {
        self.searched = None;
        self.sql_searched = None;
        self.sql_matches = Arc::default();
        self.sql_order.clear();
        self.matches.clear();
        self.current = None;
        self.error = None;
    }

    /// How many matches next/previous step through: events and pinned intervals.
    pub fn total(&self) -> usize {
        self.matches.len() + self.sql_order.len()
    }

    /// The match at place `k` of the time order of events and pinned intervals (events first
    /// where they start together).
    pub fn hit_at(&self, trace: &Trace, k: usize) -> Option<SearchHit> {
        // Event i's place is i + the pinned intervals that start before it: increasing in i.
        let place = |i: usize| {
            let t = self.matches[i].start_ns(trace);
            i + self.sql_order.partition_point(|&(s, _)| s < t)
        };
        let (mut events_before, mut hi) = (0, self.matches.len());
        while events_before < hi {
            let mid = (events_before + hi) / 2;
            if place(mid) < k {
                events_before = mid + 1;
            } else {
                hi = mid;
            }
        }
        if events_before < self.matches.len() && place(events_before) == k {
            return Some(SearchHit::Event(self.matches[events_before]));
        }
        self.sql_order
            .get(k - events_before)
            .map(|&(_, h)| SearchHit::Pinned(h))
    }

    /// Moves to the next (`forward`) or previous match and returns it.
    pub fn step(&mut self, trace: &Trace, forward: bool) -> Option<SearchHit> {
        let n = self.total();
        if n == 0 {
            return None;
        }
        let next = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(c), true) => (c + 1) % n,
            (Some(c), false) => (c + n - 1) % n,
        };
        self.current = Some(next);
        self.hit_at(trace, next)
    }
}

/// The search bar. Returns the match to reveal when next/previous (or Enter) was used. Names of
/// the intervals of `sql_tracks` (pinned query results) are searched and stepped through too.
pub fn show(
    ui: &mut Ui,
    trace: &Trace,
    sql_tracks: &[Arc<SqlTrack>],
    state: &mut SearchState,
) -> Option<SearchHit> {
    let mut go = None;
    let label = ui.label("Search");
    let edit = ui
        .add(
            egui::TextEdit::singleline(&mut state.query)
                .id(search_box_id())
                .hint_text("name or regex (Ctrl+F, /)")
                .desired_width(220.0),
        )
        .labelled_by(label.id);
    if std::mem::take(&mut state.focus_requested) {
        edit.request_focus();
    }
    ui.checkbox(&mut state.use_regex, "Regex");
    state.refresh(trace);
    state.refresh_sql(sql_tracks);
    if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
        // Shift as the Enter key event had it: by the end of the frame a quick Shift+Enter may
        // have let Shift go already.
        let back = ui.input(|i| {
            i.events.iter().any(|e| {
                matches!(e, egui::Event::Key { key: egui::Key::Enter, pressed: true, modifiers, .. }
                    if modifiers.shift)
            })
        });
        go = state.step(trace, !back);
        // The box keeps the keyboard, so the next Enter goes on to the next match.
        edit.request_focus();
        // This Enter was the search's: the timeline, whose Enter zooms to the selected
        // range, must not see it too.
        crate::ui::shortcuts::claim(ui.ctx(), egui::Key::Enter);
    }
    if ui
        .button("Prev")
        .on_hover_text("Previous match (Shift+Enter)")
        .clicked()
    {
        go = state.step(trace, false);
    }
    if ui
        .button("Next")
        .on_hover_text("Next match (Enter)")
        .clicked()
    {
        go = state.step(trace, true);
    }
    if let Some(e) = &state.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    } else if !state.query.is_empty() {
        let pinned = state.sql_matches.len();
        let text = match (state.current, pinned) {
            (Some(c), 0) => format!("{} / {} matches", c + 1, state.total()),
            (Some(c), _) => format!(
                "{} / {} matches ({pinned} in pinned tracks)",
                c + 1,
                state.total()
            ),
            (None, 0) => format!("{} matches", state.matches.len()),
            (None, _) => format!(
                "{} matches (+{pinned} in pinned tracks)",
                state.matches.len()
            ),
        };
        ui.label(text);
    }
    go
}
