//! The Python package (`python/`, docs/python.md) installed and tested the way a user installs it:
//! a virtual environment under `target/python-venv`, `pip install ./python` (maturin builds the
//! extension in this workspace's `target/`, reusing the library this `cargo test` compiled), then
//! `python -m pytest python/tests`, whose oracle is the `sightline` binary built here.
//!
//! Skipped, loudly, only when pip cannot reach the package registry for maturin, pytest, pandas,
//! numpy, pyarrow and nvidia-cuda-nvdisasm; a failing build or a failing Python test fails this test. Every test of
//! the suite must run: a skipped one fails this test too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `target/` this test binary was built into (`target/release/deps/…`), where the wheel's
/// build must go to reuse the compiled library.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("this test's path: {e}"));
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| root().join("target"))
}

fn run(command: &mut Command, what: &str) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not start it: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether pip's failure says the registry could not be reached (rather than a real failure).
fn unreachable_registry(output: &str) -> bool {
    [
        "Failed to establish a new connection",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "No matching distribution found",
        "Could not find a version that satisfies",
        "ConnectTimeoutError",
        "ReadTimeoutError",
        "ProxyError",
        "SSLError",
    ]
    .iter()
    .any(|m| output.contains(m))
}

#[test]
fn python_package_matches_the_command_line() {
    let target = target_dir();
    let venv = target.join("python-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        let made = run(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            "python3 -m venv",
        );
        assert!(
            made.status.success(),
            "python3 -m venv {} failed (on Debian/Ubuntu: apt-get install python3-venv): {}",
            venv.display(),
            text(&made)
        );
    }
    let path = format!(
        "{}:{}",
        venv.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // pyarrow for `output="arrow"`, which the package offers when it is installed;
    // nvidia-cuda-nvdisasm for `NcuReport.source` (NVIDIA's disassembler, an executable in the
    // environment's site-packages).
    let tools = ["maturin", "pytest", "pandas", "numpy", "pyarrow"];
    let have_tools = run(
        Command::new(&python).args([
            "-c",
            &format!(
                "import {}, pathlib, sys; assert any(pathlib.Path(sys.prefix).rglob('nvdisasm'))",
                tools.join(", ")
            ),
        ]),
        "python",
    )
    .status
    .success();
    if !have_tools {
        let got = run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(["maturin>=1.5,<2", "pytest", "pandas", "numpy", "pyarrow"])
                .arg("nvidia-cuda-nvdisasm"),
            "pip install maturin pytest pandas numpy pyarrow nvidia-cuda-nvdisasm",
        );
        if !got.status.success() {
            let said = text(&got);
            if unreachable_registry(&said) {
                eprintln!(
                    "SKIPPED: the Python package was not tested: pip cannot reach the package \
                     registry for {}:\n{said}",
                    tools.join(", ")
                );
                return;
            }
            panic!("pip install {} failed:\n{said}", tools.join(" "));
        }
    }

    // The package itself, rebuilt every run from this checkout (no network: maturin is in the
    // environment, the dependencies too).
    let started = Instant::now();
    let built = run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-build-isolation", "--no-deps", "--force-reinstall"])
            .arg(root().join("python"))
            .env("CARGO_TARGET_DIR", &target)
            .env("PATH", &path)
            .current_dir(root()),
        "pip install ./python",
    );
    assert!(
        built.status.success(),
        "pip install ./python failed:\n{}",
        text(&built)
    );
    println!(
        "python_package: wheel built and installed in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let tested = run(
        Command::new(&python)
            .args([
                "-m",
                "pytest",
                "python/tests",
                "-q",
                "-p",
                "no:cacheprovider",
            ])
            .env("SIGHTLINE_BIN", env!("CARGO_BIN_EXE_sightline"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PATH", &path)
            .current_dir(root()),
        "python -m pytest python/tests",
    );
    let said = text(&tested);
    println!(
        "python_package: pytest ran in {:.1} s:\n{}",
        started.elapsed().as_secs_f64(),
        said.lines()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(tested.status.success(), "python/tests failed:\n{said}");
    assert!(said.contains(" passed"), "pytest ran no test:\n{said}");
    assert!(
        !said.contains(" skipped"),
        "python/tests skipped tests:\n{said}"
    );
}
