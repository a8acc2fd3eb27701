//! XProf itself (`pip install xprof==2.24.2` into a scratch venv in the temp folder) converts
//! each JAX profile here — the two shared ones (`../shared/traces/jax`) and the fresh capture in
//! `tests/fixtures/jax` — to its tool data (`kernel_stats`, `framework_op_stats`,
//! `overview_page`; each tool on a clean copy of the XPlane, `tests/scripts/xprof_tool_data.py`),
//! and `xla_kernel_stats`, `xla_op_stats` and the steps of `iterations` are compared with it cell
//! by cell. Skipped, loudly, where the registry cannot be reached.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use sightline::load::load_file;

const XPROF: &str = "xprof==2.24.2";
const TOOLS: [&str; 4] = [
    "kernel_stats",
    "framework_op_stats",
    "overview_page",
    "trace_viewer",
];

/// (name, XPlane) of every JAX profile the test can reach.
fn profiles() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    if let Some(root) = common::shared_traces() {
        for name in ["jax_train", "jax_train_nocb"] {
            let dir = root.join("jax").join(name);
            for xplane in sightline::load::xplane::xplanes_in_folder(&dir) {
                found.push((name.to_string(), xplane));
            }
        }
    } else {
        eprintln!("SKIPPED: ../shared/traces is absent: only the fixture is converted");
    }
    // Each folder of tests/fixtures/jax is a `DIR` jax.profiler wrote on the GPU machine.
    let fixtures = common::fixtures().join("jax");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        for xplane in sightline::load::xplane::xplanes_in_folder(dir) {
            found.push((name.clone(), xplane));
        }
    }
    found
}

/// The scratch venv's Python with XProf (skipped, loudly, without the registry) and the script
/// that runs XProf's tools on a clean copy of an XPlane.
fn xprof() -> Option<(PathBuf, PathBuf)> {
    let python = common::venv::python_with(
        "sightline_xprof_venv",
        "xprof.convert.raw_to_tool_data",
        &[XPROF],
        None,
    )?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/xprof_tool_data.py");
    Some((python, script))
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}")))
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

