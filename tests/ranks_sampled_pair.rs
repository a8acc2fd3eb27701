//! A real pair of sampled ranks (issue 44 item 3): HTA's `trace_filter` test data, two ranks of a
//! 128-rank NCCL job on one epoch clock, each sampled so that it lacks some of the other's
//! collectives. Its kernels' `External id`s are their correlation ids and name no operator, so
//! a kernel is tied to its collective by the operators its CUDA call was made inside. On the
//! recorded clock five NCCL calls overlap on both ranks; rank 1 arrives last at each. This test
//! reads those five from the JSON alone and checks that `ranks` matches exactly them, leaves the
//! others out (counted), and says "rank 1 arrived last at 5 of 5" in a line that agrees with its
//! table, from the traces and from their digests. Skipped, saying so, without the shared files.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sightline::analysis::ranks::collectives::{self, Source};
use sightline::analysis::ranks::matching::Matching;
use sightline::analysis::ranks::{Alignment, Run};

fn pair() -> Option<[PathBuf; 2]> {
    let Some(dir) = common::shared_traces() else {
        eprintln!("SKIPPED: ../shared/traces is not beside the checkout");
        return None;
    };
    let paths = [0, 1].map(|r| {
        dir.join(format!(
            "pytorch/HolisticTraceAnalysis__trace_filter__sampled_rank-{r}.json.gz"
        ))
    });
    if let Some(missing) = paths.iter().find(|p| !p.exists()) {
        eprintln!("SKIPPED: {} is missing", missing.display());
        return None;
    }
    Some(paths)
}

fn read_json(path: &Path) -> Value {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// One NCCL kernel of the JSON: start and end in ns since the epoch, and the name of the
/// outermost `c10d::` operator around its CUDA call on that call's thread.
#[derive(Debug)]
struct NcclKernel {
    start_ns: i64,
    end_ns: i64,
    c10d: String,
}

/// µs (with a fractional part) → ns, read from the number's decimal text: exact, where an f64
/// of 1.7e18 ns holds only about 256 ns.
fn ns(v: &Value) -> i64 {
    let text = v.to_string();
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let frac = format!("{frac:0<3}");
    whole.parse::<i64>().unwrap() * 1000 + frac[..3].parse::<i64>().unwrap()
}

fn nccl_kernels(json: &Value) -> Vec<NcclKernel> {
    let base = json["baseTimeNanoseconds"].as_i64().unwrap_or(0);
    let events = json["traceEvents"].as_array().unwrap();
    let calls: Vec<&Value> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .collect();
    let mut out: Vec<NcclKernel> = events
        .iter()
        .filter(|e| {
            e["cat"] == "kernel"
                && e["name"]
                    .as_str()
                    .is_some_and(|n| n.to_lowercase().contains("nccl"))
        })
        .map(|k| {
            let call = calls
                .iter()
                .find(|c| c["args"]["correlation"] == k["args"]["correlation"])
                .expect("each NCCL kernel's CUDA call is in the trace");
            let t = ns(&call["ts"]);
            let c10d = events
                .iter()
                .filter(|o| {
                    o["cat"] == "cpu_op"
                        && o["tid"] == call["tid"]
                        && o["name"].as_str().is_some_and(|n| n.starts_with("c10d::"))
                        && ns(&o["ts"]) <= t
                        && t < ns(&o["ts"]) + ns(&o["dur"])
                })
                .map(|o| o["name"].as_str().unwrap().to_string())
                .next()
                .expect("each NCCL kernel is launched inside a c10d:: operator");
            let start_ns = base + ns(&k["ts"]);
            NcclKernel {
                start_ns,
                end_ns: start_ns + ns(&k["dur"]),
                c10d,
            }
        })
        .collect();
    out.sort_by_key(|k| k.start_ns);
    out
}

/// The calls both ranks have: (rank 0's kernel, rank 1's kernel) whose spans overlap and whose
/// ends are within 0.35 ms (a collective's ranks leave it together), by rank 0's start.
fn shared_calls<'a>(
    r0: &'a [NcclKernel],
    r1: &'a [NcclKernel],
) -> Vec<(&'a NcclKernel, &'a NcclKernel)> {
    r0.iter()
        .filter_map(|a| {
            let partners: Vec<&NcclKernel> = r1
                .iter()
                .filter(|b| {
                    a.start_ns < b.end_ns
                        && b.start_ns < a.end_ns
                        && (a.end_ns - b.end_ns).abs() < 350_000
                })
                .collect();
            assert!(partners.len() <= 1, "one partner at most");
            partners.first().map(|&b| (a, b))
        })
        .collect()
}

