//! The `sightline analyze` command line, run as a user runs it: rule findings print nsys's CSV,
//! a rule without findings prints nothing and says so, bad specs fail clearly, and every option
//! nsys takes gives what nsys 2023.4.4 printed for it (tests/fixtures/golden_options).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::{Command, Output};

fn sightline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .output()
        .expect("run sightline")
}

fn analyze(trace: &str, spec: &str) -> Output {
    let path = common::fixture(trace);
    sightline(&[
        "analyze",
        &path.to_string_lossy(),
        "--rule",
        spec,
        "--format",
        "csv",
    ])
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn findings_print_the_golden_csv() {
    for (trace, rule, spec) in [
        ("moe", "gpu_gaps", "gpu_gaps:rows=-1:gap=1"),
        ("moe", "cuda_memcpy_sync", "cuda_memcpy_sync:rows=-1"),
        ("moe_export2023", "gpu_time_util", "gpu_time_util:rows=-1"),
        ("cpu_side", "cuda_api_sync", "cuda_api_sync:rows=-1"),
    ] {
        let out = analyze(trace, spec);
        assert!(out.status.success(), "{spec}: {}", stderr(&out));
        let golden = std::fs::read_to_string(
            common::fixtures()
                .join("golden")
                .join(trace)
                .join(format!("analyze.{rule}.csv")),
        )
        .expect("golden")
        .replace("\r\n", "\n");
        assert_eq!(stdout(&out), golden, "{trace} {spec}");
    }
}

#[test]
fn no_findings_print_nothing_and_say_so() {
    let out = analyze("ws_baseline", "gpu_gaps:rows=-1:gap=1");
    assert!(out.status.success());
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    assert!(err.contains("gpu_gaps"), "{err}");
    assert!(err.contains("There were no problems detected"), "{err}");
}

#[test]
fn bad_specs_fail_with_a_clear_message() {
    for (spec, expected) in [
        ("no_such_rule", "unknown rule 'no_such_rule'"),
        ("gpu_gaps:gap=abc", "gap=abc: not an integer"),
        ("gpu_gaps:wide=1", "unknown option 'wide'"),
        ("cuda_api_sync:rows=many", "rows=many: not an integer"),
        ("gpu_time_util:chunks=1001", "between 1 and 1000"),
        (
            "cuda_api_sync:start=5:end=4",
            "start time cannot be greater",
        ),
        (
            "cuda_api_sync:nvtx=no_such_range",
            "NVTX range 'no_such_range'",
        ),
        (
            "cuda_api_sync:nvtx=Token_Preparation:thread=805",
            "cannot be used with",
        ),
    ] {
        let out = analyze("moe_export2023", spec);
        assert!(!out.status.success(), "{spec} should fail");
        assert_eq!(stdout(&out), "", "{spec}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{spec}: {err}");
    }
}

/// Every `<trace>/<spec>.csv` under tests/fixtures/golden_options (captured from nsys, see the
/// README there) equals what `sightline analyze` prints for that spec.
#[test]
fn options_give_what_nsys_printed() {
    let root = common::fixtures().join("golden_options");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).expect("golden_options") {
        let dir = dir.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        let trace = dir.file_name().unwrap().to_string_lossy().to_string();
        for file in std::fs::read_dir(&dir).expect("trace dir") {
            let file = file.expect("entry").path();
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            // The file is named after the spec with its ':' written '+' (README.txt there).
            let Some(spec) = name.strip_suffix(".csv").map(|s| s.replace('+', ":")) else {
                continue;
            };
            let spec = spec.as_str();
            // `<report>:<options>` files are report options, checked by tests/report_options.rs.
            if sightline::analysis::reports::find(spec.split(':').next().unwrap_or_default())
                .is_some()
            {
                continue;
            }
            let expected = std::fs::read_to_string(&file)
                .expect("read")
                .replace("\r\n", "\n");
            let out = analyze(&trace, spec);
            assert!(out.status.success(), "{trace} {spec}: {}", stderr(&out));
            assert_eq!(stdout(&out), expected, "{trace} {spec}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} captured outputs found");
}

/// nsys's older report and rule names (still accepted by Nsight Systems 2023.4) print the current
/// report's or rule's output — nsys's own golden CSV — and name the current one on stderr.
#[test]
fn older_names_print_the_current_output_and_say_its_name() {
    let golden = |trace: &str, file: &str| {
        std::fs::read_to_string(common::fixtures().join("golden").join(trace).join(file))
            .expect("golden")
            .replace("\r\n", "\n")
    };
    let mut checked = 0;
    for (old, new) in sightline::analysis::reports::LEGACY_NAMES {
        let path = common::fixture("moe");
        let file = format!("{new}.csv");
        if !common::fixtures().join("golden/moe").join(&file).exists() {
            continue;
        }
        let out = sightline(&[
            "summary",
            &path.to_string_lossy(),
            "--report",
            old,
            "--format",
            "csv",
        ]);
        assert!(out.status.success(), "{old}: {}", stderr(&out));
        assert_eq!(stdout(&out), golden("moe", &file), "{old}");
        assert!(
            stderr(&out).contains(&format!("'{new}'")),
            "{old}: {}",
            stderr(&out)
        );
        checked += 1;
    }
    // The guides' own line: several older names at once, each CSV after `# NAME`.
    let path = common::fixture("moe");
    let out = sightline(&[
        "summary",
        &path.to_string_lossy(),
        "--report",
        "gputrace,cudaapisum",
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(golden("moe", "cuda_gpu_trace.csv").trim_end()));
    assert!(text.contains(golden("moe", "cuda_api_sum.csv").trim_end()));
    for (old, new) in sightline::analysis::rules::LEGACY_NAMES {
        let options = if *new == "gpu_gaps" {
            ":rows=-1:gap=1"
        } else {
            ":rows=-1"
        };
        let out = analyze("moe", &format!("{old}{options}"));
        let same = analyze("moe", &format!("{new}{options}"));
        assert!(out.status.success(), "{old}: {}", stderr(&out));
        assert_eq!(out.status.code(), same.status.code(), "{old}");
        assert_eq!(stdout(&out), stdout(&same), "{old}");
        assert!(stderr(&out).contains(&format!("'{new}'")), "{old}");
        checked += 1;
    }
    let out = analyze("moe", "gpu-starv:rows=-1:gap=1");
    assert_eq!(stdout(&out), golden("moe", "analyze.gpu_gaps.csv"));
    println!("{checked} older names checked");
    assert!(checked >= 20);
}
