//! Which dialog opens: what this machine offers for a system file dialog ([`SystemProbe`]: the
//! portal's service file and session bus, `zenity` on `PATH`), the backend chosen from that and
//! [`ENV_VAR`] ([`choose_backend`]), and the system dialog itself through `rfd`.

use super::*;

/// Which dialog opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialogBackend {
    /// The platform's (through `rfd`).
    System,
    /// The in-window browser, and why.
    Builtin { reason: String },
}

/// What this machine offers for a system file dialog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SystemProbe {
    /// xdg-desktop-portal installed and a session bus to reach it on.
    pub portal: bool,
    /// `zenity` on `PATH` and a display to show it on.
    pub zenity: bool,
    /// A platform whose dialog is part of the OS (macOS, Windows).
    pub native: bool,
}

impl SystemProbe {
    /// Looks at this process's environment and file system (no D-Bus traffic).
    pub fn of_this_machine() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let display = var("DISPLAY").is_some() || var("WAYLAND_DISPLAY").is_some();
        Self {
            portal: session_bus_reachable(var("DBUS_SESSION_BUS_ADDRESS"), var("XDG_RUNTIME_DIR"))
                && portal_service_installed(
                    var("XDG_DATA_HOME"),
                    var("HOME"),
                    var("XDG_DATA_DIRS"),
                ),
            zenity: display && on_path("zenity", var("PATH")),
            native: cfg!(any(target_os = "macos", target_os = "windows")),
        }
    }
}

/// The backend for `setting` (the value of [`ENV_VAR`]) on a machine that offers `probe`.
pub fn choose_backend(setting: Option<&str>, probe: SystemProbe) -> DialogBackend {
    match setting.map(str::trim) {
        Some("builtin") => DialogBackend::Builtin {
            reason: format!("{ENV_VAR}=builtin: using the built-in file browser"),
        },
        Some("system") => DialogBackend::System,
        _ if probe.native || probe.portal || probe.zenity => DialogBackend::System,
        _ => DialogBackend::Builtin {
            reason: NO_SYSTEM_DIALOG.to_string(),
        },
    }
}

/// The session bus libdbus would connect to: the address given, or the per-user socket that
/// libdbus ≥ 1.10 falls back to.
pub(super) fn session_bus_reachable(
    address: Option<std::ffi::OsString>,
    runtime_dir: Option<std::ffi::OsString>,
) -> bool {
    match address {
        Some(address) => {
            let address = address.to_string_lossy().into_owned();
            // `unix:path=/run/user/1000/bus[,guid=…]`: the socket must exist; other transports
            // (abstract sockets, tcp) cannot be checked without connecting.
            match address
                .split(';')
                .next()
                .and_then(|a| a.strip_prefix("unix:path="))
            {
                Some(rest) => Path::new(rest.split(',').next().unwrap_or(rest)).exists(),
                None => true,
            }
        }
        None => runtime_dir.is_some_and(|dir| Path::new(&dir).join("bus").exists()),
    }
}

/// Whether D-Bus can start xdg-desktop-portal: its service file in the XDG data dirs.
pub(super) fn portal_service_installed(
    data_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    data_dirs: Option<std::ffi::OsString>,
) -> bool {
    let home_dir = data_home
        .map(PathBuf::from)
        .or_else(|| home.map(|h| PathBuf::from(h).join(".local/share")));
    let dirs = data_dirs.unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    home_dir
        .into_iter()
        .chain(std::env::split_paths(&dirs))
        .any(|d| {
            d.join("dbus-1/services/org.freedesktop.portal.Desktop.service")
                .is_file()
        })
}

