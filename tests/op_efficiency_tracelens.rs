//! TraceLens itself (AMD-AGI/TraceLens at commit `171dd747`, installed in a scratch venv) run on
//! our `kt_train` trace and on five of its own test traces (`tests/traces/h100/`: BERT-small,
//! Falconsai NSFW ViT (a convolution), TimeSformer (an upsample), Qwen1.5-0.5B; `tests/traces/
//! b200/eager_trace`),
//! its `unified_perf_summary.csv` against `summary --report op_efficiency`: every row of its with
//! FLOPs (but the attention backward and Triton-compiled kernels, whose models Sightline does not
//! copy: docs/pytorch.md) has a row of ours with the same Name, Input Dims, Input Type, Count and
//! category, GFLOPS and MB within 0.1 %, TFLOPS/s Mean and kernel time within 1 %.
//!
//! TraceLens comes from a copy of its repository: `SIGHTLINE_TRACELENS_REPO` (a git directory,
//! e.g. a `fetch` mirror; default `../.mirror/AMD-AGI+TraceLens/repo`), of which `git archive
//! 171dd747 TraceLens setup.py README.md MANIFEST.in` is pip-installed with its dependencies from
//! the package registry. Skipped, loudly, without the repository or the registry.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const COMMIT: &str = "171dd747";

/// Its test traces compared, as paths in its repository.
const ITS_TRACES: [&str; 5] = [
    "tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
    "tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
    "tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
    "tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tests/traces/b200/eager_trace.json.gz",
];

fn repo() -> Option<PathBuf> {
    let repo = std::env::var_os("SIGHTLINE_TRACELENS_REPO")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../.mirror/AMD-AGI+TraceLens/repo")
        });
    let has_commit = Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .args(["cat-file", "-e", &format!("{COMMIT}^{{commit}}")])
        .status()
        .is_ok_and(|s| s.success());
    if !has_commit {
        eprintln!(
            "SKIPPED: no TraceLens repository with commit {COMMIT} at {} (set SIGHTLINE_TRACELENS_REPO)",
            repo.display()
        );
        return None;
    }
    Some(repo)
}

/// `git archive` of the package's files, unpacked into `dir`.
fn sources(repo: &Path, dir: &Path) -> bool {
    let archive = Command::new("git")
        .arg("--git-dir")
        .arg(repo)
        .args([
            "archive",
            COMMIT,
            "TraceLens",
            "setup.py",
            "README.md",
            "MANIFEST.in",
        ])
        .output()
        .expect("git archive");
    if !archive.status.success() {
        eprintln!(
            "SKIPPED: git archive failed: {}",
            String::from_utf8_lossy(&archive.stderr)
        );
        return false;
    }
    let tar = dir.join("src.tar");
    std::fs::write(&tar, &archive.stdout).unwrap();
    Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
}

