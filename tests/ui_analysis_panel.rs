//! The analysis side panel driven through `egui_kittest` as a person drives it, on the
//! transformer fixture: select a range and read the statistics, sort and filter the table, click
//! a row to highlight its events, toggle warm-up exclusion with a real click, type a bad regex
//! into the advanced form, click an idle gap to zoom, and export a selection and a table to CSV
//! and read them back. The panel computes on worker threads, so every gesture is followed by
//! [`settle_panel`]. Expected values are computed here, apart from the panel. Nothing is
//! rendered.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;

use common::ui::{PanelBench, panel_harness, settle_panel};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::reports;
use sightline::analysis::stats::strip_version_suffix;
use sightline::analysis::{
    self, EventTable, Filter, GapOptions, NsysFormat, Report, ReportInput, ReportOptions, Table,
    TimeRange,
};
use sightline::export::events_csv::{COLUMNS, EventKind};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::{GlobalTid, NO_INDEX, NvtxStyle, StringTable, Trace};
use sightline::ui::panels::analysis::{
    AnalysisPanel, AnalysisTab, PanelAction, RowOrder, Sort, export_selection, export_table,
    gap_label, row_events, table_summary, visible_rows,
};

type Bench = Harness<'static, PanelBench>;

const KERNELS: &str = "cuda_gpu_kern_sum";

fn transformer() -> Trace {
    load::load_file(&common::fixture("transformer")).expect("load transformer")
}

/// The middle 60% of the GPU's activity (the trace starts long before its first kernel).
fn middle(trace: &Trace) -> TimeRange {
    let k = &trace.kernels.spans;
    let first = k.start_ns.iter().copied().min().expect("kernels");
    let last = k.end_ns.iter().copied().max().expect("kernels");
    let span = last - first;
    TimeRange::new(first + span / 5, last - span / 5)
}

/// `report` over `filter` with the events behind each row, as the panel asks for it.
fn report_over(trace: &Trace, report: &str, filter: &Filter) -> Table {
    reports::find(report)
        .expect("registered report")
        .compute(&ReportInput {
            trace,
            filter,
            options: &ReportOptions::default(),
            with_events: true,
            row_limit: None,
            nsys_format: NsysFormat::of_trace(trace),
            sink: None,
        })
}

/// The selector's text for a report: "<title> (<name>)".
fn selector_text(report: &str) -> String {
    let r = reports::find(report).expect("registered report");
    format!("{} ({})", r.title(), r.name())
}

/// Opens the report selector and clicks `report`'s entry, as a person would.
fn choose_report(h: &mut Bench, report: &str) {
    // The popup can take a frame or two to appear while background jobs finish: open it, let
    // the panel settle, and look again (at most a few times) before clicking the entry.
    for _ in 0..5 {
        if h.query_by_label(&selector_text(report)).is_some() && h.state().panel.report != report {
            break;
        }
        h.get_by_role_and_label(Role::ComboBox, "Report").click();
        settle_panel(h);
    }
    h.get_by_label(&selector_text(report)).click();
    settle_panel(h);
    assert_eq!(h.state().panel.report, report);
    assert_eq!(
        h.get_by_role_and_label(Role::ComboBox, "Report")
            .value()
            .as_deref(),
        Some(selector_text(report).as_str())
    );
}

/// The numbers of a column, by its nsys title.
fn column(table: &Table, title: &str) -> Vec<f64> {
    let c = table.column(title).expect(title);
    table
        .rows
        .iter()
        .map(|r| r.cells[c].number().expect("a number"))
        .collect()
}

/// The name of a row: its last text cell (what a person clicks to choose it).
fn row_name(row: &analysis::Row) -> String {
    row.cells
        .iter()
        .rev()
        .find_map(|c| match c {
            analysis::Cell::Text(t) => Some(t.to_string()),
            _ => None,
        })
        .expect("a text cell")
}

fn kernel_instances(bench: &PanelBench) -> usize {
    bench
        .panel
        .report_table(KERNELS)
        .map_or(0, |t| column(t, "Instances").iter().sum::<f64>() as usize)
}

/// The line under a table of `n` rows, all shown.
fn all_rows_line(table: &Table) -> String {
    table_summary(table, &RowOrder::All(table.rows.len()))
}

