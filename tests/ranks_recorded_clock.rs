//! The clock the traces record (issue 35 item 1; issue 36 item 2): two PyTorch ranks on one
//! epoch clock, each lacking some of the other's collective instances, are put on that clock and
//! their instances matched by their spans; the straggler equals a reading made here from the
//! JSON alone. Eight unrelated traces of one folder are refused as a run, with the reason.
//!
//! The pair is derived from HTA's NCCL trace (`../shared/traces/pytorch/
//! HolisticTraceAnalysis__nccl_data.json.gz`, rank 0 of 2): rank 0 is the trace without some of
//! its NCCL calls, rank 1 the trace without others, whose NCCL kernels start later (it arrives
//! late) and end where rank 0's end (a collective's ranks leave together); no time is shifted.
//! Skipped, saying so, without the shared folder.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sightline::analysis::ranks::collectives::{self, Source};
use sightline::analysis::ranks::matching::Matching;
use sightline::analysis::ranks::{Alignment, Run};

/// Positions (in time order, 0-based) of the HTA trace's 21 NCCL kernels each rank leaves out:
/// rank 0 lacks two early all-reduces, so that by order its n-th all-reduce is rank 1's (n+2)-th.
const DROPPED_BY_RANK0: [usize; 3] = [2, 3, 9];
const DROPPED_BY_RANK1: [usize; 3] = [5, 12, 16];
/// How much later rank 1 starts each NCCL kernel (at most half of the kernel).
const LATE_NS: i64 = 200_000;

