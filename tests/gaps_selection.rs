//! Idle gaps and busy time inside a selection (issue 33): measured over the whole selection, not
//! from its first to its last GPU operation. On moe.sqlite each `Complete_MoE_Workflow` NVTX range
//! is selected as a person selects it (right-click → Select span), and the analysis is compared
//! with what the test works out straight from the export's tables: the union of the kernels,
//! memcpys and memsets running in the range, clipped to it, and the holes in that union between
//! the range's edges (the first and last of them cut by an edge). The second such range has the
//! GPU idle for its first 2.88 ms. The Gaps tab, the `gaps --range` command and the whole-trace
//! figures (first to last operation, unchanged) are checked too.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;

use common::ui::{panel_harness, settle_panel};
use egui_kittest::kittest::Queryable;
use sightline::analysis::{
    self, Filter, GapOptions, GpuOpKind, IdleGap, MeasureOver, SelectionEdge, TimeRange,
};
use sightline::load;
use sightline::trace::Trace;
use sightline::ui::panels::analysis::gap_label;
use sightline::ui::timeline::format_duration;

/// What the test computes for one (device, stream) from the export alone.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    busy_ns: i64,
    /// Holes of the clipped union between the range's edges, in time order.
    gaps: Vec<(i64, i64)>,
}

/// The `Complete_MoE_Workflow` ranges of moe.sqlite, `[start, end)` by start.
fn workflow_ranges(conn: &rusqlite::Connection) -> Vec<(i64, i64)> {
    let mut stmt = conn
        .prepare(
            "SELECT e.start, e.end FROM NVTX_EVENTS AS e \
             LEFT JOIN StringIds AS s ON s.id = e.textId \
             WHERE e.eventType IN (59, 60) AND e.end IS NOT NULL \
               AND coalesce(e.text, s.value) = 'Complete_MoE_Workflow' \
             ORDER BY e.start",
        )
        .expect("prepare the NVTX query");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query NVTX")
        .map(|r| r.expect("NVTX row"))
        .collect()
}

/// Every GPU operation of the export: (device, stream, start, end).
fn gpu_operations(conn: &rusqlite::Connection) -> Vec<(i64, i64, i64, i64)> {
    let mut ops = Vec::new();
    for table in [
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
    ] {
        if !common::has_table(conn, table) {
            continue;
        }
        let sql = format!("SELECT deviceId, streamId, start, end FROM {table}");
        let mut stmt = conn.prepare(&sql).expect("prepare the GPU query");
        ops.extend(
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .expect("query GPU operations")
                .map(|r| r.expect("GPU row")),
        );
    }
    ops
}

/// Busy time and holes of `spans` inside `[a, b)`: each span running in it clipped to it.
fn expected_in(spans: &[(i64, i64)], (a, b): (i64, i64)) -> Expected {
    let mut clipped: Vec<(i64, i64)> = spans
        .iter()
        .filter(|&&(s, e)| s < b && (e > a || s >= a))
        .map(|&(s, e)| (s.max(a), e.min(b)))
        .collect();
    clipped.sort_unstable();
    let mut out = Expected::default();
    let mut busy_until = a;
    for (s, e) in clipped {
        if s > busy_until {
            out.gaps.push((busy_until, s));
        }
        if e > busy_until {
            out.busy_ns += e - s.max(busy_until);
            busy_until = e;
        }
    }
    if b > busy_until {
        out.gaps.push((busy_until, b));
    }
    out
}

/// Per key (device, or (device, stream)), what `expected_in` gives for the range; keys are every
/// device (stream) that ran anything in the whole trace.
fn expected_by<K: Ord + Copy>(
    ops: &[(i64, i64, i64, i64)],
    key: impl Fn(&(i64, i64, i64, i64)) -> K,
    range: (i64, i64),
) -> BTreeMap<K, Expected> {
    let mut spans: BTreeMap<K, Vec<(i64, i64)>> = BTreeMap::new();
    for op in ops {
        spans.entry(key(op)).or_default().push((op.2, op.3));
    }
    spans
        .into_iter()
        .map(|(k, s)| (k, expected_in(&s, range)))
        .collect()
}

/// The edge a gap `[s, e)` of `[a, b)` touches.
fn edge_of((s, e): (i64, i64), (a, b): (i64, i64)) -> Option<SelectionEdge> {
    match (s == a, e == b) {
        (true, true) => Some(SelectionEdge::Both),
        (true, false) => Some(SelectionEdge::Start),
        (false, true) => Some(SelectionEdge::End),
        (false, false) => None,
    }
}

fn every_gap(per_stream: bool) -> GapOptions {
    GapOptions {
        min_ns: 1,
        per_stream,
        over: MeasureOver::Range,
    }
}

/// The gaps of one key as (start, end, edge), in time order.
fn gaps_of(
    gaps: &[IdleGap],
    keep: impl Fn(&IdleGap) -> bool,
) -> Vec<(i64, i64, Option<SelectionEdge>)> {
    let mut out: Vec<_> = gaps
        .iter()
        .filter(|g| keep(g))
        .map(|g| (g.start_ns, g.end_ns, g.edge))
        .collect();
    out.sort_unstable_by_key(|g| (g.0, g.1));
    out
}