/// The events of the last Highlight action.
fn last_highlight(bench: &PanelBench) -> Vec<(EventTable, usize)> {
    bench
        .actions
        .iter()
        .rev()
        .find_map(|a| match a {
            PanelAction::Highlight(events) => Some(events.clone()),
            _ => None,
        })
        .expect("a Highlight action")
}

#[test]
fn statistics_follow_the_selection_and_are_not_recomputed_per_frame() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = panel_harness(trace, selection);

    for report in Report::ALL {
        choose_report(&mut h, report.id());
        let bench = h.state();
        let expected = report_over(&bench.trace, report.id(), &Filter::range(selection));
        let shown = bench
            .panel
            .report_table(report.id())
            .expect("report computed");
        assert_eq!(shown, &expected, "{}", report.id());
        if report != Report::Nvtx {
            assert!(!expected.rows.is_empty(), "{} has rows", report.id());
        }
        assert_eq!(bench.panel.visible_table().as_ref(), Some(&expected));
        // The summary line under the table says the same.
        let line = all_rows_line(&expected);
        assert_eq!(
            line,
            format!("{} of {} rows", expected.rows.len(), expected.rows.len())
        );
        h.get_by_label(&line);
    }

    // Idle frames compute nothing.
    let before = h.state().panel.computations();
    h.run_steps(10);
    assert_eq!(h.state().panel.computations(), before);
    assert!(!h.state().panel.busy());

    // A new selection recomputes what is shown.
    let whole = TimeRange::ALL;
    h.state_mut().selection = whole;
    settle_panel(&mut h);
    choose_report(&mut h, KERNELS);
    let bench = h.state();
    assert!(bench.panel.computations() > before);
    let expected = report_over(&bench.trace, KERNELS, &Filter::range(whole));
    assert_eq!(bench.panel.report_table(KERNELS), Some(&expected));
    assert_eq!(kernel_instances(bench), bench.trace.kernels.spans.len());
}

#[test]
fn headers_sort_the_table_and_a_row_click_highlights_its_events() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = panel_harness(trace, selection);
    let expected = report_over(&h.state().trace, KERNELS, &Filter::range(selection));
    let max_column = expected.column("Max (ns)").expect("Max column");

    // Click "Max (ns)": largest maximum first; again: smallest first.
    h.get_by_label("Max (ns)").click();
    settle_panel(&mut h);
    let maxima = |h: &Bench| -> Vec<f64> {
        let table = h.state().panel.visible_table().expect("table shown");
        column(&table, "Max (ns)")
    };
    let desc = maxima(&h);
    assert!(desc.len() > 1);
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    assert_eq!(
        h.state().panel.sort,
        Some(Sort {
            column: max_column,
            descending: true
        })
    );
    h.get_by_label("▼");
    h.get_by_label("Max (ns)").click();
    settle_panel(&mut h);
    let asc = maxima(&h);
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
    assert_eq!(
        h.state().panel.sort,
        Some(Sort {
            column: max_column,
            descending: false
        })
    );
    h.get_by_label("▲");

    // Sort by instances (most first), then click the name of the top row.
    h.get_by_label("Instances").click();
    settle_panel(&mut h);
    let instances = expected.column("Instances").expect("Instances column");
    let row = expected
        .rows
        .iter()
        .max_by_key(|r| r.cells[instances].number().expect("count") as i64)
        .expect("kernels in the selection")
        .clone();
    let count = row.cells[instances].number().expect("count") as usize;
    let name = row_name(&row);
    h.state_mut().actions.clear();
    h.get_by_label(&name).click();
    settle_panel(&mut h);
    let bench = h.state();
    let highlighted = last_highlight(bench);
    // Independently: the kernels of that name starting in the selection.
    let k = &bench.trace.kernels;
    let mine: Vec<(EventTable, usize)> = (0..k.spans.len())
        .filter(|&i| bench.trace.str(k.spans.name[i]) == name)
        .filter(|&i| selection.contains(k.spans.start_ns[i]))
        .map(|i| (EventTable::Kernels, i))
        .collect();
    assert_eq!(highlighted, mine);
    assert_eq!(highlighted.len(), count);
    // Its histogram bins every one of them; the longest is the longest of them.
    let chosen = bench.panel.chosen_row().expect("chosen row");
    assert_eq!(chosen.events, highlighted);
    assert_eq!(chosen.histogram.counts.iter().sum::<u64>(), count as u64);
    let longest = mine
        .iter()
        .map(|&(_, i)| k.spans.end_ns[i] - k.spans.start_ns[i])
        .max();
    assert_eq!(chosen.longest.map(|(_, s, e)| e - s), longest);
    h.get_by_label(&format!("{name} · {count} events"));

    // The name filter narrows the table (typed into the field like a person would).
    let needle: String = name.chars().take(6).collect();
    h.get_by_label("Filter names").click();
    h.run();
    h.get_by_label("Filter names").type_text(&needle);
    settle_panel(&mut h);
    let shown = h.state().panel.visible_table().expect("table");
    assert!(!shown.rows.is_empty());
    let lower = needle.to_lowercase();
    assert!(
        shown
            .rows
            .iter()
            .all(|r| row_name(r).to_lowercase().contains(&lower))
    );
    let want = visible_rows(&expected, &needle, h.state().panel.sort).len();
    assert_eq!(shown.rows.len(), want);
    h.get_by_label(&format!("{want} of {} rows", expected.rows.len()));
}

