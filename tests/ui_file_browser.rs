//! The in-window file browser that stands in for the system file dialog where none opens (over
//! X11 forwarding or VNC: no xdg-desktop-portal, no zenity): File → Open… shows it with the
//! reason, it walks to `tests/fixtures` and opens a fixture in a tab; a table export through it
//! writes the CSV where chosen. `SIGHTLINE_FILE_DIALOG=builtin` forces it, and a system dialog
//! that cannot open falls back to it (checked in child processes with their own environment).

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use sightline::ui::SightlineApp;
use sightline::ui::file_dialog::{self, DialogBackend, FileDialogs, NO_SYSTEM_DIALOG};

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The app with no trace, its file dialogs the built-in browser starting in `start_dir`.
fn app_with_browser(start_dir: &Path) -> Harness<'static, SightlineApp> {
    let mut h = common::ui::harness(None);
    let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
    dialogs.set_start_dir(start_dir);
    file_dialog::install(&h.ctx, dialogs);
    h.step();
    h
}

/// File → Open… (the menu's item, not the welcome screen's button of the same name).
fn file_open(h: &mut Harness<'static, SightlineApp>) {
    h.get_by_label("File").click();
    h.step();
    h.step();
    // The menu item's label ends with its shortcut (Ctrl+O).
    let items = h
        .get_all_by_label_contains("Open…")
        .filter(|n| n.accesskit_node().role() == egui::accesskit::Role::Button)
        .collect::<Vec<_>>();
    assert_eq!(items.len(), 2, "the menu item and the welcome button");
    let menu_item = items
        .into_iter()
        .min_by(|a, b| a.rect().top().total_cmp(&b.rect().top()))
        .expect("menu item");
    menu_item.click();
    h.step();
    h.step();
}

fn browser_open(h: &Harness<'static, SightlineApp>) -> bool {
    file_dialog::with(&h.ctx, |d| d.browsing().is_some())
}

/// Kernel rows of the export, by SQL.
fn kernels_by_sql(path: &Path) -> usize {
    let conn = common::open_ro(path);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL", [], |r| {
            r.get(0)
        })
        .expect("count kernels");
    usize::try_from(n).expect("count")
}

#[test]
fn file_open_walks_to_the_fixtures_and_opens_one_in_a_tab() {
    let mut h = app_with_browser(&crate_root());
    assert!(!browser_open(&h));
    file_open(&mut h);
    assert!(browser_open(&h), "File → Open… shows the in-window browser");
    // It says why it is there.
    h.get_by_label(&format!("Built-in file browser: {NO_SYSTEM_DIALOG}"));
    // Traces are listed, other files are not: the crate root has Cargo.toml but no trace.
    assert!(h.query_by_label("Cargo.toml").is_none());
    h.get_by_label("tests/").click();
    h.step();
    h.step();
    h.get_by_label("fixtures/").click();
    h.step();
    h.step();
    // Every trace of the folder is listed, and its sub-folders.
    let fixtures = common::fixtures();
    let mut traces = 0;
    for entry in std::fs::read_dir(&fixtures)
        .expect("fixtures")
        .filter_map(Result::ok)
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let shown = if entry.path().is_dir() {
            h.query_by_label(&format!("{name}/")).is_some()
        } else {
            h.query_by_label(&name).is_some()
        };
        // Every format Sightline opens (an ncu CSV page among the fixtures too).
        let is_trace = [
            ".sqlite",
            ".nsys-rep",
            ".json",
            ".json.gz",
            ".ncu-rep",
            ".ncu-rep.gz",
            ".ncu-repz",
            ".csv",
            ".csv.gz",
        ]
        .iter()
        .any(|x| name.ends_with(x));
        traces += usize::from(is_trace);
        assert_eq!(shown, is_trace || entry.path().is_dir(), "{name}");
    }
    assert!(traces >= 2);

    // The fixtures folder lists more than the browser shows at once: the file may lie below
    // the list's fold, so it is chosen as a screen reader would choose it.
    h.get_by_label("moe.sqlite").click_accesskit();
    h.step();
    h.get_by_label("Open").click_accesskit();
    h.step();
    h.step();
    assert!(!browser_open(&h), "the browser closes on Open");
    common::ui::wait_for_load(&mut h);
    let fixture = fixtures.join("moe.sqlite");
    let tab = h.state().tab();
    assert!(tab.error.is_none(), "{:?}", tab.error);
    let doc = tab.document.as_ref().expect("the trace is open in the tab");
    assert_eq!(
        std::fs::canonicalize(&doc.trace.path).expect("path"),
        std::fs::canonicalize(&fixture).expect("fixture")
    );
    assert_eq!(doc.trace.kernels.spans.len(), kernels_by_sql(&fixture));
    // The next Open… starts where this one ended.
    let start = file_dialog::with(&h.ctx, |d| d.start_dir().map(Path::to_path_buf));
    assert_eq!(
        start.map(|d| std::fs::canonicalize(d).expect("dir")),
        Some(std::fs::canonicalize(&fixtures).expect("fixtures"))
    );
}