fn moe() -> (Trace, rusqlite::Connection) {
    let path = common::fixture("moe");
    let trace = load::load_file(&path).expect("load moe");
    (trace, common::open_ro(&path))
}

#[test]
fn a_selected_range_is_measured_from_edge_to_edge() {
    let (trace, conn) = moe();
    let ranges = workflow_ranges(&conn);
    assert_eq!(ranges.len(), 12, "moe runs the workflow 12 times");
    let ops = gpu_operations(&conn);
    let mut leading_gaps = 0;
    for &range in &ranges {
        let filter = Filter::range(TimeRange::new(range.0, range.1));
        let by_device = expected_by(&ops, |op| op.0 as u32, range);
        let activity = analysis::gpu_activity_over(&trace, &filter, MeasureOver::Range);
        assert_eq!(activity.len(), by_device.len());
        let gaps = analysis::gpu_idle_gaps(&trace, &filter, &every_gap(false));
        for a in &activity {
            let expected = &by_device[&a.device];
            assert_eq!(a.window, Some(range), "{range:?}");
            assert_eq!(a.measured_ns, range.1 - range.0, "{range:?}");
            assert_eq!(a.busy_ns, expected.busy_ns, "{range:?}");
            assert_eq!(a.idle_ns, a.measured_ns - expected.busy_ns);
            let want: Vec<_> = expected
                .gaps
                .iter()
                .map(|&g| (g.0, g.1, edge_of(g, range)))
                .collect();
            assert_eq!(gaps_of(&gaps, |g| g.device == a.device), want, "{range:?}");
            // Idle in all = the gaps, edges included.
            let idle: i64 = expected.gaps.iter().map(|g| g.1 - g.0).sum();
            assert_eq!(a.idle_ns, idle);
            if want
                .first()
                .is_some_and(|g| g.2 == Some(SelectionEdge::Start) && g.1 - g.0 >= 100_000)
            {
                leading_gaps += 1;
            }
        }
        // Per stream: every stream of the device, one that ran nothing in the range idle
        // through all of it.
        let by_stream = expected_by(&ops, |op| (op.0 as u32, op.1 as u32), range);
        let gaps = analysis::gpu_idle_gaps(&trace, &filter, &every_gap(true));
        for (&(device, stream), expected) in &by_stream {
            let want: Vec<_> = expected
                .gaps
                .iter()
                .map(|&g| (g.0, g.1, edge_of(g, range)))
                .collect();
            let got = gaps_of(&gaps, |g| {
                g.device == device && g.stream.is_some_and(|s| s.stream == stream)
            });
            assert_eq!(got, want, "{range:?} stream {stream}");
        }
    }
    assert!(leading_gaps > 0, "some workflow starts with the GPU idle");

    // The range of the issue: 598.27-606.45 ms, idle for its first 2.878 ms, busy 27.7 %.
    let second = ranges[1];
    let filter = Filter::range(TimeRange::new(second.0, second.1));
    let a = analysis::gpu_activity_over(&trace, &filter, MeasureOver::Range)[0];
    assert_eq!(a.measured_ns, 8_178_732);
    assert_eq!(format!("{:.1}", a.busy_percent().unwrap()), "27.7");
    let listed = analysis::gpu_idle_gaps(
        &trace,
        &filter,
        &GapOptions {
            over: MeasureOver::Range,
            ..GapOptions::default()
        },
    );
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].edge, Some(SelectionEdge::Start));
    assert_eq!(
        (listed[0].start_ns, listed[0].duration_ns()),
        (second.0, 2_877_874)
    );
    // Over the active span (the old reading) the same range reported 0 gaps and 42.9 %.
    let old = analysis::gpu_activity(&trace, &filter)[0];
    assert_eq!(format!("{:.1}", old.busy_percent().unwrap()), "42.9");
    assert!(analysis::gpu_idle_gaps(&trace, &filter, &GapOptions::default()).is_empty());
}

#[test]
fn a_selection_inside_an_idle_stretch_is_one_gap_cut_at_both_edges() {
    let (trace, conn) = moe();
    let second = workflow_ranges(&conn)[1];
    let quiet = (second.0 + 100_000, second.0 + 1_100_000);
    let filter = Filter::range(TimeRange::new(quiet.0, quiet.1));
    let a = analysis::gpu_activity_over(&trace, &filter, MeasureOver::Range)[0];
    assert_eq!((a.measured_ns, a.busy_ns), (1_000_000, 0));
    let gaps = analysis::gpu_idle_gaps(&trace, &filter, &every_gap(false));
    assert_eq!(
        gaps_of(&gaps, |_| true),
        vec![(quiet.0, quiet.1, Some(SelectionEdge::Both))]
    );
    // Its neighbours are the operations around it in the whole trace: the last to end before
    // the selection and the first to start after it.
    let (before, after) = (
        gaps[0].before.expect("before"),
        gaps[0].after.expect("after"),
    );
    let ops = gpu_operations(&conn);
    let last_end = ops.iter().map(|o| o.3).filter(|&e| e <= quiet.0).max();
    let next_start = ops.iter().map(|o| o.2).filter(|&s| s >= quiet.1).min();
    assert_eq!(Some(span(&trace, before).1), last_end);
    assert_eq!(Some(span(&trace, after).0), next_start);
}

