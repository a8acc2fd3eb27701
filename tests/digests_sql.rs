//! SQL over a run opened from its digests (`sql --ranks DIGESTS/`): the run-level tables
//! (`ranks`, `collectives`, `steps`, `kernel_sums`, `api_sums`) are answered with the traces
//! moved away, and equal what `ranks` prints and what the exports hold; an event-level view
//! loads the traces it needs, and says which one it cannot reach.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sightline(args: &[&std::ffi::OsStr], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("SIGHTLINE_CACHE_DIR")
        .output()
        .expect("run sightline")
}

/// `sql --ranks DIGESTS QUERY --format csv` as rows of cells (header first).
fn query(digests: &Path, sql: &str, cache: &Path) -> Result<Vec<Vec<String>>, String> {
    let o = sightline(
        &[
            "sql".as_ref(),
            "--ranks".as_ref(),
            digests.as_os_str(),
            sql.as_ref(),
            "--format".as_ref(),
            "csv".as_ref(),
        ],
        cache,
    );
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let head: Vec<String> = r
        .headers()
        .expect("header")
        .iter()
        .map(String::from)
        .collect();
    let mut rows = vec![head];
    rows.extend(
        r.records()
            .map(|x| x.expect("row").iter().map(String::from).collect()),
    );
    Ok(rows)
}

fn count(path: &Path, table: &str) -> i64 {
    let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open export");
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .expect("count")
}

