//! NVTX start/end ranges that end on another thread than the one that started them
//! (`endGlobalTid` set), against Nsight Systems 2023.4.4 itself.
//!
//! No shared trace has such a row, so `fixtures/golden_endtid/make.sql` makes them: it keeps
//! 453–457 ms of a copy of `stress.sqlite` and adds start/end ranges begun on the loader thread
//! and ended on the main thread and the other way round, around kernels and copies launched from
//! either thread, one whose `endGlobalTid` is its own thread, an ordinary one beside them, a
//! cross-thread range ending after every other NVTX timestamp and an unclosed range. The CSVs
//! beside it are what `nsys stats --report NAME --format csv` of 2023.4.4 printed for that file
//! (`capture.sh`).
//!
//! nsys's rules, which Sightline follows: the GPU projection (`nvtx_gpu_proj_trace`, `_sum`) and
//! `nvtx_kern_sum` use only ranges with `endGlobalTid IS NULL` (so a range whose `endGlobalTid`
//! is its own thread is left out too), while their timestamp extent (`NVTX_EVENTS_MINMAXTS`),
//! which ends an unclosed range, still counts every range; `nvtx_sum` and `nvtx_startend_sum`
//! count every range.
//!
//! `outside_thread.sql`, applied after `make.sql`, leaves work launched outside every range on
//! two threads: the loader's copies (its last one inside a range ended on the main thread) and
//! the main thread's last kernels, which end last. nsys prints, on that row, the thread that
//! launched the operation ending last (here the main thread), not the thread of the last copy
//! in table order (the loader), as an nsys 2025.3.1 export of PyTorch training showed. Its CSVs
//! are in `outside_thread/`; where Nsight Systems 2023.4.4 is installed
//! (`../shared/tools/install-nsys.sh`), the test also runs it on the edited file itself.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use sightline::analysis::{Filter, NsysFormat, ReportInput, reports};
use sightline::export::nsys_csv;
use sightline::load;
use sightline::trace::Trace;

const REPORTS: [&str; 7] = [
    "nvtx_sum",
    "nvtx_pushpop_sum",
    "nvtx_startend_sum",
    "nvtx_pushpop_trace",
    "nvtx_kern_sum",
    "nvtx_gpu_proj_sum",
    "nvtx_gpu_proj_trace",
];

/// What `sightline summary --report NAME --format csv --nsys-format 2023.4` prints.
fn csv(trace: &Trace, name: &str) -> String {
    let (report, options) = reports::parse_spec(name).expect("known report");
    let table = report.compute(&ReportInput {
        trace,
        filter: &Filter::all(),
        options: &options,
        with_events: false,
        row_limit: None,
        nsys_format: NsysFormat::V2023_4,
        sink: None,
    });
    if table.is_empty() {
        return String::new();
    }
    let mut buf = Vec::new();
    nsys_csv::write_table_csv(&table, &mut buf).expect("write csv");
    String::from_utf8(buf).expect("utf-8").replace("\r\n", "\n")
}

/// A copy of stress.sqlite in `dir` edited by `golden_endtid/make.sql`, then by the `more`
/// scripts of that folder.
fn edited_stress(dir: &Path, more: &[&str]) -> PathBuf {
    let path = dir.join("endtid.sqlite");
    std::fs::copy(common::fixture("stress"), &path).expect("copy fixture");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&path, perms).expect("make writable");
    let conn = rusqlite::Connection::open(&path).expect("open copy");
    for script in std::iter::once("make.sql").chain(more.iter().copied()) {
        let edits = std::fs::read_to_string(common::fixtures().join("golden_endtid").join(script))
            .expect("read the edit script");
        conn.execute_batch(&edits).expect("apply the edit script");
    }
    path
}

