//! A PyTorch trace and the Nsight Compute report of the same program (`tests/fixtures/
//! kt_pair.pt.trace.json.gz` and `ncu_kt_pair.ncu-repz`, made on an H100 by
//! `tests/captures/run_kineto_ncu_device.sh`; the report recompressed with `zstd -19` to keep it
//! small, as `.ncu-repz`) join the way nsys exports do. ncu profiled the
//! captured steps with `--nvtx-include` on a range of the main thread, which leaves out the
//! backward pass (PyTorch's autograd thread launches it): the n-th profiled kernel is the n-th
//! kernel the main thread launched in the trace. This test reads that straight from the JSON
//! (each kernel's launching call by correlation id, its thread) and checks every row of
//! `summary --report ncu_join` against it, and each pair's launch shape against ncu's own raw
//! page of the report.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn gunzip(path: &Path) -> String {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

struct Kernel {
    correlation: u64,
    start_ns: i64,
    dur_ns: i64,
    stream: u64,
    grid: String,
    block: String,
}

/// The kernels the first launching thread launched, by correlation id.
fn main_thread_kernels(trace: &serde_json::Value) -> Vec<Kernel> {
    let events = trace["traceEvents"].as_array().unwrap();
    let corr = |e: &serde_json::Value| e["args"]["correlation"].as_u64();
    let launcher: HashMap<u64, u64> = events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
        .filter_map(|e| Some((corr(e)?, e["tid"].as_u64()?)))
        .collect();
    let shape = |v: &serde_json::Value| {
        let n: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap().to_string())
            .collect();
        format!("({})", n.join(", "))
    };
    let ns = |us: f64| (us * 1000.0).round() as i64;
    let mut kernels: Vec<(u64, Kernel)> = events
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| {
            let c = corr(e).unwrap();
            (
                launcher[&c],
                Kernel {
                    correlation: c,
                    start_ns: ns(e["ts"].as_f64().unwrap()),
                    dur_ns: ns(e["dur"].as_f64().unwrap()),
                    stream: e["args"]["stream"].as_u64().unwrap(),
                    grid: shape(&e["args"]["grid"]),
                    block: shape(&e["args"]["block"]),
                },
            )
        })
        .collect();
    kernels.sort_by_key(|(_, k)| k.correlation);
    let main = kernels[0].0;
    let all = kernels.len();
    let main_only: Vec<Kernel> = kernels
        .into_iter()
        .filter(|(t, _)| *t == main)
        .map(|(_, k)| k)
        .collect();
    assert!(
        main_only.len() < all,
        "the autograd thread launched kernels too"
    );
    main_only
}

#[test]
fn a_pytorch_trace_joins_every_profiled_kernel() {
    let trace_path = fixture("kt_pair.pt.trace.json.gz");
    let report_path = fixture("ncu_kt_pair.ncu-repz");
    let trace: serde_json::Value = serde_json::from_str(&gunzip(&trace_path)).unwrap();
    let expected = main_thread_kernels(&trace);

    // ncu's own raw page: one row per profiled kernel, with its launch shape.
    let raw = gunzip(&fixture("ncu_kt_pair.raw.csv.gz"));
    let mut rows = csv::Reader::from_reader(raw.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |c: &str| header.iter().position(|h| h == c).unwrap();
    let (grid_col, block_col) = (col("Grid Size"), col("Block Size"));
    let ncu_rows: Vec<csv::StringRecord> = rows.records().skip(1).map(|r| r.unwrap()).collect();
    assert_eq!(
        ncu_rows.len(),
        expected.len(),
        "one profiled kernel per main-thread launch"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["summary"])
        .arg(&trace_path)
        .arg("--ncu")
        .arg(&report_path)
        .args(["--report", "ncu_join", "--format", "csv"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(stdout.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "ID",
            "Kernel Name",
            "Matched",
            "Correlation ID",
            "Start (ns)",
            "Duration (ns)",
            "Device",
            "Stream"
        ]
    );
    let joined: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(joined.len(), expected.len());
    for (i, ((row, want), ncu_row)) in joined.iter().zip(&expected).zip(&ncu_rows).enumerate() {
        assert_eq!(row[0], i.to_string());
        assert_eq!(&row[2], "yes", "kernel {i} ({}) unmatched", &row[1]);
        assert_eq!(row[3], want.correlation.to_string(), "kernel {i}");
        assert_eq!(row[4], want.start_ns.to_string(), "kernel {i}");
        assert_eq!(row[5], want.dur_ns.to_string(), "kernel {i}");
        assert_eq!(row[7], want.stream.to_string(), "kernel {i}");
        assert_eq!(ncu_row[grid_col], want.grid, "kernel {i}: grid");
        assert_eq!(ncu_row[block_col], want.block, "kernel {i}: block");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("60 of 60"), "{stderr}");
    eprintln!(
        "{} profiled kernels matched to the PyTorch trace's main-thread launches ({} kernels in the trace)",
        joined.len(),
        trace["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel")
            .count()
    );
}
