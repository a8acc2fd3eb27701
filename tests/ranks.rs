//! Runs of ranks (`sightline ranks`): the two real two-rank runs in ../shared/traces (nsys
//! 2025.3.1 exports and PyTorch profiler traces of one gloo job in which rank 1 computes longer,
//! so rank 0 waits in every all-reduce), and HTA's NCCL trace. Skipped, saying so, without the
//! shared folder.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};

use sightline::analysis::Cell;
use sightline::analysis::ranks::collectives::{self, Source};
use sightline::analysis::ranks::{Alignment, RankSource, Run, table};
use sightline::trace::Trace;

fn shared(rel: &str) -> Option<PathBuf> {
    let p = common::shared_traces()?.join(rel);
    p.exists().then_some(p)
}

fn load(p: &Path) -> Trace {
    sightline::load::load_file(p).expect("load")
}

fn pattern() -> regex::Regex {
    regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap()
}

fn int(t: &sightline::analysis::Table, row: usize, column: &str) -> i64 {
    match &t.rows[row].cells[t.column(column).unwrap()] {
        Cell::Int(v) => *v,
        other => panic!("{column}: {other:?}"),
    }
}

#[test]
fn nsys_ranks_on_one_clock_rank_1_is_the_straggler() {
    let (Some(a), Some(b)) = (shared("n25_rank1.sqlite"), shared("n25_rank0.sqlite")) else {
        println!("SKIPPED: no n25_rank0/1 in ../shared/traces");
        return;
    };
    let traces = [load(&a), load(&b)];
    let refs: Vec<&Trace> = traces.iter().collect();
    let run = Run::new(&refs, &pattern());
    // Given rank 1 first: ranks come from the file names and the run is sorted by rank.
    assert_eq!(
        run.ranks
            .iter()
            .map(|r| (r.rank, r.source))
            .collect::<Vec<_>>(),
        [(0, RankSource::FileName), (1, RankSource::FileName)]
    );
    assert_eq!(run.alignment, Alignment::Utc);
    // Rank 1's session started 20 ms after rank 0's.
    let shift = run.ranks[1].offset_ns - run.ranks[0].offset_ns;
    assert!((15_000_000..25_000_000).contains(&shift), "{shift}");
    let c = &run.collectives;
    assert_eq!(c.per_rank[0].source, Some(Source::Ranges));
    assert_eq!(c.instances.len(), 12, "12 allreduce_grads steps");
    for inst in &c.instances {
        assert_eq!(inst.name, "allreduce_grads");
        let (r0, r1) = (inst.arrivals[0].unwrap(), inst.arrivals[1].unwrap());
        assert!(r1 > r0, "aligned, rank 1 arrives after rank 0");
        // On the traces' own clocks rank 1 would seem to arrive first.
        assert!(r1 - run.ranks[1].offset_ns < r0 - run.ranks[0].offset_ns);
        assert_eq!(inst.last, Some(1));
    }
    assert_eq!(c.straggler(2), Some((1, 12)));

    let t = table::rank_table(&run);
    assert_eq!(t.columns, table::RANK_COLUMNS);
    for (row, path) in [(0, &b), (1, &a)] {
        let (busy, span) = common::gpu_busy_and_span_by_sql(path);
        assert_eq!(int(&t, row, "Busy (ns)"), busy, "rank {row}");
        assert_eq!(int(&t, row, "Span (ns)"), span, "rank {row}");
        assert_eq!(int(&t, row, "Idle (ns)"), span - busy, "rank {row}");
    }
    assert_eq!(int(&t, 0, "Late Arrivals"), 0);
    assert_eq!(int(&t, 1, "Late Arrivals"), 12);
    assert!(int(&t, 0, "Wait (ns)") > 0);
    assert_eq!(int(&t, 1, "Wait (ns)"), 0);
    println!("checked 2 nsys ranks, 12 collectives");
}

