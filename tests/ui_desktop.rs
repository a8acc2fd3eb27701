//! `sightline --install-desktop` / `--uninstall-desktop` write and remove the XDG desktop entry and
//! the `*.nsys-rep` MIME type under `XDG_DATA_HOME`, and never claim `.sqlite` as default.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::process::Command;

#[test]
fn install_and_uninstall_desktop_entry_under_xdg_data_home() {
    let dir = common::scratch_dir("desktop");
    let run = |flag: &str| {
        Command::new(env!("CARGO_BIN_EXE_sightline"))
            .arg(flag)
            .env("XDG_DATA_HOME", &dir)
            .output()
            .expect("run sightline")
    };
    let out = run("--install-desktop");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let desktop =
        std::fs::read_to_string(dir.join("applications/sightline.desktop")).expect("desktop entry");
    assert!(desktop.contains("[Desktop Entry]"));
    assert!(desktop.contains("Exec=\""), "{desktop}");
    assert!(desktop.contains(" %f\n"));
    assert!(desktop.contains(
        "MimeType=application/x-nsys-rep;application/vnd.sqlite3;application/x-sqlite3;"
    ));
    let mime = std::fs::read_to_string(dir.join("mime/packages/sightline-nsys-rep.xml"))
        .expect("mime package");
    assert!(mime.contains("<mime-type type=\"application/x-nsys-rep\">"));
    assert!(mime.contains("<glob pattern=\"*.nsys-rep\"/>"));
    // "Open with" only for SQLite: no default-application list is written.
    assert!(!dir.join("mimeapps.list").exists());
    assert!(!dir.join("applications/mimeapps.list").exists());

    let out = run("--uninstall-desktop");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("applications/sightline.desktop").exists());
    assert!(!dir.join("mime/packages/sightline-nsys-rep.xml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