/// Kernels whose launching call started inside a range named like warm-up of its process
/// (from the trace's tables, not through `exclude_warmup`).
fn kernels_launched_in_warmup(trace: &Trace) -> Vec<bool> {
    let n = &trace.nvtx;
    let windows: Vec<(u32, i64, i64)> = (0..n.spans.len())
        .filter(|&i| n.style[i] != NvtxStyle::Mark)
        .filter(|&i| {
            let t = trace.str(n.spans.name[i]).to_lowercase();
            t.contains("warmup") || t.contains("warm-up") || t.contains("warm_up")
        })
        .map(|i| {
            (
                GlobalTid(n.global_tid[i]).pid(),
                n.spans.start_ns[i],
                n.spans.end_ns[i],
            )
        })
        .collect();
    assert!(!windows.is_empty(), "the fixture has a warmup range");
    let k = &trace.kernels;
    (0..k.spans.len())
        .map(|i| {
            let call = k.api_call[i];
            assert_ne!(call, NO_INDEX, "every kernel of the fixture has its launch");
            let c = call as usize;
            let pid = GlobalTid(trace.api_calls.global_tid[c]).pid();
            let t = trace.api_calls.spans.start_ns[c];
            windows.iter().any(|&(p, s, e)| p == pid && t >= s && t < e)
        })
        .collect()
}

#[test]
fn the_warmup_toggle_drops_the_kernels_launched_during_warmup() {
    let trace = transformer();
    let in_warmup = kernels_launched_in_warmup(&trace);
    let total = trace.kernels.spans.len();
    let kept = in_warmup.iter().filter(|&&w| !w).count();
    assert!(kept > 0 && kept < total, "{kept} of {total}");

    let mut h = panel_harness(trace, TimeRange::ALL);
    assert_eq!(kernel_instances(h.state()), total);
    assert!(h.state().panel.exclusion().is_none());

    h.state_mut().actions.clear();
    h.get_by_label("Exclude warm-up").click();
    settle_panel(&mut h);
    let bench = h.state();
    assert_eq!(kernel_instances(bench), kept);
    assert!(bench.actions.contains(&PanelAction::ExclusionChanged));
    let ex = bench.panel.exclusion().expect("exclusion in force");
    assert_eq!(ex.counts()[0], total - kept);
    assert!(!ex.intervals.is_empty(), "excluded time to shade");
    // The table's summary line shows its rows.
    let table = bench.panel.report_table(KERNELS).expect("table");
    let line = all_rows_line(table);
    h.get_by_label(&line);

    // In a selection: the kept kernels that start in it.
    let selection = middle(&h.state().trace);
    h.state_mut().selection = selection;
    settle_panel(&mut h);
    let bench = h.state();
    let expected = (0..total)
        .filter(|&i| !in_warmup[i] && selection.contains(bench.trace.kernels.spans.start_ns[i]))
        .count();
    assert_eq!(kernel_instances(bench), expected);
    let starting_in_selection = (0..total)
        .filter(|&i| selection.contains(bench.trace.kernels.spans.start_ns[i]))
        .count();
    assert!(
        expected > 0 && expected < starting_in_selection,
        "the selection holds kernels launched during warm-up: {expected} of {starting_in_selection}"
    );

    // The Warm-up section counts what was excluded.
    h.get_by_label("Warm-up").click();
    settle_panel(&mut h);
    h.get_by_label_contains(&format!("excluded {} kernels", total - kept));

    // Unticking brings every kernel back.
    h.state_mut().selection = TimeRange::ALL;
    h.get_by_label("Exclude warm-up").click();
    settle_panel(&mut h);
    assert!(h.state().panel.exclusion().is_none());
    h.get_by_label("Statistics").click();
    settle_panel(&mut h);
    assert_eq!(kernel_instances(h.state()), total);
}

