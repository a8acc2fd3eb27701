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
const TOOLS: [&str; 3] = ["kernel_stats", "framework_op_stats", "overview_page"];

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
    let fixtures = common::fixtures().join("jax");
    for xplane in sightline::load::xplane::xplanes_in_folder(&fixtures) {
        let name = xplane
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".xplane.pb")
            .to_string();
        found.push((name, xplane));
    }
    found
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{path:?}: {e}")))
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

#[test]
fn xprof_run_here_gives_our_tables_on_every_jax_profile() {
    let Some(python) = common::venv::python_with(
        "sightline_xprof_venv",
        "xprof.convert.raw_to_tool_data",
        &[XPROF],
        None,
    ) else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts/xprof_tool_data.py");
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
        // XProf marks ops TensorCore eligible by a rule its sources here do not give (open, see
        // docs/jax.md): on jax_train_nocb 10 cells of that column differ, on jax_train none; on
        // the fixture any difference may only be in that column.
        let eligibility_only = kernels
            .differ
            .iter()
            .all(|d| d.contains("Op is TensorCore eligible"));
        let allowed = match name.as_str() {
            "jax_train" => Some(0),
            "jax_train_nocb" => Some(10),
            _ => None,
        };
        assert!(
            kernels.cells > 0
                && eligibility_only
                && allowed.is_none_or(|n| n == kernels.differ.len()),
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
        println!(
            "{name}: XProf {XPROF} here: kernel_stats {} rows, {} cells ({} differ, TensorCore eligibility); framework_op_stats {} rows, {} cells equal; {} steps' times equal",
            kernels.rows,
            kernels.cells,
            kernels.differ.len(),
            ops.rows,
            ops.cells,
            steps.rows
        );
        cells += kernels.cells + ops.cells + steps.cells;
        rows += kernels.rows + ops.rows + steps.rows;
    }
    println!(
        "{} profiles converted by XProf: {rows} rows, {cells} cells compared",
        profiles.len()
    );
}
