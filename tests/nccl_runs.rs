//! The two-GPU NCCL runs made for this project (tests/fixtures/nccl/, tests/tracegen/README.md):
//! a data-parallel training step whose rank 1 computes longer (`nccl_ddp.py --slow-rank 1`) and an
//! MoE layer whose rank 1 holds the hot experts (`nccl_moe_a2a.py --hot-rank 1`, all-to-all), each
//! captured once under Nsight Systems 2025.3.1 (one export per rank) and once under the PyTorch
//! profiler (one trace per rank). Each run: a rank per GPU, NCCL kernels on every rank (counted
//! here from the files themselves), collectives matched across ranks, rank 1 named the straggler,
//! and rank 0 the one that waits.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use sightline::analysis::Cell;
use sightline::analysis::ranks::collectives::{self, Source};
use sightline::analysis::ranks::{Alignment, RankSource, Run, table};
use sightline::trace::Trace;

fn nccl(rel: &str) -> PathBuf {
    common::fixtures().join("nccl").join(rel)
}

/// NCCL kernels and the GPUs that ran kernels, read from an nsys export with SQL.
fn nccl_kernels_by_sql(path: &Path) -> (usize, BTreeSet<i64>) {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s \
             ON s.id = k.demangledName WHERE lower(s.value) LIKE '%nccl%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut st = conn
        .prepare("SELECT DISTINCT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL")
        .unwrap();
    let devices = st
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (n as usize, devices)
}

/// NCCL kernels and the GPUs that ran kernels, read from a PyTorch trace's JSON.
fn nccl_kernels_by_json(path: &Path) -> (usize, BTreeSet<i64>) {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let kernels: Vec<&serde_json::Value> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .collect();
    let n = kernels
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.to_lowercase().contains("nccl"))
        })
        .count();
    let devices = kernels
        .iter()
        .filter_map(|e| e["args"]["device"].as_i64())
        .collect();
    (n, devices)
}

fn int(t: &sightline::analysis::Table, row: usize, column: &str) -> i64 {
    match &t.rows[row].cells[t.column(column).unwrap()] {
        Cell::Int(v) => *v,
        other => panic!("{column}: {other:?}"),
    }
}

