//! SQL over a run of ranks (issue 22): the views with a `rank` column hold, for every rank, what
//! the single-trace views of its file hold — same counts and sums — with times moved by exactly
//! the rank's offset onto the run's clock. On the two real two-rank runs in ../shared/traces (nsys
//! exports, PyTorch traces; skipped, saying so, without them) and the bundled NCCL pairs; the nsys
//! exports' numbers also against the export's own tables and `TARGET_INFO_SESSION_START_TIME`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::types::Value;
use sightline::analysis::ranks::{Run, collectives};
use sightline::sql::{SqlError, SqlTrace, views};
use sightline::trace::Trace;

const LIMIT: Duration = Duration::from_secs(60);

fn shared(rel: &str) -> Option<PathBuf> {
    let p = common::shared_traces()?.join(rel);
    p.exists().then_some(p)
}

fn nccl(name: &str) -> PathBuf {
    common::fixtures().join("nccl").join(name)
}

/// The run's ranks as `sightline ranks` aligns them: (rank, offset, trace), by rank.
fn run_of(paths: &[PathBuf]) -> Vec<(u32, i64, Arc<Trace>)> {
    let traces: Vec<Arc<Trace>> = paths
        .iter()
        .map(|p| Arc::new(sightline::load::load_file(p).expect("load")))
        .collect();
    let refs: Vec<&Trace> = traces.iter().map(Arc::as_ref).collect();
    let pattern = regex::Regex::new(collectives::DEFAULT_PATTERN).unwrap();
    let run = Run::new(&refs, &pattern);
    run.ranks
        .iter()
        .map(|r| {
            let held = traces
                .iter()
                .find(|t| std::ptr::eq(t.as_ref(), r.trace))
                .unwrap();
            (r.rank, r.offset_ns, held.clone())
        })
        .collect()
}

fn ints(db: &SqlTrace, sql: &str) -> Vec<Option<i64>> {
    let r = db.query(sql, None, LIMIT, None).expect(sql);
    assert_eq!(r.rows.len(), 1, "{sql}");
    r.rows[0]
        .iter()
        .map(|v| match v {
            Value::Integer(i) => Some(*i),
            Value::Null => None,
            other => panic!("{sql}: {other:?}"),
        })
        .collect()
}

/// count, sum(dur), min(start), max(end) (or count, min(ts), max(ts); or count) of `view`,
/// with `filter`, the times less `offset`.
fn numbers(db: &SqlTrace, view: &str, filter: &str, offset: i64) -> Vec<Option<i64>> {
    let columns = db
        .query(&format!("SELECT * FROM {view} LIMIT 0"), None, LIMIT, None)
        .expect(view)
        .columns;
    let has = |c: &str| columns.iter().any(|x| x == c);
    let sql = if has("start") {
        format!(
            "SELECT count(*), sum(dur), min(start) - {offset}, max(\"end\") - {offset} \
             FROM {view} {filter}"
        )
    } else if has("ts") {
        format!("SELECT count(*), min(ts) - {offset}, max(ts) - {offset} FROM {view} {filter}")
    } else {
        format!("SELECT count(*) FROM {view} {filter}")
    };
    ints(db, &sql)
}

