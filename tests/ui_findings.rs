//! The analysis panel's Findings tab driven through `egui_kittest` on the moe fixture: every
//! `nsys analyze` rule runs over the selection in the background, the tab's badge counts the
//! findings, each rule lists them, and clicking one outlines and zooms to its call or selects
//! its gap. A new selection is computed on the worker threads, not in the frame. Expected
//! findings come from the rules themselves, run here apart from the panel.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{PanelBench, panel_harness, settle_panel};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::analysis::{
    EventTable, Filter, NsysFormat, RULES, ReportOptions, Row, RowEvents, Rule, RuleInput, Table,
    TimeRange,
};
use sightline::load;
use sightline::trace::Trace;
use sightline::ui::panels::analysis::{AnalysisTab, PanelAction};

type Bench = Harness<'static, PanelBench>;

fn moe() -> Trace {
    load::load_file(&common::fixture("moe")).expect("load moe")
}

/// Every rule over `selection` as the panel runs them: nsys's defaults, no row limit.
fn rules_over(
    trace: &Trace,
    selection: TimeRange,
) -> Vec<(&'static dyn Rule, Result<Table, String>)> {
    let options = ReportOptions {
        values: vec![("rows".into(), "-1".into())],
    };
    RULES
        .iter()
        .map(|&rule| {
            let table = rule.compute(&RuleInput {
                trace,
                filter: &Filter::range(selection),
                options: &options,
                nsys_format: NsysFormat::of_trace(trace),
            });
            (rule, table)
        })
        .collect()
}

fn count(findings: &[(&'static dyn Rule, Result<Table, String>)]) -> usize {
    findings
        .iter()
        .map(|(_, t)| t.as_ref().map_or(0, |t| t.rows.len()))
        .sum()
}

/// `[start, end)` of an event, read from the trace's tables.
fn bounds(trace: &Trace, table: EventTable, i: usize) -> (i64, i64) {
    let spans = match table {
        EventTable::Kernels => &trace.kernels.spans,
        EventTable::Memcpys => &trace.memcpys.spans,
        EventTable::Memsets => &trace.memsets.spans,
        EventTable::ApiCalls => &trace.api_calls.spans,
        EventTable::Nvtx => &trace.nvtx.spans,
        EventTable::Osrt => &trace.osrt.spans,
    };
    (spans.start_ns[i], spans.end_ns[i])
}

/// The first rule whose first finding `wanted` picks, and that finding.
fn first_finding<'f>(
    findings: &'f [(&'static dyn Rule, Result<Table, String>)],
    wanted: impl Fn(&RowEvents) -> bool,
) -> Option<(&'static dyn Rule, &'f Row)> {
    findings.iter().find_map(|(rule, t)| {
        let row = t.as_ref().ok()?.rows.first()?;
        wanted(&row.events).then_some((*rule, row))
    })
}

/// A rule's section title: its own, and for `gpu_gaps` the threshold it looks over (nsys's
/// default, which the panel runs).
fn section_title(rule: &dyn Rule) -> String {
    if rule.name() == "gpu_gaps" {
        format!("{} over 500 ms", rule.title())
    } else {
        rule.title().to_string()
    }
}

/// Clicks the first finding line of `rule` in the Findings tab (scrolled into view first): the
/// first button after the rule's section header. Found by place rather than by text, so that
/// the wording of a line stays the panel's choice.
fn click_first_finding(h: &mut Bench, rule: &dyn Rule, findings: usize) {
    let header = format!("{} · {findings}", section_title(rule));
    let id = {
        let nodes: Vec<_> = h.get_all_by(|_| true).collect();
        let at = nodes
            .iter()
            .position(|n| n.accesskit_node().label().as_deref() == Some(header.as_str()))
            .unwrap_or_else(|| panic!("no section '{header}'"));
        nodes[at + 1..]
            .iter()
            .map(|n| n.accesskit_node())
            .find(|n| n.role() == Role::Button)
            .unwrap_or_else(|| panic!("no finding under '{header}'"))
            .id()
    };
    h.get_by(move |n| n.id() == id).scroll_to_me();
    h.run();
    h.get_by(move |n| n.id() == id).click();
    settle_panel(h);
}