fn read_json(path: &Path) -> Value {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Writes `json` gzipped; times held as decimal text (see [`micros_text`]) are written as the
/// numbers they are.
fn write_json(path: &Path, json: &Value) {
    let text = serde_json::to_string(json).unwrap();
    let numbers = regex::Regex::new(r#""(ts|dur)":"([0-9]+\.[0-9]{3})""#).unwrap();
    let text = numbers.replace_all(&text, r#""$1":$2"#);
    let file = std::fs::File::create(path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
}

/// ns as the decimal µs text Kineto writes (three decimals): exact, where an f64 of 4.4e12 µs
/// holds only about half a nanosecond.
fn micros_text(ns: i64) -> Value {
    Value::String(format!("{}.{:03}", ns / 1000, ns % 1000))
}

/// A `ts` / `dur` in ns: decimal text read exactly, a number rounded (the source's numbers have
/// three decimals, well within an f64's precision).
fn ns_of(v: &Value) -> i64 {
    match v {
        Value::String(s) => {
            let (whole, frac) = s.split_once('.').unwrap();
            whole.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
        }
        other => (other.as_f64().unwrap() * 1000.0).round() as i64,
    }
}

fn is_nccl_kernel(e: &Value) -> bool {
    e["cat"] == "kernel"
        && e["name"]
            .as_str()
            .is_some_and(|n| n.to_lowercase().contains("nccl"))
}

fn external_id(e: &Value) -> Option<i64> {
    e["args"]["External id"].as_i64()
}

/// The NCCL kernels' External ids in time order.
fn nccl_ids(json: &Value) -> Vec<i64> {
    let mut kernels: Vec<(i64, i64)> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_nccl_kernel(e))
        .map(|e| (ns_of(&e["ts"]), external_id(e).unwrap()))
        .collect();
    kernels.sort_unstable();
    kernels.into_iter().map(|k| k.1).collect()
}

/// A copy of `json` as rank `rank`, without the calls `dropped` (the kernel and every event
/// sharing its External id), its NCCL kernels starting `late_ns` later (ends kept).
fn derive(json: &Value, rank: i64, dropped: &BTreeSet<i64>, late_ns: i64) -> Value {
    let mut out = json.clone();
    out["distributedInfo"]["rank"] = rank.into();
    let events = out["traceEvents"].as_array_mut().unwrap();
    events.retain(|e| !external_id(e).is_some_and(|id| dropped.contains(&id)));
    // Both ranks' NCCL kernels are written as exact text, read back below as written.
    for e in events.iter_mut().filter(|e| is_nccl_kernel(e)) {
        let (ts, dur) = (ns_of(&e["ts"]), ns_of(&e["dur"]));
        let late = late_ns.min(dur / 2);
        e["ts"] = micros_text(ts + late);
        e["dur"] = micros_text(dur - late);
    }
    out
}

/// Each NCCL call's arrival (kernel start) in ns since the epoch, by External id: the file's
/// `baseTimeNanoseconds` plus its `ts` (µs).
fn arrivals(json: &Value) -> BTreeMap<i64, i64> {
    let base = json["baseTimeNanoseconds"].as_i64().unwrap();
    json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| is_nccl_kernel(e))
        .map(|e| (external_id(e).unwrap(), base + ns_of(&e["ts"])))
        .collect()
}

/// The pair, written to a scratch folder: (rank 0, rank 1) paths and JSON.
fn derived_pair() -> Option<([PathBuf; 2], [Value; 2])> {
    derived_pair_with(false)
}

/// [`derived_pair`], with PyTorch's sequence number (`Seq`, the call's place among the source's
/// NCCL calls) on each call's `record_param_comms` when `seq`.
fn derived_pair_with(seq: bool) -> Option<([PathBuf; 2], [Value; 2])> {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout");
        return None;
    };
    let source = dir.join("pytorch/HolisticTraceAnalysis__nccl_data.json.gz");
    if !source.exists() {
        eprintln!("SKIPPED: {} is missing", source.display());
        return None;
    }
    let mut json = read_json(&source);
    let ids = nccl_ids(&json);
    assert_eq!(ids.len(), 21, "HTA's trace has 21 NCCL kernels");
    if seq {
        for e in json["traceEvents"].as_array_mut().unwrap() {
            let place = external_id(e).and_then(|id| ids.iter().position(|&x| x == id));
            if let (Some(place), true) = (place, e["name"] == "record_param_comms") {
                e["args"]["Seq"] = Value::from(place);
            }
        }
    }
    let pick = |at: &[usize]| at.iter().map(|&i| ids[i]).collect::<BTreeSet<i64>>();
    let rank0 = derive(&json, 0, &pick(&DROPPED_BY_RANK0), 0);
    let rank1 = derive(&json, 1, &pick(&DROPPED_BY_RANK1), LATE_NS);
    let out = common::scratch_dir("recorded-clock");
    let paths = [
        out.join("hta_rank0.pt.trace.json.gz"),
        out.join("hta_rank1.pt.trace.json.gz"),
    ];
    write_json(&paths[0], &rank0);
    write_json(&paths[1], &rank1);
    Some((paths, [rank0, rank1]))
}

/// The straggler read from the two files alone: calls both have (same External id), arrival on
/// the epoch clock; the later arrival is last and the other waited the difference. (rank, late
/// arrivals, wait caused in ns, shared calls).
fn independent_straggler(json: &[Value; 2]) -> (usize, usize, i64, usize) {
    let (a0, a1) = (arrivals(&json[0]), arrivals(&json[1]));
    let shared: Vec<(i64, i64)> = a0
        .iter()
        .filter_map(|(id, &t0)| a1.get(id).map(|&t1| (t0, t1)))
        .collect();
    let mut late = [0usize; 2];
    let mut caused = [0i64; 2];
    for &(t0, t1) in &shared {
        let last = usize::from(t1 > t0);
        late[last] += 1;
        caused[last] += (t1 - t0).abs();
    }
    let r = usize::from(caused[1] > caused[0]);
    (r, late[r], caused[r], shared.len())
}

#[test]
fn ranks_on_their_recorded_clock_are_matched_by_spans() {
    let Some((paths, json)) = derived_pair() else {
        return;
    };
    let (straggler, late, caused_ns, shared) = independent_straggler(&json);
    assert_eq!(shared, 21 - 6, "each rank lacks three calls the other has");
    assert_eq!(
        (straggler, late),
        (1, shared),
        "rank 1 arrives late at each"
    );

    let traces: Vec<_> = paths
        .iter()
        .map(|p| sightline::load::load_file(p).unwrap())
        .collect();
    let refs: Vec<_> = traces.iter().collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let run = Run::new(&refs, &pattern);
    assert_eq!(run.alignment, Alignment::Utc);
    let c = &run.collectives;
    assert!(
        c.per_rank
            .iter()
            .all(|r| r.source == Some(Source::NcclKernels))
    );
    assert_eq!(c.matching, Matching::Spans);
    assert_eq!(c.instances.len(), shared);
    assert_eq!(c.unmatched, vec![3, 3], "the calls on one rank only");
    // Every instance is one call: its two kernels were one kernel of the source trace.
    for inst in &c.instances {
        let k: Vec<usize> = (0..2)
            .map(|r| c.per_rank[r].list[inst.members[r].unwrap()].index)
            .collect();
        let ids: Vec<u64> = (0..2)
            .map(|r| traces[r].kernels.external_id[k[r]])
            .collect();
        assert_eq!(ids[0], ids[1], "{} #{}", inst.name, inst.ordinal);
    }
    assert_eq!(c.straggler(2), Some((straggler, late)));
    assert_eq!(c.wait_caused_ns(1), caused_ns);

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ranks", "--format", "csv"])
        .args(&paths)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with("clock: recorded")),
        "{stderr}"
    );
    let verdict = format!(
        "straggler: rank 1 arrived last at {late} of {shared} collectives and kept the others \
         waiting {:.1} ms in all (on the recorded clock, instances matched by their spans on the \
         recorded clock; 6 on one rank only, left out (rank 0 3, rank 1 3))",
        caused_ns as f64 / 1e6
    );
    assert!(stderr.contains(&verdict), "{verdict}\n{stderr}");
    println!(
        "{shared} shared calls matched by spans; rank 1 last at {late}, cost {:.3} ms",
        caused_ns as f64 / 1e6
    );
}