#[test]
fn run_level_tables_come_from_the_digests_with_the_traces_gone() {
    let scratch = common::scratch_dir("digests-sql");
    let cache = scratch.join("cache");
    let traces_dir = scratch.join("traces");
    std::fs::create_dir_all(&traces_dir).unwrap();
    let names = ["n25_ddp_rank0.sqlite", "n25_ddp_rank1.sqlite"];
    let traces: Vec<PathBuf> = names
        .iter()
        .map(|n| {
            let to = traces_dir.join(n);
            std::fs::copy(common::fixtures().join("nccl").join(n), &to).unwrap();
            to
        })
        .collect();
    let kernels: Vec<i64> = traces
        .iter()
        .map(|t| count(t, "CUPTI_ACTIVITY_KIND_KERNEL"))
        .collect();
    let digests = scratch.join("digests");
    let mut args: Vec<&std::ffi::OsStr> = vec!["digest".as_ref()];
    args.extend(traces.iter().map(|t| t.as_os_str()));
    args.extend(["--out".as_ref(), digests.as_os_str()]);
    assert!(sightline(&args, &cache).status.success());
    let ranks_csv = sightline(
        &[
            "ranks".as_ref(),
            digests.as_os_str(),
            "--format".as_ref(),
            "csv".as_ref(),
        ],
        &cache,
    );
    let ranks_csv = String::from_utf8(ranks_csv.stdout).unwrap();

    // The traces move away: only the digests are left.
    let moved = scratch.join("moved");
    std::fs::rename(&traces_dir, &moved).unwrap();

    let ranks = query(&digests, "SELECT * FROM ranks ORDER BY rank", &cache).expect("ranks");
    assert_eq!(ranks.len(), 3);
    let col = |name: &str| ranks[0].iter().position(|c| c == name).expect(name);
    // Each rank's numbers are those `ranks` printed (its CSV: Rank, Trace, Span, Busy, …).
    let lines: Vec<&str> = ranks_csv.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("Rank,"))
        .expect("ranks CSV");
    for (i, line) in lines[head + 1..].iter().take(2).enumerate() {
        let cells: Vec<&str> = line.split(',').collect();
        let row = &ranks[i + 1];
        assert_eq!(row[col("rank")], cells[0]);
        assert_eq!(row[col("trace")], cells[1]);
        for (name, k) in [
            ("span_ns", 2),
            ("busy_ns", 3),
            ("comm_ns", 6),
            ("collectives", 8),
            ("wait_ns", 10),
        ] {
            assert_eq!(row[col(name)], cells[k], "rank {i} {name}");
        }
    }
    let per_rank = query(
        &digests,
        "SELECT rank, count(*) FROM collectives GROUP BY rank ORDER BY rank",
        &cache,
    )
    .expect("collectives");
    for r in 0..2 {
        assert_eq!(per_rank[r + 1][1], ranks[r + 1][col("collectives")]);
    }
    let sums = query(
        &digests,
        "SELECT rank, sum(Instances) FROM kernel_sums GROUP BY rank ORDER BY rank",
        &cache,
    )
    .expect("kernel_sums");
    for r in 0..2 {
        assert_eq!(
            sums[r + 1][1],
            kernels[r].to_string(),
            "rank {r}: kernels in the export"
        );
    }
    let steps = query(&digests, "SELECT count(*) FROM steps", &cache).expect("steps");
    assert_ne!(steps[1][0], "0");
    let api = query(&digests, "SELECT count(*) FROM api_sums", &cache).expect("api_sums");
    assert_ne!(api[1][0], "0");

    // An event-level view needs the traces: it says which one it cannot reach …
    let err = query(&digests, "SELECT count(*) FROM kernels", &cache).expect_err("no traces");
    assert!(err.contains("n25_ddp_rank"), "{err}");
    // … and reads them once they are back.
    std::fs::rename(&moved, &traces_dir).unwrap();
    let events = query(
        &digests,
        "SELECT rank, count(*) FROM kernels GROUP BY rank ORDER BY rank",
        &cache,
    )
    .expect("kernels");
    for r in 0..2 {
        assert_eq!(events[r + 1][1], kernels[r].to_string());
    }
    // A trace changed since it was digested is not read under the digest's numbers.
    let f = std::fs::File::options()
        .write(true)
        .open(&traces[1])
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .unwrap();
    drop(f);
    let fresh = scratch.join("fresh-cache");
    let err = query(&digests, "SELECT count(*) FROM memcpy", &fresh).expect_err("changed");
    assert!(err.contains("changed since its digest was made"), "{err}");
    let run_level = query(&digests, "SELECT count(*) FROM ranks", &fresh).expect("ranks");
    assert_eq!(run_level[1][0], "2");
    println!(
        "2 ranks: ranks, collectives, steps, kernel_sums ({} and {} kernels), api_sums answered \
         from the digests alone; kernels loaded the traces",
        kernels[0], kernels[1]
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Several tasks caching one rank's digest at once (two windows opening one run, tests side by
/// side, each thread of them; the same trace at another place in each task's run) never leave
/// a reader without it: once it is cached, its summaries read on every try. Tasks that replace
/// a folder of digests at once (`sightline digest --force`) leave one whole digest of theirs.
/// No temporary folder is left either way.
#[test]
fn a_digest_written_by_several_tasks_at_once_is_never_missing_to_a_reader() {
    use sightline::digests::{Made, cache::Cache, load_and_make, run_sql::summaries_in, store};
    use std::sync::atomic::{AtomicBool, Ordering};

    let out = common::scratch_dir("digest-writers");
    let source = common::fixtures().join("nccl").join("n25_ddp_rank1.sqlite");
    let pattern =
        regex::Regex::new(sightline::analysis::ranks::collectives::DEFAULT_PATTERN).unwrap();
    let never = AtomicBool::new(false);
    let made = load_and_make(&source, (1, "rank1".into()), &pattern, &|_| {}, &never).unwrap();
    // The same digest at place `index` of a run.
    let at = |index: usize| Made {
        entry: sightline::digests::Entry {
            index,
            ..made.entry.clone()
        },
        digest: made.digest.clone(),
        kernels: made.kernels.clone(),
        cuda_api: made.cuda_api.clone(),
    };
    let copies: Vec<Made> = (0..4).map(at).collect();
    let cache = Cache {
        dir: out.join("cache"),
        limit_bytes: u64::MAX,
    };
    let folders = out.join("folders");
    std::fs::create_dir_all(&folders).unwrap();
    store::write_rank(&folders, &made.files(), &|_| false).unwrap();
    let in_cache = cache
        .dir
        .join(Cache::folder_for(&made.entry.source, &made.entry.collectives_pattern).unwrap());
    let place = folders.join("rank1");
    let stop = AtomicBool::new(false);
    let reads = std::thread::scope(|s| {
        // From the moment the digest is first cached (the writers start at once, with none).
        let reader = s.spawn(|| {
            let mut reads = 0;
            while !stop.load(Ordering::Relaxed) {
                let found = summaries_in(&in_cache).is_some();
                assert!(found || reads == 0, "read {reads}: none cached");
                reads += usize::from(found);
            }
            reads
        });
        let writers: Vec<_> = copies
            .iter()
            .map(|copy| {
                s.spawn(|| {
                    for _ in 0..6 {
                        store::write_rank(&folders, &copy.files(), &|_| false).unwrap();
                        assert_eq!(cache.store(copy).unwrap(), in_cache);
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(reads > 0);
    let left = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert_eq!(left(&folders), ["rank1"], "no temporary folder is left");
    assert_eq!(left(&cache.dir).len(), 1, "no temporary folder is left");
    // Replaced: the folder holds one writer's entry; kept: so does the cache (the first
    // cached, whichever task that was).
    for dir in [&place, &in_cache] {
        let written = store::read_entry(dir).unwrap();
        // (The cache names the folder by its key.)
        let of = |c: &Made| sightline::digests::Entry {
            folder: written.folder.clone(),
            ..c.entry.clone()
        };
        assert!(copies.iter().any(|c| of(c) == written), "{}", dir.display());
    }
}
