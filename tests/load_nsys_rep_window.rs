//! The window's loader opens a `.nsys-rep` through the loading layer: the conversion is a phase
//! of the load shown on the progress bar, Cancel stops `nsys export`, and a finished load names
//! the report. A stand-in `nsys` on PATH plays Nsight Systems. This binary holds one test
//! because it sets PATH and SIGHTLINE_CACHE_DIR for its own process.

#![cfg(unix)]
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use sightline::ui::loader::{LoadJob, LoadOutcome};

fn write_stand_in(bin: &Path, body: &str) {
    let script = format!(
        "#!/bin/sh\nout=''\nwhile [ $# -gt 0 ]; do\n  if [ \"$1\" = -o ]; then out=\"$2\"; shift; fi\n  shift\ndone\n{body}\n"
    );
    let path = bin.join("nsys");
    std::fs::write(&path, script).expect("write stand-in");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn wait(job: &LoadJob, limit: Duration) -> Option<LoadOutcome> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(outcome) = job.poll() {
            return Some(outcome);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[test]
fn the_window_converts_a_report_as_a_load_phase_and_cancel_stops_nsys() {
    let dir = common::scratch_dir("window-nsys-rep");
    let (bin, cache) = (dir.join("bin"), dir.join("cache"));
    std::fs::create_dir_all(&bin).expect("mkdir");
    let report = dir.join("run.nsys-rep");
    std::fs::write(&report, b"QDSTRM stand-in report").expect("write report");
    // SAFETY: this test binary runs this one test; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("PATH", &bin);
        std::env::set_var("SIGHTLINE_CACHE_DIR", &cache);
    }

    // An nsys that never finishes: the bar shows the conversion, and Cancel ends the load.
    write_stand_in(&bin, "exec /bin/sleep 60");
    let job = LoadJob::start(report.clone(), None);
    let started = Instant::now();
    while job.progress().0 != "converting with nsys export" {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            job.progress()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    job.cancel();
    let outcome = wait(&job, Duration::from_secs(10)).expect("cancelled within 10 s");
    assert_eq!(outcome.err().as_deref(), Some("loading was cancelled"));
    let left: Vec<_> = std::fs::read_dir(&cache).expect("cache").collect();
    assert!(left.is_empty(), "a cancelled conversion leaves nothing");

    // An nsys that converts: the trace loads and is named by the report.
    write_stand_in(
        &bin,
        &format!(
            "exec /bin/cp '{}' \"$out\"",
            common::fixture("p2p_2gpu").display()
        ),
    );
    let job = LoadJob::start(report.clone(), None);
    let trace = wait(&job, Duration::from_secs(60))
        .expect("loaded")
        .expect("no error");
    assert_eq!(trace.path, report);
    let direct = sightline::load::load_file(&common::fixture("p2p_2gpu")).expect("fixture");
    assert_eq!(trace.kernels.spans.len(), direct.kernels.spans.len());
    assert_eq!(trace.memcpys.spans.len(), direct.memcpys.spans.len());
    let _ = std::fs::remove_dir_all(&dir);
}
