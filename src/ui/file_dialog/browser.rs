//! The built-in file browser, used where no system dialog opens: a window listing a folder's
//! sub-folders and the files of the asked kind, a typed folder or file name, and "New folder"
//! ([`new_folder`]).

use super::*;

/// The in-window browser while it is open.
pub(super) struct Browser {
    pub(super) purpose: FilePurpose,
    /// Save (a new or replaced file) rather than open (an existing one).
    save: bool,
    /// The extensions listed unless "Show all files" is on.
    extensions: &'static [&'static str],
    show_all: bool,
    dir: PathBuf,
    dir_edit: String,
    /// The folder's sub-folders and listed files, folders first, by name.
    entries: Result<Vec<Entry>, String>,
    file_name: String,
    problem: Option<String>,
    new_folder: new_folder::NewFolder,
    /// Open run…: several traces ticked at once.
    run: Option<super::run_pick::RunPick>,
    /// The entry of this listing clicked last: the second click of a double click counts only
    /// on the entry its first click was on (a double click on a folder opens it with its first
    /// click; its second lands on the new listing and must not tick or open what is there).
    last_click: Option<String>,
}

/// Whether a click on entry `name` counts: any click but the second of a double click whose
/// first was elsewhere (on a folder this listing replaced). Remembers the entry clicked.
fn counts(last_click: &mut Option<String>, r: &egui::Response, name: &str) -> bool {
    if !r.clicked() {
        return false;
    }
    let stray = r.double_clicked() && last_click.as_deref() != Some(name);
    *last_click = (!stray).then(|| name.to_string());
    !stray
}

struct Entry {
    name: String,
    is_dir: bool,
}

/// What a frame of the browser ended with.
pub(super) enum BrowserOutcome {
    Browsing,
    /// One path, or a run's traces.
    Chosen(Vec<PathBuf>),
    Cancelled,
}

impl Browser {
    pub(super) fn new(purpose: FilePurpose, request: &Request, dir: PathBuf) -> Self {
        let (save, extensions, file_name) = match request {
            Request::OpenTrace => (false, TRACE_EXTENSIONS, String::new()),
            Request::OpenRun => (false, RUN_EXTENSIONS, String::new()),
            Request::SaveCsv {
                file_name,
                extension,
            } => (
                true,
                if *extension == "html" {
                    &["html", "htm"][..]
                } else {
                    &["csv"][..]
                },
                file_name.clone(),
            ),
        };
        let mut browser = Self {
            purpose,
            save,
            extensions,
            show_all: false,
            dir: PathBuf::new(),
            dir_edit: String::new(),
            entries: Ok(Vec::new()),
            file_name,
            problem: None,
            new_folder: new_folder::NewFolder::default(),
            run: matches!(request, Request::OpenRun).then(Default::default),
            last_click: None,
        };
        browser.enter(dir);
        browser
    }

