//! Desktop integration on Linux (XDG): `sightline --install-desktop` writes a `.desktop` entry, the
//! application icon into the user's hicolor theme, and a MIME type for `*.nsys-rep` so a
//! double-click in a file manager opens the report here; it lists Sightline under "Open with" for
//! SQLite files without making it their default (it adds no `mimeapps.list` entry; the desktop
//! only picks a default by itself for a type that has a single handler, which
//! `application/vnd.sqlite3` never has on a desktop with a DB browser). `--uninstall-desktop`
//! removes what it wrote. Honours `XDG_DATA_HOME`. The files themselves live in `assets/` and are
//! built into the binary; the window icon comes from the same PNGs ([`window_icon`]).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

pub const DESKTOP_FILE: &str = "sightline.desktop";
pub const MIME_FILE: &str = "sightline-nsys-rep.xml";
pub const NSYS_REP_MIME: &str = "application/x-nsys-rep";
/// The icon's name in the icon theme, as the desktop entry's `Icon=` gives it.
pub const ICON_NAME: &str = "sightline";

/// `assets/sightline.desktop`; its `Exec=` line is replaced by the installed executable's path.
const DESKTOP_TEMPLATE: &str = include_str!("../../assets/sightline.desktop");
/// `assets/sightline-nsys-rep.xml`, installed as it is.
pub const MIME_PACKAGE: &str = include_str!("../../assets/sightline-nsys-rep.xml");
/// The icon's SVG source.
pub const ICON_SVG: &[u8] = include_bytes!("../../assets/sightline.svg");
/// The icon rendered from the SVG (see `assets/README.md`), by size in pixels.
pub const ICON_PNGS: [(u32, &[u8]); 8] = [
    (16, include_bytes!("../../assets/icons/sightline-16.png")),
    (24, include_bytes!("../../assets/icons/sightline-24.png")),
    (32, include_bytes!("../../assets/icons/sightline-32.png")),
    (48, include_bytes!("../../assets/icons/sightline-48.png")),
    (64, include_bytes!("../../assets/icons/sightline-64.png")),
    (128, include_bytes!("../../assets/icons/sightline-128.png")),
    (256, include_bytes!("../../assets/icons/sightline-256.png")),
    (512, include_bytes!("../../assets/icons/sightline-512.png")),
];

/// The embedded PNG of the icon closest to `size_px` (the largest one not above it, else the
/// smallest).
pub fn icon_png(size_px: u32) -> &'static [u8] {
    ICON_PNGS
        .iter()
        .rev()
        .find(|(n, _)| *n <= size_px)
        .unwrap_or(&ICON_PNGS[0])
        .1
}

/// The window's icon (256 px), or `None` with a warning on stderr if the embedded PNG cannot be
/// decoded: a missing icon is no reason not to open the window.
pub fn window_icon() -> Option<egui::IconData> {
    match eframe::icon_data::from_png_bytes(icon_png(256)) {
        Ok(icon) => Some(icon),
        Err(e) => {
            eprintln!("warning: cannot decode the window icon: {e}");
            None
        }
    }
}

/// `$XDG_DATA_HOME`, or `~/.local/share`.
pub fn data_home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from)
        && dir.is_absolute()
    {
        return Ok(dir);
    }
    match std::env::var_os("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".local/share")),
        None => bail!("neither XDG_DATA_HOME nor HOME is set; cannot find where to install"),
    }
}

/// The paths `install` writes under `data_home`: the desktop entry, the MIME package, the SVG
/// icon, then one PNG icon per size of [`ICON_PNGS`].
pub fn installed_paths(data_home: &Path) -> Vec<PathBuf> {
    let hicolor = data_home.join("icons/hicolor");
    let mut paths = vec![
        data_home.join("applications").join(DESKTOP_FILE),
        data_home.join("mime/packages").join(MIME_FILE),
        hicolor.join(format!("scalable/apps/{ICON_NAME}.svg")),
    ];
    paths.extend(
        ICON_PNGS
            .iter()
            .map(|(size, _)| hicolor.join(format!("{size}x{size}/apps/{ICON_NAME}.png"))),
    );
    paths
}

/// The contents of the files of [`installed_paths`], in the same order.
fn installed_contents(exe: &Path) -> Vec<Cow<'static, [u8]>> {
    let mut contents = vec![
        Cow::Owned(desktop_entry(exe).into_bytes()),
        Cow::Borrowed(MIME_PACKAGE.as_bytes()),
        Cow::Borrowed(ICON_SVG),
    ];
    contents.extend(ICON_PNGS.iter().map(|(_, png)| Cow::Borrowed(*png)));
    contents
}

