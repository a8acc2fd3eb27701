//! The history of views that Backspace and Alt+Left go back through, as a browser's Back does.
//!
//! One entry per navigation, not per frame: a run of wheel steps or a drag is one gesture (the
//! changes of a view that keeps moving with pauses shorter than [`GESTURE_PAUSE_S`]), while a
//! jump — double-click, zoom to the selection, a drag on the axis, Home, a search match, a
//! link in the details or the analysis panel — is always an entry of its own. Jumps made outside
//! the timeline (the panels change the view between two of its frames) are noticed as a view
//! that differs from the one the last frame ended with.

use crate::timeline::navigation::ViewState;

/// Changes of the view closer together than this (seconds) are one gesture.
pub const GESTURE_PAUSE_S: f64 = 0.5;
/// Entries kept; the oldest go first.
const MAX_ENTRIES: usize = 100;

/// Where the view was: its time span and row scroll.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewSpan {
    pub start_ns: f64,
    pub end_ns: f64,
    pub scroll_y: f32,
}

impl ViewSpan {
    pub fn of(view: &ViewState) -> Self {
        Self {
            start_ns: view.start_ns,
            end_ns: view.end_ns,
            scroll_y: view.scroll_y,
        }
    }

    /// The same time span (scrolling the rows alone is no new view).
    fn same_time(&self, other: &Self) -> bool {
        self.start_ns == other.start_ns && self.end_ns == other.end_ns
    }
}

/// The views to go back to, the most recent last.
#[derive(Debug, Clone, Default)]
pub struct ViewHistory {
    back: Vec<ViewSpan>,
    /// The view the last frame ended with.
    seen: Option<ViewSpan>,
    /// The view this frame started with.
    frame_start: Option<ViewSpan>,
    /// Input time (s) until which a change continues the current gesture.
    gesture_until: f64,
    /// This frame's change is a jump: an entry even within a gesture.
    jump: bool,
}

impl ViewHistory {
    /// The views to go back to, oldest first.
    pub fn entries(&self) -> &[ViewSpan] {
        &self.back
    }

    /// At the start of a frame: a view changed since the last frame ended was a jump.
    pub fn begin_frame(&mut self, view: &ViewState) {
        let now = ViewSpan::of(view);
        if let Some(seen) = self.seen
            && !seen.same_time(&now)
        {
            self.push(seen);
            self.gesture_until = 0.0;
        }
        self.frame_start = Some(now);
    }

    /// The change made this frame is a jump (its own entry).
    pub fn jumped(&mut self) {
        self.jump = true;
    }

    /// At the end of the frame's input handling, `time_s` being the input's time.
    pub fn end_frame(&mut self, view: &ViewState, time_s: f64) {
        let now = ViewSpan::of(view);
        if let Some(start) = self.frame_start.take()
            && !start.same_time(&now)
        {
            if self.jump || time_s > self.gesture_until {
                self.push(start);
            }
            self.gesture_until = if self.jump {
                0.0
            } else {
                time_s + GESTURE_PAUSE_S
            };
        }
        self.jump = false;
        self.seen = Some(now);
    }

    /// Shows the previous view, if any; true when there was one.
    pub fn go_back(&mut self, view: &mut ViewState) -> bool {
        let Some(previous) = self.back.pop() else {
            return false;
        };
        view.start_ns = previous.start_ns;
        view.end_ns = previous.end_ns;
        view.scroll_y = previous.scroll_y;
        // Going back is no new entry.
        self.frame_start = Some(previous);
        self.gesture_until = 0.0;
        true
    }

    fn push(&mut self, span: ViewSpan) {
        if self.back.last().is_some_and(|last| last.same_time(&span)) {
            return;
        }
        if self.back.len() >= MAX_ENTRIES {
            self.back.remove(0);
        }
        self.back.push(span);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(start: f64, end: f64) -> ViewState {
        ViewState {
            start_ns: start,
            end_ns: end,
            trace_end_ns: 1_000_000,
            ..ViewState::default()
        }
    }

    #[test]
    fn a_gesture_is_one_entry_and_a_jump_its_own() {
        let mut h = ViewHistory::default();
        let mut v = view(0.0, 1000.0);
        h.begin_frame(&v);
        h.end_frame(&v, 0.0);
        // Three wheel steps 0.1 s apart: one entry.
        for (k, t) in [0.1, 0.2, 0.3].into_iter().enumerate() {
            h.begin_frame(&v);
            v.zoom_center(0.9);
            h.end_frame(&v, t);
            assert_eq!(h.entries().len(), 1, "step {k}");
        }
        let after_wheel = ViewSpan::of(&v);
        // A jump right after: an entry of its own.
        h.begin_frame(&v);
        v.zoom_to(100.0, 200.0);
        h.jumped();
        h.end_frame(&v, 0.35);
        assert_eq!(h.entries().len(), 2);
        // A change from outside between frames: an entry.
        v.zoom_to(300.0, 400.0);
        h.begin_frame(&v);
        h.end_frame(&v, 0.4);
        assert_eq!(h.entries().len(), 3);
        // Back, back, back: 100–200, after the wheel, the start; then nothing.
        for expected in [(100.0, 200.0), (after_wheel.start_ns, after_wheel.end_ns)] {
            h.begin_frame(&v);
            assert!(h.go_back(&mut v));
            h.end_frame(&v, 0.5);
            assert_eq!((v.start_ns, v.end_ns), expected);
        }
        h.begin_frame(&v);
        assert!(h.go_back(&mut v));
        h.end_frame(&v, 0.6);
        assert_eq!((v.start_ns, v.end_ns), (0.0, 1000.0));
        h.begin_frame(&v);
        assert!(!h.go_back(&mut v));
        h.end_frame(&v, 0.7);
    }
}
