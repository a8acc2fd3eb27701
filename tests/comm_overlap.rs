//! `sightline summary --report comm_overlap` (communication/compute overlap per GPU) run as a
//! user runs it, on real two-GPU traces: `p2p_2gpu` (peer-to-peer copies between two GPUs) and,
//! when `../shared/traces` is present, `GindaChen_nsys-ai__h100_2gpu_1s` (two H100s). The expected
//! numbers are computed here, apart from Sightline: kernel and memcpy rows read with rusqlite,
//! classified with the regex, and the union / intersection found by an event sweep.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::RegexBuilder;
use rusqlite::Connection;
use sightline::analysis::rounding::sqlite_round;

const HEADER: &str =
    "Device,Comm Time (ns),Compute Time (ns),Overlap Time (ns),Exposed Comm (ns),Comm Hidden (%)";

fn sightline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

fn comm_csv(trace: &Path, extra: &[&str]) -> Output {
    let t = trace.to_string_lossy();
    let mut args = vec!["summary", &t, "--report", "comm_overlap", "--format", "csv"];
    args.extend_from_slice(extra);
    sightline(&args)
}

/// One GPU operation as the export stores it.
struct Op {
    device: i64,
    start: i64,
    end: i64,
    /// Communication (`Some(true)`), compute (`Some(false)`), neither (`None`).
    comm: Option<bool>,
}