/// Where PyTorch writes its sequence numbers, instances are matched by them: the same calls,
/// the same straggler.
#[test]
fn sequence_numbers_match_instances_where_written() {
    let Some((paths, json)) = derived_pair_with(true) else {
        return;
    };
    let (straggler, late, caused_ns, shared) = independent_straggler(&json);
    let traces: Vec<_> = paths
        .iter()
        .map(|p| sightline::load::load_file(p).unwrap())
        .collect();
    let refs: Vec<_> = traces.iter().collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let run = Run::new(&refs, &pattern);
    let c = &run.collectives;
    assert_eq!(c.matching, Matching::Sequence);
    assert_eq!(c.instances.len(), shared);
    assert_eq!(c.unmatched, vec![3, 3]);
    assert_eq!(c.straggler(2), Some((straggler, late)));
    assert_eq!(c.wait_caused_ns(1), caused_ns);
}

/// Asked for, the collective alignment is used even where a recorded clock exists, and says so.
#[test]
fn the_collective_alignment_is_used_when_asked() {
    let Some((paths, _)) = derived_pair() else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ranks", "--align", "collective"])
        .args(&paths)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("clock: collective — the end of 'broadcast' #0")
            && stderr.contains("asked for"),
        "{stderr}"
    );
    assert!(
        stderr.contains("instances matched by name and order"),
        "{stderr}"
    );
}

/// The PyTorch traces of the shared folder but the rank pair: eight programs recorded at
/// different times are not one run, and `ranks` says why.
#[test]
fn eight_unrelated_traces_are_refused_as_a_run() {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout");
        return;
    };
    let files = common::unrelated_pytorch_traces(&dir.join("pytorch"));
    if files.len() != 8 {
        eprintln!(
            "SKIPPED: expected 8 unrelated PyTorch traces, found {}",
            files.len()
        );
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .arg("ranks")
        .args(&files)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "no table for a set that is not a run"
    );
    assert!(
        stderr.contains("not one run: on the clock the traces record, their spans do not overlap"),
        "{stderr}"
    );
    assert!(
        stderr.contains("nor do they share a collective every rank takes part in"),
        "{stderr}"
    );
    println!("{}", stderr.trim());
}
