//! Warm-up exclusion, GPU idle gaps, busy time and copy/compute overlap on the real fixtures,
//! each checked against values computed here straight from the SQLite file with rusqlite and a
//! brute-force method different from the library's (a boundary sweep with counters instead of
//! interval unions; SQL joins instead of the loader's api_call links).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::HashMap;

use rusqlite::Connection;
use sightline::analysis::{
    self, AttributionScope, ExclusionRule, Filter, GapOptions, GpuOpKind, TimeRange,
};
use sightline::load;
use sightline::trace::Trace;

/// (start, end, is_kernel) of GPU ops.
type Ops = Vec<(i64, i64, bool)>;

fn open(name: &str) -> (Trace, Connection) {
    let path = common::fixture(name);
    let trace = load::load_file(&path).expect("load fixture");
    let conn = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open fixture with rusqlite");
    (trace, conn)
}

fn has_table(conn: &Connection, table: &str) -> bool {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .expect("sqlite_master")
        > 0
}

/// (device, stream, start, end, is_kernel) of every GPU op in the file.
fn gpu_rows(conn: &Connection) -> Vec<(i64, i64, i64, i64, bool)> {
    let mut out = Vec::new();
    for (table, is_kernel) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", true),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", false),
        ("CUPTI_ACTIVITY_KIND_MEMSET", false),
    ] {
        if !has_table(conn, table) {
            continue;
        }
        let mut st = conn
            .prepare(&format!(
                "SELECT deviceId, streamId, start, end FROM {table}"
            ))
            .expect("prepare");
        let rows = st
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, is_kernel))
            })
            .expect("query");
        out.extend(rows.map(|r| r.expect("row")));
    }
    out
}

/// Brute force by sweeping sorted boundaries with two counters (kernels, memory ops) over
/// `[lo, hi)`: (busy, kernel, memory, overlap) time and the idle intervals.
struct Sweep {
    busy: i64,
    kernel: i64,
    memory: i64,
    overlap: i64,
    idle: Vec<(i64, i64)>,
}

fn sweep(ops: &[(i64, i64, bool)], lo: i64, hi: i64) -> Sweep {
    let mut events: Vec<(i64, i32, i32)> = Vec::new();
    for &(s, e, k) in ops {
        if e <= s {
            continue;
        }
        let (dk, dm) = if k { (1, 0) } else { (0, 1) };
        events.push((s, dk, dm));
        events.push((e, -dk, -dm));
    }
    events.push((lo, 0, 0));
    events.push((hi, 0, 0));
    events.sort_unstable();
    let mut out = Sweep {
        busy: 0,
        kernel: 0,
        memory: 0,
        overlap: 0,
        idle: Vec::new(),
    };
    let (mut nk, mut nm) = (0, 0);
    let mut prev = i64::MIN;
    for (t, dk, dm) in events {
        if prev != i64::MIN {
            let (a, b) = (prev.max(lo), t.min(hi));
            if b > a {
                let len = b - a;
                if nk > 0 || nm > 0 {
                    out.busy += len;
                } else {
                    match out.idle.last_mut() {
                        Some(last) if last.1 == a => last.1 = b,
                        _ => out.idle.push((a, b)),
                    }
                }
                if nk > 0 {
                    out.kernel += len;
                }
                if nm > 0 {
                    out.memory += len;
                }
                if nk > 0 && nm > 0 {
                    out.overlap += len;
                }
            }
        }
        nk += dk;
        nm += dm;
        prev = t;
    }
    out
}

/// The ops that belong to a range: those whose start lies in it (the definition).
fn in_range(ops: &[(i64, i64, bool)], range: TimeRange) -> Vec<(i64, i64, bool)> {
    ops.iter()
        .copied()
        .filter(|o| range.contains(o.0))
        .collect()
}

/// The active span `[first start, last end)` of the ops in a range.
fn window(ops: &[(i64, i64, bool)], range: TimeRange) -> Option<(i64, i64)> {
    let ops = in_range(ops, range);
    let first = ops.iter().map(|o| o.0).min()?;
    let last = ops.iter().map(|o| o.1).max()?;
    (last > first).then_some((first, last))
}

fn by_device(rows: &[(i64, i64, i64, i64, bool)]) -> HashMap<u32, Ops> {
    let mut m: HashMap<u32, Ops> = HashMap::new();
    for &(d, _, s, e, k) in rows {
        m.entry(d as u32).or_default().push((s, e, k));
    }
    m
}