#[test]
fn cancel_closes_the_browser_and_opens_nothing() {
    let mut h = app_with_browser(&common::fixtures());
    file_open(&mut h);
    assert!(browser_open(&h));
    h.get_by_label("Cancel").click();
    h.step();
    h.step();
    assert!(!browser_open(&h));
    assert!(h.state().tab().path.is_none());
    assert!(!h.state().is_loading());
}

/// Why the browser stands in is said once, in the browser: not also on a line of the main
/// window, which moved the timeline down while the browser was open (issue 36's new-user pass).
#[test]
fn the_reason_is_said_once_in_the_browser() {
    let mut h = app_with_browser(&common::fixtures());
    file_open(&mut h);
    assert!(browser_open(&h));
    let said = h.get_all_by_label_contains(NO_SYSTEM_DIALOG).count();
    assert_eq!(said, 1, "the reason, in the browser only");
}

/// `nsys stats`' own CSV, keyed by name: (instances, total time).
fn by_name(csv_text: &str) -> BTreeMap<String, (String, String)> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|c| c == name).expect(name);
    let (name, count, total) = (col("Name"), col("Instances"), col("Total Time (ns)"));
    reader
        .records()
        .map(|r| r.expect("row"))
        .map(|r| {
            (
                r[name].to_string(),
                (r[count].to_string(), r[total].to_string()),
            )
        })
        .collect()
}

#[test]
fn a_table_export_through_the_browser_writes_the_csv_where_chosen() {
    let dir = common::scratch_dir("file-browser");
    let mut h = common::ui::opened("moe");
    let mut dialogs = FileDialogs::builtin(NO_SYSTEM_DIALOG);
    // Save… starts in the last export's folder (Open… in the last trace's).
    dialogs.set_export_dir(&dir);
    file_dialog::install(&h.ctx, dialogs);
    h.get_by_label("Export table as CSV…").click();
    h.step();
    h.step();
    assert!(browser_open(&h), "the export shows the in-window browser");
    // The suggested name is the report's; the user chooses another.
    let name = h.get_by_label("File name");
    assert_eq!(name.value().as_deref(), Some("cuda_gpu_kern_sum.csv"));
    name.set_text_value_accesskit("moe_kernels.csv");
    h.step();
    h.get_by_label("Save").click();
    h.step();
    common::ui::settle(&mut h);
    assert!(!browser_open(&h));
    let written = dir.join("moe_kernels.csv");
    let text = std::fs::read_to_string(&written).expect("the CSV is where it was chosen");
    assert!(!dir.join("cuda_gpu_kern_sum.csv").exists());
    // What nsys stats printed for this trace, row for row (the panel shows the whole trace).
    let golden =
        std::fs::read_to_string(common::fixtures().join("golden/moe/cuda_gpu_kern_sum.csv"))
            .expect("golden csv");
    assert_eq!(text.lines().next(), golden.lines().next(), "nsys's header");
    let rows = by_name(&text);
    assert!(!rows.is_empty());
    assert_eq!(rows, by_name(&golden));
    h.get_by_label_contains("Wrote ");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the `#[ignore]`d test `name` of this binary in a child process with `env` set (and
/// `remove` unset), so that the process environment it reads is its own.
fn run_child(name: &str, env: &[(&str, &str)], remove: &[&str]) {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in remove {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("run child test");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{name}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_environment_variable_forces_the_browser() {
    run_child(
        "child_builtin_by_environment",
        &[(file_dialog::ENV_VAR, "builtin")],
        &[],
    );
}

#[test]
#[ignore = "run by the_environment_variable_forces_the_browser with its environment"]
fn child_builtin_by_environment() {
    let mut h = common::ui::harness(None);
    h.step();
    let backend = file_dialog::with(&h.ctx, |d| d.backend().clone());
    assert!(
        matches!(&backend, DialogBackend::Builtin { reason } if reason.contains("SIGHTLINE_FILE_DIALOG=builtin")),
        "{backend:?}"
    );
    file_open(&mut h);
    assert!(browser_open(&h));
    h.get_by_label_contains("Built-in file browser: SIGHTLINE_FILE_DIALOG=builtin");
}

#[test]
fn a_system_dialog_that_cannot_open_falls_back_to_the_browser() {
    // No session bus, no zenity on PATH, no display: rfd's portal and zenity both fail at once.
    run_child(
        "child_system_dialog_fails",
        &[
            (file_dialog::ENV_VAR, "system"),
            ("PATH", ""),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/sightline-bus",
            ),
        ],
        &["XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY"],
    );
}

#[test]
#[ignore = "run by a_system_dialog_that_cannot_open_falls_back_to_the_browser"]
fn child_system_dialog_fails() {
    let mut h = common::ui::harness(None);
    h.step();
    assert_eq!(
        file_dialog::with(&h.ctx, |d| d.backend().clone()),
        DialogBackend::System,
        "the setting asks for the system dialog"
    );
    file_open(&mut h);
    assert!(browser_open(&h), "the failed system dialog fell back");
    let notice = file_dialog::notice(&h.ctx).expect("a reason");
    assert!(
        notice.contains("the system file dialog did not open"),
        "{notice}"
    );
    h.get_by_label(&format!("Built-in file browser: {notice}"));
}
