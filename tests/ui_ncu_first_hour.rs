//! Nsight Compute in the window, as a new user moved around it (issue 47, items 2–4), on the
//! shared `ncu_moe_full` report (and `nsys_moe` with it attached):
//! - item 2: "Collapse all" closes every section, and they stay closed when another kernel is
//!   picked; a closed section's header keeps its rules' badge and best speedup; a click on a
//!   kernel's top rule selects it and opens the rule's section (Launch Statistics for Small
//!   Grid), the others staying closed; "Expand all" opens them again;
//! - item 3: the roofs are one set for the device, whichever kernel is selected, and a kernel
//!   picked elsewhere (the roofline) scrolls the table to its row;
//! - item 4: a click on a "Worth optimising" name outlines its kernels on the timeline and zooms
//!   to the longest; the table scrolls sideways in the panel.
//!
//! Skipped, saying so, without `../shared/traces/ncu`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::sync::Arc;

use common::ui::{DroppedPath, harness, settle_with, wait_for_load};
use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::ui::SightlineApp;
use sightline::ui::ncu::{NcuView, Page};
use sightline::ui::timeline::EventKind;

fn settle(h: &mut Harness<'static, SightlineApp>) {
    settle_with(h, |app| app.is_loading());
}

fn view_mut<'a>(h: &'a mut Harness<'static, SightlineApp>) -> &'a mut NcuView {
    h.state_mut()
        .tab_mut()
        .ncu
        .as_deref_mut()
        .expect("report view")
}

fn view<'a>(h: &'a Harness<'static, SightlineApp>) -> &'a NcuView {
    h.state().tab().ncu.as_deref().expect("report view")
}

/// Whether some node reads `label`.
fn shown(h: &Harness<'static, SightlineApp>, label: &str) -> bool {
    h.query_all_by_label(label).next().is_some()
}

fn steps(h: &mut Harness<'static, SightlineApp>, n: usize) {
    for _ in 0..n {
        h.step();
    }
}

fn opened_report() -> Option<Harness<'static, SightlineApp>> {
    let dir = common::shared_ncu()?;
    let mut h = common::ui::app_with_size(Vec::new(), Vec2::new(1600.0, 1000.0));
    settle(&mut h);
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedPath(dir.join("ncu_moe_full.ncu-rep.gz"))));
    settle(&mut h);
    assert!(
        h.state().tab().error.is_none(),
        "{:?}",
        h.state().tab().error
    );
    Some(h)
}

#[test]
fn details_sections_collapse_together_stay_collapsed_and_open_at_a_clicked_rule() {
    let Some(mut h) = opened_report() else {
        return;
    };
    steps(&mut h, 3);
    // Kernel 0's details: SpeedOfLight's header metric "SM Frequency" is shown.
    assert!(shown(&h, "SM Frequency"));
    h.get_by_label("Collapse all").click();
    steps(&mut h, 4);
    assert!(!shown(&h, "SM Frequency"), "collapsed");
    assert!(!shown(&h, "Registers Per Thread"), "collapsed");
    // Closed, Launch Statistics still says it holds kernel 0's top rule (Small Grid, 51.52 %).
    assert!(
        shown(&h, "est. speedup 51.52%"),
        "a closed section shows its best speedup"
    );
    // Another kernel: the sections stay closed.
    view_mut(&mut h).selected = Some(1);
    steps(&mut h, 4);
    assert!(!shown(&h, "SM Frequency"), "kernel 1: still collapsed");
    // A click on kernel 0's top rule: kernel 0 again, its rule's section open, the rest closed.
    let rule = view(&h).table.rows[0]
        .top_rule
        .clone()
        .expect("kernel 0 has a top rule");
    assert_eq!(rule.section, "LaunchStats");
    h.get_all_by_label(&rule.title)
        .next()
        .expect("the top rule cell")
        .click();
    steps(&mut h, 4);
    assert_eq!(view(&h).selected, Some(0));
    assert_eq!(view(&h).page, Page::Details);
    assert!(shown(&h, "Registers Per Thread"), "Launch Statistics open");
    assert!(!shown(&h, "SM Frequency"), "SpeedOfLight still closed");
    h.get_by_label("Expand all").click();
    steps(&mut h, 4);
    assert!(shown(&h, "SM Frequency"), "expanded");
}

