//! The window explains idle gaps (issue #10): gaps hatched in their cause's colour, the Gaps tab's
//! legend and per-cause totals, a click on a gap drawing the line back to the launching call,
//! the launch-arrows toggle, and the launch times in the details of a kernel. Driven with
//! `egui_kittest` on real exports.

// A test fails on a broken fixture; that is what a panic is for here.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use common::ui::{opened, settle};
use egui_kittest::kittest::Queryable;
use sightline::analysis::IdleGap;
use sightline::analysis::gap_causes::{self, GapCause, GapCauseInfo};
use sightline::analysis::{self, Filter, GapOptions};
use sightline::ui::panels::analysis::PanelAction;
use sightline::ui::panels::details;
use sightline::ui::timeline::{EventKind, EventRef};

#[test]
fn gaps_are_hatched_by_cause_and_the_gaps_tab_explains_them() {
    let mut h = opened("cpu_side");
    let (expected, causes) = {
        let trace = h.state().trace().expect("trace");
        let gaps = analysis::gpu_idle_gaps(trace, &Filter::all(), &GapOptions::default());
        let causes = gap_causes::gap_causes(trace, &gaps);
        (gaps, causes)
    };
    // Every gap hatched, in its cause's colour.
    let marks = &h.state().tab().timeline.overlays.gaps;
    assert_eq!(marks.len(), expected.len());
    for (m, (g, c)) in marks.iter().zip(expected.iter().zip(&causes)) {
        assert_eq!((m.start_ns, m.end_ns), (g.start_ns, g.end_ns));
        assert_eq!(m.cause, Some(c.cause));
    }
    // cpu_side holds three of the five causes (no launch in flight, no CUDA graph); the legend
    // lists all five with their totals.
    h.get_by_label("Gaps").click();
    settle(&mut h);
    for cause in GapCause::ALL {
        h.get_by_label(cause.explanation());
        let n = causes.iter().filter(|c| c.cause == cause).count();
        assert!(
            matches!(cause, GapCause::LaunchOverhead | GapCause::UntracedGraph) || n > 0,
            "cpu_side has no {} gap",
            cause.label()
        );
    }
    h.get_by_label("Why the GPU waited (gaps listed below)");

    // A click on the longest gap (a late launch) selects the work that ended it and links the
    // call; the dependency gaps (further down the list) go through the same action.
    let rank = 0;
    assert_eq!(causes[rank].cause, GapCause::LaunchLate);
    let label = sightline::ui::panels::analysis::gap_label(rank + 1, &expected[rank]);
    h.get_by_label(&label).click();
    settle(&mut h);
    check_link(&h, &expected[rank], &causes[rank]);
    let rank = causes
        .iter()
        .position(|c| c.cause == GapCause::Dependency)
        .expect("a dependency gap");
    h.state_mut()
        .apply_panel_actions(vec![PanelAction::ShowGap {
            gap: expected[rank],
            cause: causes[rank],
        }]);
    h.step();
    h.step();
    check_link(&h, &expected[rank], &causes[rank]);
}

/// The chosen gap's link: its cause, its launching call (on a shown row), the work that ended it
/// selected, and a view covering both the call and the gap.
fn check_link(
    h: &egui_kittest::Harness<'static, sightline::ui::SightlineApp>,
    gap: &IdleGap,
    cause: &GapCauseInfo,
) {
    let app = h.state();
    let link = app.tab().timeline.overlays.gap_link.expect("gap link");
    let call = cause.launch_call.expect("a launching call");
    assert_eq!(link.cause, cause.cause);
    assert_eq!(link.call, Some(EventRef::new(EventKind::ApiCall, call)));
    assert_eq!(link.end_ns, gap.end_ns);
    let next = app.selection().expect("the next work is selected");
    assert_eq!(Some(next.index as usize), cause.next.map(|op| op.index));
    let trace = app.trace().unwrap();
    let call_start = trace.api_calls.spans.start_ns[call] as f64;
    let view = &app.tab().timeline.view;
    assert!(
        view.start_ns <= call_start.min(gap.start_ns as f64) && view.end_ns >= gap.end_ns as f64
    );
    assert!(app.event_screen_rect(link.call.unwrap()).is_some());
}

#[test]
fn launch_arrows_join_kernels_in_view_to_their_calls_and_details_show_launch_times() {
    let mut h = opened("moe");
    assert_eq!(h.state().tab().timeline.last_launch_arrows, 0);
    h.get_by_label("Launch arrows").click();
    h.step();
    h.step();
    let drawn = h.state().tab().timeline.last_launch_arrows;
    let kernels_linked = {
        let t = h.state().trace().unwrap();
        t.kernels
            .api_call
            .iter()
            .filter(|&&c| c != sightline::trace::NO_INDEX)
            .count()
    };
    assert!(drawn > 0, "no launch arrow drawn");
    // Thinned: at most one per 8 px of each stream row, never more than there are kernels.
    assert!(drawn <= kernels_linked);
    assert!(drawn <= sightline::timeline::launch_arrows::MAX_ARROWS);
    h.get_by_label("Launch arrows").click();
    h.step();
    assert_eq!(h.state().tab().timeline.last_launch_arrows, 0);

    // The details of a launched kernel: API, queue and kernel time as cuda_kern_exec_sum has them.
    let app = h.state();
    let trace = app.trace().unwrap();
    let model = &app.tab().document.as_ref().unwrap().model;
    let k = (0..trace.kernels.spans.len())
        .find(|&k| trace.kernels.api_call[k] != sightline::trace::NO_INDEX)
        .unwrap();
    let call = trace.kernels.api_call[k] as usize;
    let facts = details::describe(trace, model, EventRef::new(EventKind::Kernel, k));
    let fact = |name: &str| {
        facts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name} in {facts:?}"))
    };
    let api = &trace.api_calls.spans;
    let api_ns = api.end_ns[call] - api.start_ns[call];
    assert!(fact("API time").ends_with(&format!("({api_ns} ns)")));
    let queue = trace.kernels.spans.start_ns[k] - api.end_ns[call];
    if queue > 0 {
        assert!(fact("Queue time").ends_with(&format!("({queue} ns)")));
    } else {
        assert!(fact("Queue time").starts_with("none"));
    }
    let kernel_ns = trace.kernels.spans.duration_ns(k);
    assert!(fact("Kernel time").ends_with(&format!("({kernel_ns} ns)")));
    assert_eq!(fact("Launched by"), trace.str(api.name[call]));
}