/// stress.sqlite edited by `make.sql`, loaded.
fn end_thread_trace() -> Trace {
    let dir = common::scratch_dir("nvtx-end-thread");
    let path = edited_stress(&dir, &[]);
    let conn = common::open_ro(&path);
    let crossing: i64 = conn
        .query_row(
            "SELECT count(*) FROM NVTX_EVENTS \
             WHERE endGlobalTid IS NOT NULL AND endGlobalTid != globalTid",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(crossing, 3, "ranges ended on another thread");
    drop(conn);
    let trace = load::load_file(&path).expect("load edited export");
    let _ = std::fs::remove_dir_all(&dir);
    trace
}

/// Where `ours` first differs from `expected`, if it does.
fn first_difference(expected: &str, ours: &str) -> Option<String> {
    let expected = expected.replace("\r\n", "\n");
    if ours.trim_end() == expected.trim_end() {
        return None;
    }
    Some(
        expected
            .lines()
            .zip(ours.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || "line counts differ".to_string(),
                |l| format!("line {}", l + 1),
            ),
    )
}

/// Each of [`REPORTS`] that differs from the CSV of the same name in `golden_endtid/{folder}`.
fn differing_reports(trace: &Trace, folder: &str) -> Vec<String> {
    let dir = common::fixtures().join("golden_endtid").join(folder);
    REPORTS
        .iter()
        .filter_map(|name| {
            let expected = std::fs::read_to_string(dir.join(format!("{name}.csv")))
                .expect("read expected csv");
            first_difference(&expected, &csv(trace, name)).map(|at| format!("{name}: {at}"))
        })
        .collect()
}

#[test]
fn ranges_ended_on_another_thread_match_nsys() {
    let trace = end_thread_trace();
    let failures = differing_reports(&trace, "");
    assert!(failures.is_empty(), "differ from nsys: {failures:?}");
    // The oracle itself shows the rules: no projection row for a range with an endGlobalTid,
    // every range in nvtx_startend_sum, and the unclosed range ending at the cross-thread
    // range's end (457.5 ms), the largest NVTX timestamp.
    let dir = common::fixtures().join("golden_endtid");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("read");
    let projection = read("nvtx_gpu_proj_trace.csv");
    for crossing in [
        "handoff_loader_to_main",
        "handoff_main_to_loader",
        "end_tid_same_thread",
        "late_handoff",
    ] {
        assert!(!projection.contains(crossing), "{crossing} projected");
    }
    assert!(projection.contains("\nsame_thread,"));
    assert!(projection.contains("\nunclosed,456710058,298500,456700000,800000,"));
    let startend = read("nvtx_startend_sum.csv");
    assert_eq!(
        startend.lines().count(),
        7,
        "a header and the six start/end ranges"
    );
}

/// Nsight Systems 2023.4.4's `nsys` (`$NSYS`, else where `../shared/tools/install-nsys.sh`
/// unpacks it), when it is there.
fn nsys_2023() -> Option<PathBuf> {
    let path = std::env::var_os("NSYS").map_or_else(
        || {
            PathBuf::from(
                "/opt/nsys2023/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys",
            )
        },
        PathBuf::from,
    );
    path.is_file().then_some(path)
}

/// What `nsys stats --report NAME --format csv` prints for `export`, as `capture.sh` keeps it.
fn nsys_stats_csv(nsys: &Path, export: &Path, name: &str) -> String {
    let out = Command::new(nsys)
        .args([
            "stats",
            "--report",
            name,
            "--format",
            "csv",
            "--force-export=false",
        ])
        .arg(export)
        .output()
        .expect("run nsys stats");
    assert!(
        out.status.success(),
        "nsys stats {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .replace('\r', "")
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("Processing ["))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The PID and TID of the projection's row with no range (work launched outside every range).
fn outside_row_thread(projection_csv: &str) -> (String, String) {
    let mut rows = csv::Reader::from_reader(projection_csv.as_bytes());
    let row = rows
        .records()
        .map(|r| r.expect("csv row"))
        .find(|r| r[0].is_empty())
        .expect("a row with no range");
    (row[6].to_string(), row[7].to_string())
}

#[test]
fn work_launched_outside_ranges_on_two_threads_names_the_thread_nsys_names() {
    let dir = common::scratch_dir("nvtx-outside-thread");
    let path = edited_stress(&dir, &["outside_thread.sql"]);
    // The edit makes the case: the GPU operation ending last was launched by the main thread
    // (tid 932), the last memcpy row by the loader thread (tid 943), and the range around that
    // copy ends on another thread than it started on.
    let conn = common::open_ro(&path);
    let launcher = |sql: &str| -> i64 {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .expect("query the edited export")
            & 0xFF_FFFF
    };
    let last_to_end = launcher(
        "SELECT r.globalTid FROM (SELECT end, correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL \
         UNION ALL SELECT end, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY) AS op \
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r USING (correlationId) ORDER BY op.end DESC LIMIT 1",
    );
    let last_copy = launcher(
        "SELECT r.globalTid FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m \
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r USING (correlationId) \
         ORDER BY m.rowid DESC LIMIT 1",
    );
    assert_eq!((last_to_end, last_copy), (932, 943));
    let handoff: (i64, i64) = conn
        .query_row(
            "SELECT globalTid & 0xFFFFFF, endGlobalTid & 0xFFFFFF FROM NVTX_EVENTS \
             WHERE text = 'handoff_last_copy'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the cross-thread range");
    assert_eq!(handoff, (943, 932));
    drop(conn);

    let trace = load::load_file(&path).expect("load edited export");
    let failures = differing_reports(&trace, "outside_thread");
    assert!(failures.is_empty(), "differ from nsys: {failures:?}");
    let captured = std::fs::read_to_string(
        common::fixtures().join("golden_endtid/outside_thread/nvtx_gpu_proj_trace.csv"),
    )
    .expect("read captured csv");
    let ours = csv(&trace, "nvtx_gpu_proj_trace");
    assert_eq!(outside_row_thread(&captured), ("932".into(), "932".into()));
    assert_eq!(outside_row_thread(&ours), ("932".into(), "932".into()));

    // NVIDIA's own report scripts on this very file, where they are installed.
    match nsys_2023() {
        None => eprintln!(
            "SKIPPED (live oracle): Nsight Systems 2023.4.4 is not installed (run \
             ../shared/tools/install-nsys.sh, or set NSYS); compared with the CSVs it printed \
             before (golden_endtid/outside_thread/)"
        ),
        Some(nsys) => {
            let mut failures = Vec::new();
            for name in REPORTS {
                let theirs = nsys_stats_csv(&nsys, &path, name);
                if let Some(at) = first_difference(&theirs, &csv(&trace, name)) {
                    failures.push(format!("{name}: {at}"));
                }
            }
            assert!(
                failures.is_empty(),
                "differ from nsys 2023.4.4: {failures:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
