//! Desktop integration on Linux (XDG): `sightline --install-desktop` writes a `.desktop` entry and
//! a MIME type for `*.nsys-rep` so a double-click in a file manager opens the report here, and
//! lists Sightline under "Open with" for SQLite files without making it their default (it adds
//! no `mimeapps.list` entry; the desktop only picks a default by itself for a type that has a
//! single handler, which `application/vnd.sqlite3` never has on a desktop with a DB browser).
//! `--uninstall-desktop` removes both files. Honours `XDG_DATA_HOME`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

pub const DESKTOP_FILE: &str = "sightline.desktop";
pub const MIME_FILE: &str = "sightline-nsys-rep.xml";
pub const NSYS_REP_MIME: &str = "application/x-nsys-rep";

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

/// The files `install` writes, under `data_home`.
pub fn installed_paths(data_home: &Path) -> (PathBuf, PathBuf) {
    (
        data_home.join("applications").join(DESKTOP_FILE),
        data_home.join("mime/packages").join(MIME_FILE),
    )
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
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Sightline\n\
         GenericName=Nsight Systems trace viewer\n\
         Comment=Light viewer for NVIDIA Nsight Systems traces (.nsys-rep, SQLite export)\n\
         Exec={quoted} %f\n\
         Terminal=false\n\
         Categories=Development;Profiling;\n\
         MimeType={NSYS_REP_MIME};application/vnd.sqlite3;application/x-sqlite3;\n\
         StartupWMClass=sightline\n"
    )
}

fn mime_package() -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <mime-info xmlns=\"http://www.freedesktop.org/standards/shared-mime-info\">\n\
         \x20 <mime-type type=\"{NSYS_REP_MIME}\">\n\
         \x20   <comment>Nsight Systems report</comment>\n\
         \x20   <glob pattern=\"*.nsys-rep\"/>\n\
         \x20   <glob pattern=\"*.qdrep\"/>\n\
         \x20 </mime-type>\n\
         </mime-info>\n"
    )
}

/// Writes the desktop entry and MIME package; returns the paths written.
pub fn install(data_home: &Path, exe: &Path) -> Result<Vec<PathBuf>> {
    let (desktop, mime) = installed_paths(data_home);
    for file in [&desktop, &mime] {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    std::fs::write(&desktop, desktop_entry(exe))
        .with_context(|| format!("writing {}", desktop.display()))?;
    std::fs::write(&mime, mime_package()).with_context(|| format!("writing {}", mime.display()))?;
    refresh_caches(data_home);
    Ok(vec![desktop, mime])
}

/// Removes what [`install`] wrote; returns the paths removed.
pub fn uninstall(data_home: &Path) -> Result<Vec<PathBuf>> {
    let (desktop, mime) = installed_paths(data_home);
    let mut removed = Vec::new();
    for file in [desktop, mime] {
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
    }
}
