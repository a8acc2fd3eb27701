//! The analysis side panel driven through `egui_kittest` as a person drives it, on the
//! transformer fixture: select a range and read the statistics, sort and filter the table, click
//! a row to highlight its events, toggle warm-up exclusion with a real click, type a bad regex
//! into the advanced form, click an idle gap to zoom, and export a selection and a table to CSV
//! and read them back. Expected values are computed here, apart from the panel. Nothing is
//! rendered.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;

use egui::Vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::analysis::{self, EventTable, Filter, GapOptions, Report, TimeRange};
use sightline::export::events_csv::{COLUMNS, EventKind};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::{GlobalTid, NO_INDEX, NvtxStyle, Trace};
use sightline::ui::panels::analysis::{
    AnalysisPanel, AnalysisTab, PanelAction, SortColumn, event_value, export_selection,
    export_table, gap_label, report_label, row_events, table_summary, visible_rows,
};

/// What the harness drives: the panel, the trace and selection the app would hand it, and every
/// action the panel returned.
struct Bench {
    panel: AnalysisPanel,
    trace: Trace,
    selection: TimeRange,
    actions: Vec<PanelAction>,
}

fn harness(trace: Trace, selection: TimeRange) -> Harness<'static, Bench> {
    Harness::builder()
        .with_size(Vec2::new(1300.0, 1400.0))
        .with_step_dt(0.01)
        .with_max_steps(40)
        .build_ui_state(
            |ui, bench: &mut Bench| {
                let actions = bench.panel.ui(ui, &bench.trace, bench.selection);
                bench.actions.extend(actions);
            },
            Bench {
                panel: AnalysisPanel::new(),
                trace,
                selection,
                actions: Vec::new(),
            },
        )
}

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

fn kernel_instances(bench: &Bench) -> u64 {
    bench
        .panel
        .report_table(Report::Kernels)
        .map(|t| t.rows.iter().map(|r| r.stats.count).sum())
        .unwrap_or(0)
}

#[test]
fn statistics_follow_the_selection_and_are_not_recomputed_per_frame() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = harness(trace, selection);
    h.run();

    for report in Report::ALL {
        h.get_by_label(report_label(report)).click();
        h.run();
        let bench = h.state();
        let expected = analysis::compute(&bench.trace, report, &Filter::range(selection));
        let shown = bench.panel.report_table(report).expect("report computed");
        assert_eq!(shown, &expected, "{}", report.id());
        if report != Report::Nvtx {
            assert!(!expected.rows.is_empty(), "{} has rows", report.id());
        }
        // The summary line under the table says the same.
        let rows: Vec<usize> = (0..expected.rows.len()).collect();
        let line = table_summary(&expected, &rows);
        h.get_by_label(&line);
    }

    // Idle frames compute nothing.
    let before = h.state().panel.computations();
    h.run_steps(10);
    assert_eq!(h.state().panel.computations(), before);

    // A new selection recomputes what is shown.
    let whole = TimeRange::ALL;
    h.state_mut().selection = whole;
    h.get_by_label("Kernels").click();
    h.run();
    let bench = h.state();
    assert!(bench.panel.computations() > before);
    let expected = analysis::compute(&bench.trace, Report::Kernels, &Filter::range(whole));
    assert_eq!(bench.panel.report_table(Report::Kernels), Some(&expected));
    assert_eq!(
        kernel_instances(bench) as usize,
        bench.trace.kernels.spans.len()
    );
}