#[test]
fn the_advanced_form_says_what_is_wrong_and_applies_valid_rules() {
    let trace = transformer();
    let mut h = panel_harness(trace, TimeRange::ALL);
    h.get_by_label("Warm-up").click();
    settle_panel(&mut h);

    h.get_by_label("Exclude ranges matching").click();
    h.run();
    h.get_by_label("Exclude ranges matching")
        .type_text("step_(");
    settle_panel(&mut h);
    h.get_by_label_contains("'step_(' is not a valid regex");
    // The exclusion is not touched by an invalid form.
    assert!(h.state().panel.exclusion().is_none());

    // Fix it the way a person would: start over, skip the first 2 iterations, apply.
    h.state_mut().panel = AnalysisPanel::new();
    h.state_mut().panel.tab = AnalysisTab::Warmup;
    settle_panel(&mut h);
    h.get_by_label("Skip the first").set_value_accesskit(2.0);
    settle_panel(&mut h);
    h.get_by_label_contains("give the pattern of one iteration");
    h.get_by_label("of ranges matching").click();
    h.run();
    h.get_by_label("of ranges matching").type_text("step_.*");
    settle_panel(&mut h);
    assert!(h.query_by_label_contains("give the pattern").is_none());
    h.get_by_label("Apply").click();
    settle_panel(&mut h);
    let bench = h.state();
    assert!(bench.panel.exclude_warmup, "Apply turns the exclusion on");
    let settings = bench.panel.warmup_settings().clone();
    assert_eq!(
        (settings.skip_first, settings.iteration_regex.as_str()),
        (2, "step_.*")
    );
    let rules = settings.rules().expect("rules");
    let expected = analysis::exclude_warmup(&bench.trace, &rules, settings.scope);
    let ex = bench.panel.exclusion().expect("exclusion");
    assert_eq!(ex.excluded.kernels, expected.excluded.kernels);
    // warmup + step_0 + step_1
    assert_eq!(ex.ranges.len(), 3);
    h.get_by_label("• the first 2 NVTX ranges matching 'step_.*'");
}

#[test]
fn clicking_a_gap_shows_it_with_its_cause() {
    let trace = transformer();
    let selection = TimeRange::ALL;
    let mut h = panel_harness(trace, selection);
    assert!(
        h.state().actions.contains(&PanelAction::GapsChanged),
        "gaps computed for the app to hatch"
    );
    h.get_by_label("Gaps").click();
    settle_panel(&mut h);

    let bench = h.state();
    let filter = Filter::range(selection);
    let expected = analysis::gpu_idle_gaps(&bench.trace, &filter, &GapOptions::default());
    assert!(
        !expected.is_empty(),
        "the fixture has gaps of 100 µs or more"
    );
    assert_eq!(bench.panel.gaps(), expected.as_slice());
    assert_eq!(
        bench.panel.activity(),
        analysis::gpu_activity(&bench.trace, &filter).as_slice()
    );
    assert!(
        expected
            .windows(2)
            .all(|w| w[0].duration_ns() >= w[1].duration_ns())
    );

    let longest = expected[0];
    h.state_mut().actions.clear();
    h.get_by_label(&gap_label(1, &longest)).click();
    settle_panel(&mut h);
    // The click asks the app to show the gap with its cause (the app then zooms to it and
    // its launching call; see tests/ui_gap_causes.rs).
    let cause = sightline::analysis::gap_causes::gap_causes(&h.state().trace, &[longest])[0];
    assert_eq!(
        h.state().actions,
        vec![PanelAction::ShowGap {
            gap: longest,
            cause
        }]
    );

    // Per stream: the list follows the checkbox, and the app is told to hatch the new gaps.
    h.state_mut().actions.clear();
    h.get_by_label("Per stream").click();
    settle_panel(&mut h);
    let bench = h.state();
    let per_stream = analysis::gpu_idle_gaps(
        &bench.trace,
        &filter,
        &GapOptions {
            per_stream: true,
            ..GapOptions::default()
        },
    );
    assert!(!per_stream.is_empty());
    assert_eq!(bench.panel.gaps(), per_stream.as_slice());
    assert!(bench.panel.gaps().iter().all(|g| g.stream.is_some()));
    assert!(bench.actions.contains(&PanelAction::GapsChanged));
    h.get_by_label(&gap_label(1, &per_stream[0]));
}