    pub(super) fn title(&self) -> &'static str {
        match (self.save, self.purpose == FilePurpose::SaveReportHtml) {
            (true, true) => "Save report as HTML",
            (true, false) => "Export as CSV",
            (false, _) if self.run.is_some() => super::OPEN_RUN_TITLE,
            (false, _) => super::OPEN_TITLE,
        }
    }

    /// Shows `dir`'s contents (an unreadable folder says why in the list).
    fn enter(&mut self, dir: PathBuf) {
        self.entries = list_folder(&dir, self.extensions, self.show_all);
        self.dir_edit = dir.display().to_string();
        self.dir = dir;
        self.problem = None;
        self.last_click = None;
        if let Some(run) = &mut self.run {
            run.listing(&self.dir);
        }
    }

    /// Whether Open run…'s browser has read every listed trace's rank.
    pub(super) fn ranks_read(&self) -> bool {
        self.run.as_ref().is_some_and(|r| r.probed())
    }

    /// The path the name field names: absolute as typed, else in the folder shown.
    fn target(&self) -> PathBuf {
        self.dir.join(self.file_name.trim())
    }

    /// Open pressed on a run: the ticked traces, two or more.
    fn confirm_run(&mut self) -> Option<Vec<PathBuf>> {
        let run = self.run.as_ref()?;
        if run.picked.is_empty() && run.digests {
            return Some(vec![self.dir.clone()]);
        }
        let picked = &run.picked;
        if picked.len() < 2 {
            self.problem = Some("Tick two traces or more: one per rank of the run.".into());
            return None;
        }
        Some(picked.iter().map(|n| self.dir.join(n)).collect())
    }

    /// Open / Save pressed: the path when it will do, else a folder entered or a problem said.
    fn confirm(&mut self) -> Option<PathBuf> {
        let path = self.target();
        if self.file_name.trim().is_empty() {
            self.problem = Some("Choose a file or type its name.".into());
            return None;
        }
        if path.is_dir() {
            self.file_name.clear();
            self.enter(path);
            return None;
        }
        if self.save {
            match path.parent() {
                Some(parent) if parent.is_dir() => Some(path),
                _ => {
                    self.problem = Some(format!("No such folder: {}", path.display()));
                    None
                }
            }
        } else if path.is_file() {
            Some(path)
        } else {
            self.problem = Some(format!("No such file: {}", path.display()));
            None
        }
    }

    pub(super) fn ui(&mut self, ui: &mut egui::Ui, reason: Option<&str>) -> BrowserOutcome {
        let mut outcome = BrowserOutcome::Browsing;
        if let Some(reason) = reason {
            ui.label(format!("Built-in file browser: {reason}"));
            ui.separator();
        }
        let mut go_to: Option<PathBuf> = None;
        ui.horizontal(|ui| {
            if ui
                .add_enabled(self.dir.parent().is_some(), egui::Button::new("Up"))
                .on_hover_text("The parent folder")
                .clicked()
            {
                go_to = self.dir.parent().map(Path::to_path_buf);
            }
            let label = ui.label("Folder");
            let edit = ui
                .add(egui::TextEdit::singleline(&mut self.dir_edit).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                go_to = Some(PathBuf::from(self.dir_edit.trim()));
            }
        });
        if let Some(made) = self.new_folder.ui(ui, &self.dir) {
            go_to = Some(made);
        }
        let mut chosen_by_double_click = false;
        let list_height = (ui.available_height() - 80.0).max(120.0);
        egui::ScrollArea::vertical()
            .max_height(list_height)
            .auto_shrink([false, false])
            .show(ui, |ui| match &self.entries {
                Err(e) => {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                Ok(entries) => {
                    let files: Vec<&str> = entries
                        .iter()
                        .filter(|e| !e.is_dir)
                        .map(|e| e.name.as_str())
                        .collect();
                    if let Some(run) = &mut self.run {
                        run.poll(ui.ctx(), &files);
                    }
                    let last_click = &mut self.last_click;
                    for entry in entries {
                        let name = entry.name.as_str();
                        if let (Some(run), false) = (&mut self.run, entry.is_dir) {
                            run.entry(ui, name, &files, |r| counts(last_click, r, name));
                        } else if entry.is_dir {
                            // Folders open with one click, as in a path bar.
                            let r = ui.selectable_label(false, format!("{name}/"));
                            if counts(last_click, &r, name) {
                                go_to = Some(self.dir.join(name));
                            }
                        } else {
                            let on = self.file_name == entry.name;
                            let r = ui.selectable_label(on, name);
                            if counts(last_click, &r, name) {
                                self.file_name.clone_from(&entry.name);
                                self.problem = None;
                                chosen_by_double_click |= r.double_clicked();
                            }
                        }
                    }
                }
            });
        let mut confirm = chosen_by_double_click;
        if let Some(run) = &self.run {
            run.summary(ui);
        }
        ui.horizontal(|ui| {
            if self.run.is_some() {
                return;
            }
            let label = ui.label("File name");
            let edit = ui
                .add(egui::TextEdit::singleline(&mut self.file_name).desired_width(f32::INFINITY))
                .labelled_by(label.id);
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                confirm = true;
            }
        });
        if self.save && self.target().is_file() {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "A file of this name exists: saving replaces it.",
            );
        }
        if let Some(problem) = &self.problem {
            ui.colored_label(ui.visuals().error_fg_color, problem);
        }
        // The buttons' ids must not depend on what is above them: a press on Open counts where
        // it is released, and lines above it come and go between the two (Open run…'s "Reading
        // the traces' ranks…", a problem said); an id that moved would lose the press.
        let actions = egui::UiBuilder::new().scope_id(ui.scope_id().with("browser-actions"));
        ui.scope_builder(actions, |ui| {
            ui.horizontal(|ui| {
                if ui.checkbox(&mut self.show_all, "Show all files").changed() {
                    go_to = Some(self.dir.clone());
                }
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if ui.button("Cancel").clicked() {
                        outcome = BrowserOutcome::Cancelled;
                    }
                    let action = if self.save { "Save" } else { "Open" };
                    let ready = match &self.run {
                        Some(run) => !run.picked.is_empty() || run.digests,
                        None => !self.file_name.trim().is_empty(),
                    };
                    if ui.add_enabled(ready, egui::Button::new(action)).clicked() {
                        confirm = true;
                    }
                });
            })
        });
        if let Some(dir) = go_to {
            self.enter(dir);
        } else if confirm && self.run.is_some() {
            if let Some(paths) = self.confirm_run() {
                outcome = BrowserOutcome::Chosen(paths);
            }
        } else if confirm && let Some(path) = self.confirm() {
            outcome = BrowserOutcome::Chosen(vec![path]);
        }
        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
            outcome = BrowserOutcome::Cancelled;
        }
        outcome
    }
}

/// `dir`'s folders and the files with one of `extensions` (all files when `show_all`), folders
/// first, each group by name; hidden entries left out.
fn list_folder(dir: &Path, extensions: &[&str], show_all: bool) -> Result<Vec<Entry>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("Cannot read {}: {e}", dir.display()))?;
    let mut entries: Vec<Entry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // Follows symlinks: a link to a folder is a folder.
            let is_dir = e.path().is_dir();
            let listed = !name.starts_with('.')
                && (is_dir || show_all || has_extension(&e.path(), extensions));
            listed.then_some(Entry { name, is_dir })
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}
