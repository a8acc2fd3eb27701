//! `sightline diff A B --run TRACES…`: two ranks of one run compared, each rank found as
//! `sightline ranks` finds it (process environment, distributedInfo), on the bundled NCCL runs.
//! The rank's file is the same as naming the file: the outputs equal those of `diff FILE FILE`,
//! whatever order or names the run's files have.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;
use std::process::Command;

fn nccl(rel: &str) -> String {
    common::fixtures()
        .join("nccl")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

#[test]
fn ranks_of_an_nsys_run_diff_as_their_files() {
    let (r0, r1) = (nccl("n25_ddp_rank0.sqlite"), nccl("n25_ddp_rank1.sqlite"));
    for report in ["cuda_gpu_kern_sum", "headline"] {
        let direct =
            common::sightline_stdout(&["diff", &r1, &r0, "--report", report, "--format", "csv"]);
        // The run's files in either order: rank 1 is the export whose process had RANK=1.
        for files in [[&r0, &r1], [&r1, &r0]] {
            let out = run(&[
                "diff", "rank:1", "0", "--report", report, "--format", "csv", "--run", files[0],
                files[1],
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout), direct, "{report}");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(
                said.contains("rank 1 (process environment)") && said.contains("n25_ddp_rank1"),
                "{said}"
            );
        }
    }
    // Rank 1 computes longer, so rank 0 waits inside the all-reduce: its NCCL kernel time is the
    // larger by far (the run's straggler, as tests/nccl_runs.rs finds it).
    let kern = common::sightline_stdout(&["diff", "1", "0", "--format", "csv", "--run", &r0, &r1]);
    let allreduce = kern
        .lines()
        .find(|l| l.starts_with("ncclDevKernel_AllReduce"))
        .expect("the all-reduce kernel in both ranks");
    let cells: Vec<&str> = allreduce.rsplitn(11, ',').collect();
    // Base Total (ns) and New Total (ns), counted from the end (the name may hold commas).
    let (base_total, new_total): (i64, i64) =
        (cells[7].parse().unwrap(), cells[6].parse().unwrap());
    assert!(new_total > 10 * base_total, "{allreduce}");
}

#[test]
fn ranks_of_a_pytorch_run_come_from_distributed_info_not_names() {
    // The 4-GPU run copied into a folder under names that say nothing of the rank, in another
    // order: rank 3 must still be kt_ddp_4gpu_rank3's trace.
    let dir = common::scratch_dir("diff-ranks");
    let names = ["d", "c", "b", "a"];
    for (rank, name) in names.iter().enumerate() {
        std::fs::copy(
            nccl(&format!("pytorch/kt_ddp_4gpu_rank{rank}.pt.trace.json.gz")),
            dir.join(format!("{name}.pt.trace.json.gz")),
        )
        .unwrap();
    }
    let folder = dir.to_string_lossy().into_owned();
    let direct = common::sightline_stdout(&[
        "diff",
        &nccl("pytorch/kt_ddp_4gpu_rank3.pt.trace.json.gz"),
        &nccl("pytorch/kt_ddp_4gpu_rank0.pt.trace.json.gz"),
        "--format",
        "csv",
    ]);
    let out = run(&["diff", "3", "0", "--format", "csv", "--run", &folder]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), direct);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("rank 3 (distributedInfo.rank)") && said.contains("a.pt.trace.json.gz"),
        "{said}"
    );

    // A rank the run lacks is named, with the ranks it has.
    let missing = run(&["diff", "7", "0", "--run", &folder]);
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(
        said.contains("no rank 7 (its ranks: [0, 1, 2, 3])"),
        "{said}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ranks_takes_a_folder() {
    let dir: PathBuf = common::scratch_dir("ranks-folder");
    for r in 0..2 {
        let name = format!("n25_moe_a2a_rank{r}.sqlite");
        std::fs::copy(nccl(&name), dir.join(&name)).unwrap();
    }
    let folder = dir.to_string_lossy().into_owned();
    let files = [
        nccl("n25_moe_a2a_rank0.sqlite"),
        nccl("n25_moe_a2a_rank1.sqlite"),
    ];
    let by_files = common::sightline_stdout(&["ranks", &files[0], &files[1], "--format", "csv"]);
    let by_folder = common::sightline_stdout(&["ranks", &folder, "--format", "csv"]);
    // The Trace column names the file: compare everything else.
    let strip = |csv: &str| -> Vec<String> {
        csv.lines()
            .map(|l| {
                let mut cells: Vec<&str> = l.split(',').collect();
                cells.remove(1);
                cells.join(",")
            })
            .collect()
    };
    assert_eq!(strip(&by_folder), strip(&by_files));
    assert_eq!(by_folder.lines().count(), 3, "{by_folder}");
    std::fs::remove_dir_all(&dir).unwrap();
}
