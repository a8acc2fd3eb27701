//! The join of Nsight Compute reports to nsys timelines of the same program
//! (`../shared/traces/ncu/`): `sightline summary TRACE --ncu REPORT --report ncu_join` matches
//! every profiled kernel, checked against an independent reading of the export written here (the
//! k-th ncu workload of a name is the k-th kernel of that name on its context and stream, by
//! correlation id, read straight from SQLite).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test
mod common;

use common::load_ncu as load_report;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use sightline::analysis::ncu::{self, MatchOutcome, facts};
use sightline::trace::ncu::NcuReport;

/// What the export says of the k-th launch of each workload's name on its context and stream:
/// (correlation id, start, duration, device, stream), read with SQL alone.
fn expected_rows(sqlite: &Path, report: &NcuReport) -> Vec<(u32, i64, i64, u32, u32)> {
    let db =
        rusqlite::Connection::open_with_flags(sqlite, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut query = db
        .prepare(
            "SELECT k.correlationId, k.start, k.end - k.start, k.deviceId, k.streamId \
             FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName \
             WHERE s.value = ?1 AND k.contextId = ?2 AND k.streamId = ?3 \
             ORDER BY k.correlationId LIMIT 1 OFFSET ?4",
        )
        .unwrap();
    let mut seen: HashMap<(String, u32, u32), i64> = HashMap::new();
    report
        .workloads
        .iter()
        .map(|w| {
            // ncu leaves the demangled name empty for a C name (cuBLAS's `sm80_xmma_…`).
            let name = w.display_name();
            let key = (name.to_string(), w.context, w.stream);
            let nth = seen.entry(key).or_insert(0);
            let row = query
                .query_row(rusqlite::params![name, w.context, w.stream, *nth], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .unwrap_or_else(|e| panic!("workload {} ({name}): {e}", w.id));
            *nth += 1;
            row
        })
        .collect()
}

fn ncu_join_csv(trace: &Path, report: &Path) -> Vec<csv::StringRecord> {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("summary")
        .arg(trace)
        .arg("--ncu")
        .arg(report)
        .args(["--report", "ncu_join", "--format", "csv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stderr).trim());
    let mut reader = csv::Reader::from_reader(&out.stdout[..]);
    let header = reader.headers().unwrap().clone();
    assert_eq!(
        header.iter().collect::<Vec<_>>(),
        [
            "ID",
            "Kernel Name",
            "Matched",
            "Correlation ID",
            "Start (ns)",
            "Duration (ns)",
            "Device",
            "Stream"
        ]
    );
    reader.records().map(|r| r.unwrap()).collect()
}

fn check_pair(sqlite: &str, report_name: &str, workloads: usize) {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let sqlite = dir.join(sqlite);
    let report_path = dir.join(format!("{report_name}.ncu-rep.gz"));
    let report = load_report(&report_path);
    assert_eq!(report.workloads.len(), workloads);
    let expected = expected_rows(&sqlite, &report);
    let rows = ncu_join_csv(&sqlite, &report_path);
    assert_eq!(rows.len(), workloads);
    for ((row, w), (corr, start, dur, device, stream)) in
        rows.iter().zip(&report.workloads).zip(expected)
    {
        assert_eq!(row[0], w.id.to_string());
        assert_eq!(row[1], *w.display_name());
        assert_eq!(&row[2], "yes", "workload {} unmatched", w.id);
        let got = [&row[3], &row[4], &row[5], &row[6], &row[7]];
        let want = [
            corr.to_string(),
            start.to_string(),
            dur.to_string(),
            device.to_string(),
            stream.to_string(),
        ];
        assert_eq!(
            got,
            want.each_ref(),
            "workload {} ({})",
            w.id,
            w.demangled_name
        );
    }
    eprintln!("{report_name}: {workloads} of {workloads} workloads joined as SQL reads them");
}

#[test]
fn moe_full_joins_every_kernel_to_nsys_moe() {
    check_pair("nsys_moe.sqlite", "ncu_moe_full", 113);
}

#[test]
fn train_gemm_joins_every_regex_profiled_kernel_to_nsys_train() {
    check_pair("nsys_train.sqlite", "ncu_train_gemm", 48);
}

#[test]
fn nvtx_is_checked_and_facts_come_from_matched_kernels() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let trace = sightline::load::load_file(&dir.join("nsys_train.sqlite")).unwrap();
    let report = load_report(&dir.join("ncu_train_gemm.ncu-rep.gz"));
    let join = ncu::join(&trace, &report);
    // `ncu --nvtx` recorded the stacks and nsys traced NVTX: every match was checked.
    assert!(
        join.matches
            .iter()
            .all(|m| m.outcome == MatchOutcome::Matched { nvtx_checked: true }),
        "{:?}",
        join.matches.iter().find(|m| !m.outcome.is_matched())
    );
    assert_eq!(join.matched_count(), 48);
    // Kernel → workload and back agree.
    for (kernel, workload) in join.pairs() {
        assert_eq!(join.workload_of_kernel(kernel), Some(workload));
    }
    // Workload 0: ncu's raw page says gpu__time_duration.sum and SM throughput.
    let w0 = &report.workloads[0];
    let f = facts::workload_facts(&report, w0);
    assert!(f.duration_ns.is_some_and(|d| d > 1000.0), "{f:?}");
    assert!(f.compute_pct.is_some_and(|p| p > 0.0 && p <= 100.0));
    assert!(f.memory_pct.is_some() && f.dram_pct.is_some() && f.occupancy_pct.is_some());
    assert!(f.registers_per_thread.is_some_and(|r| r >= 1.0));
    let dram = facts::weighted_dram(&trace, &report, &join).unwrap();
    assert_eq!(dram.kernels, 48);
    assert!(
        dram.pct_of_peak > 0.0 && dram.pct_of_peak < 100.0,
        "{dram:?}"
    );
    let worth = facts::worth_optimising(&trace, &report, &join);
    assert!(!worth.is_empty());
    assert!(worth.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(
        worth
            .iter()
            .all(|r| (0.0..=100.0).contains(&r.headroom_pct))
    );
    eprintln!(
        "DRAM {:.2} % of peak over {} kernels; first worth optimising: {} ({:.1} % of kernel time, {:.1} % headroom)",
        dram.pct_of_peak,
        dram.kernels,
        trace.str(worth[0].name),
        worth[0].time_share * 100.0,
        worth[0].headroom_pct
    );
}

#[test]
fn a_report_of_another_program_matches_nothing_wrongly() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    // The training run's gemms are not the MoE run's: whatever pairs must pass the shape check.
    let trace = sightline::load::load_file(&dir.join("nsys_moe.sqlite")).unwrap();
    let report = load_report(&dir.join("ncu_train_gemm.ncu-rep.gz"));
    let join = ncu::join(&trace, &report);
    for (kernel, workload) in join.pairs() {
        let w = &report.workloads[workload];
        let grid = trace.kernels.grid[kernel].map(u64::from);
        assert_eq!(grid, w.grid);
    }
    eprintln!(
        "ncu_train_gemm on nsys_moe: {} of {} matched",
        join.matched_count(),
        report.workloads.len()
    );
}

#[test]
fn the_html_report_measures_dram_from_the_joined_kernels() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let trace_path = dir.join("nsys_moe.sqlite");
    let report_path = dir.join("ncu_moe_full.ncu-rep.gz");
    let out = std::env::temp_dir().join(format!("sightline_ncu_dram_{}.html", std::process::id()));
    let status = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("report")
        .arg(&trace_path)
        .arg("--ncu")
        .arg(&report_path)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let page = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    // The weighted mean computed here from the report and the export (one GPU).
    let trace = sightline::load::load_file(&trace_path).unwrap();
    let report = load_report(&report_path);
    let join = ncu::join(&trace, &report);
    let (mut weighted, mut weight) = (0.0, 0i64);
    for (kernel, workload) in join.pairs() {
        let d = trace.kernels.spans.duration_ns(kernel);
        weighted += facts::dram_pct(&report, &report.workloads[workload]).unwrap() * d as f64;
        weight += d;
    }
    let expected = format!("{:.1} %", weighted / weight as f64);
    let row = page
        .split("Memory bandwidth (DRAM)</a></td>")
        .nth(1)
        .expect("the DRAM row")
        .split("</tr>")
        .next()
        .unwrap();
    assert!(row.contains(&expected), "{expected} not in {row}");
    assert!(!row.contains("not measurable"), "{row}");
    eprintln!("DRAM row: {expected} (113 matched kernels)");
    profiled_kernel_charts(&page, &trace, &report, &join);
}

/// The page's *Profiled kernels* section: the three matched kernels with the longest time on
/// the timeline, each with its hierarchical roofline (a point per level) and its line charts
/// (each line's points, the kernel's configuration marked), every picture well-formed SVG.
fn profiled_kernel_charts(
    page: &str,
    trace: &sightline::trace::Trace,
    report: &NcuReport,
    join: &ncu::NcuJoin,
) {
    use sightline::analysis::ncu::hierarchical::of_workload;
    use sightline::analysis::ncu::line_chart::line_chart;
    let section = page
        .split("<h2 id=\"ncu\">Profiled kernels (Nsight Compute)</h2>")
        .nth(1)
        .expect("the Profiled kernels section")
        .split("<h2")
        .next()
        .unwrap();
    let mut by_time: Vec<(i64, usize)> = join
        .pairs()
        .map(|(k, w)| (trace.kernels.spans.duration_ns(k), w))
        .collect();
    by_time.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let blocks: Vec<&str> = section.split("<h3>").skip(1).collect();
    assert_eq!(blocks.len(), 3, "three kernels");
    let (mut charts, mut points) = (0, 0);
    for (block, &(_, w)) in blocks.iter().zip(&by_time) {
        let workload = &report.workloads[w];
        assert!(
            block.starts_with(&format!("ID {} · ", workload.id)),
            "{block:.80}"
        );
        let svgs: Vec<&str> = block
            .split("<svg")
            .skip(1)
            .map(|s| s.split("</svg>").next().unwrap())
            .collect();
        for svg in &svgs {
            let text = format!("<svg{svg}</svg>");
            let mut reader = quick_xml::Reader::from_str(&text);
            loop {
                match reader.read_event() {
                    Ok(quick_xml::events::Event::Eof) => break,
                    Ok(_) => {}
                    Err(e) => panic!("not well-formed SVG: {e}"),
                }
            }
        }
        let rooflines = of_workload(report, workload);
        let single = rooflines
            .iter()
            .find(|r| r.title.ends_with("(Single Precision)"))
            .expect("a single-precision roofline");
        let drawable = single.points.iter().filter(|p| p.is_drawable()).count();
        assert_eq!(svgs[0].matches("<circle class=\"point\"").count(), drawable);
        assert!(svgs[0].contains(&single.title));
        let lines: Vec<_> = report
            .sections_in_order(workload)
            .iter()
            .flat_map(|s| s.bodies.iter().flat_map(|b| &b.items))
            .filter_map(|item| line_chart(report, workload, item))
            .collect();
        assert_eq!(
            svgs.len(),
            1 + lines.len(),
            "a roofline and the line charts"
        );
        for (chart, svg) in lines.iter().zip(&svgs[1..]) {
            assert!(svg.contains(&chart.label), "{}", chart.label);
            let polylines: Vec<&str> = svg.split("<polyline class=\"line\"").skip(1).collect();
            assert_eq!(polylines.len(), chart.lines.len(), "{}", chart.label);
            for (line, poly) in chart.lines.iter().zip(&polylines) {
                let listed = poly
                    .split("points=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                assert_eq!(
                    listed.split(' ').count(),
                    line.points.len(),
                    "{}",
                    line.label
                );
                points += line.points.len();
            }
            for (label, _) in &chart.marks {
                assert!(svg.contains(&format!("This kernel — {label}")), "{label}");
            }
            charts += 1;
        }
        let block_size = report.number(workload, "launch__block_size").unwrap();
        assert!(block.contains(&format!("This kernel — Block Size: {block_size}")));
    }
    eprintln!("Profiled kernels: 3 kernels, 3 rooflines, {charts} line charts, {points} points");
}
