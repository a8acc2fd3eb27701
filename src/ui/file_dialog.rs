//! File → Open… and every Save…: the system file dialog where one can open, else an in-window
//! file browser, so that opening and exporting work over X11 forwarding and VNC too.
//!
//! On Linux, `rfd` asks xdg-desktop-portal over the session D-Bus and, when that fails, runs
//! `zenity`; when neither is there it returns `None` at once — the same answer as a cancel.
//! Two checks tell the cases apart:
//! - **before asking**: the portal counts as there when the session bus is reachable
//!   (`DBUS_SESSION_BUS_ADDRESS`, or `$XDG_RUNTIME_DIR/bus`) and the portal's D-Bus service
//!   (`dbus-1/services/org.freedesktop.portal.Desktop.service` under `$XDG_DATA_HOME` or
//!   `$XDG_DATA_DIRS`) is installed; zenity counts when it is on `PATH` and there is a display.
//!   With neither, the built-in browser opens without trying the system dialog.
//! - **after asking**: a dialog that answered "nothing chosen" within [`FAILED_FAST`] never
//!   showed (no person cancels that fast), so the built-in browser opens instead, and is used
//!   for the rest of the session.
//!
//! A portal that is installed but hangs until D-Bus times out (about 25 s) reads as a cancel;
//! `SIGHTLINE_FILE_DIALOG=builtin` is the way out there (`=system` skips the checks).
//!
//! The browser is written here rather than taken from a crate: `egui-file-dialog` 0.15 is built
//! on egui 0.36, and `egui_file` 0.29 (egui 0.37) labels its entries with emoji that egui 0.37's
//! default fonts cannot draw. It lists folders (one click enters) and the files of the asked
//! kind ("Show all files" for the rest), takes a typed folder or name, makes a new folder
//! ([`new_folder`]), and says why it is used.
//!
//! Open… starts in the folder a trace was last opened from; every Save… in the folder of the
//! last export, else the home folder — never beside the trace by default, whose folder may be
//! read-only or shared.
//!
//! The state lives in the egui context (one [`FileDialogs`] per context): the askers sit deep
//! in panels whose signatures other code shares, and the context is what they all have. A
//! request names its [`FilePurpose`]; the chosen path is handed to whoever takes that purpose
//! (on the same frame for the system dialog, on a later one for the browser).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::mutex::Mutex;
use egui::{Align2, Context, Id};

mod backend;
mod browser;
mod new_folder;
mod rank_probe;
mod run_pick;

use backend::system_dialog;
pub use backend::{DialogBackend, SystemProbe, choose_backend};
use browser::{Browser, BrowserOutcome};
pub use run_pick::{OPEN_RUN_TITLE, RUN_EXTENSIONS, open_run, take_all};

/// `builtin` forces the in-window browser, `system` the system dialog; unset or anything else:
/// the system dialog where one can open.
pub const ENV_VAR: &str = "SIGHTLINE_FILE_DIALOG";

/// Extensions of the files File → Open… lists (a file's name ends with `.` and one of them):
/// Nsight Systems reports and exports, PyTorch profiler traces, and Nsight Compute reports,
/// plain, gzipped, zstd-compressed (`.ncu-repz`) or in the name before 2020.2, and ncu's CSV
/// pages (`ncu --csv`, plain or gzipped).
pub const TRACE_EXTENSIONS: &[&str] = &[
    "sqlite",
    "nsys-rep",
    "qdrep",
    "json",
    "json.gz",
    "ncu-rep",
    "ncu-rep.gz",
    "ncu-repz",
    "nsight-cuprof-report",
    "csv",
    "csv.gz",
];

/// The Nsight Compute extensions among [`TRACE_EXTENSIONS`] (reports and CSV pages).
pub const NCU_EXTENSIONS: &[&str] = &[
    "ncu-rep",
    "ncu-rep.gz",
    "ncu-repz",
    "nsight-cuprof-report",
    "csv",
    "csv.gz",
];

/// What File → Open… is for, as its title says it.
pub const OPEN_TITLE: &str =
    "Open a trace or report (Nsight Systems, PyTorch profiler, Nsight Compute)";