/// Start and end of a GPU operation of the trace.
fn span(trace: &Trace, op: analysis::GpuOpRef) -> (i64, i64) {
    let spans = match op.kind {
        GpuOpKind::Kernel => &trace.kernels.spans,
        GpuOpKind::Memcpy => &trace.memcpys.spans,
        GpuOpKind::Memset => &trace.memsets.spans,
        GpuOpKind::Graph => &trace.graphs.spans,
    };
    (spans.start_ns[op.index], spans.end_ns[op.index])
}

#[test]
fn without_a_selection_the_window_is_still_first_to_last_operation() {
    let (trace, conn) = moe();
    let ops = gpu_operations(&conn);
    let first = ops.iter().map(|o| o.2).min().unwrap();
    let last = ops.iter().map(|o| o.3).max().unwrap();
    for over in [MeasureOver::ActiveSpan, MeasureOver::Range] {
        let a = analysis::gpu_activity_over(&trace, &Filter::all(), over)[0];
        assert_eq!(a.window, Some((first, last)));
        let expected = expected_in(
            &ops.iter().map(|o| (o.2, o.3)).collect::<Vec<_>>(),
            (first, last),
        );
        assert_eq!(a.busy_ns, expected.busy_ns);
        let options = GapOptions {
            over,
            ..every_gap(false)
        };
        let gaps = analysis::gpu_idle_gaps(&trace, &Filter::all(), &options);
        let want: Vec<_> = expected.gaps.iter().map(|&(s, e)| (s, e, None)).collect();
        assert_eq!(gaps_of(&gaps, |_| true), want, "{over:?}");
    }
}

#[test]
fn gaps_range_prints_the_edge_column() {
    let (_, conn) = moe();
    let second = workflow_ranges(&conn)[1];
    let range = format!("{}:{}", second.0, second.1);
    let path = common::fixture("moe");
    let out = common::sightline_stdout(&[
        "gaps",
        path.to_str().unwrap(),
        "--range",
        &range,
        "--format",
        "csv",
    ]);
    let mut r = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(header.last().map(String::as_str), Some("Edge"));
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.expect("record")).collect();
    assert_eq!(rows.len(), 1);
    let start = second.0.to_string();
    assert_eq!(
        (&rows[0][2], &rows[0][4], &rows[0][7]),
        (start.as_str(), "2877874", "selection start")
    );
    let table = common::sightline_stdout(&["gaps", path.to_str().unwrap(), "--range", &range]);
    assert!(table.contains("busy 27.7% of 8.179 ms measured"), "{table}");
    // Without a range the columns are unchanged.
    let whole = common::sightline_stdout(&["gaps", path.to_str().unwrap(), "--format", "csv"]);
    assert!(whole.starts_with("Device,Stream,Start (ns),End (ns),Duration (ns),Before,After\n"));
}

#[test]
fn the_gaps_tab_of_a_selection_measures_the_whole_selection() {
    let (trace, conn) = moe();
    let second = workflow_ranges(&conn)[1];
    let expected = expected_in(
        &gpu_operations(&conn)
            .iter()
            .map(|o| (o.2, o.3))
            .collect::<Vec<_>>(),
        second,
    );
    let length = second.1 - second.0;
    let mut h = panel_harness(trace, TimeRange::new(second.0, second.1));
    h.get_by_label("Gaps").click();
    settle_panel(&mut h);
    let bench = h.state();
    let activity = bench.panel.activity();
    assert_eq!(activity.len(), 1);
    assert_eq!(
        (activity[0].measured_ns, activity[0].busy_ns),
        (length, expected.busy_ns)
    );
    let gaps = bench.panel.gaps().to_vec();
    assert_eq!(gaps.len(), 1, "the idle start of the step, at least 100 µs");
    assert_eq!(gaps[0].edge, Some(SelectionEdge::Start));
    assert_eq!((gaps[0].start_ns, gaps[0].end_ns), expected.gaps[0]);
    // What the tab shows: measured the whole selection, busy its share, the gap marked.
    let shown = |h: &egui_kittest::Harness<'static, common::ui::PanelBench>, text: &str| {
        h.query_all_by_label(text).next().is_some()
    };
    let busy = format!("{:.1} %", expected.busy_ns as f64 * 100.0 / length as f64);
    assert_eq!(busy, "27.7 %");
    assert!(shown(&h, &busy), "busy {busy}");
    assert!(shown(&h, &format_duration(length as f64)), "measured");
    assert!(shown(
        &h,
        &format!(
            "Total idle: {}",
            format_duration((length - expected.busy_ns) as f64)
        )
    ));
    let label = gap_label(1, &gaps[0]);
    assert!(label.ends_with("· selection start"), "{label}");
    assert!(shown(&h, &label), "{label}");
}