/// Every view of every rank: the run's rows of that rank = the rank's own views, times moved.
fn check_run(paths: &[PathBuf]) -> Vec<(u32, i64, Arc<Trace>)> {
    let ranks = run_of(paths);
    let run = SqlTrace::for_run(&ranks).expect("the run's views");
    let mut names: Vec<String> = views::VIEWS.iter().map(|(n, _)| n.to_string()).collect();
    names.extend(["graph_executions", "gaps", "samples"].map(String::from));
    let mut total_kernels = 0;
    for (rank, offset, trace) in &ranks {
        let one = SqlTrace::for_loaded(trace).expect("one rank's views");
        let one_names = one.view_names();
        for view in &names {
            if !one_names.contains(view) {
                continue;
            }
            let own = numbers(&one, view, "", 0);
            let in_run = numbers(&run, view, &format!("WHERE rank = {rank}"), *offset);
            assert_eq!(
                in_run,
                own,
                "{view} of rank {rank} ({}), offset {offset}",
                trace.path.display()
            );
        }
        total_kernels += numbers(&one, "kernels", "", 0)[0].unwrap();
        assert!(total_kernels > 0, "{} has kernels", trace.path.display());
    }
    // No row without its rank, no rank twice.
    assert_eq!(
        ints(&run, "SELECT count(*) FROM kernels")[0],
        Some(total_kernels)
    );
    let found = run
        .query(
            "SELECT DISTINCT rank FROM kernels ORDER BY rank",
            None,
            LIMIT,
            None,
        )
        .unwrap();
    let expected: Vec<Vec<Value>> = ranks
        .iter()
        .map(|(r, _, _)| vec![Value::Integer(i64::from(*r))])
        .collect();
    assert_eq!(found.rows, expected);
    ranks
}