#[test]
fn the_sampled_pair_is_matched_by_spans_and_rank_1_is_last_at_each_shared_call() {
    let Some(paths) = pair() else {
        return;
    };
    let json = paths.clone().map(|p| read_json(&p));
    let kernels = [nccl_kernels(&json[0]), nccl_kernels(&json[1])];
    let shared = shared_calls(&kernels[0], &kernels[1]);
    assert_eq!(shared.len(), 5, "five calls overlap on the recorded clock");
    for (a, b) in &shared {
        assert!(b.start_ns > a.start_ns, "rank 1 arrives last");
        assert_eq!(a.c10d, b.c10d, "one collective on both ranks");
    }
    let caused_ns: i64 = shared.iter().map(|(a, b)| b.start_ns - a.start_ns).sum();
    let alone = [kernels[0].len() - 5, kernels[1].len() - 5];

    let traces: Vec<_> = paths
        .iter()
        .map(|p| sightline::load::load_file(p).unwrap())
        .collect();
    let refs: Vec<_> = traces.iter().collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let run = Run::new(&refs, &pattern);
    assert_eq!(run.alignment, Alignment::Utc);
    let c = &run.collectives;
    for (r, mine) in c.per_rank.iter().enumerate() {
        assert_eq!(mine.source, Some(Source::NcclKernels), "rank {r}");
        assert_eq!(
            mine.list.len(),
            kernels[r].len(),
            "rank {r}: every NCCL kernel"
        );
    }
    assert_eq!(c.matching, Matching::Spans);
    assert_eq!(c.instances.len(), 5);
    assert_eq!(c.unmatched, alone.to_vec(), "the calls on one rank only");
    // The same five calls: rank 1's lateness at each, in order, as read from the JSON.
    for (inst, (a, b)) in c.instances.iter().zip(&shared) {
        let (Some(t0), Some(t1)) = (inst.arrivals[0], inst.arrivals[1]) else {
            panic!("{} #{} lacks a rank", inst.name, inst.ordinal)
        };
        assert_eq!(
            t1 - t0,
            b.start_ns - a.start_ns,
            "{} #{}",
            inst.name,
            inst.ordinal
        );
        assert_eq!(inst.last, Some(1));
    }
    assert_eq!(c.straggler(2), Some((1, 5)));
    assert_eq!(c.wait_caused_ns(1), caused_ns);

    // The command, from the traces and from their digests: one straggler line, agreeing with
    // the table's Late Arrivals.
    let scratch = common::scratch_dir("sampled-pair");
    let digests = scratch.join("digests");
    let mut digest_args: Vec<std::ffi::OsString> = vec!["digest".into()];
    digest_args.extend(paths.iter().map(|p| p.clone().into_os_string()));
    digest_args.extend(["--out".into(), digests.clone().into_os_string()]);
    common::sightline_ok(&digest_args, &[]);
    let verdict = format!(
        "straggler: rank 1 arrived last at 5 of 5 collectives and kept the others waiting {:.1} \
         ms in all (on the recorded clock, instances matched by their spans on the recorded \
         clock; {} on one rank only, left out (rank 0 {}, rank 1 {}))",
        caused_ns as f64 / 1e6,
        alone[0] + alone[1],
        alone[0],
        alone[1]
    );
    let mut tables = Vec::new();
    for given in [paths.to_vec(), vec![digests]] {
        let mut args: Vec<std::ffi::OsString> = vec![
            "ranks".into(),
            "--no-cache".into(),
            "--format".into(),
            "csv".into(),
        ];
        args.extend(given.into_iter().map(PathBuf::into_os_string));
        let out = common::sightline_ok(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&verdict), "{verdict}\n{stderr}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mut lines = stdout.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let (late, taken) = (column("Late Arrivals"), column("Collectives"));
        let rows: Vec<Vec<String>> = lines
            .map(|l| l.split(',').map(str::to_string).collect())
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            [&rows[0][late], &rows[1][late]],
            ["0", "5"],
            "the table's late arrivals agree with the straggler line"
        );
        assert_eq!([&rows[0][taken], &rows[1][taken]], ["5", "5"]);
        tables.push(stdout);
    }
    assert_eq!(tables[0], tables[1], "the digests give the traces' table");
    println!(
        "checked 5 shared instances (of {} and {} NCCL kernels; {} on one rank only): rank 1 \
         last at 5 of 5, kept rank 0 waiting {:.3} ms",
        kernels[0].len(),
        kernels[1].len(),
        alone[0] + alone[1],
        caused_ns as f64 / 1e6
    );
}