fn num(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

type Record = HashMap<String, String>;

fn records(text: &str) -> Vec<Record> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Compares one trace; returns (rows compared, differences).
fn compare(ours: &str, theirs: &str) -> (usize, Vec<String>) {
    let ours = records(ours);
    let theirs = records(theirs);
    let mut pool: HashMap<(String, String, String), Vec<&Record>> = HashMap::new();
    for r in &ours {
        pool.entry((
            r["Name"].clone(),
            r["Input Dims"].clone(),
            r["Input Type"].clone(),
        ))
        .or_default()
        .push(r);
    }
    let (mut compared, mut diffs) = (0, Vec::new());
    for t in &theirs {
        let category = t["op category"].as_str();
        if num(&t["GFLOPS"]).is_none() || category == "SDPA_bwd" || category == "triton" {
            continue;
        }
        let key = (
            t["name"].clone(),
            t["Input Dims"].clone(),
            t["Input type"].clone(),
        );
        let want_count = num(&t["operation_count"]).unwrap_or(0.0) as i64;
        let want_time = num(&t["Kernel Time (µs)_sum"]).unwrap_or(0.0);
        let candidates = pool.entry(key).or_default();
        let best = candidates
            .iter()
            .enumerate()
            .filter(|(_, r)| num(&r["Count"]).map(|c| c as i64) == Some(want_count))
            .min_by(|a, b| {
                let d =
                    |r: &Record| (num(&r["Kernel Time Sum (µs)"]).unwrap_or(0.0) - want_time).abs();
                d(a.1).total_cmp(&d(b.1))
            })
            .map(|(k, _)| k);
        let Some(k) = best else {
            diffs.push(format!(
                "no row {} {} of count {want_count}",
                t["name"], t["Input Dims"]
            ));
            continue;
        };
        let got = candidates.remove(k);
        compared += 1;
        if got["Category"] != t["op category"] {
            diffs.push(format!(
                "{}: category {} ≠ {}",
                t["name"], got["Category"], category
            ));
        }
        for (ours_col, their_col, rel) in [
            ("GFLOPS", "GFLOPS", 1e-3),
            ("Data Moved (MB)", "Data Moved (MB)", 1e-3),
            ("TFLOPS/s Mean", "TFLOPS/s_mean", 1e-2),
            ("Kernel Time Sum (µs)", "Kernel Time (µs)_sum", 1e-2),
        ] {
            let (g, w) = (num(&got[ours_col]), num(&t[their_col]));
            let same = match (g, w) {
                (Some(g), Some(w)) => (g - w).abs() <= w.abs() * rel,
                (None, None) => true,
                _ => false,
            };
            if !same {
                diffs.push(format!(
                    "{} {}: {ours_col} {g:?} ≠ {w:?}",
                    t["name"], t["Input Dims"]
                ));
            }
        }
    }
    (compared, diffs)
}

#[test]
fn tracelens_itself_agrees_on_its_traces_and_ours() {
    let Some(repo) = repo() else {
        return;
    };
    let dir = common::scratch_dir("tracelens");
    if !sources(&repo, &dir) {
        return;
    }
    let Some(python) = common::venv::python_with(
        &format!("sightline-tracelens-{COMMIT}"),
        "TraceLens",
        &[dir.to_str().unwrap()],
        None,
    ) else {
        return;
    };
    let mut traces: Vec<PathBuf> = Vec::new();
    for path in ITS_TRACES {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&repo)
            .args(["show", &format!("{COMMIT}:{path}")])
            .output()
            .unwrap();
        if out.status.success() {
            let file = dir.join(path.replace('/', "_"));
            std::fs::write(&file, &out.stdout).unwrap();
            traces.push(file);
        } else {
            eprintln!("SKIPPED: {path} is not in the repository copy");
        }
    }
    if let Some(shared) = common::shared_traces() {
        traces.push(shared.join("pytorch/kt_train.pt.trace.json.gz"));
    }
    let mut total = 0;
    let mut failures = Vec::new();
    for trace in &traces {
        let out_dir = dir.join(format!(
            "out_{}",
            trace.file_name().unwrap().to_string_lossy()
        ));
        let run = Command::new(&python)
            .args(["-m", "TraceLens.Reporting.generate_perf_report_pytorch"])
            .arg("--profile_json_path")
            .arg(trace)
            .arg("--output_csvs_dir")
            .arg(&out_dir)
            .arg("--enable_kernel_summary")
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "TraceLens on {}: {}",
            trace.display(),
            String::from_utf8_lossy(&run.stderr)
        );
        let theirs = std::fs::read_to_string(out_dir.join("unified_perf_summary.csv")).unwrap();
        let ours = common::sightline_stdout(&[
            "summary",
            trace.to_str().unwrap(),
            "--report",
            "op_efficiency",
            "--format",
            "csv",
        ]);
        let (n, diffs) = compare(&ours, &theirs);
        eprintln!(
            "{}: {n} rows with FLOPs compared, {} differ",
            trace.display(),
            diffs.len()
        );
        assert!(n > 0, "{}: nothing compared", trace.display());
        total += n;
        failures.extend(
            diffs
                .into_iter()
                .map(|d| format!("{}: {d}", trace.display())),
        );
    }
    eprintln!("{} traces, {total} rows compared", traces.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
