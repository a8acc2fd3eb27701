//! Where the timeline looks: the visible time span, the vertical scroll, collapsed groups, and the
//! zoom/pan arithmetic that keyboard, wheel and drags share. Pure state, no drawing, so tests can
//! check it directly.

use std::collections::HashSet;

use super::rows::{GroupId, TimelineModel};
use crate::trace::Trace;

/// Smallest visible span: below a few ns nothing in a trace is resolvable.
pub const MIN_SPAN_NS: f64 = 20.0;

/// The view of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewState {
    /// Visible time span, ns from the session start. `f64` so sub-pixel pans accumulate.
    pub start_ns: f64,
    pub end_ns: f64,
    /// Vertical scroll of the rows, in points.
    pub scroll_y: f32,
    /// The trace's bounds, for "show all" and clamping.
    pub trace_start_ns: i64,
    pub trace_end_ns: i64,
    pub collapsed: HashSet<GroupId>,
    /// CUDA graph launches traced node by node (indices into `trace.graph_launches`) shown node by
    /// node; the others are one block each ([`super::graph_brackets`]).
    pub expanded_graphs: HashSet<u32>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            start_ns: 0.0,
            end_ns: 1_000_000.0,
            scroll_y: 0.0,
            trace_start_ns: 0,
            trace_end_ns: 1_000_000,
            collapsed: HashSet::new(),
            expanded_graphs: HashSet::new(),
        }
    }
}

impl ViewState {
    /// A view showing the whole of `[first_ns, last_ns]`, with the model's default collapsed groups.
    pub fn new(first_ns: i64, last_ns: i64, model: &TimelineModel) -> Self {
        let mut v = Self {
            trace_start_ns: first_ns,
            trace_end_ns: last_ns.max(first_ns + 1),
            collapsed: model.initially_collapsed.iter().copied().collect(),
            ..Self::default()
        };
        v.show_all();
        v
    }

    /// The first view of a trace: where its GPUs work, when that is a small part of the whole (a
    /// Python program spends seconds importing before its first kernel); Home shows everything.
    pub fn first_view(trace: &Trace, model: &TimelineModel) -> Self {
        let mut view = Self::new(trace.first_ns, trace.last_ns, model);
        if let Some((a, b)) = trace.gpu_span() {
            let whole = (trace.last_ns - trace.first_ns).max(1) as f64;
            let gpu = (b - a).max(1) as f64;
            if gpu < 0.8 * whole {
                let margin = gpu * 0.02;
                view.zoom_to(a as f64 - margin, b as f64 + margin);
            }
        }
        view
    }

    pub fn span_ns(&self) -> f64 {
        self.end_ns - self.start_ns
    }

    /// Shows the whole trace with a small margin on both sides.
    pub fn show_all(&mut self) {
        let len = (self.trace_end_ns - self.trace_start_ns).max(1) as f64;
        self.start_ns = self.trace_start_ns as f64 - len * 0.01;
        self.end_ns = self.trace_end_ns as f64 + len * 0.01;
        self.scroll_y = 0.0;
    }

    /// Zooms by `factor` (< 1 zooms in) keeping the time `anchor_ns` where it is on screen.
    pub fn zoom_at(&mut self, anchor_ns: f64, factor: f64) {
        let span = self.span_ns();
        let new_span = (span * factor).clamp(MIN_SPAN_NS, self.max_span_ns());
        let frac = if span > 0.0 {
            ((anchor_ns - self.start_ns) / span).clamp(0.0, 1.0)
        } else {
            0.5
        };
        self.start_ns = anchor_ns - frac * new_span;
        self.end_ns = self.start_ns + new_span;
        self.clamp();
    }

    /// Zooms about the middle of the view.
    pub fn zoom_center(&mut self, factor: f64) {
        let mid = (self.start_ns + self.end_ns) / 2.0;
        self.zoom_at(mid, factor);
    }

    /// Moves the view by `delta_ns` (positive shows later times).
    pub fn pan_ns(&mut self, delta_ns: f64) {
        self.start_ns += delta_ns;
        self.end_ns += delta_ns;
        self.clamp();
    }

    /// Shows `[start_ns, end_ns)` (at least [`MIN_SPAN_NS`] wide), e.g. after a drag on the axis.
    pub fn zoom_to(&mut self, start_ns: f64, end_ns: f64) {
        let (a, b) = if start_ns <= end_ns {
            (start_ns, end_ns)
        } else {
            (end_ns, start_ns)
        };
        let mid = (a + b) / 2.0;
        let span = (b - a).max(MIN_SPAN_NS);
        self.start_ns = mid - span / 2.0;
        self.end_ns = mid + span / 2.0;
        self.clamp();
    }

    /// Shows an event with a margin of a fifth of its length on each side.
    pub fn zoom_to_event(&mut self, start_ns: i64, end_ns: i64) {
        let len = ((end_ns - start_ns) as f64).max(MIN_SPAN_NS);
        self.zoom_to(start_ns as f64 - len * 0.2, end_ns as f64 + len * 0.2);
    }

    /// Whether the rows of `groups` are hidden (any of them collapsed).
    pub fn hides(&self, groups: &[GroupId]) -> bool {
        groups.iter().any(|g| self.collapsed.contains(g))
    }