#[test]
fn headers_sort_the_table_and_a_row_click_highlights_its_events() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = harness(trace, selection);
    h.run();

    // Click "Max": largest maximum first; again: smallest first.
    h.get_by_label("Max").click();
    h.run();
    let maxima = |h: &Harness<'static, Bench>| -> Vec<i64> {
        let table = h.state().panel.visible_table().expect("table shown");
        table.rows.iter().map(|r| r.stats.max).collect()
    };
    let desc = maxima(&h);
    assert!(desc.len() > 1);
    assert!(desc.windows(2).all(|w| w[0] >= w[1]), "{desc:?}");
    let sort = h.state().panel.sort.expect("sorted");
    assert_eq!((sort.column, sort.descending), (SortColumn::Max, true));
    h.get_by_label("▼");
    h.get_by_label("Max").click();
    h.run();
    let asc = maxima(&h);
    assert!(asc.windows(2).all(|w| w[0] <= w[1]), "{asc:?}");
    h.get_by_label("▲");

    // Click the name of the row with the most instances.
    let expected = analysis::compute(&h.state().trace, Report::Kernels, &Filter::range(selection));
    let row = expected
        .rows
        .iter()
        .max_by_key(|r| r.stats.count)
        .expect("kernels in the selection")
        .clone();
    h.state_mut().actions.clear();
    h.get_by_label(&row.name).click();
    h.run();
    let bench = h.state();
    let highlighted: Vec<(EventTable, usize)> = bench
        .actions
        .iter()
        .rev()
        .find_map(|a| match a {
            PanelAction::Highlight(events) => Some(events.clone()),
            _ => None,
        })
        .expect("a Highlight action");
    // Independently: the kernels of that name starting in the selection.
    let k = &bench.trace.kernels;
    let mine: Vec<(EventTable, usize)> = (0..k.spans.len())
        .filter(|&i| bench.trace.str(k.spans.name[i]) == row.name)
        .filter(|&i| selection.contains(k.spans.start_ns[i]))
        .map(|i| (EventTable::Kernels, i))
        .collect();
    assert_eq!(highlighted, mine);
    assert_eq!(highlighted.len() as u64, row.stats.count);
    // Its histogram bins every one of them.
    let chosen = bench.panel.chosen_row().expect("chosen row");
    assert_eq!(chosen.histogram.counts.iter().sum::<u64>(), row.stats.count);

    // The name filter narrows the table (typed into the field like a person would).
    let needle: String = row.name.chars().take(6).collect();
    let field = h.get_by_label("Filter names");
    field.click();
    h.run();
    h.get_by_label("Filter names").type_text(&needle);
    h.run();
    let shown = h.state().panel.visible_table().expect("table");
    assert!(!shown.rows.is_empty());
    assert!(shown.rows.iter().all(|r| r.name.contains(&needle)));
    let want = visible_rows(&expected, &needle, h.state().panel.sort).len();
    assert_eq!(shown.rows.len(), want);
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

    let mut h = harness(trace, TimeRange::ALL);
    h.run();
    assert_eq!(kernel_instances(h.state()) as usize, total);
    assert!(h.state().panel.exclusion().is_none());

    h.state_mut().actions.clear();
    h.get_by_label("Exclude warm-up").click();
    h.run();
    let bench = h.state();
    assert_eq!(kernel_instances(bench) as usize, kept);
    assert!(bench.actions.contains(&PanelAction::ExclusionChanged));
    let ex = bench.panel.exclusion().expect("exclusion in force");
    assert_eq!(ex.counts()[0], total - kept);
    assert!(!ex.intervals.is_empty(), "excluded time to shade");
    // The table's summary line shows the kept count.
    let table = bench.panel.report_table(Report::Kernels).expect("table");
    let rows: Vec<usize> = (0..table.rows.len()).collect();
    let line = table_summary(table, &rows);
    assert!(line.ends_with(&format!("· {kept} events")), "{line}");
    h.get_by_label(&line);

    // In a selection: the kept kernels that start in it.
    let selection = middle(&h.state().trace);
    h.state_mut().selection = selection;
    h.run();
    let bench = h.state();
    let expected = (0..total)
        .filter(|&i| !in_warmup[i] && selection.contains(bench.trace.kernels.spans.start_ns[i]))
        .count();
    assert_eq!(kernel_instances(bench) as usize, expected);
    let starting_in_selection = (0..total)
        .filter(|&i| selection.contains(bench.trace.kernels.spans.start_ns[i]))
        .count();
    assert!(
        expected > 0 && expected < starting_in_selection,
        "the selection holds kernels launched during warm-up: {expected} of {starting_in_selection}"
    );

    // The Warm-up section counts what was excluded.
    h.get_by_label("Warm-up").click();
    h.run();
    h.get_by_label_contains(&format!("excluded {} kernels", total - kept));

    // Unticking brings every kernel back.
    h.state_mut().selection = TimeRange::ALL;
    h.get_by_label("Exclude warm-up").click();
    h.run();
    assert!(h.state().panel.exclusion().is_none());
    h.get_by_label("Statistics").click();
    h.run();
    assert_eq!(kernel_instances(h.state()) as usize, total);
}