#[test]
fn overlap_and_busy_equal_a_boundary_sweep_of_the_sql_rows() {
    for name in [
        "ws_baseline",
        "ws_streaming",
        "moe",
        "transformer",
        "p2p_2gpu",
    ] {
        let (trace, conn) = open(name);
        let devices = by_device(&gpu_rows(&conn));
        for range in [
            TimeRange::ALL,
            TimeRange::new(
                trace.first_ns + (trace.last_ns - trace.first_ns) / 3,
                trace.first_ns + (trace.last_ns - trace.first_ns) / 3 * 2,
            ),
        ] {
            let got = analysis::copy_compute_overlap(&trace, &Filter::range(range));
            assert_eq!(got.len(), devices.len(), "{name}: one row per device");
            for o in got {
                let ops = &devices[&o.device];
                let Some((lo, hi)) = window(ops, range) else {
                    assert_eq!(o.window, None);
                    continue;
                };
                let s = sweep(&in_range(ops, range), lo, hi);
                assert_eq!(o.window, Some((lo, hi)), "{name} GPU {}", o.device);
                assert_eq!(
                    (o.busy_ns, o.kernel_ns, o.memory_ns, o.overlap_ns),
                    (s.busy, s.kernel, s.memory, s.overlap),
                    "{name} GPU {} range {range:?}",
                    o.device
                );
            }
            for a in analysis::gpu_activity(&trace, &Filter::range(range)) {
                let ops = &devices[&a.device];
                if let Some((lo, hi)) = window(ops, range) {
                    let s = sweep(&in_range(ops, range), lo, hi);
                    assert_eq!((a.busy_ns, a.idle_ns), (s.busy, hi - lo - s.busy), "{name}");
                }
            }
        }
    }
}

#[test]
fn weight_streaming_overlaps_copies_and_the_baseline_does_not() {
    let pct = |name: &str| {
        let (trace, _) = open(name);
        let rows = analysis::copy_compute_overlap(&trace, &Filter::all());
        assert_eq!(rows.len(), 1, "{name}: one GPU");
        rows[0].overlap_percent().expect("has memory ops")
    };
    let baseline = pct("ws_baseline");
    let streaming = pct("ws_streaming");
    println!("overlap: ws_baseline {baseline:.1}%, ws_streaming {streaming:.1}%");
    assert!(baseline < 1.0, "ws_baseline overlap {baseline}");
    assert!(
        (70.0..=90.0).contains(&streaming),
        "ws_streaming overlap {streaming}"
    );
    // All of ws_streaming's copies are Host-to-Device, so the per-direction view agrees.
    let (trace, _) = open("ws_streaming");
    let by_kind = analysis::overlap_by_copy_kind(&trace, &Filter::all());
    assert_eq!(by_kind.len(), 1);
    assert_eq!(by_kind[0].label(), "Host-to-Device");
    assert_eq!(by_kind[0].overlap_percent(), Some(streaming));
}