    pub fn toggle(&mut self, group: GroupId) {
        if !self.collapsed.remove(&group) {
            self.collapsed.insert(group);
        }
    }

    fn max_span_ns(&self) -> f64 {
        ((self.trace_end_ns - self.trace_start_ns).max(1) as f64 * 1.5).max(MIN_SPAN_NS)
    }

    /// Keeps some of the trace on screen: the view may not leave the trace's bounds by more
    /// than half a view.
    fn clamp(&mut self) {
        let span = self.span_ns();
        let lo = self.trace_start_ns as f64 - span * 0.5;
        let hi = self.trace_end_ns as f64 + span * 0.5;
        if self.start_ns < lo {
            self.start_ns = lo;
            self.end_ns = lo + span;
        }
        if self.end_ns > hi {
            self.end_ns = hi;
            self.start_ns = hi - span;
        }
    }
}

/// Maps between time and x within a rectangle of the screen.
#[derive(Debug, Clone, Copy)]
pub struct TimeToX {
    pub start_ns: f64,
    pub left_px: f32,
    pub px_per_ns: f64,
}

impl TimeToX {
    pub fn new(view: &ViewState, left_px: f32, width_px: f32) -> Self {
        Self {
            start_ns: view.start_ns,
            left_px,
            px_per_ns: f64::from(width_px.max(1.0)) / view.span_ns().max(1e-9),
        }
    }

    pub fn x(&self, t_ns: i64) -> f32 {
        self.left_px + ((t_ns as f64 - self.start_ns) * self.px_per_ns) as f32
    }

    pub fn t(&self, x: f32) -> f64 {
        self.start_ns + f64::from(x - self.left_px) / self.px_per_ns
    }

    pub fn ns_per_px(&self) -> f64 {
        1.0 / self.px_per_ns
    }
}

/// Tick spacing for a time axis: 1, 2 or 5 × 10^k ns, the smallest with at least
/// `min_px` between ticks.
pub fn tick_step_ns(ns_per_px: f64, min_px: f64) -> f64 {
    let target = (ns_per_px * min_px).max(1.0);
    let mut decade = 10f64.powf(target.log10().floor());
    loop {
        for m in [1.0, 2.0, 5.0] {
            if decade * m >= target {
                return decade * m;
            }
        }
        decade *= 10.0;
    }
}

/// Formats a time with the unit that suits `step_ns` (the tick spacing), e.g. "1.25 ms".
pub fn format_tick(t_ns: f64, step_ns: f64) -> String {
    // The unit follows the time itself (663.430 ms rather than 663430 µs); the decimals follow
    // the step, so neighbouring ticks always differ.
    let (unit, scale) = unit_for(t_ns.abs().max(step_ns));
    let value = t_ns / scale;
    let step = step_ns / scale;
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    };
    format!("{value:.decimals$} {unit}")
}

/// Formats a duration or a time for people: "850 ns", "12.3 µs", "4.56 ms", "1.234 s".
pub fn format_duration(ns: f64) -> String {
    let (unit, scale) = unit_for(ns.abs());
    let v = ns / scale;
    if scale == 1.0 {
        format!("{v:.0} {unit}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1} {unit}")
    } else if v.abs() >= 10.0 {
        format!("{v:.2} {unit}")
    } else {
        format!("{v:.3} {unit}")
    }
}

fn unit_for(ns: f64) -> (&'static str, f64) {
    if ns >= 1e9 {
        ("s", 1e9)
    } else if ns >= 1e6 {
        ("ms", 1e6)
    } else if ns >= 1e3 {
        ("µs", 1e3)
    } else {
        ("ns", 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> ViewState {
        let mut v = ViewState {
            trace_start_ns: 0,
            trace_end_ns: 1_000_000,
            ..ViewState::default()
        };
        v.show_all();
        v
    }

    #[test]
    fn zoom_at_keeps_the_anchor_in_place() {
        let mut v = view();
        let anchor = 250_000.0;
        let frac = (anchor - v.start_ns) / v.span_ns();
        v.zoom_at(anchor, 0.5);
        assert!(((anchor - v.start_ns) / v.span_ns() - frac).abs() < 1e-9);
        assert!((v.span_ns() - 1_020_000.0 * 0.5).abs() < 1e-6);
    }

    #[test]
    fn zoom_is_bounded_both_ways() {
        let mut v = view();
        for _ in 0..200 {
            v.zoom_center(0.5);
        }
        assert!((v.span_ns() - MIN_SPAN_NS).abs() < 1e-6);
        for _ in 0..200 {
            v.zoom_center(2.0);
        }
        assert!((v.span_ns() - 1_500_000.0).abs() < 1e-6);
    }

    #[test]
    fn ticks_use_1_2_5_steps_and_fitting_units() {
        assert_eq!(tick_step_ns(1.0, 80.0), 100.0);
        assert_eq!(tick_step_ns(30.0, 80.0), 5000.0);
        assert_eq!(format_tick(1_500_000.0, 500_000.0), "1.5 ms");
        assert_eq!(format_tick(2e9, 1e9), "2 s");
        assert_eq!(format_tick(300.0, 100.0), "300 ns");
        assert_eq!(format_tick(663_430_000.0, 5_000.0), "663.430 ms");
        assert_eq!(format_duration(12_346.0), "12.35 µs");
    }
}
