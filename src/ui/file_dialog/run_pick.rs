//! File → Open run…: asking for several traces at once (the system dialog's multi-select, or
//! the built-in browser's ticks) and taking them all. In the built-in browser the folder's
//! traces have a tick each. Ticking the first one proposes (ticks) the traces named like it with another
//! rank number (`kt_ranks_rank0…` → `kt_ranks_rank1…`: same program, rank in the name); any tick
//! can be taken off. Whether the chosen traces are one run is for the run's analysis to say
//! (their ranks from `distributedInfo` / the environment / the name, and a common clock or a
//! shared collective): it refuses a set that is not one, with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use egui::Context;

use super::{FileDialogs, FilePurpose, Request, with};

/// What File → Open run… is for, as its title says it.
pub const OPEN_RUN_TITLE: &str = "Open a run: choose the traces of its ranks";

/// Extensions of the traces a run is made of (File → Open run… lists them): timelines only.
pub const RUN_EXTENSIONS: &[&str] = &["sqlite", "nsys-rep", "qdrep", "json", "json.gz"];

impl FileDialogs {
    /// Asks for the traces of a run (several files); [`Self::take_all`] of
    /// [`FilePurpose::OpenRun`] gives them.
    pub fn open_run(&mut self) {
        self.ask(FilePurpose::OpenRun, Request::OpenRun);
    }

    /// Every path chosen for `purpose` so far, in the order chosen.
    pub fn take_all(&mut self, purpose: &FilePurpose) -> Vec<PathBuf> {
        let (taken, kept) = std::mem::take(&mut self.chosen)
            .into_iter()
            .partition(|(p, _)| p == purpose);
        self.chosen = kept;
        taken.into_iter().map(|(_, path)| path).collect::<Vec<_>>()
    }
}

/// Asks for the traces of a run (File → Open run…), starting in `start_folder` when it is a
/// folder; [`take_all`] of [`FilePurpose::OpenRun`] gives them.
pub fn open_run(ctx: &Context, start_folder: Option<&Path>) {
    with(ctx, |d| {
        if let Some(folder) = start_folder.filter(|f| f.is_dir()) {
            d.set_start_dir(folder);
        }
        d.open_run();
    });
    ctx.request_repaint();
}

/// Every path chosen for `purpose` so far.
pub fn take_all(ctx: &Context, purpose: &FilePurpose) -> Vec<PathBuf> {
    with(ctx, |d| d.take_all(purpose))
}

/// The traces ticked, by file name, and the name pattern proposed.
#[derive(Default)]
pub(super) struct RunPick {
    pub(super) picked: BTreeSet<String>,
    proposed: Option<String>,
}

impl RunPick {
    /// A file of the list (`files`: every file listed), with its tick.
    pub(super) fn entry(&mut self, ui: &mut egui::Ui, name: &str, files: &[&str]) {
        let mut on = self.picked.contains(name);
        if ui.checkbox(&mut on, name).changed() {
            self.set(name, on, files);
        }
    }

    /// Ticks or unticks `name`; the first tick also ticks the files of its rank family.
    fn set(&mut self, name: &str, on: bool, files: &[&str]) {
        if !on {
            self.picked.remove(name);
            return;
        }
        if self.picked.is_empty()
            && let Some(family) = rank_family(name)
        {
            self.picked.extend(
                files
                    .iter()
                    .filter(|f| rank_family(f).as_deref() == Some(family.as_str()))
                    .map(|f| f.to_string()),
            );
            self.proposed = Some(family);
        }
        self.picked.insert(name.to_string());
    }

    /// What is chosen, and what was proposed.
    pub(super) fn summary(&self, ui: &mut egui::Ui) {
        let n = self.picked.len();
        let text = match &self.proposed {
            Some(family) if n > 0 => {
                format!("{n} chosen (proposed: the ranks named {family}); tick or untick any")
            }
            _ if n > 0 => format!("{n} chosen"),
            _ => "Tick the traces of the run's ranks (one per rank)".to_string(),
        };
        ui.label(text);
    }

    /// Clears the ticks (another folder is shown).
    pub(super) fn clear(&mut self) {
        self.picked.clear();
        self.proposed = None;
    }
}

/// A file name with the number that gives its rank (the last number before the first `.`, as
/// [`crate::analysis::ranks::rank_in_file_name`] reads it) replaced by `*`; `None` without one.
pub(super) fn rank_family(name: &str) -> Option<String> {
    let (stem, rest) = name.split_once('.').unwrap_or((name, ""));
    let end = stem.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = stem[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let dot = if name.contains('.') { "." } else { "" };
    Some(format!("{}*{}{dot}{rest}", &stem[..start], &stem[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_one_program_share_a_family() {
        let f = |n: &str| rank_family(n);
        assert_eq!(
            f("kt_ranks_rank0.pt.trace.json.gz").as_deref(),
            Some("kt_ranks_rank*.pt.trace.json.gz")
        );
        assert_eq!(f("n25_rank1.sqlite").as_deref(), Some("n25_rank*.sqlite"));
        assert_eq!(f("kt_moe.pt.trace.json.gz"), None);
        let files = [
            "kt_ranks_rank0.pt.trace.json.gz",
            "kt_ranks_rank1.pt.trace.json.gz",
            "kt_moe.pt.trace.json.gz",
            "n25_rank0.sqlite",
        ];
        let mut pick = RunPick::default();
        pick.set(files[1], true, &files);
        assert_eq!(pick.picked.len(), 2);
        assert!(pick.picked.contains(files[0]));
        pick.set(files[0], false, &files);
        pick.set(files[2], true, &files);
        assert_eq!(pick.picked.len(), 2, "a later tick proposes nothing");
    }
}
