//! Memory bounded by the file (issue 33, item 6). `moe.sqlite` made into an export whose one
//! NVTX text is 10 MB: the 96 `Linear1_Computation` ranges name it through one `StringIds` row
//! (`textId`, as nsys writes a registered string), so the file grows by 10 MB, not 960 MB. Every
//! report (`summary --report all`, each report alone, the `nvtx-name` kernel naming that puts
//! the text into kernel names), every `analyze` rule and `export` run as the release binary under
//! a 4 GB address-space limit (`ulimit -v 4000000`), and print line for line what they print for
//! the unmodified export with the long text in place of the name: CSV byte for byte, the terminal
//! table cell for cell (the text cut to its first 999 characters and `…`). Their output, up to
//! gigabytes, is compared as it comes and never held. Where `/usr/bin/time` is installed, each
//! run's peak RSS is checked too: far below one copy of the text per row.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use sightline::analysis::{REPORTS, RULES};
use sightline::export::text_table::MAX_CELL_CHARS;

/// The range text the test makes long, and how long.
const NAME: &str = "Linear1_Computation";
const LONG_BYTES: usize = 10_000_000;
/// `ulimit -v`, in KiB: the limit under which `summary --report all` used to abort.
const LIMIT_KB: u64 = 4_000_000;
/// Peak RSS allowed, in KiB: the text a few times over, where one copy per row was 96 × 10 MB
/// per column (4.3 GB for `nvtx_pushpop_trace`).
const RSS_LIMIT_KB: u64 = 1_000_000;

/// What marks a line that prints the text (the unmodified export never names a range so).
fn marker() -> &'static str {
    &long_text()[..NAME.len() + 100]
}

fn long_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| format!("{NAME}_{}", "x".repeat(LONG_BYTES - NAME.len() - 1)))
}

/// The unmodified export and the one whose `Linear1_Computation` text is [`long_text`].
fn exports() -> &'static (PathBuf, PathBuf) {
    static EXPORTS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    EXPORTS.get_or_init(|| {
        let original = common::fixture("moe");
        let long = common::scratch_dir("long-text").join("moe_long_text.sqlite");
        std::fs::copy(&original, &long).expect("copy moe.sqlite");
        let conn = rusqlite::Connection::open(&long).expect("open the copy");
        let id: i64 = conn
            .query_row("SELECT max(id) + 1 FROM StringIds", [], |r| r.get(0))
            .expect("next string id");
        conn.execute(
            "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
            rusqlite::params![id, long_text()],
        )
        .expect("insert the long text");
        let ranges = conn
            .execute(
                "UPDATE NVTX_EVENTS SET text = NULL, textId = ?1 WHERE text = ?2",
                rusqlite::params![id, NAME],
            )
            .expect("point the ranges at it");
        assert_eq!(ranges, 96, "moe.sqlite has 96 {NAME} ranges");
        conn.execute_batch("VACUUM").expect("vacuum");
        let bytes = std::fs::metadata(&long).map(|m| m.len()).unwrap_or(0);
        assert!(bytes < 12_000_000, "the text is stored once: {bytes} bytes");
        (original, long)
    })
}

/// How a line is compared with the unmodified export's.
#[derive(Clone, Copy, PartialEq)]
enum Compare {
    /// CSV: the same bytes once the name is replaced by the long text.
    Csv,
    /// A terminal table: the same cells (padding aside), a cell holding the name cut to
    /// [`MAX_CELL_CHARS`] characters.
    Table,
}

/// What a run under the limit printed.
struct Limited {
    lines: usize,
    long_lines: usize,
    stderr: String,
    peak_rss_kb: Option<u64>,
}

/// The command's output on the unmodified export, and the run on the long-text export under the
/// limit, compared as its output comes (stderr as a whole, the file's name aside); fails the test
/// on any difference or failure.
fn check(args: &[&str], compare: Compare) -> Limited {
    let (original, long) = exports();
    let on = |path: &Path| -> Vec<String> {
        args.iter()
            .map(|a| match *a {
                "TRACE" => path.display().to_string(),
                a => a.to_string(),
            })
            .collect()
    };
    let expected_args = on(original);
    let expected_args: Vec<&str> = expected_args.iter().map(String::as_str).collect();
    let output = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(&expected_args)
        .output()
        .expect("run sightline");
    assert!(output.status.success(), "{expected_args:?}");
    let expected = String::from_utf8(output.stdout).expect("utf-8");
    let expected: Vec<&str> = expected.lines().collect();
    let run = run_limited(&on(long), &expected, compare);
    let expected_stderr = String::from_utf8_lossy(&output.stderr)
        .replace(&original.display().to_string(), &long.display().to_string());
    assert_eq!(run.stderr, expected_stderr, "{args:?}: stderr");
    let named = expected.iter().filter(|l| l.contains(NAME)).count();
    assert_eq!(run.long_lines, named, "{args:?}: lines naming the text");
    if let Some(kb) = run.peak_rss_kb {
        assert!(kb < RSS_LIMIT_KB, "{args:?}: peak RSS {kb} KiB");
    }
    run
}

