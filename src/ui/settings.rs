//! What the window remembers between runs: the recent files (File → Open Recent), the folder
//! Open… starts in, the theme, and per trace the view (visible range, scroll, collapsed rows) and
//! the warm-up exclusion, restored when the same file is opened again.
//!
//! eframe keeps it in its storage (`app.ron` in `eframe::storage_dir("sightline")`,
//! `~/.local/share/sightline/` on Linux) under [`STORAGE_KEY`], next to what eframe and egui keep
//! themselves (window size and position, panel widths). A trace is known by its canonical path
//! plus its size and modification time, so a file rewritten in place (a new capture exported over
//! the old one) starts from a fresh view rather than from a view of other data.
//!
//! The stored types mirror the window's own ([`GroupId`], [`WarmupSettings`]) so that the file's
//! format does not change when those do; the conversions live here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use super::panels::analysis::WarmupSettings;
use super::timeline::GroupId;
use super::workspace::TraceTab;
use crate::analysis::AttributionScope;

/// The key of the settings in eframe's storage.
pub const STORAGE_KEY: &str = "sightline_settings";
/// Entries in File → Open Recent.
pub const RECENT_FILES_MAX: usize = 10;
/// Traces whose view is remembered; the least recently used is dropped first.
pub const REMEMBERED_TRACES_MAX: usize = 50;

/// Everything remembered between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Most recent first, at most [`RECENT_FILES_MAX`].
    pub recent_files: Vec<PathBuf>,
    /// Where File → Open… starts: the folder of the last trace opened.
    pub last_folder: Option<PathBuf>,
    /// Where every Save… (CSV export) starts: the folder of the last export (else the home
    /// folder, never the trace's).
    pub last_export_folder: Option<PathBuf>,
    /// `Some(true)` dark, `Some(false)` light, `None` follow the system.
    pub dark_mode: Option<bool>,
    /// The palette chosen in View (standard or colour-blind-safe); `None` until one is chosen.
    pub palette: Option<crate::ui::theme::PaletteKind>,
    /// Most recently used first, at most [`REMEMBERED_TRACES_MAX`].
    pub traces: Vec<RememberedTrace>,
    /// The files of the open tabs (by tab id) as they were when opened: a view is remembered
    /// for the file it was made on, even if the file changes on disk while it is open.
    #[serde(skip)]
    open_files: HashMap<u64, TraceKey>,
}

/// A size and modification time: a file whose stamp changed holds other data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    pub size_bytes: u64,
    /// Modification time, ns since the Unix epoch (0 where the system does not say).
    pub modified_ns: u64,
}

/// A trace file as remembered: its canonical path and stamp.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceKey {
    pub path: PathBuf,
    pub stamp: FileStamp,
}

impl TraceKey {
    /// The key of the file at `path` now; `None` when it cannot be read.
    pub fn of(path: &Path) -> Option<Self> {
        let path = std::fs::canonicalize(path).ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Some(Self {
            path,
            stamp: FileStamp {
                size_bytes: meta.len(),
                modified_ns,
            },
        })
    }
}

/// One trace's remembered view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RememberedTrace {
    pub key: TraceKey,
    pub view: TraceView,
}

/// What is restored when a trace is opened again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceView {
    /// The visible span, ns from the session start.
    pub start_ns: f64,
    pub end_ns: f64,
    /// Vertical scroll of the rows, in points.
    pub scroll_y: f32,
    pub collapsed: Vec<StoredGroup>,
    /// Whether the warm-up exclusion is on, and its rules.
    pub exclude_warmup: bool,
    pub warmup: StoredWarmup,
    /// The SQL tab's queries on this trace, most recent first.
    #[serde(default)]
    pub sql_history: Vec<String>,
}

/// A collapsible group of rows, as stored (mirrors [`GroupId`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum StoredGroup {
    Gpu(u32),
    Process(u32),
    Thread(usize),
    Memory,
    GpuMetrics(u32),
    Levels { thread: usize, first_level: usize },
    QuietThreads(u32),
}