#[test]
fn the_findings_tab_counts_every_rule_and_a_click_goes_to_the_finding() {
    let trace = moe();
    let expected = rules_over(&trace, TimeRange::ALL);
    let n = count(&expected);
    let mut h = panel_harness(trace, TimeRange::ALL);

    // The badge counts the findings of every rule, computed in the background.
    let badge = format!("Findings ({n})");
    h.get_by_label(&badge).click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.tab, AnalysisTab::Findings);
    {
        let findings = h.state().panel.findings().expect("findings computed");
        assert_eq!(findings.count(), n);
        assert_eq!(findings.rules.len(), expected.len());
        for (got, (rule, table)) in findings.rules.iter().zip(&expected) {
            assert_eq!(got.rule.name(), rule.name());
            assert_eq!(&got.table, table, "{}", rule.name());
        }
    }
    // One section per rule, titled with its count.
    for (rule, table) in &expected {
        let rows = table.as_ref().map_or(0, |t| t.rows.len());
        h.get_by_label(&format!("{} · {rows}", section_title(*rule)));
    }
    if n == 0 {
        eprintln!(
            "skipped the finding clicks: no rule finds anything on moe yet (rules still being \
             implemented); the badge says Findings (0), as the rules do"
        );
        return;
    }

    let rows_of = |rule: &dyn Rule| {
        expected
            .iter()
            .find(|(r, _)| r.name() == rule.name())
            .and_then(|(_, t)| t.as_ref().ok())
            .map_or(0, |t| t.rows.len())
    };

    // A finding about calls: outline them and zoom to them.
    if let Some((rule, row)) = first_finding(
        &expected,
        |e| matches!(e, RowEvents::Events(v) if !v.is_empty()),
    ) {
        let RowEvents::Events(refs) = &row.events else {
            unreachable!()
        };
        let events: Vec<(EventTable, usize)> =
            refs.iter().map(|e| (e.table, e.index as usize)).collect();
        let trace = h.state().trace.clone();
        let start_ns = events
            .iter()
            .map(|&(t, i)| bounds(&trace, t, i).0)
            .min()
            .expect("events");
        let end_ns = events
            .iter()
            .map(|&(t, i)| bounds(&trace, t, i).1)
            .max()
            .expect("events");
        h.state_mut().actions.clear();
        click_first_finding(&mut h, rule, rows_of(rule));
        assert_eq!(
            h.state().actions,
            vec![
                PanelAction::Highlight(events),
                PanelAction::ZoomTo { start_ns, end_ns }
            ]
        );
    } else {
        eprintln!("no rule found a call on moe: the click on a call finding is not checked");
    }

    // A finding about a span of time (an idle gap, a utilisation chunk): clear the outline,
    // zoom to it and select it; the findings then follow the new selection.
    if let Some((rule, row)) = first_finding(&expected, |e| matches!(e, RowEvents::Span { .. })) {
        let RowEvents::Span {
            start_ns, end_ns, ..
        } = row.events
        else {
            unreachable!()
        };
        h.state_mut().actions.clear();
        click_first_finding(&mut h, rule, rows_of(rule));
        assert_eq!(
            h.state().actions,
            vec![
                PanelAction::Highlight(Vec::new()),
                PanelAction::ZoomTo { start_ns, end_ns },
                PanelAction::SetSelection { start_ns, end_ns }
            ]
        );
        // The app makes it the selection.
        let selection = TimeRange::new(start_ns, end_ns);
        h.state_mut().selection = selection;
        settle_panel(&mut h);
        let within = rules_over(&h.state().trace, selection);
        let findings = h.state().panel.findings().expect("findings of the gap");
        assert_eq!(findings.count(), count(&within));
        h.get_by_label(&format!("Findings ({})", count(&within)));
    } else {
        eprintln!("no rule found a span of time on moe: the click on a gap finding is not checked");
    }
}

#[test]
fn a_new_selection_is_analysed_in_the_background() {
    let trace = moe();
    let k = &trace.kernels.spans;
    let first = k.start_ns.iter().copied().min().expect("kernels");
    let last = k.end_ns.iter().copied().max().expect("kernels");
    let selection = TimeRange::new(first + (last - first) / 4, last - (last - first) / 4);
    let expected = rules_over(&trace, selection);
    let mut h = panel_harness(trace, TimeRange::ALL);
    let before = h.state().panel.computations();
    assert!(!h.state().panel.busy());

    // One frame with the new selection starts the jobs and returns: the findings and the gaps
    // of the new selection are not there yet (the frame only compares keys and starts threads).
    h.state_mut().selection = selection;
    h.step();
    let bench = h.state();
    assert!(bench.panel.computations() > before, "jobs started");
    assert!(
        bench.panel.findings().is_none(),
        "the frame did not run the rules itself"
    );

    // They arrive on later frames.
    settle_panel(&mut h);
    let bench = h.state();
    let findings = bench.panel.findings().expect("findings of the selection");
    assert_eq!(findings.count(), count(&expected));
    for (got, (rule, table)) in findings.rules.iter().zip(&expected) {
        assert_eq!(&got.table, table, "{}", rule.name());
    }
    let started = bench.panel.computations();
    h.run_steps(10);
    assert_eq!(
        h.state().panel.computations(),
        started,
        "idle frames start nothing"
    );
}