fn run_limited(args: &[String], expected: &[&str], compare: Compare) -> Limited {
    let time = Path::new("/usr/bin/time");
    let rss_file = common::scratch_dir("long-text-rss").join("rss");
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB}; exec \"$0\" \"$@\""));
    if time.exists() {
        cmd.arg(time).arg("-f").arg("%M").arg("-o").arg(&rss_file);
    } else {
        eprintln!("SKIPPED the peak RSS check: /usr/bin/time is not installed");
    }
    // glibc reserves 64 MiB of address space for each malloc arena (up to 8 per core): on a
    // machine of many cores the arenas alone would approach the limit, which is about what the
    // program holds.
    cmd.arg(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .env("MALLOC_ARENA_MAX", "2")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run sightline under bash");
    let mut stderr = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut out = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
    let (mut lines, mut long_lines) = (0, 0);
    let mut line = Vec::new();
    loop {
        line.clear();
        if out.read_until(b'\n', &mut line).expect("read stdout") == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let got = std::str::from_utf8(&line).expect("utf-8 output");
        let Some(want) = expected.get(lines) else {
            panic!(
                "{args:?}: more lines than the unmodified export's {}",
                expected.len()
            );
        };
        long_lines += usize::from(got.contains(marker()));
        let same = match compare {
            Compare::Csv if want.contains(NAME) => *got == want.replace(NAME, long_text()),
            Compare::Csv => got == *want,
            Compare::Table => same_cells(want, got),
        };
        assert!(
            same,
            "{args:?} line {lines}: expected `{}`, got `{}`",
            clip(want),
            clip(got)
        );
        lines += 1;
    }
    let status = child.wait().expect("wait for sightline");
    let stderr = stderr.join().unwrap_or_default();
    assert!(
        status.success(),
        "{args:?} under ulimit -v {LIMIT_KB}: {stderr}"
    );
    assert_eq!(lines, expected.len(), "{args:?}: line count");
    let peak_rss_kb = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|t| t.trim().lines().last()?.trim().parse().ok());
    Limited {
        lines,
        long_lines,
        stderr,
        peak_rss_kb,
    }
}

/// A terminal-table line with the same cells as the unmodified one: equal words (the columns
/// are padded to other widths), a word naming the text cut to [`MAX_CELL_CHARS`] characters.
fn same_cells(want: &str, got: &str) -> bool {
    let (want, got): (Vec<&str>, Vec<&str>) = (
        want.split_whitespace().collect(),
        got.split_whitespace().collect(),
    );
    want.len() == got.len()
        && want.iter().zip(&got).all(|(w, g)| {
            if w.contains(NAME) {
                let whole = w.replace(NAME, long_text());
                let mut cut: String = whole.chars().take(MAX_CELL_CHARS - 1).collect();
                cut.push('…');
                *g == cut
            } else if w.bytes().all(|b| b == b'-') {
                g.bytes().all(|b| b == b'-')
            } else {
                w == g
            }
        })
}

fn clip(line: &str) -> String {
    line.chars().take(300).collect()
}

#[test]
fn every_report_at_once_prints_the_long_text_under_a_4_gb_limit() {
    let csv = check(
        &["summary", "TRACE", "--report", "all", "--format", "csv"],
        Compare::Csv,
    );
    // nvtx_pushpop_trace and nvtx_gpu_proj_trace name it on 96 rows each, the summaries once.
    assert!(
        csv.long_lines >= 192,
        "{} lines name the text",
        csv.long_lines
    );
    assert!(csv.lines > 7000);
    // `--wide`: names whole (to a cell's limit) in both exports' tables, as before terminal
    // tables fitted 200 columns; fitted, the long name would narrow every other name too.
    let table = check(
        &["summary", "TRACE", "--report", "all", "--wide"],
        Compare::Table,
    );
    assert!(table.long_lines >= 192);
    // Nsight Systems 2025.3's names join the domain and the text (`:text`) in the cell.
    check(
        &[
            "summary",
            "TRACE",
            "--report",
            "all",
            "--nsys-format",
            "2025.3",
            "--wide",
        ],
        Compare::Table,
    );
}

#[test]
fn each_report_alone_prints_the_long_text_under_a_4_gb_limit() {
    let mut named = Vec::new();
    for report in REPORTS {
        let name = report.name();
        let run = check(
            &["summary", "TRACE", "--report", name, "--format", "csv"],
            Compare::Csv,
        );
        if run.long_lines > 0 {
            named.push(name);
        }
        // `nvtx-name` names each kernel after its innermost range: `Linear1_Computation/…`.
        if report.options().contains(&"nvtx-name") {
            let spec = format!("{name}:nvtx-name");
            let run = check(
                &["summary", "TRACE", "--report", &spec, "--format", "csv"],
                Compare::Csv,
            );
            if run.long_lines > 0 {
                named.push(name);
            }
        }
    }
    for report in [
        "nvtx_sum",
        "nvtx_pushpop_sum",
        "nvtx_pushpop_trace",
        "nvtx_gpu_proj_sum",
        "nvtx_gpu_proj_trace",
        "nvtx_kern_sum",
        "cuda_gpu_trace",
        "cuda_gpu_kern_sum",
        "cuda_kern_exec_trace",
    ] {
        assert!(named.contains(&report), "{report} never printed the text");
    }
    let pushpop = check(
        &["summary", "TRACE", "--report", "nvtx_pushpop_trace"],
        Compare::Table,
    );
    assert_eq!(pushpop.long_lines, 96);
}

#[test]
fn rules_and_export_run_under_a_4_gb_limit() {
    for rule in RULES {
        check(
            &["analyze", "TRACE", "--rule", rule.name(), "--format", "csv"],
            Compare::Csv,
        );
    }
    check(&["analyze", "TRACE", "--rule", "all"], Compare::Table);
    // `export` writes its CSV to stdout here, so that it is compared as it comes.
    let export = check(&["export", "TRACE", "--out", "/dev/stdout"], Compare::Csv);
    assert_eq!(export.long_lines, 96);
    assert!(
        export.stderr.contains("wrote 7013 events"),
        "{}",
        export.stderr
    );
}