impl From<GroupId> for StoredGroup {
    fn from(g: GroupId) -> Self {
        match g {
            GroupId::Gpu(d) => Self::Gpu(d),
            GroupId::Process(p) => Self::Process(p),
            GroupId::Thread(t) => Self::Thread(t),
            GroupId::Memory => Self::Memory,
            GroupId::GpuMetrics(d) => Self::GpuMetrics(d),
            GroupId::Levels {
                thread,
                first_level,
            } => Self::Levels {
                thread,
                first_level,
            },
            GroupId::QuietThreads(p) => Self::QuietThreads(p),
        }
    }
}

impl From<StoredGroup> for GroupId {
    fn from(g: StoredGroup) -> Self {
        match g {
            StoredGroup::Gpu(d) => Self::Gpu(d),
            StoredGroup::Process(p) => Self::Process(p),
            StoredGroup::Thread(t) => Self::Thread(t),
            StoredGroup::Memory => Self::Memory,
            StoredGroup::GpuMetrics(d) => Self::GpuMetrics(d),
            StoredGroup::Levels {
                thread,
                first_level,
            } => Self::Levels {
                thread,
                first_level,
            },
            StoredGroup::QuietThreads(p) => Self::QuietThreads(p),
        }
    }
}

/// The warm-up rules, as stored (mirrors [`WarmupSettings`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredWarmup {
    pub warmup_names: bool,
    pub exclude_regex: String,
    pub skip_first: usize,
    pub iteration_regex: String,
    /// Attribute to the event's own thread's ranges rather than its process's.
    pub thread_scope: bool,
}

impl From<&WarmupSettings> for StoredWarmup {
    fn from(s: &WarmupSettings) -> Self {
        Self {
            warmup_names: s.warmup_names,
            exclude_regex: s.exclude_regex.clone(),
            skip_first: s.skip_first,
            iteration_regex: s.iteration_regex.clone(),
            thread_scope: s.scope == AttributionScope::Thread,
        }
    }
}

impl From<&StoredWarmup> for WarmupSettings {
    fn from(s: &StoredWarmup) -> Self {
        Self {
            warmup_names: s.warmup_names,
            exclude_regex: s.exclude_regex.clone(),
            skip_first: s.skip_first,
            iteration_regex: s.iteration_regex.clone(),
            scope: if s.thread_scope {
                AttributionScope::Thread
            } else {
                AttributionScope::Process
            },
        }
    }
}

impl TraceView {
    /// The view of a tab showing a trace; `None` while nothing is loaded in it.
    pub fn of_tab(tab: &TraceTab) -> Option<Self> {
        tab.document.as_ref()?;
        let view = &tab.timeline.view;
        let mut collapsed: Vec<StoredGroup> = view
            .collapsed
            .iter()
            .copied()
            .map(StoredGroup::from)
            .collect();
        collapsed.sort_unstable();
        Some(Self {
            start_ns: view.start_ns,
            end_ns: view.end_ns,
            scroll_y: view.scroll_y,
            collapsed,
            exclude_warmup: tab.analysis.exclude_warmup,
            warmup: StoredWarmup::from(tab.analysis.warmup_settings()),
            sql_history: tab.analysis.sql().history().to_vec(),
        })
    }

    /// Puts this view on `tab` (just loaded). A range that is not a usable span (hand-edited
    /// settings) and warm-up rules that no longer parse are left out.
    pub fn apply_to(&self, tab: &mut TraceTab) {
        let view = &mut tab.timeline.view;
        if self.start_ns.is_finite() && self.end_ns.is_finite() && self.end_ns > self.start_ns {
            view.start_ns = self.start_ns;
            view.end_ns = self.end_ns;
        }
        if self.scroll_y.is_finite() {
            view.scroll_y = self.scroll_y.max(0.0);
        }
        view.collapsed = self.collapsed.iter().copied().map(GroupId::from).collect();
        if tab
            .analysis
            .apply_warmup(WarmupSettings::from(&self.warmup))
            .is_ok()
        {
            tab.analysis.exclude_warmup = self.exclude_warmup;
        }
        tab.analysis.sql_mut().set_history(self.sql_history.clone());
    }
}

