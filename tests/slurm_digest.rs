//! `sightline digest` run by real Slurm jobs (issue 35: "tested on a real engine"): a private
//! single-node Slurm (`common::slurm`) runs the digest step as a job array and as `srun -n 2`
//! inside a batch job, each task finding its shard in Slurm's environment, over 16 generated
//! ranks. Every trace must be digested exactly once per output folder, and `sightline ranks
//! DIGESTS/` must print what `sightline ranks TRACES…` prints. Skipped, saying so, where Slurm
//! cannot run; on CI (`SIGHTLINE_REQUIRE_SLURM=1`) it must run.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::slurm::SingleNodeSlurm;

const RANKS: usize = 16;
const ARRAY_TASKS: usize = 4;
const SRUN_TASKS: usize = 2;
/// Each job digests a few ranks of 20,000 events: seconds. Five minutes says it hangs.
const JOB_TIMEOUT: Duration = Duration::from_secs(300);

#[test]
fn digests_from_a_job_array_and_from_srun_give_the_ranks_of_the_traces() {
    let booting = Instant::now();
    let Some(slurm) = common::slurm::start_or_skip("slurm_digest") else {
        return;
    };
    let boot_s = booting.elapsed().as_secs_f64();
    let started = Instant::now();
    let dir = common::scratch_dir("slurm-digest");
    // The digest cache of `ranks` goes here, not into the home folder (jobs inherit it).
    let cache = dir.join("cache");
    let traces_dir = dir.join("traces");
    let traces = generate_ranks(&traces_dir);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();

    let array_out = dir.join("digests_array");
    let array_job = submit(
        &slurm,
        &cache,
        &logs,
        &[
            format!("--array=0-{}", ARRAY_TASKS - 1),
            format!("--output={}/array_%A_%a.out", logs.display()),
        ],
        &digest_command(&traces_dir, &array_out),
    );
    let srun_out = dir.join("digests_srun");
    let srun_job = submit(
        &slurm,
        &cache,
        &logs,
        &[
            format!("--ntasks={SRUN_TASKS}"),
            format!("--output={}/batch_%j.out", logs.display()),
        ],
        &format!(
            "srun --ntasks={SRUN_TASKS} --output={}/srun_%j_%t.out {}",
            logs.display(),
            digest_command(&traces_dir, &srun_out)
        ),
    );

    check_each_trace_once(&array_out, &traces);
    check_each_trace_once(&srun_out, &traces);
    let array_logs = job_logs(&logs, "array_");
    let srun_logs = job_logs(&logs, "srun_");
    check_shards(&array_logs, &traces, "SLURM_ARRAY_TASK_ID", ARRAY_TASKS);
    check_shards(&srun_logs, &traces, "SLURM_PROCID", SRUN_TASKS);

    let mut from_traces = vec!["ranks".to_string(), "--no-cache".to_string()];
    from_traces.extend(traces.iter().map(|t| t.display().to_string()));
    let expected = sightline(&cache, &from_traces);
    for digests in [&array_out, &srun_out] {
        let got = sightline(&cache, &["ranks".into(), digests.display().to_string()]);
        assert_eq!(
            got.stdout,
            expected.stdout,
            "stdout of `ranks {}`",
            digests.display()
        );
        assert_eq!(
            got.stderr,
            expected.stderr,
            "stderr of `ranks {}`",
            digests.display()
        );
    }

    println!(
        "{RANKS} ranks: job array {array_job} ({ARRAY_TASKS} tasks, {} outputs) and batch job \
         {srun_job} (srun, {SRUN_TASKS} tasks, {} outputs) each digested every trace once, in \
         the shard i % N of the sorted list; `ranks` of either folder printed what `ranks` of \
         the traces prints ({} lines of stdout, {} of stderr); Slurm up in {boot_s:.1} s, then \
         {:.1} s",
        array_logs.len(),
        srun_logs.len(),
        expected.stdout.lines().count(),
        expected.stderr.lines().count(),
        started.elapsed().as_secs_f64()
    );
    drop(slurm);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `RANKS` nsys exports of one generated run, different seeds so that the ranks differ; their
/// absolute paths, sorted.
fn generate_ranks(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut traces: Vec<PathBuf> = (0..RANKS)
        .map(|k| {
            let path = dir.join(format!("rank_{k}.sqlite"));
            let seed = k.to_string();
            common::sightline_stdout(&[
                "gen-trace",
                "--events",
                "20000",
                "--gpus",
                "1",
                "--seed",
                &seed,
                path.to_str().unwrap(),
            ]);
            path
        })
        .collect();
    traces.sort();
    traces
}

/// Submits a batch job running `script` (with `XDG_CACHE_HOME` set to `cache`), waits for it,
/// fails the test unless it succeeded (showing the job outputs in `logs`); returns the job id.
fn submit(
    slurm: &SingleNodeSlurm,
    cache: &Path,
    logs: &Path,
    options: &[String],
    script: &str,
) -> String {
    let export = format!("--export=ALL,XDG_CACHE_HOME={}", cache.display());
    let mut args: Vec<&str> = options.iter().map(String::as_str).collect();
    args.extend([export.as_str(), "--time=10", "--wrap", script]);
    let out = slurm.sbatch_wait(&args, JOB_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let outputs: String = job_logs(logs, "")
            .iter()
            .map(|(path, text)| format!("--- {} ---\n{text}", path.display()))
            .collect();
        panic!(
            "sbatch {args:?} failed ({}): {stdout}{}\n{outputs}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            slurm.log_tails()
        );
    }
    stdout.split_whitespace().last().unwrap_or("?").to_string()
}

/// The digest step as a job runs it: no shard given, each task takes its own from Slurm's
/// environment.
fn digest_command(traces: &Path, out: &Path) -> String {
    format!(
        "{} digest {} --out {}",
        quote(Path::new(env!("CARGO_BIN_EXE_sightline"))),
        quote(traces),
        quote(out)
    )
}

/// `digests/manifest.json` names every trace once, by its absolute path; its folders are the rank
/// folders there, each with its Parquet tables.
fn check_each_trace_once(digests: &Path, traces: &[PathBuf]) {
    let manifest_path = digests.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path)
        .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display()));
    let manifest: serde_json::Value = serde_json::from_str(&text).expect("manifest.json");
    let entries = manifest["ranks"].as_array().expect("manifest ranks");
    let field = |e: &serde_json::Value, name: &str| e[name].as_str().expect(name).to_string();
    let mut sources: Vec<PathBuf> = entries.iter().map(|e| field(e, "source").into()).collect();
    sources.sort();
    assert_eq!(sources, traces, "the traces in {}", manifest_path.display());
    let mut folders: Vec<String> = entries.iter().map(|e| field(e, "folder")).collect();
    folders.sort();
    let mut on_disk: Vec<String> = std::fs::read_dir(digests)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, folders, "rank folders in {}", digests.display());
    for folder in &folders {
        let parquet = std::fs::read_dir(digests.join(folder))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "parquet"))
            })
            .count();
        assert!(parquet > 0, "no Parquet in {}/{folder}", digests.display());
    }
}

