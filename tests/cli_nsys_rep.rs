//! `.nsys-rep` reports on the command line: every command converts one with `nsys export` into
//! the cache (here a scratch folder, through `SIGHTLINE_CACHE_DIR`) and reuses the conversion
//! while it is newer than the report. A stand-in `nsys` (a shell script that copies a real
//! export to its `-o` path and logs each call) plays Nsight Systems; the real `nsys` is tried
//! when it is installed.

#![cfg(unix)]
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

/// A scratch setup: `bin/` for the stand-in, `cache/`, and `reports/` with the report.
struct Setup {
    root: PathBuf,
    bin: PathBuf,
    cache: PathBuf,
    report: PathBuf,
    log: PathBuf,
}

impl Setup {
    fn new(tag: &str) -> Self {
        let root = common::scratch_dir(tag);
        let (bin, cache, reports) = (root.join("bin"), root.join("cache"), root.join("reports"));
        for d in [&bin, &cache, &reports] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let report = reports.join("run.nsys-rep");
        // Not an SQLite file, as a real report is not.
        std::fs::write(&report, b"QDSTRM stand-in report").expect("write report");
        let log = root.join("nsys-calls.log");
        Self {
            root,
            bin,
            cache,
            report,
            log,
        }
    }

    /// Writes `bin/nsys`: logs its arguments, then runs `body` (with `$out` the `-o` path).
    fn stand_in(&self, body: &str) {
        let script = format!(
            "#!/bin/sh\n\
             echo \"$@\" >> '{log}'\n\
             out=''\n\
             while [ $# -gt 0 ]; do\n\
             \x20 if [ \"$1\" = -o ]; then out=\"$2\"; shift; fi\n\
             \x20 shift\n\
             done\n\
             {body}\n",
            log = self.log.display()
        );
        let path = self.bin.join("nsys");
        std::fs::write(&path, script).expect("write stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// A stand-in that copies the fixture `name` to the `-o` path.
    fn copying_stand_in(&self, name: &str) {
        self.stand_in(&format!(
            "exec /bin/cp '{}' \"$out\"",
            common::fixture(name).display()
        ));
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    /// Runs sightline with PATH holding only `bin/` and the cache in `cache/`.
    fn sightline(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(args)
            .env("PATH", &self.bin)
            .env("SIGHTLINE_CACHE_DIR", &self.cache)
            .output()
            .expect("run sightline")
    }

    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn ok_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

#[test]
fn summary_of_a_report_converts_once_reuses_the_cache_and_reconverts_a_newer_report() {
    let s = Setup::new("nsys-rep");
    s.copying_stand_in("moe");
    let report = s.report.to_string_lossy().into_owned();
    let args = [
        "summary",
        report.as_str(),
        "--report",
        "all",
        "--format",
        "csv",
    ];
    let direct = common::sightline_stdout(&[
        "summary",
        &common::fixture("moe").to_string_lossy(),
        "--report",
        "all",
        "--format",
        "csv",
    ]);
    assert!(!direct.is_empty());

    // First run: nsys is called once, with the export command, and the output is the export's.
    let first = s.sightline(&args);
    assert_eq!(ok_stdout(&first), direct);
    let calls = s.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(
        calls[0].starts_with("export --type=sqlite") && calls[0].ends_with(&report),
        "{}",
        calls[0]
    );
    assert!(String::from_utf8_lossy(&first.stderr).contains("converting with nsys export"));
    // One converted file in the cache, nothing left half-written, nothing beside the report.
    let cached = Setup::files_in(&s.cache);
    assert_eq!(cached.len(), 1, "{cached:?}");
    assert!(cached[0].starts_with("run-") && cached[0].ends_with(".sqlite"));
    assert_eq!(
        Setup::files_in(s.report.parent().expect("dir")),
        ["run.nsys-rep"]
    );

    // Second run: the cached conversion is newer than the report, so nsys is not called.
    let second = s.sightline(&args);
    assert_eq!(ok_stdout(&second), direct);
    assert_eq!(s.calls().len(), 1);
    assert!(!String::from_utf8_lossy(&second.stderr).contains("converting"));

    // The report changes after its conversion: converted again. The stand-in now hands out
    // another trace, so the output must follow it.
    let cached_path = s.cache.join(&cached[0]);
    let report_time = std::fs::metadata(&s.report)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::File::options()
        .write(true)
        .open(&cached_path)
        .and_then(|f| f.set_modified(report_time - Duration::from_secs(3600)))
        .expect("age the conversion");
    s.copying_stand_in("ws_baseline");
    let third = s.sightline(&args);
    let baseline = common::sightline_stdout(&[
        "summary",
        &common::fixture("ws_baseline").to_string_lossy(),
        "--report",
        "all",
        "--format",
        "csv",
    ]);
    assert_eq!(ok_stdout(&third), baseline);
    assert_eq!(s.calls().len(), 2);
    assert_eq!(Setup::files_in(&s.cache), cached, "the same cache file");
    assert_eq!(ok_stdout(&s.sightline(&args)), baseline);
    assert_eq!(s.calls().len(), 2, "the new conversion is reused");
}

#[test]
fn every_command_opens_a_report() {
    let s = Setup::new("nsys-rep-commands");
    s.copying_stand_in("ws_streaming");
    let report = s.report.to_string_lossy().into_owned();
    let sqlite = common::fixture("ws_streaming")
        .to_string_lossy()
        .into_owned();
    for args in [
        vec!["gaps", "TRACE", "--format", "csv"],
        vec!["analyze", "TRACE", "--rule", "all", "--format", "csv"],
        vec!["summary", "TRACE", "--report", "cuda_gpu_kern_sum"],
    ] {
        let with = |trace: &str| -> Vec<String> {
            args.iter()
                .map(|a| if *a == "TRACE" { trace } else { a }.to_string())
                .collect()
        };
        let rep_args = with(&report);
        let rep_refs: Vec<&str> = rep_args.iter().map(String::as_str).collect();
        let sql_args = with(&sqlite);
        let sql_refs: Vec<&str> = sql_args.iter().map(String::as_str).collect();
        let out = s.sightline(&rep_refs);
        assert_eq!(
            ok_stdout(&out),
            common::sightline_stdout(&sql_refs),
            "{args:?}"
        );
    }
    // export writes the same CSV.
    let (a, b) = (s.root.join("a.csv"), s.root.join("b.csv"));
    let out = s.sightline(&["export", &report, "--out", &a.to_string_lossy()]);
    ok_stdout(&out);
    common::sightline_stdout(&["export", &sqlite, "--out", &b.to_string_lossy()]);
    assert_eq!(
        std::fs::read(&a).expect("a.csv"),
        std::fs::read(&b).expect("b.csv")
    );
    // bench times loads of the converted export.
    let out = s.sightline(&["bench", &report, "--runs", "1", "--frames", "1", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&ok_stdout(&out)).expect("bench json");
    assert!(json.is_object(), "{json}");
    assert_eq!(s.calls().len(), 1, "converted once for all commands");
}

#[test]
fn without_nsys_the_error_names_the_command_to_run_and_a_fresh_conversion_still_opens() {
    let s = Setup::new("nsys-rep-missing");
    let report = s.report.to_string_lossy().into_owned();
    // bin/ is empty: no nsys on PATH.
    let out = s.sightline(&["summary", &report]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "nsys export --type=sqlite -o {} {report}",
        s.report.with_extension("sqlite").display()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("not found"), "{err}");
    assert!(Setup::files_in(&s.cache).is_empty());

    // Converted once (stand-in present), then nsys gone: the cached conversion still opens.
    s.copying_stand_in("p2p_2gpu");
    let with_nsys = ok_stdout(&s.sightline(&["summary", &report]));
    std::fs::remove_file(s.bin.join("nsys")).expect("remove stand-in");
    assert_eq!(ok_stdout(&s.sightline(&["summary", &report])), with_nsys);
}

#[test]
fn a_failing_nsys_export_is_reported_and_leaves_no_file_in_the_cache() {
    let s = Setup::new("nsys-rep-fails");
    s.stand_in("echo 'Exportation error: Cannot read from stream.' >&2\n: > \"$out\"\nexit 3");
    let report = s.report.to_string_lossy().into_owned();
    let out = s.sightline(&["summary", &report]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("export --type=sqlite` failed")
            && err.contains("Cannot read from stream")
            && err.contains(&report),
        "{err}"
    );
    assert!(Setup::files_in(&s.cache).is_empty(), "no partial file kept");
    assert_eq!(s.calls().len(), 1);
}

#[test]
fn an_sqlite_export_named_nsys_rep_is_read_as_it_is() {
    let s = Setup::new("nsys-rep-sqlite");
    s.stand_in("exit 7");
    std::fs::copy(common::fixture("moe"), &s.report).expect("copy");
    let out = s.sightline(&["summary", &s.report.to_string_lossy()]);
    assert_eq!(
        ok_stdout(&out),
        common::sightline_stdout(&["summary", &common::fixture("moe").to_string_lossy()])
    );
    assert!(s.calls().is_empty(), "nsys was not needed");
}

/// The real Nsight Systems, where installed, refusing a file that is not a report: sightline
/// reports the failed `nsys export` and caches nothing (a successful real conversion is
/// [`a_real_report_is_converted_by_the_real_nsys`]).
#[test]
fn the_real_nsys_is_run_when_installed() {
    let Some(nsys) = sightline::load::nsys_rep::find_on_path("nsys") else {
        eprintln!("note: nsys is not on PATH: skipping the real-nsys test");
        return;
    };
    let s = Setup::new("nsys-rep-real");
    let started = SystemTime::now();
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["summary", &s.report.to_string_lossy()])
        .env("SIGHTLINE_CACHE_DIR", &s.cache)
        .output()
        .expect("run sightline");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("`{} export --type=sqlite` failed", nsys.display())),
        "{err}"
    );
    assert!(Setup::files_in(&s.cache).is_empty());
    assert!(started.elapsed().unwrap_or_default() < Duration::from_secs(120));
}

/// A real report, converted by the real Nsight Systems where installed:
/// `tests/fixtures/osrt_sleep_2022.nsys-rep` was recorded on this project's build machine with
/// nsys 2022.4 (`nsys profile --trace=osrt,nvtx --sample=none --cpuctxsw=none /bin/sleep 0.2`, no
/// GPU needed, imported with its QdstrmImporter). `summary` on the report prints exactly what it
/// prints on the export the test makes itself with `nsys export`, and the report names the sleep.
#[test]
fn a_real_report_is_converted_by_the_real_nsys() {
    let Some(nsys) = sightline::load::nsys_rep::find_on_path("nsys") else {
        eprintln!("note: nsys is not on PATH: skipping the real-report test");
        return;
    };
    let dir = common::scratch_dir("real-report");
    let report = dir.join("sleep.nsys-rep");
    std::fs::copy(common::fixtures().join("osrt_sleep_2022.nsys-rep"), &report).expect("copy");
    let direct = dir.join("direct.sqlite");
    let made = Command::new(&nsys)
        .args(["export", "--type=sqlite", "-o"])
        .arg(&direct)
        .arg(&report)
        .output()
        .expect("run nsys export");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let cache = dir.join("cache");
    let run = |trace: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
            .args(["summary", "--report", "osrt_sum", "--format", "csv"])
            .arg(trace)
            .env("SIGHTLINE_CACHE_DIR", &cache)
            .output()
            .expect("run sightline");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let via_report = run(&report);
    assert_eq!(via_report, run(&direct));
    assert!(via_report.contains("nanosleep"), "{via_report}");
    assert_eq!(Setup::files_in(&cache).len(), 1, "one cached conversion");
}