#[test]
fn overlap_section_shows_the_analysis_of_the_selection() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = panel_harness(trace, selection);
    h.get_by_label("Overlap").click();
    settle_panel(&mut h);
    let bench = h.state();
    let filter = Filter::range(selection);
    let (per_gpu, per_kind) = bench.panel.overlap();
    assert_eq!(
        per_gpu,
        analysis::copy_compute_overlap(&bench.trace, &filter).as_slice()
    );
    assert_eq!(
        per_kind,
        analysis::overlap_by_copy_kind(&bench.trace, &filter).as_slice()
    );
    assert!(!per_gpu.is_empty());
}

#[test]
fn a_selection_and_a_table_export_to_csv_and_read_back() {
    let trace = transformer();
    let selection = middle(&trace);
    let dir = common::scratch_dir("analysis-panel");

    // The selection's kernels and memcpys.
    let path = dir.join("selection.csv");
    let kinds = [EventKind::Kernel, EventKind::Memcpy];
    let written =
        export_selection(&path, &trace, &Filter::range(selection), &kinds).expect("export");
    let mut reader = csv::Reader::from_path(&path).expect("open csv");
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(header, COLUMNS);
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(records.len(), written);
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).expect("column");
    let (kind, name, start, end) = (col("kind"), col("name"), col("start_ns"), col("end_ns"));
    let mut got: HashMap<&str, Vec<(String, i64, i64)>> = HashMap::new();
    for r in &records {
        let k = match &r[kind] {
            "kernel" => "kernel",
            "memcpy" => "memcpy",
            other => panic!("unexpected kind {other}"),
        };
        got.entry(k).or_default().push((
            r[name].to_string(),
            r[start].parse().expect("start"),
            r[end].parse().expect("end"),
        ));
    }
    for (k, spans) in [
        ("kernel", &trace.kernels.spans),
        ("memcpy", &trace.memcpys.spans),
    ] {
        let mut expected: Vec<(String, i64, i64)> = (0..spans.len())
            .filter(|&i| selection.contains(spans.start_ns[i]))
            .map(|i| {
                (
                    trace.str(spans.name[i]).to_string(),
                    spans.start_ns[i],
                    spans.end_ns[i],
                )
            })
            .collect();
        expected.sort();
        let mut mine = got.remove(k).unwrap_or_default();
        mine.sort();
        assert!(!expected.is_empty(), "{k} in the selection");
        assert_eq!(mine, expected, "{k}");
    }
    // Ordered by start time, as pandas users expect.
    let starts: Vec<i64> = records
        .iter()
        .map(|r| r[start].parse().expect("start"))
        .collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
    assert!(export_selection(&path, &trace, &Filter::range(selection), &[]).is_err());

    // The table as shown in the panel: sorted by count, in nsys's columns.
    let mut h = panel_harness(trace, selection);
    h.get_by_label("Instances").click();
    settle_panel(&mut h);
    let shown = h.state().panel.visible_table().expect("table");
    let expected = report_over(&h.state().trace, KERNELS, &Filter::range(selection));
    let instances = expected.column("Instances").expect("Instances column");
    assert_eq!(
        h.state().panel.sort,
        Some(Sort {
            column: instances,
            descending: true
        })
    );
    let table_path = dir.join("kernels.csv");
    let n = export_table(&table_path, &shown).expect("export table");
    assert_eq!(n, shown.rows.len());
    assert_eq!(n, expected.rows.len());
    let mut reader = csv::Reader::from_path(&table_path).expect("open csv");
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    // The header nsys printed for this fixture.
    let golden = std::fs::read_to_string(
        common::fixtures().join("golden/transformer/cuda_gpu_kern_sum.csv"),
    )
    .expect("golden csv");
    let golden_header: Vec<&str> = golden.lines().next().expect("header").split(',').collect();
    assert_eq!(header, golden_header);
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    assert_eq!(rows, nsys_csv::table_text_rows(&shown));
    let counts: Vec<u64> = rows
        .iter()
        .map(|r| r[instances].parse().expect("count"))
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    // Every row of the report, once.
    let mut names: Vec<String> = rows.iter().map(|r| r[r.len() - 1].clone()).collect();
    let mut want: Vec<String> = expected.rows.iter().map(row_name).collect();
    names.sort();
    want.sort();
    assert_eq!(names, want);

    // A path that cannot be created is an error with the path in it, not a panic.
    let bad = dir.join("no/such/dir/x.csv");
    let err = export_table(&bad, &shown).expect_err("cannot create");
    assert!(err.to_string().contains("no/such/dir"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[start, end)` of an event, read from the trace's tables.
fn bounds(trace: &Trace, (table, i): (EventTable, usize)) -> (i64, i64) {
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

/// An NVTX range as nsys's summaries name it: `domain:text`, or `text` in the default domain.
fn nvtx_name(trace: &Trace, i: usize) -> String {
    let n = &trace.nvtx;
    let text = trace.str(n.spans.name[i]);
    if n.domain[i] == StringTable::EMPTY {
        text.to_string()
    } else {
        format!("{}:{text}", trace.str(n.domain[i]))
    }
}

/// What a classic report groups an event by: (name as printed, NVTX style), and the value it
/// sums (duration, or bytes for the size report).
fn group_and_value(
    trace: &Trace,
    report: Report,
    (table, i): (EventTable, usize),
) -> ((String, Option<NvtxStyle>), i64) {
    let (start, end) = bounds(trace, (table, i));
    let duration = end - start;
    match (report, table) {
        (Report::Kernels, EventTable::Kernels) => (
            (trace.str(trace.kernels.spans.name[i]).to_string(), None),
            duration,
        ),
        (Report::CudaApi, EventTable::ApiCalls) => (
            (
                strip_version_suffix(trace.str(trace.api_calls.spans.name[i])).to_string(),
                None,
            ),
            duration,
        ),
        (Report::MemoryTime | Report::MemorySize, EventTable::Memcpys) => {
            let bytes = trace.memcpys.bytes[i] as i64;
            let name = trace.str(trace.memcpys.spans.name[i]).to_string();
            let v = if report == Report::MemorySize {
                bytes
            } else {
                duration
            };
            ((name, None), v)
        }
        (Report::MemoryTime | Report::MemorySize, EventTable::Memsets) => {
            let bytes = trace.memsets.bytes[i] as i64;
            let name = trace.str(trace.memsets.spans.name[i]).to_string();
            let v = if report == Report::MemorySize {
                bytes
            } else {
                duration
            };
            ((name, None), v)
        }
        (Report::Nvtx, EventTable::Nvtx) => {
            ((nvtx_name(trace, i), Some(trace.nvtx.style[i])), duration)
        }
        (report, table) => panic!("{} row points at a {table:?} event", report.id()),
    }
}

#[test]
fn every_row_finds_exactly_the_events_it_counts() {
    // What a row click highlights must be what the row summarises, in every classic report,
    // including NVTX rows named `domain:text` and memory rows that mix memcpys and memsets. The
    // counts come from the summaries of `analysis::compute`, row by row.
    for name in ["transformer", "moe", "ws_streaming", "p2p_2gpu"] {
        let trace = load::load_file(&common::fixture(name)).expect("load fixture");
        for selection in [TimeRange::ALL, middle(&trace)] {
            let filter = Filter::range(selection);
            for report in Report::ALL {
                let table = report_over(&trace, report.id(), &filter);
                let summary = analysis::compute(&trace, report, &filter);
                assert_eq!(
                    table.rows.len(),
                    summary.rows.len(),
                    "{name} {}",
                    report.id()
                );
                for (row, want) in table.rows.iter().zip(&summary.rows) {
                    let what = format!("{name} {} {}", report.id(), want.name);
                    assert_eq!(row_name(row), want.name, "{what}");
                    let events = row_events(row);
                    assert_eq!(events.len() as u64, want.stats.count, "{what}");
                    let mut values = Vec::new();
                    for &e in &events {
                        let (start, _) = bounds(&trace, e);
                        assert!(selection.contains(start), "{what}: {e:?} outside");
                        let (group, value) = group_and_value(&trace, report, e);
                        assert_eq!(group, (want.name.clone(), want.style), "{what}: {e:?}");
                        values.push(value);
                    }
                    assert_eq!(values.iter().sum::<i64>(), want.stats.total, "{what}");
                    values.sort_unstable();
                    assert_eq!(values.first().copied(), Some(want.stats.min), "{what}");
                    assert_eq!(values.last().copied(), Some(want.stats.max), "{what}");
                }
            }
        }
    }
}

#[test]
fn the_report_selector_lists_every_report_with_data_and_shows_the_chosen_one() {
    let trace = transformer();
    let selection = middle(&trace);
    let with_data: Vec<&str> = reports::REPORTS
        .iter()
        .filter(|r| reports::has_data(**r, &trace))
        .map(|r| r.name())
        .collect();
    assert!(with_data.contains(&"cuda_gpu_sum") && with_data.contains(&"osrt_sum"));
    let mut h = panel_harness(trace, selection);
    assert_eq!(h.state().panel.available_reports(), with_data.as_slice());
    assert_eq!(
        h.get_by_role_and_label(Role::ComboBox, "Report")
            .value()
            .as_deref(),
        Some(selector_text(KERNELS).as_str())
    );

    // The open selector lists exactly the reports with data.
    h.get_by_role_and_label(Role::ComboBox, "Report").click();
    h.run();
    for r in reports::REPORTS {
        let text = selector_text(r.name());
        assert_eq!(
            h.query_by_label(&text).is_some(),
            with_data.contains(&r.name()),
            "{} listed",
            r.name()
        );
    }
    h.key_press(egui::Key::Escape);
    h.run();

    // Sorted first, to see that a new report starts in nsys's order.
    h.get_by_label("Instances").click();
    settle_panel(&mut h);
    assert!(h.state().panel.sort.is_some());
    // cuda_gpu_sum has rows in the middle of the GPU work; the OS runtime calls of this fixture
    // are all outside it, so osrt_sum is checked over the whole trace too.
    for (name, selection) in [
        ("cuda_gpu_sum", selection),
        ("osrt_sum", selection),
        ("osrt_sum", TimeRange::ALL),
    ] {
        h.state_mut().selection = selection;
        choose_report(&mut h, name);
        let bench = h.state();
        let expected = report_over(&bench.trace, name, &Filter::range(selection));
        assert_eq!(bench.panel.report_table(name), Some(&expected), "{name}");
        assert_eq!(bench.panel.visible_table().as_ref(), Some(&expected));
        assert_eq!(
            bench.panel.sort, None,
            "a new report starts in nsys's order"
        );
        h.get_by_label(&all_rows_line(&expected));
        if expected.rows.is_empty() {
            let missing = reports::find(name).expect("report").missing_data();
            h.get_by_label(&format!("No {missing} in the selection."));
        } else {
            // Its headers are the nsys columns.
            for title in &expected.columns {
                h.get_by_label(title);
            }
        }
    }
    assert!(
        !h.state()
            .panel
            .report_table("osrt_sum")
            .expect("osrt_sum")
            .rows
            .is_empty(),
        "the fixture has OS runtime calls"
    );
    assert!(
        !report_over(&h.state().trace, "cuda_gpu_sum", &Filter::range(selection))
            .rows
            .is_empty()
    );
}

/// The combo box beside the report picker prints the reports as another nsys release: moe was
/// written by nsys 2022.4, so its NVTX ranges are `name` until 2025.3 is chosen, then `:name`.
#[test]
fn the_nsys_format_choice_renames_nvtx_ranges() {
    let trace = load::load_file(&common::fixture("moe")).expect("load moe");
    let mut h = panel_harness(trace, TimeRange::ALL);
    choose_report(&mut h, "nvtx_sum");
    let names = |h: &Bench| -> Vec<String> {
        let table = h.state().panel.report_table("nvtx_sum").expect("nvtx_sum");
        table.rows.iter().map(row_name).collect()
    };
    let before = names(&h);
    assert!(before.iter().any(|n| !n.contains(':')), "{before:?}");
    assert_eq!(h.state().panel.nsys_format, None);
    h.get_by_value("as nsys 2023.4").click();
    settle_panel(&mut h);
    h.get_by_label("as nsys 2025.3").click();
    settle_panel(&mut h);
    assert_eq!(h.state().panel.nsys_format, Some(NsysFormat::V2025_3));
    let after = names(&h);
    assert_eq!(after.len(), before.len());
    assert!(
        after
            .iter()
            .all(|n| n.starts_with(':') || n.starts_with("workload:")),
        "{after:?}"
    );
}