#[test]
fn idle_gaps_equal_a_boundary_sweep_of_the_sql_rows() {
    for name in ["ws_baseline", "ws_streaming", "moe", "p2p_2gpu"] {
        let (trace, conn) = open(name);
        let rows = gpu_rows(&conn);
        let devices = by_device(&rows);
        for (range, min_ns) in [
            (TimeRange::ALL, 100_000),
            (TimeRange::ALL, 0),
            (
                TimeRange::new(
                    trace.first_ns + (trace.last_ns - trace.first_ns) / 3,
                    trace.first_ns + (trace.last_ns - trace.first_ns) / 3 * 2,
                ),
                10_000,
            ),
        ] {
            let filter = Filter::range(range);
            let gaps = analysis::gpu_idle_gaps(
                &trace,
                &filter,
                &GapOptions {
                    min_ns,
                    per_stream: false,
                    ..GapOptions::default()
                },
            );
            let mut expected: Vec<(u32, i64, i64)> = Vec::new();
            for (&device, ops) in &devices {
                if let Some((lo, hi)) = window(ops, range) {
                    expected.extend(
                        sweep(&in_range(ops, range), lo, hi)
                            .idle
                            .into_iter()
                            .filter(|(s, e)| e - s >= min_ns)
                            .map(|(s, e)| (device, s, e)),
                    );
                }
            }
            let mut got: Vec<(u32, i64, i64)> = gaps
                .iter()
                .map(|g| (g.device, g.start_ns, g.end_ns))
                .collect();
            assert!(
                gaps.windows(2)
                    .all(|w| w[0].duration_ns() >= w[1].duration_ns()),
                "longest first"
            );
            got.sort_unstable();
            expected.sort_unstable();
            assert_eq!(got, expected, "{name} min {min_ns} range {range:?}");
            // The op before a gap ends where it starts; the op after starts where it ends.
            for g in &gaps {
                let span = |op: analysis::GpuOpRef| {
                    let spans = match op.kind {
                        GpuOpKind::Kernel => &trace.kernels.spans,
                        GpuOpKind::Memcpy => &trace.memcpys.spans,
                        GpuOpKind::Memset => &trace.memsets.spans,
                        GpuOpKind::Graph => &trace.graphs.spans,
                    };
                    (spans.start_ns[op.index], spans.end_ns[op.index])
                };
                let (before, after) = (g.before.expect("op before"), g.after.expect("op after"));
                assert_eq!(g.edge, None, "no selection edges over the active span");
                assert_eq!((span(before).1, span(after).0), (g.start_ns, g.end_ns));
                assert!(range.contains(span(before).0) && range.contains(span(after).0));
                assert!(!before.name(&trace).is_empty() && !after.name(&trace).is_empty());
            }
        }
        // A gap exactly `min` long is listed ("at least min").
        let all = analysis::gpu_idle_gaps(&trace, &Filter::all(), &GapOptions::default());
        if let Some(shortest) = all.last() {
            let options = GapOptions {
                min_ns: shortest.duration_ns(),
                per_stream: false,
                ..GapOptions::default()
            };
            let again = analysis::gpu_idle_gaps(&trace, &Filter::all(), &options);
            assert_eq!(again.last(), Some(shortest), "{name}");
        }
        // Per stream: the same sweep over each (device, stream) alone.
        let gaps = analysis::gpu_idle_gaps(
            &trace,
            &Filter::all(),
            &GapOptions {
                min_ns: 100_000,
                per_stream: true,
                ..GapOptions::default()
            },
        );
        let mut streams: HashMap<(u32, u32), Ops> = HashMap::new();
        for &(d, s, a, b, k) in &rows {
            streams
                .entry((d as u32, s as u32))
                .or_default()
                .push((a, b, k));
        }
        let mut expected: Vec<(u32, u32, i64, i64)> = Vec::new();
        for (&(d, s), ops) in &streams {
            if let Some((lo, hi)) = window(ops, TimeRange::ALL) {
                expected.extend(
                    sweep(ops, lo, hi)
                        .idle
                        .into_iter()
                        .filter(|(a, b)| b - a >= 100_000)
                        .map(|(a, b)| (d, s, a, b)),
                );
            }
        }
        let mut got: Vec<(u32, u32, i64, i64)> = gaps
            .iter()
            .map(|g| {
                let key = g.stream.expect("per-stream gap has a stream");
                (g.device, key.stream, g.start_ns, g.end_ns)
            })
            .collect();
        got.sort_unstable();
        expected.sort_unstable();
        assert_eq!(got, expected, "{name} per stream");
    }
}