#[test]
fn xprof_run_here_gives_our_tables_on_every_jax_profile() {
    let Some((python, script)) = xprof() else {
        return;
    };
    let profiles = profiles();
    assert!(!profiles.is_empty(), "no JAX profile to convert");
    let scratch = common::scratch_dir("xprof_tool_data");
    let (mut cells, mut rows) = (0, 0);
    for (name, xplane) in &profiles {
        let out = scratch.join(name);
        let run = Command::new(&python)
            .arg(&script)
            .arg(xplane)
            .arg(&out)
            .args(TOOLS)
            .output()
            .expect("run python");
        assert!(
            run.status.success(),
            "{name}: XProf failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let t = load_file(xplane).unwrap_or_else(|e| panic!("{e}"));

        let kernels = common::xprof::kernel_stats(&t, &read_json(&out.join("kernel_stats.json")));
        assert!(
            kernels.cells > 0 && kernels.differ.is_empty(),
            "{name}: kernel_stats {:#?}",
            kernels.differ
        );
        let ops =
            common::xprof::framework_op_stats(&t, &read_json(&out.join("framework_op_stats.json")));
        assert!(
            ops.cells > 0 && ops.differ.is_empty(),
            "{name}: framework_op_stats {ops:#?}"
        );
        let steps = common::xprof::overview_steps(&t, &read_json(&out.join("overview_page.json")));
        assert!(
            steps.rows > 0 && steps.differ.is_empty(),
            "{name}: overview_page {steps:#?}"
        );
        let lines = common::xprof::derived_lines(&t, &read_json(&out.join("trace_viewer.json")));
        assert!(
            lines.rows > 0 && lines.differ.is_empty(),
            "{name}: trace_viewer's XLA Modules / XLA Ops {lines:#?}"
        );
        println!(
            "{name}: XProf {XPROF} here: kernel_stats {} rows, {} cells equal; framework_op_stats {} rows, {} cells equal; {} steps' times equal; {} XLA Modules / XLA Ops ranges equal",
            kernels.rows, kernels.cells, ops.rows, ops.cells, steps.rows, lines.rows
        );
        cells += kernels.cells + ops.cells + steps.cells + lines.cells;
        rows += kernels.rows + ops.rows + steps.rows + lines.rows;
    }
    println!(
        "{} profiles converted by XProf: {rows} rows, {cells} cells compared",
        profiles.len()
    );
}

/// Public XPlanes (test data of TraceLens, XProf and TensorFlow's profiler, gathered as
/// docs/jax.md says) in the folder `SIGHTLINE_PUBLIC_XPLANES`: each opens without a panic, or
/// fails with a message naming the file where XProf cannot read it either; where XProf converts
/// it, the kernels equal XProf's `kernel_stats` occurrences and the cells of the three tables
/// are counted (printed: those profiles are other programs, GPUs and JAX / TensorFlow versions).
#[test]
fn public_xplanes_open_and_their_kernels_equal_xprof() {
    let Some(folder) = std::env::var_os("SIGHTLINE_PUBLIC_XPLANES") else {
        eprintln!("SKIPPED: SIGHTLINE_PUBLIC_XPLANES names no folder of public XPlanes");
        return;
    };
    let Some((python, script)) = xprof() else {
        return;
    };
    let xplanes = sightline::load::xplane::xplanes_in_folder(Path::new(&folder));
    assert!(!xplanes.is_empty(), "no XPlane in {folder:?}");
    let scratch = common::scratch_dir("xprof_public");
    let (mut opened, mut refused, mut cells, mut differ) = (0, 0, 0, 0);
    for xplane in &xplanes {
        let name = xplane.file_name().unwrap().to_string_lossy().to_string();
        let out = scratch.join(&name);
        let run = Command::new(&python)
            .arg(&script)
            .arg(xplane)
            .arg(&out)
            .args(TOOLS)
            .output()
            .expect("run python");
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let xprof_read = out.join("kernel_stats.json").is_file();
        let loaded = std::thread::spawn({
            let xplane = xplane.clone();
            move || load_file(&xplane)
        })
        .join()
        .unwrap_or_else(|_| panic!("{name}: the load panicked"));
        let t = match loaded {
            Ok(t) => t,
            Err(e) => {
                assert!(!xprof_read, "{name}: XProf reads it, we do not: {e}");
                assert!(e.to_string().contains(&*xplane.to_string_lossy()), "{e}");
                println!("{name}: neither XProf nor Sightline reads it: {e}");
                refused += 1;
                continue;
            }
        };
        opened += 1;
        if !xprof_read {
            println!(
                "{name}: opens ({} kernels); XProf gives no tool data",
                t.kernels.spans.len()
            );
            continue;
        }
        let kernel_json = read_json(&out.join("kernel_stats.json"));
        let occurrences: f64 = kernel_json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["c"][10]["v"].as_f64().unwrap())
            .sum();
        assert_eq!(t.kernels.spans.len() as f64, occurrences, "{name}: kernels");
        let kernels = common::xprof::kernel_stats(&t, &kernel_json);
        let ops =
            common::xprof::framework_op_stats(&t, &read_json(&out.join("framework_op_stats.json")));
        let steps = common::xprof::overview_steps(&t, &read_json(&out.join("overview_page.json")));
        println!(
            "{name}: {} kernels = XProf's occurrences; kernel_stats {} cells, {} differ; framework_op_stats {} cells, {} differ; steps {} rows, {} differ",
            t.kernels.spans.len(),
            kernels.cells,
            kernels.differ.len(),
            ops.cells,
            ops.differ.len(),
            steps.rows,
            steps.differ.len()
        );
        for d in kernels
            .differ
            .iter()
            .chain(&ops.differ)
            .chain(&steps.differ)
            .take(6)
        {
            println!("  {d}");
        }
        cells += kernels.cells + ops.cells + steps.cells;
        differ += kernels.differ.len() + ops.differ.len() + steps.differ.len();
    }
    println!(
        "{} public XPlanes: {opened} open, {refused} refused with a message (XProf cannot read them either); {cells} cells compared with XProf, {differ} differ",
        xplanes.len()
    );
}