fn desktop_entry(exe: &Path) -> String {
    // Exec quoting per the Desktop Entry spec: the path in double quotes, with `"`, `` ` ``,
    // `$` and `\` escaped.
    let mut quoted = String::from('"');
    for c in exe.to_string_lossy().chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    let mut entry = String::with_capacity(DESKTOP_TEMPLATE.len() + quoted.len());
    for line in DESKTOP_TEMPLATE.lines() {
        if line.starts_with("Exec=") {
            entry.push_str(&format!("Exec={quoted} %f"));
        } else {
            entry.push_str(line);
        }
        entry.push('\n');
    }
    entry
}

/// Writes the desktop entry, the MIME package and the icons; returns the paths written.
pub fn install(data_home: &Path, exe: &Path) -> Result<Vec<PathBuf>> {
    let paths = installed_paths(data_home);
    for (file, contents) in paths.iter().zip(installed_contents(exe)) {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        std::fs::write(file, contents).with_context(|| format!("writing {}", file.display()))?;
    }
    refresh_caches(data_home);
    Ok(paths)
}

/// Removes what [`install`] wrote; returns the paths removed. The folders stay: they are the
/// XDG layout other programs install into too.
pub fn uninstall(data_home: &Path) -> Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for file in installed_paths(data_home) {
        match std::fs::remove_file(&file) {
            Ok(()) => removed.push(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", file.display())),
        }
    }
    refresh_caches(data_home);
    Ok(removed)
}

/// Rebuilds the MIME and desktop caches when the tools exist; their absence is not an error
/// (desktops rescan on login).
fn refresh_caches(data_home: &Path) {
    let _ = Command::new("update-mime-database")
        .arg(data_home.join("mime"))
        .output();
    let _ = Command::new("update-desktop-database")
        .arg(data_home.join("applications"))
        .output();
}

/// `sightline --install-desktop`: installs for the running executable and prints what it did.
pub fn install_command() -> Result<i32> {
    let exe =
        std::env::current_exe().context("cannot find the path of the sightline executable")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let written = install(&data_home()?, &exe)?;
    for p in written {
        println!("wrote {}", p.display());
    }
    println!("*.nsys-rep files now open in Sightline; .sqlite files list it under \"Open with\".");
    Ok(0)
}

/// `sightline --uninstall-desktop`.
pub fn uninstall_command() -> Result<i32> {
    let removed = uninstall(&data_home()?)?;
    if removed.is_empty() {
        println!("nothing to remove: Sightline's desktop entry was not installed");
    }
    for p in removed {
        println!("removed {}", p.display());
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::expect_used)] // a failed expectation fails the test
mod tests {
    use super::*;

    #[test]
    fn exec_line_quotes_the_path() {
        let entry = desktop_entry(Path::new("/opt/my apps/sight$line"));
        assert!(
            entry.contains("Exec=\"/opt/my apps/sight\\$line\" %f\n"),
            "{entry}"
        );
        assert!(entry.contains("MimeType=application/x-nsys-rep;application/vnd.sqlite3;"));
        assert!(entry.contains("\nIcon=sightline\n"), "{entry}");
        assert_eq!(entry.matches("Exec=").count(), 1, "{entry}");
        // Every other line of assets/sightline.desktop is kept as it is.
        let kept: Vec<&str> = DESKTOP_TEMPLATE
            .lines()
            .filter(|l| !l.starts_with("Exec="))
            .collect();
        let written: Vec<&str> = entry.lines().filter(|l| !l.starts_with("Exec=")).collect();
        assert_eq!(kept, written);
    }

    #[test]
    fn embedded_pngs_have_the_size_they_are_listed_under() {
        for (size, png) in ICON_PNGS {
            let icon = eframe::icon_data::from_png_bytes(png).expect("embedded PNG decodes");
            assert_eq!((icon.width, icon.height), (size, size));
            assert_eq!(icon.rgba.len(), (size * size * 4) as usize);
        }
        assert_eq!(icon_png(256), ICON_PNGS[6].1);
        assert_eq!(icon_png(100), ICON_PNGS[4].1);
        assert_eq!(icon_png(1), ICON_PNGS[0].1);
        assert_eq!(icon_png(4096), ICON_PNGS[7].1);
        let window = window_icon().expect("window icon");
        assert_eq!((window.width, window.height), (256, 256));
    }
}
