//! `sightline --install-desktop` / `--uninstall-desktop` write and remove the XDG desktop entry,
//! the `*.nsys-rep` MIME type and the icons under `XDG_DATA_HOME`, and never claim `.sqlite` as
//! default. What they write is what `assets/` holds.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;
use std::process::Command;

/// The sizes the brief promises (issue 11: PNGs from 16 to 512 px).
const ICON_SIZES: [u32; 8] = [16, 24, 32, 48, 64, 128, 256, 512];

fn assets() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// Width and height from a PNG's IHDR chunk, read here without a decoder.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (be(16), be(20))
}

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
    assert!(desktop.contains("\nIcon=sightline\n"), "{desktop}");
    // The entry is assets/sightline.desktop with only its Exec line changed.
    let asset = std::fs::read_to_string(assets().join("sightline.desktop")).expect("asset");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_sightline")).expect("exe path");
    let expected_exec = format!("Exec=\"{}\" %f", exe.display());
    for (written, source) in desktop.lines().zip(asset.lines()) {
        if source.starts_with("Exec=") {
            assert_eq!(written, expected_exec);
        } else {
            assert_eq!(written, source);
        }
    }
    assert_eq!(desktop.lines().count(), asset.lines().count());

    let mime = std::fs::read_to_string(dir.join("mime/packages/sightline-nsys-rep.xml"))
        .expect("mime package");
    assert!(mime.contains("<mime-type type=\"application/x-nsys-rep\">"));
    assert!(mime.contains("<glob pattern=\"*.nsys-rep\"/>"));
    assert_eq!(
        mime,
        std::fs::read_to_string(assets().join("sightline-nsys-rep.xml")).expect("asset")
    );

    // The icons, byte for byte the files in assets/, each PNG the size its folder says.
    let svg = dir.join("icons/hicolor/scalable/apps/sightline.svg");
    assert_eq!(
        std::fs::read(&svg).expect("svg icon"),
        std::fs::read(assets().join("sightline.svg")).expect("asset")
    );
    for size in ICON_SIZES {
        let png = dir.join(format!("icons/hicolor/{size}x{size}/apps/sightline.png"));
        let bytes = std::fs::read(&png).expect("png icon");
        assert_eq!(
            bytes,
            std::fs::read(assets().join(format!("icons/sightline-{size}.png"))).expect("asset")
        );
        assert_eq!(png_size(&bytes), (size, size), "{}", png.display());
    }
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
    assert!(!svg.exists());
    for size in ICON_SIZES {
        assert!(
            !dir.join(format!("icons/hicolor/{size}x{size}/apps/sightline.png"))
                .exists()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_icon_size_is_in_assets_and_the_svg_is_square() {
    for size in ICON_SIZES {
        let bytes = std::fs::read(assets().join(format!("icons/sightline-{size}.png")))
            .expect("png in assets/icons");
        assert_eq!(png_size(&bytes), (size, size));
    }
    let svg = std::fs::read_to_string(assets().join("sightline.svg")).expect("svg");
    assert!(svg.contains("viewBox=\"0 0 256 256\""), "{svg}");
}