/// Each task's output says which shard it took (from `variable`, one of `tasks`) and names the
/// traces it digested: shard k digests trace i of the sorted list when i % tasks == k, so the
/// tasks together digest every trace once.
fn check_shards(logs: &[(PathBuf, String)], traces: &[PathBuf], variable: &str, tasks: usize) {
    assert_eq!(logs.len(), tasks, "one output per task: {logs:?}");
    let shard_line = regex::Regex::new(r"(?m)^shard (\d+)/(\d+) \(([^)]*)\)").unwrap();
    let mut seen = Vec::new();
    for (path, text) in logs {
        let shards: Vec<_> = shard_line.captures_iter(text).collect();
        assert_eq!(
            shards.len(),
            1,
            "one shard line in {}:\n{text}",
            path.display()
        );
        let index: usize = shards[0][1].parse().unwrap();
        let count: usize = shards[0][2].parse().unwrap();
        assert_eq!(count, tasks, "{}:\n{text}", path.display());
        assert!(
            shards[0][3].contains(variable),
            "shard from {variable} in {}:\n{text}",
            path.display()
        );
        let digested: Vec<&PathBuf> = traces
            .iter()
            .filter(|t| {
                let start = format!("{}: ", t.display());
                text.lines().any(|l| l.starts_with(&start))
            })
            .collect();
        let its_share: Vec<&PathBuf> = traces
            .iter()
            .enumerate()
            .filter(|(i, _)| i % tasks == index)
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            digested,
            its_share,
            "shard {index} in {}:\n{text}",
            path.display()
        );
        seen.push(index);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..tasks).collect::<Vec<_>>(), "{logs:?}");
}

