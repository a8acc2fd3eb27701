//! `sightline digest` and runs opened from digests: `ranks DIGESTS/` prints byte for byte what
//! `ranks TRACES…` prints (nsys, PyTorch and mixed runs, every output form), and so does a run
//! read through the digest cache; shards are disjoint and complete, wherever their shard comes
//! from; a killed `digest` leaves no half digest and a rerun finishes the run; pyarrow reads
//! every table, and the collectives table holds what `ranks --instances` shows.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sightline::digests::{columns, store};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_sightline")
}

/// `sightline ARGS` with the digest cache in `cache` and `envs` set.
fn sightline(args: &[OsString], cache: &Path, envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(bin());
    c.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("SIGHTLINE_CACHE_DIR");
    for var in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_PROCID",
        "SLURM_NTASKS",
        "RANK",
        "WORLD_SIZE",
        "JOB_COMPLETION_INDEX",
    ] {
        c.env_remove(var);
    }
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().expect("run sightline")
}

fn args(head: &[&str], paths: &[PathBuf], tail: &[&str]) -> Vec<OsString> {
    head.iter()
        .map(OsString::from)
        .chain(paths.iter().map(|p| p.clone().into_os_string()))
        .chain(tail.iter().map(OsString::from))
        .collect()
}

fn said(o: &Output) -> (Option<i32>, String, String) {
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn digest(
    traces: &[PathBuf],
    out: &Path,
    cache: &Path,
    envs: &[(&str, &str)],
    extra: &[&str],
) -> Output {
    let mut a = args(&["digest"], traces, &["--out"]);
    a.push(out.as_os_str().to_owned());
    a.extend(extra.iter().map(OsString::from));
    let o = sightline(&a, cache, envs);
    assert!(
        o.status.success(),
        "digest failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn nccl(name: &str) -> PathBuf {
    common::fixtures().join("nccl").join(name)
}

fn pytorch(name: &str) -> PathBuf {
    nccl("pytorch").join(format!("{name}.pt.trace.json.gz"))
}

/// A mixed run that is one run: the nsys export of DDP's rank 0 and the PyTorch trace of a DDP
/// rank 1 whose `baseTimeNanoseconds` is moved (in a copy under `dir`) so that its span starts 1 s
/// into rank 0's on the recorded clock; every event as PyTorch wrote it.
fn mixed_on_one_clock(dir: &Path) -> Vec<PathBuf> {
    use std::io::{Read, Write};
    let nsys = nccl("n25_ddp_rank0.sqlite");
    let c =
        rusqlite::Connection::open_with_flags(&nsys, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let (utc, first): (i64, i64) = c
        .query_row(
            "SELECT (SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME), \
             (SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("session start");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(pytorch("kt_ddp_rank1")).expect("open"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let mut json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let min_ts_ns = json["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .fold(f64::INFINITY, f64::min)
        * 1000.0;
    json["baseTimeNanoseconds"] = (utc + first + 1_000_000_000 - min_ts_ns as i64).into();
    std::fs::create_dir_all(dir).expect("mkdir");
    let moved = dir.join("kt_ddp_moved_rank1.pt.trace.json.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&moved).expect("create"),
        flate2::Compression::fast(),
    );
    gz.write_all(json.to_string().as_bytes()).expect("write");
    gz.finish().expect("gzip");
    vec![nsys, moved]
}

/// Runs of ranks: nsys, PyTorch, a mixed one on one clock (made under `dir`) and a mixed one
/// refused (its traces are not one run), plus the shared traces' pairs where `../shared` is
/// beside the checkout.
fn runs(dir: &Path) -> Vec<(&'static str, Vec<PathBuf>)> {
    let mut runs = vec![
        (
            "nsys DDP",
            vec![nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite")],
        ),
        (
            "nsys MoE all-to-all",
            vec![
                nccl("n25_moe_a2a_rank0.sqlite"),
                nccl("n25_moe_a2a_rank1.sqlite"),
            ],
        ),
        (
            "PyTorch DDP on 4 GPUs",
            (0..4)
                .map(|r| pytorch(&format!("kt_ddp_4gpu_rank{r}")))
                .collect(),
        ),
        (
            "PyTorch MoE",
            vec![pytorch("kt_moe_a2a_rank0"), pytorch("kt_moe_a2a_rank1")],
        ),
        (
            "mixed nsys + PyTorch, not one run",
            vec![pytorch("kt_ddp_rank0"), nccl("n25_ddp_rank1.sqlite")],
        ),
        ("mixed nsys + PyTorch on one clock", mixed_on_one_clock(dir)),
    ];
    if let Some(shared) = common::shared_traces() {
        runs.push((
            "shared nsys pair",
            vec![
                shared.join("n25_rank0.sqlite"),
                shared.join("n25_rank1.sqlite"),
            ],
        ));
        runs.push((
            "shared PyTorch pair",
            vec![
                shared.join("pytorch/kt_ranks_rank0.pt.trace.json.gz"),
                shared.join("pytorch/kt_ranks_rank1.pt.trace.json.gz"),
            ],
        ));
    }
    runs
}

#[test]
fn ranks_from_digests_equal_ranks_from_traces_byte_for_byte() {
    let scratch = common::scratch_dir("digests-equal");
    let forms: [&[&str]; 4] = [
        &[],
        &["--instances"],
        &["--instances", "--format", "csv"],
        &["--align", "collective"],
    ];
    let (mut compared, mut one_run, mut refused) = (0, 0, 0);
    for (k, (what, traces)) in runs(&scratch.join("mixed")).into_iter().enumerate() {
        let out = scratch.join(format!("digests-{k}"));
        let cache = scratch.join(format!("cache-{k}"));
        digest(&traces, &out, &cache, &[], &[]);
        for form in forms {
            let traces_no_cache = said(&sightline(
                &args(&["ranks"], &traces, &[&["--no-cache"], form].concat()),
                &cache,
                &[],
            ));
            let from_digests = said(&sightline(
                &args(&["ranks"], std::slice::from_ref(&out), form),
                &cache,
                &[],
            ));
            assert_eq!(
                from_digests, traces_no_cache,
                "{what} {form:?}: digests ≠ traces"
            );
            // Through the cache: the first open writes it, the second reads it.
            for pass in ["writes", "reads"] {
                let cached = said(&sightline(&args(&["ranks"], &traces, form), &cache, &[]));
                assert_eq!(cached, traces_no_cache, "{what} {form:?}: the cache {pass}");
            }
            if traces_no_cache.0 == Some(0) {
                assert!(
                    traces_no_cache.2.starts_with("clock: "),
                    "{what}: {}",
                    traces_no_cache.2
                );
                one_run += 1;
            } else {
                assert!(
                    traces_no_cache.2.contains("not one run"),
                    "{what}: {}",
                    traces_no_cache.2
                );
                refused += 1;
            }
            compared += 1;
        }
        let cached = std::fs::read_dir(cache.join("sightline/digests"))
            .map(|l| l.count())
            .unwrap_or(0);
        assert_eq!(cached, traces.len(), "{what}: one cached digest per trace");
    }
    println!(
        "{compared} outputs compared (traces, digests, cache written and read): {one_run} of one \
         run, {refused} refused as not one run"
    );
    assert!(one_run >= 10 && refused >= 1);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `n` generated nsys exports of a run (different seeds) in `dir`.
fn generated(dir: &Path, n: usize, events: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("mkdir");
    (0..n)
        .map(|r| {
            let path = dir.join(format!("rank_{r}.sqlite"));
            let o = Command::new(bin())
                .args(["gen-trace", "--gpus", "1", "--events", &events.to_string()])
                .args(["--seed", &(r + 1).to_string()])
                .arg(&path)
                .output()
                .expect("gen-trace");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            path
        })
        .collect()
}

/// The rank folders a `digest` run wrote, from its stderr (`SOURCE: N events → DIGESTS/F (…)`).
fn written(o: &Output) -> BTreeSet<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter_map(|l| l.split(" events → ").nth(1))
        .filter_map(|rest| rest.rsplit_once(" (").map(|(path, _)| path.to_string()))
        .filter_map(|p| {
            Path::new(&p)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn shards_are_disjoint_and_complete() {
    let scratch = common::scratch_dir("digests-shards");
    let cache = scratch.join("cache");
    let traces = generated(&scratch.join("traces"), 7, 20_000);
    let names: Vec<String> = traces
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    let out = scratch.join("digests");
    // Three tasks, each finding its shard its own way.
    type Task<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let tasks: [Task; 3] = [
        (&[], &["--shard", "0/3"]),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "11"),
                ("SLURM_ARRAY_TASK_MIN", "10"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            &[],
        ),
        (&[("RANK", "2"), ("WORLD_SIZE", "3")], &[]),
    ];
    let mut all = BTreeSet::new();
    for (k, (envs, extra)) in tasks.iter().enumerate() {
        let o = digest(&traces, &out, &cache, envs, extra);
        let got = written(&o);
        let want: BTreeSet<String> = (0..names.len())
            .filter(|i| i % 3 == k)
            .map(|i| names[i].clone())
            .collect();
        assert_eq!(got, want, "shard {k}");
        assert!(
            got.iter().all(|f| all.insert(f.clone())),
            "shard {k} overlaps another"
        );
        if k == 0 {
            // One shard of three is not the run: `ranks` says what is missing.
            let partial = said(&sightline(
                &args(&["ranks"], std::slice::from_ref(&out), &[]),
                &cache,
                &[],
            ));
            assert_eq!(partial.0, Some(1));
            assert!(
                partial.2.contains("holds 3 of the run's 7 digests"),
                "{}",
                partial.2
            );
        }
    }
    assert_eq!(all, names.iter().cloned().collect::<BTreeSet<_>>());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).expect("manifest"))
            .expect("manifest JSON");
    let listed: BTreeSet<String> = manifest["ranks"]
        .as_array()
        .expect("ranks")
        .iter()
        .map(|e| e["folder"].as_str().expect("folder").to_string())
        .collect();
    assert_eq!(listed, all, "the manifest is merged from every shard");
    for e in manifest["ranks"].as_array().expect("ranks") {
        let folder = e["folder"].as_str().expect("folder");
        assert_eq!(
            format!("rank_{}.sqlite", e["rank"]),
            folder,
            "each row carries its rank"
        );
        assert_eq!(e["rank_from"], "file name");
    }

    // A Kubernetes Indexed Job's two tasks into another folder.
    let k8s = scratch.join("digests-k8s");
    let mut both = BTreeSet::new();
    for index in ["0", "1"] {
        let o = digest(
            &traces,
            &k8s,
            &cache,
            &[("JOB_COMPLETION_INDEX", index)],
            &["--shards", "2"],
        );
        both.extend(written(&o));
    }
    assert_eq!(both, all);

    let from_traces = said(&sightline(
        &args(&["ranks"], &traces, &["--no-cache"]),
        &cache,
        &[],
    ));
    assert_eq!(from_traces.0, Some(0), "{}", from_traces.2);
    for d in [&out, &k8s] {
        assert_eq!(
            said(&sightline(
                &args(&["ranks"], std::slice::from_ref(d), &[]),
                &cache,
                &[]
            )),
            from_traces
        );
    }

    // A rerun keeps current digests and digests a changed trace again.
    let again = digest(&traces, &out, &cache, &[], &["--shard", "0/3"]);
    assert!(written(&again).is_empty(), "a current digest is kept");
    let kept = String::from_utf8_lossy(&again.stderr)
        .matches("current, kept")
        .count();
    assert_eq!(kept, 3);
    let f = std::fs::File::options()
        .write(true)
        .open(&traces[3])
        .expect("open");
    f.set_modified(std::time::SystemTime::now()).expect("touch");
    let after_touch = digest(&traces, &out, &cache, &[], &["--shard", "0/3"]);
    assert_eq!(written(&after_touch), BTreeSet::from([names[3].clone()]));
    // `--force` digests them again, and the folders hold the new digests (new files, not the
    // current ones kept).
    let entry_file = |name: &String| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(out.join(name).join("digest.json"))
            .expect("digest.json")
            .ino()
    };
    let before: Vec<u64> = written(&after_touch).iter().map(entry_file).collect();
    let forced = digest(&traces, &out, &cache, &[], &["--shard", "0/3", "--force"]);
    assert_eq!(written(&forced).len(), 3, "--force digests the shard again");
    let now: Vec<u64> = written(&after_touch).iter().map(entry_file).collect();
    assert_ne!(before, now, "--force wrote new folders");
    println!(
        "7 traces in 3 shards (--shard, Slurm array, torchrun) and 2 (Kubernetes): disjoint, complete, ranks equal"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Every visible rank folder of `out` is whole: its entry and all its tables read.
fn whole_folders(out: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(out).expect("list").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !e.path().is_dir() {
            continue;
        }
        store::read_rank(&e.path()).unwrap_or_else(|err| panic!("{name} is not whole: {err:#}"));
        for t in store::TABLES {
            columns::read_file(&e.path().join(format!("{t}.parquet")))
                .unwrap_or_else(|err| panic!("{name}/{t}: {err:#}"));
        }
        n += 1;
    }
    n
}

#[test]
fn a_killed_digest_leaves_no_half_file_and_a_rerun_finishes() {
    let scratch = common::scratch_dir("digests-killed");
    let cache = scratch.join("cache");
    let traces = generated(&scratch.join("traces"), 6, 400_000);
    let out = scratch.join("digests");
    let mut a = args(&["digest"], &traces, &["--out"]);
    a.push(out.clone().into_os_string());
    let mut child = Command::new(bin())
        .args(&a)
        .env("XDG_CACHE_HOME", &cache)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn digest");
    // Killed as soon as its first digest is in place, while others are being written.
    let started = std::time::Instant::now();
    while whole_or_none(&out) == 0 && started.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    let before = whole_folders(&out);
    assert!(
        (1..traces.len()).contains(&before),
        "killed with {before} of {} digests written: not mid-run",
        traces.len()
    );
    let rerun = digest(&traces, &out, &cache, &[], &[]);
    let text = String::from_utf8_lossy(&rerun.stderr);
    assert_eq!(text.matches("current, kept").count(), before, "{text}");
    assert_eq!(written(&rerun).len(), traces.len() - before);
    assert_eq!(whole_folders(&out), traces.len());
    let hidden: Vec<String> = std::fs::read_dir(&out)
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "left behind: {hidden:?}");
    let from_traces = said(&sightline(
        &args(&["ranks"], &traces, &["--no-cache"]),
        &cache,
        &[],
    ));
    assert_eq!(
        said(&sightline(
            &args(&["ranks"], std::slice::from_ref(&out), &[]),
            &cache,
            &[]
        )),
        from_traces
    );
    println!(
        "killed after {before} of 6 digests; the rerun kept them, wrote the rest, left nothing half"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// How many visible rank folders `out` has (0 while there is none or it does not exist).
fn whole_or_none(out: &Path) -> usize {
    store::rank_folders(out).map(|f| f.len()).unwrap_or(0)
}

#[test]
fn pyarrow_reads_every_table_and_the_collectives_hold_ranks_instances() {
    let Some(python) =
        common::venv::python_with("sightline-pyarrow-venv", "pyarrow", &["pyarrow"], None)
    else {
        return;
    };
    let scratch = common::scratch_dir("digests-pyarrow");
    let cache = scratch.join("cache");
    let mut checked = 0;
    for (what, traces) in runs(&scratch.join("mixed"))
        .into_iter()
        .filter(|(w, _)| !w.ends_with("not one run"))
    {
        let out = scratch.join(what.replace(' ', "_"));
        digest(&traces, &out, &cache, &[], &[]);
        let o = Command::new(&python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/pyarrow_digests.py"))
            .arg(&out)
            .output()
            .expect("python");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let read: BTreeMap<String, BTreeMap<String, BTreeMap<String, serde_json::Value>>> =
            serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(read.len(), traces.len(), "{what}");
        for (folder, tables) in &read {
            assert_eq!(tables.len(), store::TABLES.len(), "{what} {folder}");
            for t in store::TABLES {
                let ours = columns::read_file(&out.join(folder).join(format!("{t}.parquet")))
                    .expect("ours");
                let theirs = &tables[t];
                assert_eq!(theirs.len(), ours.0.len(), "{what} {folder}/{t}: columns");
                for (name, values) in &ours.0 {
                    let col = theirs[name].as_array().expect("a column");
                    assert_eq!(col.len(), values.len(), "{what} {folder}/{t}.{name}");
                }
            }
        }
        check_collectives(what, &out, &read, &cache);
        checked += 1;
    }
    println!("pyarrow read every table of {checked} runs' digests");
    let _ = std::fs::remove_dir_all(&scratch);
}

type Read = BTreeMap<String, BTreeMap<String, BTreeMap<String, serde_json::Value>>>;

/// Every arrival `ranks --instances` prints is a row of that rank's collectives table (pyarrow's
/// reading), its start moved onto the run's recorded clock (origin − the earliest origin).
fn check_collectives(what: &str, out: &Path, read: &Read, cache: &Path) {
    let o = said(&sightline(
        &args(
            &["ranks"],
            &[out.to_path_buf()],
            &["--instances", "--format", "csv"],
        ),
        cache,
        &[],
    ));
    assert_eq!(o.0, Some(0), "{what}: {}", o.2);
    if !o.2.starts_with("clock: recorded") {
        println!("{what}: not on the recorded clock, arrivals not compared");
        return;
    }
    // rank r → its folder: the one whose `rank` table names the trace of
    // "rank R (SOURCE): PATH; collectives from …".
    let folder_of: BTreeMap<String, String> =
        o.2.lines()
            .filter_map(|l| l.strip_prefix("rank "))
            .filter_map(|l| {
                let rank = l.split(' ').next()?.to_string();
                let path = l.split("): ").nth(1)?.split("; collectives").next()?;
                let folder = read
                    .iter()
                    .find(|(_, t)| t["rank"]["source"][0].as_str() == Some(path))?
                    .0
                    .clone();
                Some((rank, folder))
            })
            .collect();
    assert!(
        !folder_of.is_empty(),
        "{what}: no rank line names a digest's source"
    );
    let num = |v: &serde_json::Value| v.as_i64().expect("an integer");
    let origin = |f: &str| num(&read[f]["rank"]["utc_origin_ns"][0]);
    let earliest = folder_of.values().map(|f| origin(f)).min().expect("ranks");
    let lines: Vec<&str> = o.1.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("Collective,Instance"))
        .expect("the instance table");
    let columns: Vec<&str> = lines[head].split(',').collect();
    let mut arrivals = 0;
    for (c, name) in columns.iter().enumerate() {
        let Some(rank) = name
            .strip_prefix("Rank ")
            .and_then(|n| n.strip_suffix(" Arrival (ns)"))
        else {
            continue;
        };
        let folder = &folder_of[rank];
        let starts: BTreeSet<i64> = read[folder]["collectives"]["start_ns"]
            .as_array()
            .expect("start_ns")
            .iter()
            .map(|v| num(v) + origin(folder) - earliest)
            .collect();
        for line in &lines[head + 1..] {
            // Collective names hold no commas in these traces; arrivals are the last columns.
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != columns.len() {
                continue;
            }
            if let Ok(a) = cells[c].parse::<i64>() {
                assert!(
                    starts.contains(&a),
                    "{what}: rank {rank} arrival {a} is no collective's start"
                );
                arrivals += 1;
            }
        }
    }
    // The derived mixed run shares no collective (nsys names kernels, PyTorch its operators).
    assert!(
        arrivals > 0 || what.starts_with("mixed"),
        "{what}: no arrival compared"
    );
    println!("{what}: {arrivals} arrivals are collectives-table starts on the recorded clock");
}

/// Damaged digests (every table and the entry, cut short at many points, bytes flipped) are
/// refused with a message naming the file, or read: never a panic.
#[test]
fn damaged_digest_files_are_refused_with_a_message_never_a_panic() {
    let scratch = common::scratch_dir("digests-damaged");
    let cache = scratch.join("cache");
    let out = scratch.join("digests");
    digest(
        &[nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite")],
        &out,
        &cache,
        &[],
        &[],
    );
    let folder = out.join("n25_ddp_rank0.sqlite");
    let (mut tried, mut refused) = (0, 0);
    let files: Vec<String> = store::TABLES
        .iter()
        .map(|t| format!("{t}.parquet"))
        .chain([store::ENTRY_FILE.to_string()])
        .collect();
    for file in &files {
        let path = folder.join(file);
        let whole = std::fs::read(&path).expect("read");
        let mut damaged: Vec<Vec<u8>> = (0..whole.len())
            .step_by((whole.len() / 40).max(1))
            .map(|cut| whole[..cut].to_vec())
            .collect();
        for at in (0..whole.len()).step_by((whole.len() / 40).max(1)) {
            let mut flipped = whole.clone();
            flipped[at] ^= 0xff;
            damaged.push(flipped);
        }
        for bytes in damaged {
            std::fs::write(&path, &bytes).expect("write");
            tried += 1;
            let read = store::read_rank(&folder);
            if let Err(e) = read {
                refused += 1;
                let text = format!("{e:#}");
                assert!(text.contains("n25_ddp_rank0.sqlite"), "{file}: {text}");
            }
        }
        std::fs::write(&path, &whole).expect("restore");
    }
    // A cut table read as a run: `ranks` says which, and exits.
    let rank = folder.join("rank.parquet");
    let whole = std::fs::read(&rank).expect("read");
    std::fs::write(&rank, &whole[..whole.len() / 2]).expect("cut");
    let o = said(&sightline(
        &args(&["ranks"], std::slice::from_ref(&out), &[]),
        &cache,
        &[],
    ));
    assert_eq!(o.0, Some(1));
    assert!(o.2.contains("rank.parquet"), "{}", o.2);
    println!("{tried} damaged digest files read: {refused} refused with a message, none panicked");
    let _ = std::fs::remove_dir_all(&scratch);
}