/// A system dialog that returns nothing sooner than this did not open.
pub const FAILED_FAST: Duration = Duration::from_millis(400);

/// Why the built-in browser is used when no system dialog is found.
pub const NO_SYSTEM_DIALOG: &str =
    "no system file dialog (no xdg-desktop-portal or zenity): using the built-in one";

/// Who asked for a path: the chosen path goes back to the asker of the same purpose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilePurpose {
    /// File → Open… and the welcome screen's Open…
    OpenTrace,
    /// File → Open run…: the traces of a run's ranks, several chosen at once.
    OpenRun,
    /// The Statistics table's "Export CSV…".
    SaveStatsCsv,
    /// The analysis panel's "Export selection to CSV…".
    SaveSelectionCsv,
    /// The compare view's diff "Export CSV…".
    SaveDiffCsv,
    /// The SQL tab's "Export CSV…".
    SaveSqlCsv,
    /// File → Save report… (an HTML page).
    SaveReportHtml,
}

impl FilePurpose {
    /// The extension of the file saved for this purpose.
    fn extension(&self) -> &'static str {
        match self {
            FilePurpose::SaveReportHtml => "html",
            _ => "csv",
        }
    }
}

/// What is asked for.
#[derive(Clone, Debug)]
enum Request {
    OpenTrace,
    OpenRun,
    SaveCsv {
        file_name: String,
        /// `csv`, or `html` for a report.
        extension: &'static str,
    },
}

/// The file dialogs of one window: which kind opens, the browser while it is open, and the
/// chosen paths not yet taken by their askers.
pub struct FileDialogs {
    backend: DialogBackend,
    browser: Option<Browser>,
    chosen: Vec<(FilePurpose, PathBuf)>,
    /// Where Open… starts: the folder a trace was last opened from.
    start_dir: Option<PathBuf>,
    /// Where Save… starts: the folder of the last export (else the home folder).
    export_dir: Option<PathBuf>,
}

impl Default for FileDialogs {
    fn default() -> Self {
        Self::detect()
    }
}

impl FileDialogs {
    /// The backend [`ENV_VAR`] and this machine call for.
    pub fn detect() -> Self {
        let setting = std::env::var(ENV_VAR).ok();
        Self::with_backend(choose_backend(
            setting.as_deref(),
            SystemProbe::of_this_machine(),
        ))
    }

    pub fn with_backend(backend: DialogBackend) -> Self {
        Self {
            backend,
            browser: None,
            chosen: Vec::new(),
            start_dir: None,
            export_dir: None,
        }
    }

    /// Always the in-window browser, saying `reason`.
    pub fn builtin(reason: impl Into<String>) -> Self {
        Self::with_backend(DialogBackend::Builtin {
            reason: reason.into(),
        })
    }

    pub fn backend(&self) -> &DialogBackend {
        &self.backend
    }

    /// Why the built-in browser is used, for the status bar; `None` with the system dialog.
    pub fn notice(&self) -> Option<&str> {
        match &self.backend {
            DialogBackend::Builtin { reason } => Some(reason),
            DialogBackend::System => None,
        }
    }

    /// The folder the next dialog starts in (the last one a file was chosen in, unless set).
    pub fn start_dir(&self) -> Option<&Path> {
        self.start_dir.as_deref()
    }

    pub fn set_start_dir(&mut self, dir: impl Into<PathBuf>) {
        self.start_dir = Some(dir.into());
    }