/// The job output files in `logs` whose names start with `prefix`, with their text.
fn job_logs(logs: &Path, prefix: &str) -> Vec<(PathBuf, String)> {
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    files.sort();
    files
}

/// A path as one shell word (the test's paths have no single quote).
fn quote(path: &Path) -> String {
    format!("'{}'", path.display())
}

/// What the built `sightline ARGS` printed, failing the test unless it succeeded.
struct Printed {
    stdout: String,
    stderr: String,
}

fn sightline(cache: &Path, args: &[String]) -> Printed {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("SIGHTLINE_CACHE_DIR")
        .output()
        .expect("run sightline");
    let printed = Printed {
        stdout: String::from_utf8(out.stdout).expect("utf-8"),
        stderr: String::from_utf8(out.stderr).expect("utf-8"),
    };
    assert!(
        out.status.success(),
        "sightline {args:?}: {}",
        printed.stderr
    );
    printed
}

/// The issue's scale benchmark (BENCHMARKS.md "Issue 35"), run by hand: `cargo test --release
/// --test slurm_digest -- --ignored --nocapture`. `SIGHTLINE_BENCH_RANKS` ranks (1,024) of one
/// 100k-event generated trace, hard-linked, digested by a Slurm job array of two tasks on this
/// machine; then `ranks DIGESTS/` timed. Prints the times; asserts only that it worked.
#[test]
#[ignore = "a benchmark: minutes of work, run by hand"]
fn bench_ranks_digested_by_a_slurm_job_array() {
    let Some(slurm) = common::slurm::start_or_skip("slurm_digest bench") else {
        return;
    };
    let n: usize = std::env::var("SIGHTLINE_BENCH_RANKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let dir = common::scratch_dir("slurm-bench");
    let cache = dir.join("cache");
    let traces = dir.join("traces");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&traces).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    let first = traces.join("rank_0.sqlite");
    common::sightline_stdout(&[
        "gen-trace",
        "--events",
        "100000",
        "--gpus",
        "1",
        first.to_str().unwrap(),
    ]);
    for k in 1..n {
        std::fs::hard_link(&first, traces.join(format!("rank_{k}.sqlite"))).unwrap();
    }
    let out = dir.join("digests");
    let started = Instant::now();
    let job = submit(
        &slurm,
        &cache,
        &logs,
        &[
            "--array=0-1".to_string(),
            format!("--output={}/array_%A_%a.out", logs.display()),
        ],
        &digest_command(&traces, &out),
    );
    let digest_s = started.elapsed().as_secs_f64();
    for (path, text) in job_logs(&logs, "array_") {
        println!("{}: {}", path.display(), text.lines().last().unwrap_or(""));
    }
    let opened = Instant::now();
    let got = sightline(&cache, &["ranks".into(), out.display().to_string()]);
    let ranks_s = opened.elapsed().as_secs_f64();
    assert!(got.stderr.starts_with("clock: "), "{}", got.stderr);
    println!(
        "{n} ranks × 100k events: Slurm job array {job} (2 tasks) digested them in {digest_s:.1} \
         s; `ranks DIGESTS/` took {ranks_s:.2} s"
    );
    drop(slurm);
    let _ = std::fs::remove_dir_all(&dir);
}