#[test]
fn pytorch_ranks_from_distributed_info_and_c10d_operators() {
    let (Some(a), Some(b)) = (
        shared("pytorch/kt_ranks_rank0.pt.trace.json.gz"),
        shared("pytorch/kt_ranks_rank1.pt.trace.json.gz"),
    ) else {
        println!("SKIPPED: no kt_ranks_rank0/1 in ../shared/traces/pytorch");
        return;
    };
    let traces = [load(&a), load(&b)];
    let refs: Vec<&Trace> = traces.iter().collect();
    let run = Run::new(&refs, &pattern());
    assert!(
        run.ranks
            .iter()
            .all(|r| r.source == RankSource::Distributed)
    );
    assert_eq!(run.alignment, Alignment::Utc);
    let c = &run.collectives;
    assert!(
        c.per_rank
            .iter()
            .all(|r| r.source == Some(Source::C10dOperators))
    );
    assert!(!c.instances.is_empty());
    assert!(c.instances.iter().all(|i| i.name == "c10d::allreduce_"));
    assert_eq!(c.straggler(2), Some((1, c.instances.len())));
    println!("checked 2 PyTorch ranks, {} collectives", c.instances.len());
}

#[test]
fn an_nccl_rank_has_its_collectives_from_nccl_kernels() {
    let Some(p) = shared("pytorch/HolisticTraceAnalysis__nccl_data.json.gz") else {
        println!("SKIPPED: no HTA NCCL trace in ../shared/traces/pytorch");
        return;
    };
    let trace = load(&p);
    let mine = collectives::of_rank(&trace, &pattern());
    assert_eq!(mine.source, Some(Source::NcclKernels));
    assert!(
        mine.list
            .iter()
            .all(|o| o.name.to_lowercase().contains("nccl"))
    );
    println!("{} NCCL collectives", mine.list.len());
    assert!(!mine.list.is_empty());
}

#[test]
fn the_command_prints_a_row_per_rank_and_names_the_straggler() {
    let (Some(a), Some(b)) = (shared("n25_rank0.sqlite"), shared("n25_rank1.sqlite")) else {
        println!("SKIPPED: no n25_rank0/1 in ../shared/traces");
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ranks", "--format", "csv"])
        .args([&a, &b])
        .output()
        .unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(table::RANK_COLUMNS.join(",").as_str()));
    assert_eq!(lines.count(), 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("straggler: rank 1 arrived last at 12 of 12 collectives"),
        "{stderr}"
    );
    let one = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["ranks"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(!one.status.success());
}

/// The rank in the process environment wins over the file name: a copy of n25_rank0 whose
/// capture metadata gains `RANK="5"` (as nsys records a torchrun worker's environment) is rank 5;
/// the original file, whose environment has no rank variable, keeps rank 0 from its name.
#[test]
fn a_rank_in_the_process_environment_comes_before_the_file_name() {
    let (Some(r0), Some(r1)) = (shared("n25_rank0.sqlite"), shared("n25_rank1.sqlite")) else {
        println!("SKIPPED: ../shared/traces/n25_rank0/1.sqlite not present");
        return;
    };
    let conn =
        rusqlite::Connection::open_with_flags(&r0, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let rank_rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM META_DATA_CAPTURE WHERE name LIKE '%:ENVIRONMENT_VARIABLE' \
             AND (value LIKE 'RANK=%' OR value LIKE 'OMPI_COMM_WORLD_RANK=%' \
             OR value LIKE 'SLURM_PROCID=%')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(rank_rows, 0, "the shared export has no rank variable");
    let original = load(&r0);
    assert_eq!(original.env_rank, None);

    let copy = common::scratch_dir("env-rank").join("n25_rank0.sqlite");
    std::fs::copy(&r0, &copy).unwrap();
    let w = rusqlite::Connection::open(&copy).unwrap();
    w.execute_batch(
        "INSERT INTO META_DATA_CAPTURE (name, value) VALUES \
         ('PROCESS_0:ENVIRONMENT_VARIABLE', 'SLURM_PROCID=\"9\"'), \
         ('PROCESS_0:ENVIRONMENT_VARIABLE', 'RANK=\"5\"');",
    )
    .unwrap();
    drop(w);
    let with_env = load(&copy);
    assert_eq!(with_env.env_rank, Some(("RANK".to_string(), 5)));
    let other = load(&r1);
    let found = sightline::analysis::ranks::find_ranks(&[&with_env, &other]);
    assert_eq!(
        found,
        vec![(5, RankSource::Environment), (1, RankSource::FileName)]
    );
    let found = sightline::analysis::ranks::find_ranks(&[&original, &other]);
    assert_eq!(
        found,
        vec![(0, RankSource::FileName), (1, RankSource::FileName)]
    );
    let _ = std::fs::remove_file(&copy);
}
