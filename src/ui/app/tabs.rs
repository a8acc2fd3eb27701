//! Opening, closing and comparing tabs. A comparison, once made, stays until its tab is closed
//! or one of its traces is: opening another trace or choosing another tab only hides it
//! ([`SightlineApp::compare_shown`]), and its tab brings it back.

use std::path::PathBuf;

use super::SightlineApp;
use crate::ui::compare::CompareView;
use crate::ui::workspace::TraceTab;

impl SightlineApp {
    /// Opens `path` in a new tab (or in the empty start tab) and shows it; the load runs in
    /// the background.
    pub fn open(&mut self, path: PathBuf, ctx: Option<&egui::Context>) {
        // A folder is a run: every trace in it, one per rank; a digests folder's manifest
        // stands for its folder.
        if path.is_dir() {
            return self.open_folder(path, ctx);
        }
        if path
            .file_name()
            .is_some_and(|n| n == crate::digests::store::MANIFEST_FILE)
            && let Some(dir) = path
                .parent()
                .filter(|d| crate::digests::store::is_digests(d))
        {
            return self.open_folder(dir.to_path_buf(), ctx);
        }
        let reuse = self
            .tabs
            .iter()
            .position(|t| t.is_blank() && t.error.is_none() && t.path.is_none());
        let i = match reuse {
            Some(i) => i,
            None => {
                self.tabs.push(TraceTab::empty(self.next_id));
                self.next_id += 1;
                self.tabs.len() - 1
            }
        };
        self.settings.note_opening(self.tabs[i].id, &path);
        self.tabs[i].open(path, ctx);
        self.active = i;
        // The new tab is shown; a comparison stays (its tab) until it is closed.
        self.compare_shown = false;
    }

    /// Closes tab `index`, freeing its trace; the last tab closed leaves an empty start tab.
    pub fn close_tab(&mut self, index: usize) {
        if index >= self.tabs.len() {
            return;
        }
        self.settings.close_tab(&self.tabs[index]);
        let id = self.tabs.remove(index).id;
        if self.compare.as_ref().is_some_and(|c| c.involves(id)) {
            self.compare = None;
            self.compare_shown = false;
        }
        if self.tabs.is_empty() {
            self.tabs.push(TraceTab::empty(self.next_id));
            self.next_id += 1;
        }
        if self.active > index || self.active >= self.tabs.len() {
            self.active = self.active.saturating_sub(1).min(self.tabs.len() - 1);
        }
    }

    /// Compares tab `base` (on top) with tab `new` (indices into `tabs`).
    pub fn start_compare(&mut self, base: usize, new: usize) {
        if let (Some(b), Some(n)) = (self.tabs.get(base), self.tabs.get(new)) {
            self.compare = Some(CompareView::new(b.id, n.id));
            self.compare_shown = true;
        }
    }

    /// The comparison, while it is what the window shows.
    pub fn shown_compare(&self) -> Option<&CompareView> {
        self.compare.as_ref().filter(|_| self.compare_shown)
    }
}
