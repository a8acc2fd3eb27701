//! Opening a run of ranks from the app: `--ranks`, a folder, File → Open run…, and the choice
//! offered when several files are dropped at once (one run, or a tab each).

use std::path::PathBuf;

use egui::{Align2, Id};

use super::SightlineApp;
use crate::ui::run::{RunTab, traces_in_folder};
use crate::ui::workspace::{TraceTab, file_name};

impl SightlineApp {
    /// An app that opens `files` as one run of ranks on its first frame.
    pub fn with_run(files: Vec<PathBuf>) -> Self {
        let mut app = Self::with_files(Vec::new(), false);
        app.pending_runs.push(files);
        app
    }

    /// Opens `paths` as one run of ranks in a new tab (or the empty start tab).
    pub fn open_run(&mut self, paths: Vec<PathBuf>, ctx: Option<&egui::Context>) {
        // A folder given stands for every trace in it; a folder of digests for its ranks'
        // digests (refused, saying why, when some are missing).
        let mut expanded = Vec::new();
        for p in paths {
            if !p.is_dir() {
                expanded.push(p);
            } else if crate::digests::store::is_digests(&p) {
                match crate::digests::store::read_run(&p) {
                    Ok(run) => expanded.extend(run.into_iter().map(|(folder, _)| folder)),
                    Err(e) => {
                        let i = self.blank_tab();
                        self.tabs[i].error = Some(format!("{e:#}"));
                        self.active = i;
                        return;
                    }
                }
            } else {
                expanded.extend(traces_in_folder(&p).unwrap_or_default());
            }
        }
        let i = self.blank_tab();
        self.tabs[i].run = Some(Box::new(RunTab::open_with_cache(
            expanded,
            ctx,
            self.digest_cache(),
        )));
        self.active = i;
        self.compare_shown = false;
    }

    /// The digest cache runs are opened through: the user's, unless `--no-cache`.
    fn digest_cache(&self) -> Option<crate::digests::cache::Cache> {
        self.digest_cache
            .then(crate::digests::cache::Cache::user)
            .flatten()
    }

    /// The empty start tab, or a new tab.
    pub(super) fn blank_tab(&mut self) -> usize {
        let reuse = self
            .tabs
            .iter()
            .position(|t| t.is_blank() && t.error.is_none() && t.path.is_none());
        reuse.unwrap_or_else(|| {
            self.tabs.push(TraceTab::empty(self.next_id));
            self.next_id += 1;
            self.tabs.len() - 1
        })
    }

    /// After several files were dropped: open them as one run, or each in a tab.
    pub(super) fn dropped_choice(&mut self, ctx: &egui::Context) {
        if self.dropped.is_empty() {
            return;
        }
        let mut choice = None;
        egui::Window::new(format!("{} files dropped", self.dropped.len()))
            .id(Id::unique("sightline_dropped_choice"))
            .collapsible(false)
            .resizable(false)
            .anchor(Align2::CENTER_CENTER, [0.0, 0.0])
            .show(ctx, |ui| {
                for p in self.dropped.iter().take(8) {
                    ui.weak(file_name(p));
                }
                ui.horizontal(|ui| {
                    if ui
                        .button("Open as one run")
                        .on_hover_text("One tab: the traces as ranks of one job, on one clock")
                        .clicked()
                    {
                        choice = Some(true);
                    }
                    if ui.button("Open each in a tab").clicked() {
                        choice = Some(false);
                    }
                });
            });
        match choice {
            Some(true) => {
                let files = std::mem::take(&mut self.dropped);
                self.open_run(files, Some(ctx));
            }
            Some(false) => {
                for path in std::mem::take(&mut self.dropped) {
                    self.open(path, Some(ctx));
                }
            }
            None => {}
        }
    }

    /// Opens every trace of the folder `path` as one run (or says in a tab why it cannot).
    pub(super) fn open_folder(&mut self, path: PathBuf, ctx: Option<&egui::Context>) {
        if crate::digests::store::is_digests(&path) {
            return self.open_run(vec![path], ctx);
        }
        match traces_in_folder(&path) {
            // A folder of one trace (a `jax.profiler.trace` log folder, its run folder) is
            // that trace, not a run of one rank.
            Ok(mut files) if files.len() == 1 => {
                if let Some(file) = files.pop() {
                    self.open(file, ctx);
                }
            }
            Ok(files) if !files.is_empty() => self.open_run(files, ctx),
            Ok(_) => {
                let i = self.blank_tab();
                self.tabs[i].error = Some(format!("no trace in {}", path.display()));
                self.active = i;
            }
            Err(e) => {
                let i = self.blank_tab();
                self.tabs[i].error = Some(format!("{}: {e}", path.display()));
                self.active = i;
            }
        }
    }
}