/// The nsys exports' kernels per rank by the export's own tables, and the offsets by their
/// session starts: independent of the views and of the run's alignment code.
fn check_nsys_against_raw(ranks: &[(u32, i64, Arc<Trace>)]) {
    let run = SqlTrace::for_run(ranks).unwrap();
    let utc = |p: &Path| -> i64 {
        common::open_ro(p)
            .query_row(
                "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let earliest = ranks.iter().map(|(_, _, t)| utc(&t.path)).min().unwrap();
    for (rank, offset, trace) in ranks {
        assert_eq!(*offset, utc(&trace.path) - earliest, "rank {rank}'s offset");
        let (n, sum, first): (i64, i64, i64) = common::open_ro(&trace.path)
            .query_row(
                "SELECT count(*), sum(\"end\" - start), min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        let got = ints(
            &run,
            &format!("SELECT count(*), sum(dur), min(start) FROM kernels WHERE rank = {rank}"),
        );
        assert_eq!(
            got,
            [Some(n), Some(sum), Some(first + offset)],
            "rank {rank}"
        );
    }
}

#[test]
fn nsys_run_views_are_each_ranks_views_on_the_runs_clock() {
    let (Some(a), Some(b)) = (shared("n25_rank0.sqlite"), shared("n25_rank1.sqlite")) else {
        println!("SKIPPED: no n25_rank0/1.sqlite in ../shared/traces");
        return;
    };
    let ranks = check_run(&[b, a]);
    // Rank 1's session started 20 ms after rank 0's: the shift is real, not zero.
    assert!(
        ranks[1].1 - ranks[0].1 > 1_000_000,
        "offsets {:?}",
        ranks[1].1
    );
    check_nsys_against_raw(&ranks);
}

#[test]
fn pytorch_run_views_are_each_ranks_views_on_the_runs_clock() {
    let (Some(a), Some(b)) = (
        shared("pytorch/kt_ranks_rank0.pt.trace.json.gz"),
        shared("pytorch/kt_ranks_rank1.pt.trace.json.gz"),
    ) else {
        println!("SKIPPED: no pytorch/kt_ranks_rank0/1 in ../shared/traces");
        return;
    };
    let ranks = check_run(&[a, b]);
    let torch_ranks: Vec<Option<u32>> = ranks
        .iter()
        .map(|(_, _, t)| t.torch.as_ref().and_then(|t| t.rank))
        .collect();
    assert_eq!(
        torch_ranks,
        [Some(0), Some(1)],
        "ranks from distributedInfo"
    );
}

#[test]
fn bundled_nccl_runs_in_both_formats() {
    let ranks = check_run(&[nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite")]);
    check_nsys_against_raw(&ranks);
    check_run(&[
        nccl("pytorch/kt_moe_a2a_rank1.pt.trace.json.gz"),
        nccl("pytorch/kt_moe_a2a_rank0.pt.trace.json.gz"),
    ]);
}

#[test]
fn the_runs_database_only_reads_and_a_collapsed_rank_is_loaded_when_asked() {
    let paths = [
        nccl("n25_moe_a2a_rank0.sqlite"),
        nccl("n25_moe_a2a_rank1.sqlite"),
    ];
    let ranks = run_of(&paths);
    let list: Vec<sightline::sql::run_db::RunRank> = ranks
        .iter()
        .map(|(rank, offset_ns, _)| sightline::sql::run_db::RunRank {
            rank: *rank,
            offset_ns: *offset_ns,
        })
        .collect();
    // The run holds no trace: each is loaded from its file when the filler asks for it.
    let mut asked = Vec::new();
    let db = SqlTrace::for_run_with(
        &list,
        |i| {
            asked.push(i);
            Ok(Arc::new(sightline::load::load_file(&ranks[i].2.path)?))
        },
        None,
    )
    .unwrap();
    assert_eq!(asked, [0, 1]);
    let held = SqlTrace::for_run(&ranks).unwrap();
    let q = "SELECT rank, count(*), sum(dur), min(start) FROM api GROUP BY rank";
    assert_eq!(
        db.query(q, None, LIMIT, None).unwrap().rows,
        held.query(q, None, LIMIT, None).unwrap().rows
    );
    for write in [
        "DELETE FROM kernels",
        "INSERT INTO kernels (rank) VALUES (7)",
        "CREATE TABLE t (x)",
        "ATTACH 'x.db' AS x",
    ] {
        match db.query(write, None, LIMIT, None) {
            Err(SqlError::Refused(_)) => {}
            other => panic!("{write}: {other:?}"),
        }
    }
    // A rank whose trace cannot be had stops the filling with its error.
    let failed =
        SqlTrace::for_run_with(&list, |_| Err(SqlError::Refused("not loaded".into())), None);
    assert!(failed.is_err());
}

/// `sightline sql --ranks DIR "QUERY"`: a folder stands for its traces; the CSV's per-rank
/// numbers are the exports' own, times on the run's clock.
#[test]
fn cli_sql_over_a_folder_of_ranks() {
    let dir = common::scratch_dir("sql_ranks");
    let files = [nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite")];
    for f in &files {
        let link = dir.join(f.file_name().unwrap());
        if !link.exists() {
            std::fs::copy(f, &link).unwrap();
        }
    }
    let ranks = run_of(&files);
    let query = "SELECT rank, count(*) AS n, sum(dur) AS ns, min(start) AS first FROM kernels \
                 WHERE name LIKE '%nccl%' GROUP BY rank ORDER BY rank";
    let dir_arg = dir.to_string_lossy().to_string();
    let out = common::sightline_stdout(&["sql", "--ranks", &dir_arg, query, "--format", "csv"]);
    let mut expected = String::from("rank,n,ns,first\n");
    for (rank, offset, trace) in &ranks {
        let (n, ns, first): (i64, i64, i64) = common::open_ro(&trace.path)
            .query_row(
                "SELECT count(*), sum(k.\"end\" - k.start), min(k.start) \
                 FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName \
                 WHERE s.value LIKE '%nccl%'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert!(n > 0, "rank {rank} has NCCL kernels");
        expected.push_str(&format!("{rank},{n},{ns},{}\n", first + offset));
    }
    assert_eq!(out, expected);
    // The files named one by one give the same answer.
    let (a, b) = (files[0].to_string_lossy(), files[1].to_string_lossy());
    let named = common::sightline_stdout(&["sql", "--ranks", &a, &b, query, "--format", "csv"]);
    assert_eq!(named, out);
    // Without --ranks two traces are refused with a message.
    let two = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["sql", &*a, &*b, query])
        .output()
        .unwrap();
    assert!(!two.status.success());
    assert!(String::from_utf8_lossy(&two.stderr).contains("--ranks"));
    let _ = std::fs::remove_dir_all(&dir);
}
