//! Nsight Systems reports (`.nsys-rep`, and `.qdrep` from before 2021.4): the loading layer
//! converts one with `nsys export --type=sqlite` into Sightline's cache folder and loads the
//! SQLite file, so every command and the window open a report the same way. A conversion is
//! reused while it is newer than the report; nothing is ever written beside the user's report.
//!
//! The cache folder is `$SIGHTLINE_CACHE_DIR` when set (tests and scripts point it elsewhere),
//! else `$XDG_CACHE_HOME/sightline`, else `~/.cache/sightline`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{LoadControl, LoadError, LoadProgress};

/// The progress phase shown while `nsys export` runs.
pub const CONVERTING_PHASE: &str = "converting with nsys export";

/// The environment variable that overrides the cache folder.
pub const CACHE_DIR_VAR: &str = "SIGHTLINE_CACHE_DIR";

/// Does the name say this is an Nsight Systems report (`.nsys-rep` or `.qdrep`, any case)?
pub fn is_nsys_report(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("nsys-rep") || e.eq_ignore_ascii_case("qdrep"))
}

/// `name` (plus `.exe` on Windows) in one of the PATH directories, if it is there.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let file = if cfg!(windows) {
        format!("{name}.exe")
    } else {
        name.to_string()
    };
    std::env::split_paths(&path)
        // An empty PATH entry would mean the current folder; nsys is never looked up there.
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(&file))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Where conversions go: `$SIGHTLINE_CACHE_DIR`, else `$XDG_CACHE_HOME/sightline`, else
/// `~/.cache/sightline`; `None` when none of them is set.
pub fn cache_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(dir) = absolute(CACHE_DIR_VAR) {
        return Some(dir);
    }
    let base = absolute("XDG_CACHE_HOME")
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("sightline"))
}

/// FNV-1a, 64 bits: the hash the window has named its cached conversions with since it first
/// converted reports, kept so that those conversions are still found (and the digest cache's
/// keys: stable across builds and machines).
pub fn path_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The cached SQLite file for `report` in `dir`: the report's name plus a hash of its full path,
/// so that two reports with the same file name do not collide.
pub fn cached_sqlite(dir: &Path, report: &Path) -> PathBuf {
    let absolute = std::fs::canonicalize(report).unwrap_or_else(|_| report.to_path_buf());
    let stem = report
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    let hash = path_hash(&absolute.to_string_lossy());
    dir.join(format!("{stem}-{hash:016x}.sqlite"))
}

/// The SQLite file to read for `path`: `path` itself, unless it is a report (by its name) that is
/// not already an SQLite file, whose export [`sqlite_for_report`] gives. For callers that read
/// the SQLite file themselves (`bench` times loads of the export, not the conversion).
pub fn sqlite_path(path: &Path, control: &LoadControl) -> Result<PathBuf, LoadError> {
    let mut header = [0u8; 16];
    let is_sqlite = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| &header == b"SQLite format 3\0");
    if is_nsys_report(path) && !is_sqlite {
        sqlite_for_report(path, control)
    } else {
        Ok(path.to_path_buf())
    }
}

/// The SQLite export of `report`: the cached one when it is at least as new as the report
/// (nsys or not), otherwise a fresh `nsys export` into the cache. Reports [`CONVERTING_PHASE`] while nsys runs
/// and stops it when the load is cancelled.
pub fn sqlite_for_report(report: &Path, control: &LoadControl) -> Result<PathBuf, LoadError> {
    let nsys = find_on_path("nsys");
    let dir = cache_dir();
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    // A fresh conversion is used even where nsys is not installed.
    if let Some(dir) = &dir {
        let out = cached_sqlite(dir, report);
        if let (Some(cached), Some(source)) = (modified(&out), modified(report))
            && cached >= source
        {
            return Ok(out);
        }
    }
    let nsys = nsys.ok_or_else(|| LoadError::NsysRep {
        path: report.to_path_buf(),
        sqlite: report.with_extension("sqlite"),
    })?;
    let dir = dir.ok_or_else(|| LoadError::NoCacheDir {
        path: report.to_path_buf(),
    })?;
    std::fs::create_dir_all(&dir).map_err(|source| LoadError::CacheDir {
        dir: dir.clone(),
        source,
    })?;
    let out = cached_sqlite(&dir, report);
    (control.progress)(&LoadProgress {
        phase: CONVERTING_PHASE,
        fraction: 0.0,
    });
    // nsys writes under a name of this conversion's own and the result is renamed into place
    // only when it succeeded: a cancelled or failed export never leaves a file that looks newer
    // than the report, and two conversions at once (two processes, two tabs) do not write the
    // same file.
    let partial = out.with_extension(format!("partial-{}.sqlite", super::temporary_suffix()));
    let result = run_nsys_export(&nsys, report, &partial, control);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, &out).map_err(|source| {
        let _ = std::fs::remove_file(&partial);
        LoadError::CacheDir {
            dir: dir.clone(),
            source,
        }
    })?;
    Ok(out)
}

/// Runs `nsys export --type=sqlite -o OUT REPORT`, polling for cancellation.
fn run_nsys_export(
    nsys: &Path,
    report: &Path,
    out: &Path,
    control: &LoadControl,
) -> Result<(), LoadError> {
    let failed = |detail: String| LoadError::NsysExport {
        path: report.to_path_buf(),
        nsys: nsys.to_path_buf(),
        detail,
    };
    let mut child = Command::new(nsys)
        .arg("export")
        .arg("--type=sqlite")
        .arg("--force-overwrite=true")
        .arg("-o")
        .arg(out)
        .arg(report)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(format!("cannot run it: {e}")))?;
    // nsys prints its messages on either stream; they are read on threads so that a full pipe
    // never stalls it.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let status = loop {
        if control.is_cancelled() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LoadError::Cancelled);
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(failed(format!("waiting for it failed: {e}"))),
        }
    };
    let said = |h: Option<JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    let (stdout, stderr) = (said(stdout), said(stderr));
    if status.success() && out.is_file() {
        return Ok(());
    }
    // The last lines are where nsys says what went wrong (after its usage text, if any).
    let lines: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    let what = if status.success() {
        "it wrote no file".to_string()
    } else {
        format!("{status}")
    };
    Err(failed(if tail.is_empty() {
        what
    } else {
        format!("{what}: {tail}")
    }))
}

/// Reads a child's output stream to its end on a thread of its own.
fn drain(mut stream: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_reports_by_extension_in_any_case() {
        assert!(is_nsys_report(Path::new("/a/run.nsys-rep")));
        assert!(is_nsys_report(Path::new("run.NSYS-REP")));
        assert!(is_nsys_report(Path::new("old.qdrep")));
        assert!(!is_nsys_report(Path::new("run.sqlite")));
        assert!(!is_nsys_report(Path::new("nsys-rep")));
    }

    #[test]
    fn cache_names_keep_the_window_s_hash_and_differ_by_folder() {
        // FNV-1a's offset basis and a published test vector ("a").
        assert_eq!(path_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(path_hash("a"), 0xaf63_dc4c_8601_ec8c);
        let dir = Path::new("/cache");
        let a = cached_sqlite(dir, Path::new("/nonexistent/x/run.nsys-rep"));
        let b = cached_sqlite(dir, Path::new("/nonexistent/y/run.nsys-rep"));
        assert_ne!(a, b);
        assert!(a.starts_with(dir));
        assert!(a.to_string_lossy().ends_with(".sqlite"));
        assert!(
            a.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("run-"))
        );
    }
}