/// Checks one run (rank r in `files[r]`, on GPU r); returns its number of collective instances.
fn check_run(files: &[PathBuf], source: RankSource) -> usize {
    // Given in reverse: the run is sorted by rank all the same.
    let traces: Vec<Trace> = files
        .iter()
        .rev()
        .map(|p| sightline::load::load_file(p).unwrap())
        .collect();
    let refs: Vec<&Trace> = traces.iter().collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let run = Run::new(&refs, &pattern);
    let name = files[0].file_name().unwrap().to_string_lossy().to_string();
    let n = files.len();
    assert_eq!(
        run.ranks
            .iter()
            .map(|r| (r.rank, r.source))
            .collect::<Vec<_>>(),
        (0..n as u32).map(|r| (r, source)).collect::<Vec<_>>(),
        "{name}"
    );
    assert_eq!(run.alignment, Alignment::Utc, "{name}");

    // A rank per GPU, NCCL kernels on each, all of them the rank's collectives.
    let mut gpus = Vec::new();
    for (r, path) in files.iter().enumerate() {
        let (kernels, devices) = if source != RankSource::Distributed {
            nccl_kernels_by_sql(path)
        } else {
            nccl_kernels_by_json(path)
        };
        assert_eq!(devices.len(), 1, "{name}: rank {r} runs on one GPU");
        gpus.extend(devices);
        assert!(kernels > 0, "{name}: rank {r} has NCCL kernels");
        let mine = &run.collectives.per_rank[r];
        assert_eq!(mine.source, Some(Source::NcclKernels), "{name} rank {r}");
        assert_eq!(mine.list.len(), kernels, "{name} rank {r}");
    }
    assert_eq!(
        gpus,
        (0..n as i64).collect::<Vec<_>>(),
        "{name}: rank r on GPU r"
    );

    // Every collective is matched on every rank, in the same order.
    let c = &run.collectives;
    assert!(
        c.per_rank
            .iter()
            .all(|r| r.list.len() == c.per_rank[0].list.len()),
        "{name}"
    );
    assert_eq!(c.instances.len(), c.per_rank[0].list.len(), "{name}");
    assert!(
        c.instances
            .iter()
            .all(|i| i.arrivals.iter().all(Option::is_some)),
        "{name}: an instance lacks a rank"
    );

    // Rank 1 is slow: it keeps rank 0 waiting, far longer than rank 0 keeps it.
    let (straggler, late) = c.straggler(2).expect("a straggler");
    assert_eq!(run.ranks[straggler].rank, 1, "{name}");
    assert_eq!(late, c.late_arrivals(1));
    assert!(
        c.wait_caused_ns(1) > 5 * c.wait_caused_ns(0),
        "{name}: rank 1 cost {} ns, rank 0 {} ns",
        c.wait_caused_ns(1),
        c.wait_caused_ns(0)
    );
    let t = table::rank_table(&run);
    assert!(
        int(&t, 0, "Wait (ns)") > 5 * int(&t, 1, "Wait (ns)"),
        "{name}"
    );
    // Rank 0's communication kernels run long: they wait for rank 1.
    assert!(
        int(&t, 0, "Communication (ns)") > 5 * int(&t, 1, "Communication (ns)"),
        "{name}"
    );
    if source != RankSource::Distributed {
        for (row, path) in files.iter().enumerate() {
            let (busy, span) = common::gpu_busy_and_span_by_sql(path);
            assert_eq!(int(&t, row, "Busy (ns)"), busy, "{name} rank {row}");
            assert_eq!(int(&t, row, "Span (ns)"), span, "{name} rank {row}");
        }
    }
    println!(
        "{name}: {} collectives matched on {n} ranks (GPU r for rank r); straggler rank 1, last at \
         {late}, rank 0 waited {:.1} ms",
        c.instances.len(),
        int(&t, 0, "Wait (ns)") as f64 / 1e6
    );
    c.instances.len()
}

#[test]
fn nsys_data_parallel_run_rank_1_is_the_straggler() {
    let collectives = check_run(
        &[nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite")],
        // nsys records torchrun's RANK in each export's process environment: it comes before
        // the file name.
        RankSource::Environment,
    );
    assert!(collectives >= 10, "gradient all-reduces of 10 steps");
}

#[test]
fn nsys_moe_all_to_all_run_the_hot_rank_is_the_straggler() {
    check_run(
        &[
            nccl("n25_moe_a2a_rank0.sqlite"),
            nccl("n25_moe_a2a_rank1.sqlite"),
        ],
        RankSource::Environment,
    );
}

#[test]
fn pytorch_data_parallel_run_rank_1_is_the_straggler() {
    check_run(
        &[
            nccl("pytorch/kt_ddp_rank0.pt.trace.json.gz"),
            nccl("pytorch/kt_ddp_rank1.pt.trace.json.gz"),
        ],
        RankSource::Distributed,
    );
}

#[test]
fn pytorch_moe_all_to_all_run_the_hot_rank_is_the_straggler() {
    check_run(
        &[
            nccl("pytorch/kt_moe_a2a_rank0.pt.trace.json.gz"),
            nccl("pytorch/kt_moe_a2a_rank1.pt.trace.json.gz"),
        ],
        RankSource::Distributed,
    );
}

#[test]
fn pytorch_data_parallel_run_of_four_gpus_rank_1_is_the_straggler() {
    let files: Vec<PathBuf> = (0..4)
        .map(|r| nccl(&format!("pytorch/kt_ddp_4gpu_rank{r}.pt.trace.json.gz")))
        .collect();
    check_run(&files, RankSource::Distributed);
}
