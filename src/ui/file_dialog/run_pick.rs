//! File → Open run…: asking for several traces at once (the system dialog's multi-select, or
//! the built-in browser's ticks) and taking them all. In the built-in browser the folder's
//! traces have a tick each. Ticking the first one proposes (ticks) the traces named like it with another
//! rank number (`kt_ranks_rank0…` → `kt_ranks_rank1…`: same program, rank in the name), and, as
//! they are read in the background ([`super::rank_probe`]), those whose `distributedInfo` or
//! environment give them another rank of its run on one clock; any tick can be taken off. Whether the chosen traces are one run is for the run's analysis to say
//! (their ranks from `distributedInfo` / the environment / the name, and a common clock or a
//! shared collective): it refuses a set that is not one, with the reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use egui::Context;

use super::rank_probe::Prober;
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

    /// Whether Open run…'s browser has read the rank of every trace it lists (false while it
    /// reads, or when it is not open).
    pub fn ranks_read(&self) -> bool {
        self.browser.as_ref().is_some_and(|b| b.ranks_read())
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

/// The traces ticked, by file name, and what was proposed.
#[derive(Default)]
pub(super) struct RunPick {
    pub(super) picked: BTreeSet<String>,
    /// The name pattern proposed (the first tick's rank family).
    proposed: Option<String>,
    /// The file ticked first (what proposals are made from) and those the user unticked (never
    /// proposed again).
    first: Option<String>,
    unticked: BTreeSet<String>,
    /// Traces proposed by their rank and clock ([`RankProbe::same_run`]).
    by_rank: bool,
    dir: PathBuf,
    prober: Option<Prober>,
    /// The folder shown is a folder of digests (`sightline digest`): Open opens it as the run.
    pub(super) digests: bool,
}

impl RunPick {
    /// Another folder is listed: the ticks and probes start again.
    pub(super) fn listing(&mut self, dir: &Path) {
        *self = Self {
            dir: dir.to_path_buf(),
            digests: crate::digests::store::is_digests(dir),
            ..Self::default()
        };
    }

    /// Once a frame, before the entries: starts reading the traces' ranks, and proposes from
    /// what has been read since.
    pub(super) fn poll(&mut self, ctx: &Context, files: &[&str]) {
        if self.prober.is_none() {
            let names = files.iter().map(|f| f.to_string()).collect();
            self.prober = Some(Prober::start(&self.dir, names, ctx.clone()));
        }
        self.propose_by_rank(files);
    }

    /// Whether every listed trace's rank has been read.
    pub(super) fn probed(&self) -> bool {
        self.prober.as_ref().is_some_and(Prober::done)
    }

    /// A file of the list (`files`: every file listed), with its tick; a click on it ticks or
    /// unticks it where `counts` says the click counts.
    pub(super) fn entry(
        &mut self,
        ui: &mut egui::Ui,
        name: &str,
        files: &[&str],
        counts: impl FnOnce(&egui::Response) -> bool,
    ) {
        let was = self.picked.contains(name);
        let mut on = was;
        let r = ui.checkbox(&mut on, name);
        if counts(&r) && on != was {
            self.set(name, on, files);
        }
    }

    /// Ticks or unticks `name`; the first tick also ticks the files of its rank family and those
    /// whose rank and clock make them other ranks of its run.
    fn set(&mut self, name: &str, on: bool, files: &[&str]) {
        if !on {
            self.picked.remove(name);
            self.unticked.insert(name.to_string());
            if self.picked.is_empty() {
                self.first = None;
                self.proposed = None;
                self.by_rank = false;
            }
            return;
        }
        self.unticked.remove(name);
        if self.picked.is_empty() {
            self.first = Some(name.to_string());
            if let Some(family) = rank_family(name) {
                self.picked.extend(
                    files
                        .iter()
                        .filter(|f| rank_family(f).as_deref() == Some(family.as_str()))
                        .map(|f| f.to_string()),
                );
                self.proposed = Some(family);
            }
        }
        self.picked.insert(name.to_string());
        self.propose_by_rank(files);
    }

    /// Ticks the traces not ticked or unticked yet that look like other ranks of the first's
    /// run, one per rank.
    fn propose_by_rank(&mut self, files: &[&str]) {
        let (Some(first), Some(prober)) = (&self.first, &self.prober) else {
            return;
        };
        let Some(me) = prober.get(first) else {
            return;
        };
        let mut ranks: BTreeSet<u32> = self
            .picked
            .iter()
            .filter_map(|f| prober.get(f)?.rank)
            .collect();
        for f in files {
            if self.picked.contains(*f) || self.unticked.contains(*f) {
                continue;
            }
            if let Some(p) = prober.get(f).filter(|p| me.same_run(p))
                && let Some(rank) = p.rank
                && ranks.insert(rank)
            {
                self.picked.insert(f.to_string());
                self.by_rank = true;
            }
        }
    }

    /// What is chosen, and what was proposed.
    pub(super) fn summary(&self, ui: &mut egui::Ui) {
        let n = self.picked.len();
        let by_rank = "by their distributedInfo / environment rank on one clock";
        let text = match (&self.proposed, self.by_rank) {
            _ if n == 0 && self.digests => {
                "A folder of digests: Open opens the run from them".to_string()
            }
            _ if n == 0 => "Tick the traces of the run's ranks (one per rank)".to_string(),
            (Some(family), false) => {
                format!("{n} chosen (proposed: the ranks named {family}); tick or untick any")
            }
            (Some(family), true) => format!(
                "{n} chosen (proposed: the ranks named {family}, and {by_rank}); tick or untick any"
            ),
            (None, true) => {
                format!("{n} chosen (proposed: the ranks {by_rank}); tick or untick any")
            }
            (None, false) => format!("{n} chosen"),
        };
        ui.label(text);
        if !self.probed() {
            ui.weak("Reading the traces' ranks…");
        }
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