#[test]
fn the_advanced_form_says_what_is_wrong_and_applies_valid_rules() {
    let trace = transformer();
    let mut h = harness(trace, TimeRange::ALL);
    h.run();
    h.get_by_label("Warm-up").click();
    h.run();

    let field = h.get_by_label("Exclude ranges matching");
    field.click();
    h.run();
    h.get_by_label("Exclude ranges matching")
        .type_text("step_(");
    h.run();
    h.get_by_label_contains("'step_(' is not a valid regex");
    // The exclusion is not touched by an invalid form.
    assert!(h.state().panel.exclusion().is_none());

    // Fix it the way a person would: start over, skip the first 2 iterations, apply.
    h.state_mut().panel = AnalysisPanel::new();
    h.state_mut().panel.tab = AnalysisTab::Warmup;
    h.run();
    h.get_by_label("Skip the first").set_value_accesskit(2.0);
    h.run();
    h.get_by_label_contains("give the pattern of one iteration");
    h.get_by_label("of ranges matching").click();
    h.run();
    h.get_by_label("of ranges matching").type_text("step_.*");
    h.run();
    assert!(h.query_by_label_contains("give the pattern").is_none());
    h.get_by_label("Apply").click();
    h.run();
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
fn clicking_a_gap_zooms_to_it() {
    let trace = transformer();
    let selection = TimeRange::ALL;
    let mut h = harness(trace, selection);
    h.run();
    assert!(
        h.state().actions.contains(&PanelAction::GapsChanged),
        "gaps computed for the app to hatch"
    );
    h.get_by_label("Gaps").click();
    h.run();

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
    h.run();
    assert_eq!(
        h.state().actions,
        vec![PanelAction::ZoomTo {
            start_ns: longest.start_ns,
            end_ns: longest.end_ns
        }]
    );

    // Per stream: the list follows the checkbox.
    h.get_by_label("Per stream").click();
    h.run();
    let bench = h.state();
    let per_stream = analysis::gpu_idle_gaps(
        &bench.trace,
        &filter,
        &GapOptions {
            per_stream: true,
            ..GapOptions::default()
        },
    );
    assert_eq!(bench.panel.gaps(), per_stream.as_slice());
    assert!(bench.panel.gaps().iter().all(|g| g.stream.is_some()));
}

#[test]
fn overlap_section_shows_the_analysis_of_the_selection() {
    let trace = transformer();
    let selection = middle(&trace);
    let mut h = harness(trace, selection);
    h.run();
    h.get_by_label("Overlap").click();
    h.run();
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

    // The table as shown in the panel: sorted by count, filtered, in nsys's columns.
    let mut h = harness(trace, selection);
    h.run();
    h.get_by_label("Instances").click();
    h.run();
    let shown = h.state().panel.visible_table().expect("table");
    assert_eq!(
        h.state().panel.sort.map(|s| s.column),
        Some(SortColumn::Count)
    );
    let table_path = dir.join("kernels.csv");
    let n = export_table(&table_path, &shown).expect("export table");
    assert_eq!(n, shown.rows.len());
    let mut reader = csv::Reader::from_path(&table_path).expect("open csv");
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(header, nsys_csv::header(Report::Kernels));
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.expect("row").iter().map(String::from).collect())
        .collect();
    assert_eq!(rows, nsys_csv::rows(&shown));
    let counts: Vec<u64> = rows.iter().map(|r| r[2].parse().expect("count")).collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");

    // A path that cannot be created is an error with the path in it, not a panic.
    let bad = dir.join("no/such/dir/x.csv");
    let err = export_table(&bad, &shown).expect_err("cannot create");
    assert!(err.to_string().contains("no/such/dir"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_row_finds_exactly_the_events_it_counts() {
    // What a row click highlights must be what the row summarises, in every report, including
    // NVTX rows named `domain:text` and memory rows that mix memcpys and memsets.
    for name in ["transformer", "moe", "ws_streaming", "p2p_2gpu"] {
        let trace = load::load_file(&common::fixture(name)).expect("load fixture");
        for selection in [TimeRange::ALL, middle(&trace)] {
            let filter = Filter::range(selection);
            for report in Report::ALL {
                let table = analysis::compute(&trace, report, &filter);
                for row in &table.rows {
                    let events = row_events(&trace, report, row, &filter);
                    assert_eq!(
                        events.len() as u64,
                        row.stats.count,
                        "{name} {} {}",
                        report.id(),
                        row.name
                    );
                    let mut values: Vec<i64> = events
                        .iter()
                        .map(|&e| event_value(&trace, report, e))
                        .collect();
                    let total: i64 = values.iter().sum();
                    assert_eq!(
                        total,
                        row.stats.total,
                        "{name} {} {}",
                        report.id(),
                        row.name
                    );
                    values.sort_unstable();
                    assert_eq!(values.first().copied(), Some(row.stats.min));
                    assert_eq!(values.last().copied(), Some(row.stats.max));
                }
            }
        }
    }
}
