//! Issue 47 ("The first hour, third pass"), in the window with `egui_kittest`: the analysis
//! panel's splitter takes a drag at its visible edge (item 6: its grab zone was about 2 px, and a
//! drag there panned the timeline).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use egui::{Pos2, Vec2};

use common::ui::{app_with_size, slow_drag};

#[test]
fn the_panel_splitter_takes_a_drag_at_its_visible_edge() {
    let mut h = app_with_size(vec![common::fixture("moe")], Vec2::new(1600.0, 1000.0));
    assert!(h.state().tab().error.is_none());
    h.step();
    h.step();
    let area = h.state().tab().timeline.last_event_area;
    let view = h.state().tab().timeline.view.clone();
    // 2 px inside the timeline's right edge, where the panel's edge is drawn.
    for inside in [2.0, 4.0] {
        let edge = h.state().tab().timeline.last_event_area.right();
        let y = area.center().y;
        slow_drag(
            &mut h,
            Pos2::new(edge - inside, y),
            Pos2::new(edge - inside - 100.0, y),
        );
        h.step();
        let moved = h.state().tab().timeline.last_event_area.right();
        assert!(
            (edge - moved - 100.0).abs() < 8.0,
            "a drag {inside} px inside the edge: the timeline's edge {edge} → {moved}"
        );
    }
    // The timeline did not pan: the same time span, on a narrower area.
    let after = &h.state().tab().timeline.view;
    assert_eq!((after.start_ns, after.end_ns), (view.start_ns, view.end_ns));
}

/// Item 11: a run's tab and an Nsight Compute report's tab name themselves in the window's
/// title (it read just "Sightline").
#[test]
fn a_runs_tab_and_a_reports_tab_title_the_window() {
    let mut h = common::ui::harness(None);
    h.step();
    assert_eq!(h.state().window_title(), "Sightline");
    let ranks = ["n25_ddp_rank0", "n25_ddp_rank1"]
        .map(|n| common::fixtures().join(format!("nccl/{n}.sqlite")))
        .to_vec();
    h.state_mut().open_run(ranks, None);
    common::ui::settle_with(&mut h, |app| {
        app.tab().run.as_ref().is_none_or(|r| r.busy())
    });
    h.step();
    let title = h.state().window_title();
    assert_eq!(title, format!("Sightline — {}", h.state().tab().title()));
    assert!(title.contains("2 ranks"), "{title}");

    let mut h = common::ui::harness(Some(common::fixtures().join("ncu_kt_pair.ncu-repz")));
    common::ui::settle_with(&mut h, |app| {
        app.tab().ncu.is_none() && app.tab().error.is_none()
    });
    h.step();
    assert_eq!(h.state().window_title(), "Sightline — ncu_kt_pair.ncu-repz");
}

/// Item 11: a double click on a folder of the built-in file browser opens the folder with its
/// first click; its second click landed on whatever the new listing put under the pointer and
/// ticked it (Open run…) or opened it (Open…). Now it does neither.
#[test]
fn a_double_click_on_a_folder_neither_ticks_nor_opens_what_lands_under_it() {
    use egui_kittest::kittest::{NodeT, Queryable};
    use sightline::ui::file_dialog::{self, FileDialogs, NO_SYSTEM_DIALOG};
    for purpose in ["Open…", "Open run…"] {
        let mut h = common::ui::harness(None);
        let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
        dialogs.set_start_dir(common::fixtures());
        file_dialog::install(&h.ctx, dialogs);
        h.step();
        if purpose == "Open…" {
            file_dialog::with(&h.ctx, |d| d.open_trace());
        } else {
            file_dialog::with(&h.ctx, |d| d.open_run());
        }
        h.step();
        h.step();
        let folder = h.get_by_label("nccl/").rect().center();
        common::ui::double_click(&mut h, folder);
        h.step();
        h.step();
        // The folder is open (its traces listed), nothing ticked, nothing opened.
        h.get_by_label_contains("n25_ddp_rank0");
        assert!(
            file_dialog::with(&h.ctx, |d| d.browsing().is_some()),
            "{purpose}: the browser closed: a file was opened"
        );
        let ticked = h
            .get_all_by_role(egui::accesskit::Role::CheckBox)
            .filter(|n| n.accesskit_node().toggled() == Some(egui::accesskit::Toggled::True))
            .count();
        assert_eq!(ticked, 0, "{purpose}: a file was ticked");
        assert!(h.state().tab().path.is_none(), "{purpose}: a tab opened");
    }
}

/// Item 10: a gap's tooltip (the Gaps tab's row, the timeline's hatching) names where the
/// launching thread was: moe's second-longest gap said "untraced 2.855 ms" and nothing of the
/// `Token_Preparation` range its thread was in.
#[test]
fn a_gaps_tooltip_names_the_ranges_the_launching_thread_was_inside() {
    use sightline::analysis::{Filter, GapOptions, TimeRange, gap_causes, gpu_idle_gaps};
    let trace = sightline::load::load_file(&common::fixture("moe")).unwrap();
    let filter = Filter::range(TimeRange::ALL);
    let mut gaps = gpu_idle_gaps(&trace, &filter, &GapOptions::default());
    gaps.sort_by_key(|g| std::cmp::Reverse(g.duration_ns()));
    let causes = gap_causes::gap_causes(&trace, &gaps[..2]);
    let text = sightline::ui::gap_tooltip::cause_text(&trace, &causes[1]);
    assert!(
        text.contains("the launching thread was inside Complete_MoE_Workflow > Token_Preparation"),
        "{text}"
    );
    assert!(text.contains("untraced"), "{text}");
}