impl Settings {
    /// The settings eframe kept, with the recent files that no longer exist pruned; the
    /// defaults when there are none or they cannot be read (an older or damaged file).
    pub fn load(storage: &dyn eframe::Storage) -> Self {
        let mut settings: Self = eframe::get_value(storage, STORAGE_KEY).unwrap_or_default();
        settings.prune_missing_recent();
        settings
    }

    /// Writes the settings into eframe's storage (eframe writes it to disk).
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, self);
    }

    /// Notes that `path` was opened: first in the recent files, its folder the one Open…
    /// starts in.
    pub fn note_recent(&mut self, path: &Path) {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.recent_files.retain(|p| *p != path);
        if let Some(folder) = path.parent() {
            self.last_folder = Some(folder.to_path_buf());
        }
        self.recent_files.insert(0, path);
        self.recent_files.truncate(RECENT_FILES_MAX);
    }

    /// Removes `path` from the recent files (it failed to open).
    pub fn forget_recent(&mut self, path: &Path) {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.recent_files.retain(|p| *p != canonical && p != path);
    }

    /// Drops the recent files for which `exists` is false; returns how many went.
    pub fn prune_recent(&mut self, exists: impl Fn(&Path) -> bool) -> usize {
        let before = self.recent_files.len();
        self.recent_files.retain(|p| exists(p));
        before - self.recent_files.len()
    }

    /// Drops the recent files that are no longer files on disk.
    pub fn prune_missing_recent(&mut self) -> usize {
        self.prune_recent(Path::is_file)
    }

    /// Remembers `view` for the trace `key`, as the most recently used; the least recently used
    /// beyond [`REMEMBERED_TRACES_MAX`] is forgotten.
    pub fn remember(&mut self, key: TraceKey, view: TraceView) {
        self.traces.retain(|t| t.key.path != key.path);
        self.traces.insert(0, RememberedTrace { key, view });
        self.traces.truncate(REMEMBERED_TRACES_MAX);
    }

    /// The view remembered for `key`, now the most recently used. A view remembered for the
    /// same path with another stamp (the file changed) is forgotten and `None` returned.
    pub fn recall(&mut self, key: &TraceKey) -> Option<TraceView> {
        let i = self.traces.iter().position(|t| t.key.path == key.path)?;
        let entry = self.traces.remove(i);
        if entry.key.stamp != key.stamp {
            return None;
        }
        let view = entry.view.clone();
        self.traces.insert(0, entry);
        Some(view)
    }

    /// `path` is being opened in tab `tab_id`: a recent file now, and its stamp noted for
    /// remembering its view later.
    pub fn note_opening(&mut self, tab_id: u64, path: &Path) {
        self.note_recent(path);
        match TraceKey::of(path) {
            Some(key) => self.open_files.insert(tab_id, key),
            None => self.open_files.remove(&tab_id),
        };
    }

    /// Tab `tab.id` just finished loading: restores the view remembered for its file, if the
    /// file is the one remembered. True when something was restored.
    pub fn restore_tab(&mut self, tab: &mut TraceTab) -> bool {
        let Some(key) = self.open_files.get(&tab.id).cloned() else {
            return false;
        };
        match self.recall(&key) {
            Some(view) => {
                view.apply_to(tab);
                true
            }
            None => false,
        }
    }

    /// Tab `tab.id`'s load failed: it is not a recent file, and nothing is remembered for it.
    pub fn load_failed(&mut self, tab: &TraceTab) {
        if let Some(path) = &tab.path {
            self.forget_recent(path);
        }
        self.open_files.remove(&tab.id);
    }

    /// Remembers the view of `tab` (if it shows a trace opened through [`Self::note_opening`]).
    pub fn record_tab(&mut self, tab: &TraceTab) {
        if let (Some(key), Some(view)) = (self.open_files.get(&tab.id), TraceView::of_tab(tab)) {
            self.remember(key.clone(), view);
        }
    }

    /// Remembers the view of every tab, the shown one last (most recently used).
    pub fn record_tabs(&mut self, tabs: &[TraceTab], active: usize) {
        for (i, tab) in tabs.iter().enumerate() {
            if i != active {
                self.record_tab(tab);
            }
        }
        if let Some(tab) = tabs.get(active) {
            self.record_tab(tab);
        }
    }

    /// Tab `tab.id` is closing: remembers its view and stops following it.
    pub fn close_tab(&mut self, tab: &TraceTab) {
        self.record_tab(tab);
        self.open_files.remove(&tab.id);
    }

    /// Notes the theme in force (`egui`'s preference: dark, light or the system's).
    pub fn note_theme(&mut self, ctx: &egui::Context) {
        self.dark_mode = match ctx.options(|o| o.theme_preference) {
            egui::ThemePreference::Dark => Some(true),
            egui::ThemePreference::Light => Some(false),
            egui::ThemePreference::System => None,
        };
        self.palette = Some(crate::ui::theme::PaletteKind::current(ctx));
    }

    /// Puts the remembered theme in force.
    pub fn apply_theme(&self, ctx: &egui::Context) {
        match self.dark_mode {
            Some(true) => ctx.set_theme(egui::Theme::Dark),
            Some(false) => ctx.set_theme(egui::Theme::Light),
            None => ctx.set_theme(egui::ThemePreference::System),
        }
        if let Some(kind) = self.palette {
            crate::ui::theme::PaletteKind::set(ctx, kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(path: &str, size_bytes: u64, modified_ns: u64) -> TraceKey {
        TraceKey {
            path: PathBuf::from(path),
            stamp: FileStamp {
                size_bytes,
                modified_ns,
            },
        }
    }

    fn view(start_ns: f64) -> TraceView {
        TraceView {
            start_ns,
            end_ns: start_ns + 1000.0,
            scroll_y: 0.0,
            collapsed: vec![StoredGroup::Gpu(0)],
            exclude_warmup: false,
            warmup: StoredWarmup::from(&WarmupSettings::default()),
            sql_history: vec!["SELECT 1".into()],
        }
    }

    #[test]
    fn recent_files_are_most_recent_first_without_duplicates_and_capped() {
        let mut s = Settings::default();
        for i in 0..15 {
            s.note_recent(Path::new(&format!("/no/such/dir/t{i}.sqlite")));
        }
        s.note_recent(Path::new("/no/such/dir/t12.sqlite"));
        assert_eq!(s.recent_files.len(), RECENT_FILES_MAX);
        let names: Vec<String> = s
            .recent_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(names[0], "/no/such/dir/t12.sqlite");
        assert_eq!(names[1], "/no/such/dir/t14.sqlite");
        assert_eq!(names[2], "/no/such/dir/t13.sqlite");
        assert_eq!(names[3], "/no/such/dir/t11.sqlite");
        assert_eq!(
            names.last().map(String::as_str),
            Some("/no/such/dir/t5.sqlite")
        );
        assert_eq!(s.last_folder, Some(PathBuf::from("/no/such/dir")));
    }

    #[test]
    fn pruning_drops_only_the_missing_files_and_keeps_the_order() {
        let mut s = Settings::default();
        for name in ["a", "b", "c", "d"] {
            s.note_recent(Path::new(&format!("/x/{name}")));
        }
        let gone = s.prune_recent(|p| p != Path::new("/x/b") && p != Path::new("/x/d"));
        assert_eq!(gone, 2);
        assert_eq!(
            s.recent_files,
            vec![PathBuf::from("/x/c"), PathBuf::from("/x/a")]
        );
        // On disk: these paths do not exist, so all go.
        assert_eq!(s.prune_missing_recent(), 2);
        assert!(s.recent_files.is_empty());
    }

    #[test]
    fn the_least_recently_used_trace_is_forgotten_first() {
        let mut s = Settings::default();
        for i in 0..REMEMBERED_TRACES_MAX {
            s.remember(key(&format!("/t/{i}"), 1, 1), view(i as f64));
        }
        // Using the oldest makes it the newest: the second oldest goes when one more comes.
        assert!(s.recall(&key("/t/0", 1, 1)).is_some());
        s.remember(key("/t/new", 1, 1), view(-1.0));
        assert_eq!(s.traces.len(), REMEMBERED_TRACES_MAX);
        assert!(s.recall(&key("/t/1", 1, 1)).is_none());
        assert_eq!(s.recall(&key("/t/0", 1, 1)).map(|v| v.start_ns), Some(0.0));
        assert_eq!(s.traces[0].key.path, PathBuf::from("/t/0"));
        assert_eq!(s.traces[1].key.path, PathBuf::from("/t/new"));
        // Remembering a path again replaces its entry rather than adding one.
        s.remember(key("/t/2", 1, 1), view(42.0));
        assert_eq!(s.traces.len(), REMEMBERED_TRACES_MAX);
        assert_eq!(
            s.traces
                .iter()
                .filter(|t| t.key.path == Path::new("/t/2"))
                .count(),
            1
        );
    }

    #[test]
    fn a_changed_file_does_not_get_the_old_view() {
        let mut s = Settings::default();
        s.remember(key("/t/a", 100, 5), view(7.0));
        assert!(s.recall(&key("/t/a", 100, 6)).is_none(), "touched");
        // The stale view is gone for good, even for the old stamp.
        assert!(s.recall(&key("/t/a", 100, 5)).is_none());
        s.remember(key("/t/a", 100, 5), view(7.0));
        assert!(s.recall(&key("/t/a", 101, 5)).is_none(), "appended");
        s.remember(key("/t/a", 100, 5), view(7.0));
        assert_eq!(
            s.recall(&key("/t/a", 100, 5)).map(|v| v.start_ns),
            Some(7.0)
        );
    }

    #[test]
    fn groups_and_warmup_rules_round_trip_through_the_stored_forms() {
        for g in [
            GroupId::Gpu(3),
            GroupId::Process(77),
            GroupId::Thread(5),
            GroupId::Memory,
            GroupId::GpuMetrics(1),
            GroupId::Levels {
                thread: 2,
                first_level: 4,
            },
            GroupId::QuietThreads(9),
        ] {
            assert_eq!(GroupId::from(StoredGroup::from(g)), g);
        }
        let w = WarmupSettings {
            warmup_names: false,
            exclude_regex: "^init$".into(),
            skip_first: 3,
            iteration_regex: "step_.*".into(),
            scope: AttributionScope::Thread,
        };
        assert_eq!(WarmupSettings::from(&StoredWarmup::from(&w)), w);
    }

    /// eframe's storage in memory: the settings go through the same RON text as on disk.
    #[derive(Default)]
    struct MemoryStorage(HashMap<String, String>);

    impl eframe::Storage for MemoryStorage {
        fn get_string(&self, key: &str) -> Option<String> {
            self.0.get(key).cloned()
        }
        fn set_string(&mut self, key: &str, value: String) {
            self.0.insert(key.to_string(), value);
        }
        fn remove_string(&mut self, key: &str) {
            self.0.remove(key);
        }
        fn flush(&mut self) {}
    }

    #[test]
    fn settings_survive_the_storage_and_the_open_tabs_do_not() {
        let existing = std::env::temp_dir();
        let mut s = Settings {
            recent_files: vec![existing, PathBuf::from("/no/such/file.sqlite")],
            last_folder: Some(PathBuf::from("/x")),
            dark_mode: Some(false),
            ..Settings::default()
        };
        s.remember(key("/x/a.sqlite", 10, 20), view(3.5));
        s.open_files.insert(1, key("/x/a.sqlite", 10, 20));
        let mut storage = MemoryStorage::default();
        s.save(&mut storage);
        let back = Settings::load(&storage);
        assert_eq!(back.last_folder, s.last_folder);
        assert_eq!(back.dark_mode, Some(false));
        assert_eq!(back.traces, s.traces);
        assert!(back.open_files.is_empty());
        // Loading prunes what is not a file: the missing one and the temp directory.
        assert!(back.recent_files.is_empty(), "{:?}", back.recent_files);

        // Settings written by an older version (fields missing) still load; damaged ones give
        // the defaults.
        storage
            .0
            .insert(STORAGE_KEY.into(), "(dark_mode: Some(true))".into());
        assert_eq!(Settings::load(&storage).dark_mode, Some(true));
        storage
            .0
            .insert(STORAGE_KEY.into(), "(traces: [oops".into());
        assert_eq!(Settings::load(&storage), Settings::default());
    }
}