pub(super) fn on_path(program: &str, path: Option<std::ffi::OsString>) -> bool {
    path.is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// The system dialog, blocking until it closes (as `rfd`'s own dialogs do).
pub(super) fn system_dialog(request: &Request, start_dir: &Path) -> Option<Vec<PathBuf>> {
    let start = DialogStart::of(request, start_dir);
    let mut dialog = rfd::FileDialog::new().set_directory(&start.directory);
    if let Some(name) = &start.file_name {
        dialog = dialog.set_file_name(name);
    }
    match request {
        Request::OpenTrace => dialog
            .set_title(super::OPEN_TITLE)
            .add_filter("Traces and reports", TRACE_EXTENSIONS)
            .add_filter("SQLite export", &["sqlite"])
            .add_filter("Nsight Systems report", &["nsys-rep", "qdrep"])
            .add_filter("PyTorch profiler trace", &["json", "json.gz"])
            .add_filter("Nsight Compute report", super::NCU_EXTENSIONS)
            .add_filter("All files", &["*"])
            .pick_file()
            .map(|p| vec![p]),
        Request::OpenRun => dialog
            .set_title(super::OPEN_RUN_TITLE)
            .add_filter("Traces of a run", super::RUN_EXTENSIONS)
            .add_filter("All files", &["*"])
            .pick_files(),
        Request::SaveCsv {
            extension: "html", ..
        } => dialog
            .set_title("Save report as HTML")
            .add_filter("HTML", &["html", "htm"])
            .save_file()
            .map(|p| vec![p]),
        Request::SaveCsv { .. } => dialog
            .set_title("Export as CSV")
            .add_filter("CSV", &["csv"])
            .save_file()
            .map(|p| vec![p]),
    }
}

/// Where the system dialog starts, in both ways `rfd` passes it on: the folder (the portal,
/// macOS, Windows) and, for Open…, a file name that is the folder with a trailing `/` — rfd's
/// zenity fallback ignores the folder, and `zenity --filename=DIR/` opens DIR (the portal's
/// OpenFile has no file name, so it is harmless there). Save… names the suggested file only (a
/// path would be the portal's whole file name).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DialogStart {
    pub directory: PathBuf,
    pub file_name: Option<String>,
}

impl DialogStart {
    pub(super) fn of(request: &Request, start_dir: &Path) -> Self {
        let file_name = match request {
            Request::OpenTrace | Request::OpenRun => Some(format!(
                "{}{}",
                start_dir.display(),
                std::path::MAIN_SEPARATOR
            )),
            Request::SaveCsv { file_name, .. } => Some(file_name.clone()),
        };
        Self {
            directory: start_dir.to_path_buf(),
            file_name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open… after an export starts in the folder the trace came from, told to every dialog
    /// rfd may open (zenity through the file name); Save… in the export folder.
    #[test]
    fn open_after_an_export_starts_where_the_trace_came_from() {
        let traces = std::env::temp_dir();
        let exports = traces.join("sightline-exports");
        let mut d = FileDialogs::with_backend(DialogBackend::System);
        d.set_start_dir(&traces);
        d.choose(FilePurpose::SaveSelectionCsv, exports.join("sel.csv"));
        assert_eq!(d.last_export_dir(), Some(exports.as_path()));
        let open = DialogStart::of(&Request::OpenTrace, &d.open_dir());
        assert_eq!(open.directory, traces);
        let name = open.file_name.expect("a file name for zenity");
        assert_eq!(Path::new(&name), traces.as_path());
        assert!(name.ends_with(std::path::MAIN_SEPARATOR), "{name}");
        // No trace opened yet: the working folder, never the dialog's own last one.
        let fresh = FileDialogs::with_backend(DialogBackend::System);
        let cwd = std::env::current_dir().expect("a working folder");
        assert_eq!(
            DialogStart::of(&Request::OpenTrace, &fresh.open_dir()).directory,
            cwd
        );
        let save = DialogStart::of(
            &Request::SaveCsv {
                file_name: "sel.csv".into(),
                extension: "csv",
            },
            &exports,
        );
        assert_eq!(save.file_name.as_deref(), Some("sel.csv"));
        assert_eq!(save.directory, exports);
    }
}