/// A TPU profile (XProf's own test data, tests/fixtures/xplane_public): each `/device:TPU:N`
/// opens as device N, titled by its `device_type_string`, with its lines as rows; each line XProf's
/// trace viewer shows under the same name has as many events (its ranges and its zero-length
/// instants) as ours.
#[test]
fn tpu_planes_open_as_devices_with_xprofs_lines() {
    use std::collections::BTreeMap;
    let xplane = common::fixtures()
        .join("xplane_public/openxla_xprof_convert_test_xplanes_tpu_inference_2_2cc1243.xplane.pb");
    let t = load_file(&xplane).unwrap_or_else(|e| panic!("{e}"));
    let tpus: Vec<&sightline::trace::GpuInfo> = t
        .gpus
        .iter()
        .filter(|g| g.kind == sightline::trace::DeviceKind::Tpu)
        .collect();
    assert_eq!(tpus.len(), 4, "four TPU planes");
    assert_eq!(t.gpu_title(0), "TPU 0 · TPU v6 Lite");
    // Ours: (device, line) → ranges.
    let mut ours: BTreeMap<(u32, String), usize> = BTreeMap::new();
    for i in 0..t.nvtx.spans.len() {
        if t.nvtx.kind_of(i) != sightline::trace::RangeKind::GpuAnnotation {
            continue;
        }
        let device = (t.nvtx.global_tid[i] & 0xFF_FFFF) as u32;
        *ours
            .entry((device, t.str(t.nvtx.domain[i]).to_string()))
            .or_default() += 1;
    }
    let Some((python, script)) = xprof() else {
        return;
    };
    let out = common::scratch_dir("xprof_tpu");
    let run = Command::new(&python)
        .arg(&script)
        .arg(&xplane)
        .arg(&out)
        .arg("trace_viewer")
        .output()
        .expect("run python");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tv = read_json(&out.join("trace_viewer.json"));
    let events = tv["traceEvents"].as_array().unwrap();
    let (mut process, mut line) = (BTreeMap::new(), BTreeMap::new());
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let pid = e["pid"].as_i64().unwrap_or(-1);
        let name = e["args"]["name"].as_str().unwrap_or("").to_string();
        if e["name"] == "process_name" {
            process.insert(pid, name);
        } else if e["name"] == "thread_name" {
            line.insert((pid, e["tid"].as_i64().unwrap_or(-1)), name);
        }
    }
    let mut theirs: BTreeMap<(u32, String), usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X" || e["ph"] == "i") {
        let pid = e["pid"].as_i64().unwrap_or(-1);
        let device = process
            .get(&pid)
            .and_then(|p| p.strip_prefix("/device:TPU:"))
            .and_then(|n| n.parse::<u32>().ok());
        let name = line.get(&(pid, e["tid"].as_i64().unwrap_or(-1)));
        if let (Some(device), Some(name)) = (device, name) {
            *theirs.entry((device, name.clone())).or_default() += 1;
        }
    }
    let mut compared = 0;
    for (key, &n) in &ours {
        if let Some(&want) = theirs.get(key) {
            assert_eq!(n, want, "{key:?}: ours {n}, XProf {want}");
            compared += n;
        }
    }
    for device in 0..4 {
        for name in ["XLA Modules", "XLA Ops", "XLA TraceMe"] {
            assert!(
                ours.contains_key(&(device, name.to_string()))
                    && theirs.contains_key(&(device, name.to_string())),
                "TPU {device}: {name}"
            );
        }
    }
    println!(
        "TPU profile: 4 devices, {} lines of ours; {compared} events on the lines XProf shows by the same name equal in number",
        ours.len()
    );
}