    /// The folder the next Save… starts in: the last export's, else the home folder (else
    /// the working folder).
    pub fn export_dir(&self) -> PathBuf {
        self.export_dir
            .clone()
            .filter(|d| d.is_dir())
            .or_else(|| std::env::home_dir().filter(|d| d.is_dir()))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    pub fn set_export_dir(&mut self, dir: impl Into<PathBuf>) {
        self.export_dir = Some(dir.into());
    }

    /// The folder of the last export, as remembered (`None` before the first).
    pub fn last_export_dir(&self) -> Option<&Path> {
        self.export_dir.as_deref()
    }

    /// Whether the in-window browser is open, and for what.
    pub fn browsing(&self) -> Option<&FilePurpose> {
        self.browser.as_ref().map(|b| &b.purpose)
    }

    /// Asks for a trace to open; [`Self::take`] of [`FilePurpose::OpenTrace`] gives it.
    pub fn open_trace(&mut self) {
        self.ask(FilePurpose::OpenTrace, Request::OpenTrace);
    }

    /// Asks where to save a CSV, suggesting `file_name`; [`Self::take`] of `purpose` gives it.
    pub fn save_csv(&mut self, purpose: FilePurpose, file_name: &str) {
        let extension = purpose.extension();
        self.ask(
            purpose,
            Request::SaveCsv {
                file_name: file_name.to_string(),
                extension,
            },
        );
    }

    /// The path chosen for `purpose`, once (the oldest first).
    pub fn take(&mut self, purpose: &FilePurpose) -> Option<PathBuf> {
        let i = self.chosen.iter().position(|(p, _)| p == purpose)?;
        Some(self.chosen.remove(i).1)
    }

    fn ask(&mut self, purpose: FilePurpose, request: Request) {
        if self.browser.is_some() {
            // One browser at a time: a second ask while one is open replaces it.
            self.browser = None;
        }
        if self.backend == DialogBackend::System {
            let asked = Instant::now();
            // Always a folder: left to itself, the system dialog opens where it last chose a
            // file (GTK's remembered folder), which after an export is the export's folder.
            let dir = match request {
                Request::OpenTrace | Request::OpenRun => self.open_dir(),
                Request::SaveCsv { .. } => self.export_dir(),
            };
            match system_dialog(&request, &dir) {
                Some(paths) if !paths.is_empty() => {
                    for path in paths {
                        self.choose(purpose.clone(), path);
                    }
                    return;
                }
                _ if asked.elapsed() >= FAILED_FAST => return, // cancelled
                _ => {
                    self.backend = DialogBackend::Builtin {
                        reason: format!(
                            "the system file dialog did not open ({}ms, no xdg-desktop-portal or \
                             zenity answered): using the built-in one",
                            asked.elapsed().as_millis()
                        ),
                    };
                }
            }
        }
        let dir = match request {
            Request::OpenTrace | Request::OpenRun => self.open_dir(),
            Request::SaveCsv { .. } => self.export_dir(),
        };
        self.browser = Some(Browser::new(purpose, &request, dir));
    }

    fn open_dir(&self) -> PathBuf {
        self.start_dir
            .clone()
            .filter(|d| d.is_dir())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    fn choose(&mut self, purpose: FilePurpose, mut path: PathBuf) {
        let opens = matches!(purpose, FilePurpose::OpenTrace | FilePurpose::OpenRun);
        if !opens && path.extension().is_none() {
            path.set_extension(purpose.extension());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let remembered = if opens {
                &mut self.start_dir
            } else {
                &mut self.export_dir
            };
            *remembered = Some(dir.to_path_buf());
        }
        self.chosen.push((purpose, path));
    }

    /// Draws the in-window browser while it is open, with why it is used; call once a frame.
    pub fn show(&mut self, ctx: &Context) {
        let reason = self.notice().map(str::to_string);
        let Some(browser) = &mut self.browser else {
            return;
        };
        let mut open = true;
        let outcome = egui::Window::new(browser.title())
            .id(Id::unique("sightline_file_browser"))
            .open(&mut open)
            .collapsible(false)
            .resizable(true)
            .default_size([780.0, 480.0])
            .anchor(Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, |ui| browser.ui(ui, reason.as_deref()))
            .and_then(|r| r.inner);
        match outcome {
            Some(BrowserOutcome::Chosen(paths)) => {
                let purpose = browser.purpose.clone();
                self.browser = None;
                for path in paths {
                    self.choose(purpose.clone(), path);
                }
                ctx.request_repaint();
            }
            Some(BrowserOutcome::Cancelled) => self.browser = None,
            _ if !open => self.browser = None,
            _ => {}
        }
    }
}

/// Whether the file name ends with `.EXT` for one of `extensions` (so that `ncu-rep.gz`, with
/// its dot, matches), in any case.
fn has_extension(path: &Path, extensions: &[&str]) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let name = name.to_ascii_lowercase();
    extensions.iter().any(|x| {
        name.len() > x.len() + 1
            && name.ends_with(&x.to_ascii_lowercase())
            && name.as_bytes()[name.len() - x.len() - 1] == b'.'
    })
}

type Shared = Arc<Mutex<FileDialogs>>;

fn shared(ctx: &Context) -> Shared {
    ctx.data_mut(|d| {
        d.get_temp_mut_or_insert_with(Id::unique("sightline_file_dialogs"), || {
            Arc::new(Mutex::new(FileDialogs::detect()))
        })
        .clone()
    })
}

/// Runs `f` on the file dialogs of `ctx`'s window (made by [`FileDialogs::detect`] at first).
pub fn with<R>(ctx: &Context, f: impl FnOnce(&mut FileDialogs) -> R) -> R {
    let dialogs = shared(ctx);
    let mut dialogs = dialogs.lock();
    f(&mut dialogs)
}

/// Makes `dialogs` the file dialogs of `ctx`'s window (tests; a setting).
pub fn install(ctx: &Context, dialogs: FileDialogs) {
    ctx.data_mut(|d| {
        d.insert_temp(
            Id::unique("sightline_file_dialogs"),
            Arc::new(Mutex::new(dialogs)),
        )
    });
}

/// Asks for a trace to open (File → Open…), starting in `start_folder` when it is a folder;
/// [`take`] of [`FilePurpose::OpenTrace`] gives it.
pub fn open_trace(ctx: &Context, start_folder: Option<&Path>) {
    with(ctx, |d| {
        if let Some(folder) = start_folder.filter(|f| f.is_dir()) {
            d.set_start_dir(folder);
        }
        d.open_trace();
    });
    ctx.request_repaint();
}

/// When `asked`, asks where to save a CSV named `file_name` by default; returns the path chosen
/// for `purpose` once there is one (call every frame the asker is drawn).
pub fn csv_path(
    ctx: &Context,
    asked: bool,
    purpose: FilePurpose,
    file_name: &str,
) -> Option<PathBuf> {
    with(ctx, |d| {
        if asked {
            d.save_csv(purpose.clone(), file_name);
        }
        d.take(&purpose)
    })
}

/// The path chosen for `purpose`, once.
pub fn take(ctx: &Context, purpose: &FilePurpose) -> Option<PathBuf> {
    with(ctx, |d| d.take(purpose))
}

/// Draws the in-window browser while it is open; call once a frame.
pub fn show(ctx: &Context) {
    with(ctx, |d| d.show(ctx));
}

/// Why the built-in browser is used (the browser says it at its top).
pub fn notice(ctx: &Context) -> Option<String> {
    with(ctx, |d| d.notice().map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::backend::{on_path, portal_service_installed, session_bus_reachable};
    use super::*;

    const NOTHING: SystemProbe = SystemProbe {
        portal: false,
        zenity: false,
        native: false,
    };

    #[test]
    fn the_setting_forces_either_dialog() {
        let all = SystemProbe {
            portal: true,
            zenity: true,
            native: true,
        };
        assert!(matches!(
            choose_backend(Some("builtin"), all),
            DialogBackend::Builtin { reason } if reason.contains(ENV_VAR)
        ));
        assert_eq!(
            choose_backend(Some("system"), NOTHING),
            DialogBackend::System
        );
    }

    #[test]
    fn no_portal_and_no_zenity_means_the_browser() {
        assert_eq!(
            choose_backend(None, NOTHING),
            DialogBackend::Builtin {
                reason: NO_SYSTEM_DIALOG.to_string()
            }
        );
        assert_eq!(
            choose_backend(Some("auto"), NOTHING),
            choose_backend(None, NOTHING)
        );
        for probe in [
            SystemProbe {
                portal: true,
                ..NOTHING
            },
            SystemProbe {
                zenity: true,
                ..NOTHING
            },
            SystemProbe {
                native: true,
                ..NOTHING
            },
        ] {
            assert_eq!(
                choose_backend(None, probe),
                DialogBackend::System,
                "{probe:?}"
            );
        }
    }

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "sightline-file-dialog-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).ok();
        dir
    }

    #[test]
    fn the_portal_needs_its_service_file_and_a_bus() {
        let data = scratch("data");
        let runtime = scratch("runtime");
        let dirs = Some(data.clone().into_os_string());
        assert!(!portal_service_installed(None, None, dirs.clone()));
        let services = data.join("dbus-1/services");
        std::fs::create_dir_all(&services).ok();
        std::fs::write(services.join("org.freedesktop.portal.Desktop.service"), "").ok();
        assert!(portal_service_installed(None, None, dirs));

        assert!(!session_bus_reachable(
            None,
            Some(runtime.clone().into_os_string())
        ));
        assert!(!session_bus_reachable(None, None));
        let socket = runtime.join("bus");
        let address = format!("unix:path={},guid=0", socket.display());
        assert!(!session_bus_reachable(Some(address.clone().into()), None));
        std::fs::write(&socket, "").ok();
        assert!(session_bus_reachable(None, Some(runtime.into_os_string())));
        assert!(session_bus_reachable(Some(address.into()), None));
        assert!(session_bus_reachable(
            Some("unix:abstract=/tmp/x".into()),
            None
        ));
    }

    #[test]
    fn zenity_is_looked_up_on_path() {
        let bin = scratch("bin");
        let path = Some(std::env::join_paths([&bin]).unwrap_or_default());
        assert!(!on_path("zenity", path.clone()));
        std::fs::write(bin.join("zenity"), "").ok();
        assert!(on_path("zenity", path));
        assert!(!on_path("zenity", None));
    }

    #[test]
    fn a_chosen_path_goes_to_its_asker_once() {
        let mut d = FileDialogs::builtin("test");
        d.choose(FilePurpose::SaveStatsCsv, PathBuf::from("/tmp/x/stats"));
        d.choose(FilePurpose::OpenTrace, PathBuf::from("/tmp/y/a.sqlite"));
        assert_eq!(d.take(&FilePurpose::SaveDiffCsv), None);
        // A CSV saved without an extension gets one.
        assert_eq!(
            d.take(&FilePurpose::SaveStatsCsv),
            Some(PathBuf::from("/tmp/x/stats.csv"))
        );
        assert_eq!(d.take(&FilePurpose::SaveStatsCsv), None);
        assert_eq!(
            d.take(&FilePurpose::OpenTrace),
            Some(PathBuf::from("/tmp/y/a.sqlite"))
        );
        // The next dialog starts where the last file was chosen.
        assert_eq!(d.start_dir(), Some(Path::new("/tmp/y")));
    }

    #[test]
    fn the_browser_lists_traces_for_open_and_csv_for_save() {
        assert!(has_extension(Path::new("a/moe.sqlite"), TRACE_EXTENSIONS));
        assert!(has_extension(Path::new("a/r.NSYS-REP"), TRACE_EXTENSIONS));
        assert!(!has_extension(Path::new("a/notes.txt"), TRACE_EXTENSIONS));
        assert!(!has_extension(Path::new("a/sqlite"), TRACE_EXTENSIONS));
        for ncu in [
            "a/moe.ncu-rep",
            "a/moe.ncu-rep.gz",
            "a/MOE.NCU-REPZ",
            "a/old.nsight-cuprof-report",
            "a/kt.pt.trace.json.gz",
        ] {
            assert!(has_extension(Path::new(ncu), TRACE_EXTENSIONS), "{ncu}");
        }
        assert!(!has_extension(Path::new("a/notes.gz"), TRACE_EXTENSIONS));
        assert!(!has_extension(Path::new("a/.ncu-rep"), TRACE_EXTENSIONS));
        let mut d = FileDialogs::builtin("test");
        d.open_trace();
        assert_eq!(d.browsing(), Some(&FilePurpose::OpenTrace));
        d.save_csv(FilePurpose::SaveDiffCsv, "diff.csv");
        assert_eq!(d.browsing(), Some(&FilePurpose::SaveDiffCsv));
    }
}