#[test]
fn roofs_stay_put_and_a_kernel_picked_elsewhere_scrolls_into_the_table() {
    let Some(mut h) = opened_report() else {
        return;
    };
    view_mut(&mut h).page = Page::Roofline;
    steps(&mut h, 3);
    let roofs = |h: &Harness<'static, SightlineApp>| -> Vec<String> {
        h.query_all_by_label_contains("roof (")
            .map(|n| n.accesskit_node().label().unwrap_or_default())
            .collect()
    };
    let first = roofs(&h);
    assert!(!first.is_empty(), "the roofline names its roofs");
    let n = view(&h).report.workloads.len();
    for k in [5, n / 2, n - 1] {
        view_mut(&mut h).selected = Some(k);
        steps(&mut h, 3);
        assert_eq!(roofs(&h), first, "roofs with kernel {k} selected");
    }
    // The table lays out only the rows in view: the last kernel's ID cell is not there until a
    // kernel picked elsewhere scrolls the table to it.
    let last = view(&h).table.rows[n - 1].clone();
    let id_cell = last.id.to_string();
    let name_shown = |h: &Harness<'static, SightlineApp>| {
        h.query_all_by_label(&last.name).count() + h.query_all_by_label(&id_cell).count()
    };
    let before = name_shown(&h);
    view_mut(&mut h).table.scroll_to = Some(last.workload);
    steps(&mut h, 4);
    assert!(
        name_shown(&h) > before,
        "the table scrolled to kernel {}",
        last.id
    );
    eprintln!(
        "roofs {first:?} with 4 kernels selected; table scrolled to ID {}",
        last.id
    );
}

#[test]
fn a_worth_optimising_name_outlines_its_kernels() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let mut h = harness(Some(dir.join("nsys_moe.sqlite")));
    h.state_mut()
        .attach_ncu_to_first_tab(dir.join("ncu_moe_full.ncu-rep.gz"));
    wait_for_load(&mut h);
    for _ in 0..400 {
        h.step();
        if h.state().tab().ncu_attached.attached.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let attached = h
        .state()
        .tab()
        .ncu_attached
        .attached
        .clone()
        .expect("attached");
    h.get_by_label("Nsight Compute").click();
    steps(&mut h, 4);
    let first = &attached.worth[0];
    let trace = h.state().tab().document.as_ref().unwrap().trace.clone();
    let name = trace.str(first.name).to_string();
    let k = &trace.kernels.spans;
    let expected: Vec<usize> = (0..k.len()).filter(|&i| k.name[i] == first.name).collect();
    assert_eq!(expected.len(), first.launches);
    let short: String = name.chars().take(48).collect();
    let label = if short.len() < name.len() {
        format!("{short}…")
    } else {
        short
    };
    h.get_by_label(&label).click();
    steps(&mut h, 4);
    let tab = h.state().tab();
    let outlined: Vec<usize> = tab
        .timeline
        .overlays
        .highlighted
        .iter()
        .filter(|e| e.kind == EventKind::Kernel)
        .map(|e| e.index as usize)
        .collect();
    assert_eq!(outlined, expected, "{name}'s kernels outlined");
    let longest = *expected.iter().max_by_key(|&&i| k.duration_ns(i)).unwrap();
    let v = &tab.timeline.view;
    assert!(
        v.start_ns <= k.start_ns[longest] as f64 + 1.0
            && v.end_ns >= k.end_ns[longest] as f64 - 1.0,
        "zoomed to the longest"
    );
    eprintln!(
        "{name}: {} kernels outlined, zoomed to the longest",
        expected.len()
    );
}

/// Issue 47 item 11: the kernel table names kernels as ncu does (its raw page's "Kernel Name",
/// `--rename-kernels` simplified), every one of the report's.
#[test]
fn the_kernel_table_names_kernels_as_ncu_does() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let Some(h) = opened_report() else {
        return;
    };
    let raw = std::fs::read_to_string(dir.join("oracle/ncu_moe_full.raw.csv")).expect("raw page");
    let mut reader = csv::ReaderBuilder::new().from_reader(raw.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let (id_col, name_col) = (
        header.iter().position(|h| h == "ID").unwrap(),
        header.iter().position(|h| h == "Kernel Name").unwrap(),
    );
    let ncu: std::collections::HashMap<u32, String> = reader
        .records()
        .filter_map(|r| {
            let r = r.unwrap();
            Some((r.get(id_col)?.parse().ok()?, r.get(name_col)?.to_string()))
        })
        .collect();
    let rows = &view(&h).table.rows;
    assert_eq!(rows.len(), 113);
    let mut simplified = 0;
    for row in rows {
        assert_eq!(Some(&row.name), ncu.get(&row.id), "kernel {}", row.id);
        let w = &view(&h).report.workloads[row.workload];
        if row.name != w.display_name() {
            simplified += 1;
        }
    }
    assert!(
        simplified > 0,
        "some names are shorter than the demangled ones"
    );
    eprintln!("113 kernel names equal ncu's, {simplified} simplified from the demangled name");
}
