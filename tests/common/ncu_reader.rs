//! NVIDIA's own report reader (`pip install ncu-report`) for the tests that use it as an
//! oracle, and the reports beyond the shared ones that they read.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A Python with `ncu_report` importable (see [`common::venv`]).
pub fn nvidia_reader_python() -> Option<PathBuf> {
    super::venv::python_with(
        "sightline-ncu-report-venv",
        "ncu_report",
        &["ncu-report"],
        Some("SIGHTLINE_NCU_REPORT_WHEELS"),
    )
}

/// Runs `tests/scripts/SCRIPT` with the reader's Python and `args`; its failure fails the test.
pub fn run_reader_script(python: &Path, script: &str, args: &[&Path]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(script);
    let out = Command::new(python)
        .arg(&script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A report beyond the shared ones, as a plain report in the scratch folder.
pub struct OtherReport {
    /// The file's name without `.ncu-rep` / `.ncu-repz`.
    pub name: String,
    pub path: PathBuf,
    /// Kept as a fixture (else from `SIGHTLINE_PUBLIC_NCU_REPORTS`).
    pub fixture: bool,
}

/// Reports beyond the shared ones: the public report kept as a fixture
/// (`tests/fixtures/ncu_public/`), the held-out sets of `tests/fixtures/ncu_ws/`, and every report
/// in the folder `SIGHTLINE_PUBLIC_NCU_REPORTS` names (the collection of public reports listed
/// in docs/ncu_public_reports.tsv), each as a plain report in `scratch` (NVIDIA's reader opens plain reports
/// only), by name.
pub fn other_reports(scratch: &Path) -> Vec<OtherReport> {
    let fixtures = super::fixtures();
    let mut found: Vec<(PathBuf, bool)> = Vec::new();
    for dir in [fixtures.join("ncu_public"), fixtures.join("ncu_ws")] {
        found.extend(report_files(&dir).into_iter().map(|p| (p, true)));
    }
    match std::env::var_os("SIGHTLINE_PUBLIC_NCU_REPORTS") {
        Some(dir) => found.extend(
            report_files(Path::new(&dir))
                .into_iter()
                .map(|p| (p, false)),
        ),
        None => eprintln!(
            "SIGHTLINE_PUBLIC_NCU_REPORTS is not set: only the fixtures' reports are compared"
        ),
    }
    found
        .into_iter()
        .map(|(path, fixture)| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let name = name
                .trim_end_matches(".ncu-repz")
                .trim_end_matches(".ncu-rep")
                .to_string();
            let plain = scratch.join(format!("{name}.ncu-rep"));
            let bytes = std::fs::read(&path).unwrap();
            if path.extension().is_some_and(|e| e == "ncu-repz") {
                let mut out = Vec::new();
                ruzstd::decoding::StreamingDecoder::new(&bytes[..])
                    .unwrap()
                    .read_to_end(&mut out)
                    .unwrap();
                std::fs::write(&plain, out).unwrap();
            } else {
                std::fs::write(&plain, bytes).unwrap();
            }
            OtherReport {
                name,
                path: plain,
                fixture,
            }
        })
        .collect()
}

pub fn report_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        p.extension()
            .is_some_and(|e| e == "ncu-rep" || e == "ncu-repz")
    });
    files.sort();
    files
}