/// Every kernel and memcpy of the export, classified: kernels by their demangled name against
/// `pattern` (any case), memcpys of copyKind 10 (peer-to-peer) as communication.
fn ops(trace: &Path, pattern: &str) -> Vec<Op> {
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .expect("test regex");
    let db = Connection::open_with_flags(trace, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open trace");
    let mut out = Vec::new();
    let mut kernels = db
        .prepare(
            "SELECT k.deviceId, k.start, k.end, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .expect("kernel query");
    let rows = kernels
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .expect("kernels");
    for row in rows {
        let (device, start, end, name) = row.expect("kernel row");
        out.push(Op {
            device,
            start,
            end,
            comm: Some(regex.is_match(&name)),
        });
    }
    let mut copies = db
        .prepare("SELECT deviceId, start, end, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY")
        .expect("memcpy query");
    let rows = copies
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .expect("memcpys");
    for row in rows {
        let (device, start, end, kind) = row.expect("memcpy row");
        out.push(Op {
            device,
            start,
            end,
            comm: (kind == 10).then_some(true),
        });
    }
    out
}

/// (comm, compute, overlap) in ns of one device's ops, by a sweep over start/end points that
/// counts how many comm and compute ops are running between consecutive points.
fn sweep(ops: &[&Op]) -> (i64, i64, i64) {
    let mut points: Vec<(i64, i32, i32)> = Vec::new(); // (time, Δcomm, Δcompute)
    for op in ops {
        let (dc, dk) = match op.comm {
            Some(true) => (1, 0),
            Some(false) => (0, 1),
            None => continue,
        };
        points.push((op.start, dc, dk));
        points.push((op.end, -dc, -dk));
    }
    points.sort_unstable();
    let (mut comm, mut compute, mut both) = (0, 0, 0);
    let (mut n_comm, mut n_compute) = (0, 0);
    for w in 0..points.len() {
        let (t, dc, dk) = points[w];
        n_comm += dc;
        n_compute += dk;
        let Some(&(next, _, _)) = points.get(w + 1) else {
            break;
        };
        let span = next - t;
        if n_comm > 0 {
            comm += span;
        }
        if n_compute > 0 {
            compute += span;
        }
        if n_comm > 0 && n_compute > 0 {
            both += span;
        }
    }
    (comm, compute, both)
}

/// The CSV the report should print for the ops starting in `[lo, hi)`.
fn expected_csv(ops: &[Op], lo: i64, hi: i64) -> String {
    let mut by_device: BTreeMap<i64, Vec<&Op>> = BTreeMap::new();
    for op in ops.iter().filter(|o| o.start >= lo && o.start < hi) {
        by_device.entry(op.device).or_default().push(op);
    }
    let mut csv = String::new();
    for (device, ops) in by_device {
        let (comm, compute, overlap) = sweep(&ops);
        if comm == 0 {
            continue;
        }
        let hidden = sqlite_round(100.0 * overlap as f64 / comm as f64, 1);
        csv += &format!(
            "{device},{comm},{compute},{overlap},{},{hidden:.1}\n",
            comm - overlap
        );
    }
    if csv.is_empty() {
        csv
    } else {
        format!("{HEADER}\n{csv}")
    }
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "sightline failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

fn gindachen() -> Option<PathBuf> {
    let path = common::shared_traces()?.join("GindaChen_nsys-ai__h100_2gpu_1s.sqlite");
    if path.is_file() {
        Some(path)
    } else {
        println!("note: {} absent, skipped", path.display());
        None
    }
}

#[test]
fn peer_to_peer_copies_are_communication_on_both_gpus() {
    let trace = common::fixture("p2p_2gpu");
    let ops = ops(&trace, "nccl");
    let expected = expected_csv(&ops, i64::MIN, i64::MAX);
    assert_eq!(stdout(&comm_csv(&trace, &[])), expected);
    // Both GPUs send: one row each, with communication time.
    assert_eq!(expected.lines().count(), 3, "{expected}");
}

#[test]
fn a_range_keeps_the_ops_that_start_in_it() {
    let trace = common::fixture("p2p_2gpu");
    let ops = ops(&trace, "nccl");
    let (first, last) = (
        ops.iter().map(|o| o.start).min().unwrap(),
        ops.iter().map(|o| o.end).max().unwrap(),
    );
    let (lo, hi) = (first + (last - first) / 4, first + (last - first) * 3 / 4);
    let range = format!("{lo}:{hi}");
    let expected = expected_csv(&ops, lo, hi);
    assert!(!expected.is_empty());
    assert_ne!(expected, expected_csv(&ops, i64::MIN, i64::MAX));
    assert_eq!(stdout(&comm_csv(&trace, &["--range", &range])), expected);
}

#[test]
fn the_comm_regex_changes_what_is_communication() {
    let trace = common::fixture("p2p_2gpu");
    let default = stdout(&comm_csv(&trace, &[]));
    // The fixture's only kernel made communication (any case): no compute is left.
    let flag = stdout(&comm_csv(&trace, &["--comm", "SCALE_ADD|AllReduce"]));
    let expected = expected_csv(&ops(&trace, "SCALE_ADD|AllReduce"), i64::MIN, i64::MAX);
    assert_eq!(flag, expected);
    assert_ne!(flag, default);
    assert!(
        flag.lines()
            .skip(1)
            .all(|l| l.split(',').nth(2) == Some("0")),
        "{flag}"
    );
    // The nsys-style option says the same.
    let t = trace.to_string_lossy();
    let spec = stdout(&sightline(&[
        "summary",
        &t,
        "--report",
        "comm_overlap:comm=scale_add",
        "--format",
        "csv",
    ]));
    assert_eq!(spec, expected);
}

#[test]
fn an_invalid_regex_is_refused_with_a_clear_message() {
    let trace = common::fixture("p2p_2gpu");
    let out = comm_csv(&trace, &["--comm", "nccl("]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'nccl('") && err.contains("not a valid regex"),
        "{err}"
    );

    let t = trace.to_string_lossy();
    let out = sightline(&[
        "summary",
        &t,
        "--report",
        "comm_overlap:comm=[a-",
        "--format",
        "csv",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("comm=[a-") && err.contains("not a valid regex"),
        "{err}"
    );
}

#[test]
fn two_h100s_without_nccl_kernels_and_with_a_chosen_regex() {
    let Some(trace) = gindachen() else {
        return;
    };
    // This 1 s cut holds no NCCL kernel and no peer-to-peer copy: nothing is communication, so
    // nothing is printed (and stderr says why), as for any report without data.
    let ops_default = ops(&trace, "nccl");
    assert!(ops_default.iter().all(|o| o.comm != Some(true)));
    assert_eq!(expected_csv(&ops_default, i64::MIN, i64::MAX), "");
    let out = comm_csv(&trace, &[]);
    assert_eq!(stdout(&out), "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not contain communication"));

    // The GEMMs taken as "communication" on both GPUs: real numbers on real two-GPU data.
    let pattern = "gemm|AllReduce";
    let expected = expected_csv(&ops(&trace, pattern), i64::MIN, i64::MAX);
    assert_eq!(expected.lines().count(), 3, "{expected}");
    assert_eq!(stdout(&comm_csv(&trace, &["--comm", pattern])), expected);
}
