//! Digests written by real Slurm jobs (issue 35: "tested on a real engine"): a private
//! single-node Slurm (`common::slurm`) runs the digest step as a job array and as `srun -n 2`
//! inside a batch job, over 16 generated ranks; every trace must be digested exactly once per
//! output folder. Skipped, saying so, where Slurm cannot run; on CI (`SIGHTLINE_REQUIRE_SLURM=1`)
//! it must run.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::slurm::SingleNodeSlurm;

const RANKS: usize = 16;
const ARRAY_TASKS: usize = 4;
const SRUN_TASKS: usize = 2;
/// Each job digests a few ranks of 20,000 events: seconds. A minute per job says it hangs.
const JOB_TIMEOUT: Duration = Duration::from_secs(300);

#[test]
fn digests_from_a_job_array_and_from_srun_cover_every_rank_once() {
    let Some(slurm) = common::slurm::start_or_skip("slurm_digest") else {
        return;
    };
    let started = Instant::now();
    let dir = common::scratch_dir("slurm-digest");
    let traces_dir = dir.join("traces");
    let traces = generate_ranks(&traces_dir);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();

    let array_out = dir.join("digests_array");
    let array_job = submit(
        &slurm,
        &[
            format!("--array=0-{}", ARRAY_TASKS - 1),
            format!("--output={}/array_%A_%a.out", logs.display()),
        ],
        &digest_command(&traces_dir, &array_out),
    );
    let srun_out = dir.join("digests_srun");
    let srun_job = submit(
        &slurm,
        &[
            format!("--ntasks={SRUN_TASKS}"),
            format!("--output={}/srun_%j.out", logs.display()),
        ],
        &format!(
            "srun --ntasks={SRUN_TASKS} {}",
            digest_command(&traces_dir, &srun_out)
        ),
    );

    let array_folders = check_each_trace_once(&array_out, &traces);
    let srun_folders = check_each_trace_once(&srun_out, &traces);
    let array_logs = job_logs(&logs, "array_");
    let srun_logs = job_logs(&logs, "srun_");
    assert_eq!(array_logs.len(), ARRAY_TASKS, "one output per array task");
    assert_eq!(srun_logs.len(), 1, "one output for the batch job");

    println!(
        "{RANKS} ranks in {}: job array {array_job} ({ARRAY_TASKS} tasks) wrote {array_folders} \
         rank folders, batch job {srun_job} (srun, {SRUN_TASKS} tasks) wrote {srun_folders}; \
         each trace once; {:.1} s",
        traces_dir.display(),
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
            let seed = (k + 1).to_string();
            let events = "20000";
            common::sightline_stdout(&[
                "gen-trace",
                "--events",
                events,
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

/// Submits a batch job running `script`, waits for it, fails the test unless it succeeded;
/// returns the job id.
fn submit(slurm: &SingleNodeSlurm, options: &[String], script: &str) -> String {
    let mut args: Vec<&str> = options.iter().map(String::as_str).collect();
    args.extend(["--time=10", "--wrap", script]);
    let out = slurm.sbatch_wait(&args, JOB_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sbatch {args:?} failed ({}): {stdout}{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        slurm.log_tails()
    );
    stdout.split_whitespace().last().unwrap_or("?").to_string()
}

/// The digest step as a job runs it. A stand-in until `sightline digest` lands: each task takes
/// trace i of the sorted list when i % tasks is its own index, as the command will.
fn digest_command(traces: &Path, out: &Path) -> String {
    let t = quote(traces);
    let o = quote(out);
    format!(
        "sh -c 'k=${{SLURM_ARRAY_TASK_ID:-$SLURM_PROCID}}; n=${{SLURM_ARRAY_TASK_COUNT:-$SLURM_NTASKS}}; \
         i=0; for t in $(ls {t}/*.sqlite | sort); do \
         if [ $((i % n)) = $k ]; then d={o}/$(basename $t .sqlite); mkdir -p $d; \
         touch $d/collectives.parquet; echo digested $t; fi; i=$((i+1)); done'"
    )
}

/// Every trace has exactly one rank folder under `digests`, holding Parquet files; returns how
/// many folders there are.
fn check_each_trace_once(digests: &Path, traces: &[PathBuf]) -> usize {
    let folders: Vec<PathBuf> = std::fs::read_dir(digests)
        .unwrap_or_else(|e| panic!("{}: {e}", digests.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    for trace in traces {
        let stem = trace.file_stem().unwrap().to_string_lossy();
        let matching: Vec<&PathBuf> = folders
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n.to_string_lossy() == stem))
            .collect();
        assert_eq!(matching.len(), 1, "{stem} in {}", digests.display());
        let parquet = std::fs::read_dir(matching[0])
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "parquet"))
            })
            .count();
        assert!(parquet > 0, "no Parquet in {}", matching[0].display());
    }
    assert_eq!(folders.len(), traces.len(), "{}", digests.display());
    folders.len()
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

/// A path as one shell word.
fn quote(path: &Path) -> String {
    format!("\"{}\"", path.display())
}