/// `[start, end)` of NVTX ranges with this exact text, from SQL.
fn nvtx_windows(conn: &Connection, text: &str) -> Vec<(i64, i64, i64)> {
    let mut st = conn
        .prepare(
            "SELECT start, end, (globalTid >> 24) & 16777215 FROM NVTX_EVENTS \
             WHERE coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) = ?1 \
             AND eventType IN (59, 60, 70, 71)",
        )
        .expect("prepare");
    st.query_map([text], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

/// (GPU start, GPU end, pid, CPU start of the launching runtime call) of every op of `table`,
/// joined in SQL on the same correlationId in the same process.
fn launches(conn: &Connection, table: &str) -> Vec<(i64, i64, i64, i64)> {
    let sql = format!(
        "SELECT g.start, g.end, (g.globalPid >> 24) & 16777215, r.start FROM {table} g \
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = g.correlationId \
         AND ((r.globalTid >> 24) & 16777215) = ((g.globalPid >> 24) & 16777215)"
    );
    let mut st = conn.prepare(&sql).expect("prepare");
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect()
}

fn inside(windows: &[(i64, i64, i64)], pid: i64, t: i64) -> bool {
    windows.iter().any(|&(s, e, p)| p == pid && t >= s && t < e)
}

/// Sorted (start, end) of the kept events of one table.
fn kept(starts: &[i64], ends: &[i64], excluded: &[bool]) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = (0..starts.len())
        .filter(|&i| !excluded[i])
        .map(|i| (starts[i], ends[i]))
        .collect();
    v.sort_unstable();
    v
}

fn check_exclusion_against_sql(
    name: &str,
    trace: &Trace,
    conn: &Connection,
    rules: &[ExclusionRule],
    windows: &[(i64, i64, i64)],
) -> usize {
    let ex = analysis::exclude_warmup(trace, rules, AttributionScope::Process);
    assert_eq!(ex.ranges.len(), windows.len(), "{name}: chosen ranges");
    // GPU ops: kept when the launching call started outside every chosen range of its process.
    let mut excluded_kernels = 0;
    for (table, spans, flags) in [
        (
            "CUPTI_ACTIVITY_KIND_KERNEL",
            &trace.kernels.spans,
            &ex.excluded.kernels,
        ),
        (
            "CUPTI_ACTIVITY_KIND_MEMCPY",
            &trace.memcpys.spans,
            &ex.excluded.memcpys,
        ),
    ] {
        let rows = launches(conn, table);
        assert_eq!(
            rows.len(),
            spans.len(),
            "{name} {table}: every op has its launch"
        );
        let mut expected: Vec<(i64, i64)> = rows
            .iter()
            .filter(|&&(_, _, pid, cpu)| !inside(windows, pid, cpu))
            .map(|&(s, e, _, _)| (s, e))
            .collect();
        expected.sort_unstable();
        let got = kept(&spans.start_ns, &spans.end_ns, flags);
        assert_eq!(got, expected, "{name} {table}");
        if table.ends_with("KERNEL") {
            excluded_kernels = rows.len() - expected.len();
        }
    }
    // CPU-side events: by their own start.
    let mut st = conn
        .prepare("SELECT start, end, (globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME")
        .expect("prepare");
    let mut expected: Vec<(i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .map(|r| r.expect("row"))
        .filter(|&(s, _, pid)| !inside(windows, pid, s))
        .map(|(s, e, _)| (s, e))
        .collect();
    expected.sort_unstable();
    let api = &trace.api_calls.spans;
    assert_eq!(
        kept(&api.start_ns, &api.end_ns, &ex.excluded.api_calls),
        expected,
        "{name} API"
    );
    // Shading: the chosen ranges, merged per process.
    let mut shade: Vec<(u32, i64, i64)> =
        windows.iter().map(|&(s, e, p)| (p as u32, s, e)).collect();
    shade.sort_unstable();
    let got: Vec<(u32, i64, i64)> = ex
        .intervals
        .iter()
        .map(|i| (i.pid, i.start_ns, i.end_ns))
        .collect();
    assert_eq!(got, shade, "{name} shading");
    excluded_kernels
}

#[test]
fn warmup_exclusion_drops_kernels_launched_inside_the_warmup_range() {
    let (trace, conn) = open("transformer");
    let warmup = nvtx_windows(&conn, "warmup");
    assert_eq!(warmup.len(), 1);
    let n = check_exclusion_against_sql(
        "transformer",
        &trace,
        &conn,
        &[ExclusionRule::WarmupNames],
        &warmup,
    );
    assert!(
        n > 0 && n < trace.kernels.spans.len(),
        "excluded {n} kernels"
    );
    // The kernel report under the exclusion counts exactly the kept kernels.
    let ex = analysis::exclude_warmup(
        &trace,
        &[ExclusionRule::WarmupNames],
        AttributionScope::Process,
    );
    let table = analysis::compute(
        &trace,
        analysis::Report::Kernels,
        &ex.filter(TimeRange::ALL),
    );
    let instances: u64 = table.rows.iter().map(|r| r.stats.count).sum();
    assert_eq!(instances as usize, trace.kernels.spans.len() - n);
    // A regex naming the same range chooses the same events.
    let by_regex = analysis::exclude_warmup(
        &trace,
        &[ExclusionRule::name_regex("^warm").expect("regex")],
        AttributionScope::Process,
    );
    assert_eq!(by_regex.excluded.kernels, ex.excluded.kernels);
}

#[test]
fn skipping_the_first_iterations_drops_what_they_launched() {
    let (trace, conn) = open("transformer");
    let mut windows = nvtx_windows(&conn, "step_0");
    windows.extend(nvtx_windows(&conn, "step_1"));
    assert_eq!(windows.len(), 2);
    let rule = ExclusionRule::first_iterations("step_.*", 2).expect("regex");
    check_exclusion_against_sql("transformer step_0..1", &trace, &conn, &[rule], &windows);
    // Combined with warm-up: the union of both.
    windows.extend(nvtx_windows(&conn, "warmup"));
    let rules = [
        ExclusionRule::WarmupNames,
        ExclusionRule::first_iterations("step_.*", 2).expect("regex"),
    ];
    check_exclusion_against_sql("transformer warmup+2", &trace, &conn, &rules, &windows);
}

#[test]
fn thread_scope_only_reaches_the_ranges_own_thread() {
    // transformer pushes its ranges on the thread that launches, so both scopes agree; moe's
    // ranges are all on one thread too. Marks are never chosen.
    for name in ["transformer", "moe"] {
        let (trace, _) = open(name);
        let rules =
            [ExclusionRule::name_regex("warmup|Expert_Forward|iteration_done").expect("regex")];
        let p = analysis::exclude_warmup(&trace, &rules, AttributionScope::Process);
        let t = analysis::exclude_warmup(&trace, &rules, AttributionScope::Thread);
        assert_eq!(p.excluded.kernels, t.excluded.kernels, "{name}");
        for &i in &p.ranges {
            assert_ne!(trace.nvtx.style[i], sightline::trace::NvtxStyle::Mark);
        }
    }
}

#[test]
fn warmup_exclusion_cuts_its_time_out_of_gaps_and_busy_time() {
    // Brute force from SQL: an op is excluded when its launching call started in `warmup`. Sweep
    // all ops; a hole is excluded when an excluded op ends at its start or starts at its end;
    // busy = kept op running and no excluded op running.
    let (trace, conn) = open("transformer");
    let warmup = nvtx_windows(&conn, "warmup");
    let mut ops: Vec<(i64, i64, bool, bool)> = Vec::new(); // (start, end, is_kernel, excluded)
    for (table, is_kernel) in [
        ("CUPTI_ACTIVITY_KIND_KERNEL", true),
        ("CUPTI_ACTIVITY_KIND_MEMCPY", false),
    ] {
        for (s, e, pid, cpu) in launches(&conn, table) {
            ops.push((s, e, is_kernel, inside(&warmup, pid, cpu)));
        }
    }
    let lo = ops.iter().map(|o| o.0).min().expect("ops");
    let hi = ops.iter().map(|o| o.1).max().expect("ops");
    let mut events: Vec<(i64, i32, i32)> = Vec::new(); // (t, d kept, d excluded)
    for &(s, e, _, x) in &ops {
        let (dk, dx) = if x { (0, 1) } else { (1, 0) };
        events.push((s, dk, dx));
        events.push((e, -dk, -dx));
    }
    events.sort_unstable();
    let (mut nk, mut nx, mut prev) = (0, 0, lo);
    let (mut busy, mut excluded_busy) = (0i64, 0i64);
    let mut holes: Vec<(i64, i64)> = Vec::new();
    for (t, dk, dx) in events {
        if t > prev {
            if nk == 0 && nx == 0 {
                holes.push((prev, t));
            } else if nx > 0 {
                excluded_busy += t - prev;
            } else {
                busy += t - prev;
            }
        }
        nk += dk;
        nx += dx;
        prev = t;
    }
    let borders_excluded = |(a, b): (i64, i64)| ops.iter().any(|o| o.3 && (o.1 == a || o.0 == b));
    let (excluded_holes, kept_holes): (Vec<_>, Vec<_>) =
        holes.into_iter().partition(|&h| borders_excluded(h));
    let excluded_hole_ns: i64 = excluded_holes.iter().map(|h| h.1 - h.0).sum();
    let measured = hi - lo - excluded_busy - excluded_hole_ns;

    let ex = analysis::exclude_warmup(
        &trace,
        &[ExclusionRule::WarmupNames],
        AttributionScope::Process,
    );
    let filter = ex.filter(TimeRange::ALL);
    let activity = analysis::gpu_activity(&trace, &filter);
    assert_eq!(activity.len(), 1);
    let a = activity[0];
    assert_eq!(a.window, Some((lo, hi)));
    assert_eq!((a.measured_ns, a.busy_ns), (measured, busy));
    assert_eq!(a.idle_ns, kept_holes.iter().map(|h| h.1 - h.0).sum::<i64>());
    let mut got: Vec<(i64, i64)> = analysis::gpu_idle_gaps(
        &trace,
        &filter,
        &GapOptions {
            min_ns: 0,
            per_stream: false,
            ..GapOptions::default()
        },
    )
    .iter()
    .map(|g| (g.start_ns, g.end_ns))
    .collect();
    got.sort_unstable();
    assert_eq!(got, kept_holes);
    assert!(!excluded_holes.is_empty() && measured < hi - lo);
    // The overlap report measures the same time.
    let o = analysis::copy_compute_overlap(&trace, &filter)[0];
    assert_eq!((o.measured_ns, o.busy_ns), (measured, busy));
}
