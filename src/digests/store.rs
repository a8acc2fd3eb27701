//! A folder of digests (`sightline digest … --out DIGESTS/`): one folder per trace holding its
//! tables as Parquet files and `digest.json` (its [`Entry`]: source, size, mtime, what it was
//! made with), plus `manifest.json`, the run's list of entries merged from every shard.
//!
//! A rank's folder is written whole into a hidden temporary folder and renamed into place, so a
//! killed task leaves no half digest under a visible name; `digest.json` is its last file. The
//! manifest is rewritten under a lock by each task as it ends, from the rank folders present, so
//! the last task to end writes the whole run.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};

use super::columns::{self, Columns};
use super::tables;
use crate::analysis::ranks::digest::RankDigest;
use crate::analysis::ranks::{RankHints, ranks_from_hints};
use crate::analysis::table::Table;

/// The version of the digest files; a digest of another version is not current. 2: a PyTorch
/// trace's collective kernels are also found by the operators their CUDA call was made inside
/// (a version 1 digest of such a trace lacks them).
pub const VERSION: u32 = 2;

/// `digest.json`'s `format` field.
pub const ENTRY_FORMAT: &str = "sightline-rank-digest";
/// `manifest.json`'s `format` field.
pub const MANIFEST_FORMAT: &str = "sightline-digests";

pub const ENTRY_FILE: &str = "digest.json";
pub const MANIFEST_FILE: &str = "manifest.json";

/// The tables of a rank's folder, each `NAME.parquet`.
pub const TABLES: [&str; 6] = [
    "rank",
    "busy",
    "collectives",
    "steps",
    "kernels",
    "cuda_api",
];

/// What a rank's digest was made from and with (`digest.json`, and a row of the manifest).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: String,
    pub version: u32,
    /// The rank's folder under the digests' folder.
    pub folder: String,
    /// The trace's place in the list the run was digested from: a run opened from its digests
    /// takes its ranks in this order, as it takes traces in the order given.
    pub index: usize,
    /// How many traces that list had (`sightline digest`; 0 where unknown): a folder that
    /// lacks some of them is not the whole run.
    #[serde(default)]
    pub total: usize,
    /// The trace, as an absolute path.
    pub source: PathBuf,
    pub size: u64,
    /// Its modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// The pattern its collectives were found with (`--collectives`).
    pub collectives_pattern: String,
    /// What the trace says of its rank: `distributedInfo.rank`, the rank in its processes'
    /// environment.
    pub rank_distributed: Option<u32>,
    pub rank_environment: Option<u32>,
    /// Its UTC time of its time 0, where it records one (the recorded clock).
    pub utc_origin_ns: Option<i64>,
    pub first_ns: i64,
    pub last_ns: i64,
    pub events: usize,
    /// What loading the trace warned of, as the command line prints it.
    pub warnings: Vec<String>,
}

/// A trace's size and modification time (ns since the epoch), to tell whether a digest is
/// current.
pub fn stamp(path: &Path) -> Result<(u64, i64)> {
    let meta = fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    Ok((meta.len(), mtime))
}

/// Whether the file at `path` is there but no longer the one a digest was made from
/// (`made_from`: its size and modification time then). A file that cannot be read is not
/// "changed": reading it says why.
pub fn changed_since(path: &Path, made_from: Option<(u64, i64)>) -> bool {
    made_from.is_some_and(|then| stamp(path).is_ok_and(|now| now != then))
}

impl Entry {
    /// Whether this digest was made from `source` as it is now, with `pattern`.
    pub fn is_current(&self, source: &Path, pattern: &str) -> bool {
        self.format == ENTRY_FORMAT
            && self.version == VERSION
            && self.source == source
            && self.collectives_pattern == pattern
            && stamp(source).is_ok_and(|(size, mtime)| size == self.size && mtime == self.mtime_ns)
    }
}

/// One folder name per trace: its path from the traces' common folder, `/` written `__`.
pub fn folder_names(traces: &[PathBuf]) -> Vec<String> {
    let parents: Vec<Vec<_>> = traces
        .iter()
        .map(|p| {
            p.parent()
                .map(|d| d.components().collect())
                .unwrap_or_default()
        })
        .collect();
    let common = parents.first().map_or(0, |first| {
        (0..first.len())
            .take_while(|&i| parents.iter().all(|p| p.get(i) == first.get(i)))
            .count()
    });
    traces
        .iter()
        .map(|p| {
            let parts: Vec<String> = p
                .components()
                .skip(common)
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .filter(|c| c != "/")
                .collect();
            parts.join("__").trim_start_matches('.').to_string()
        })
        .collect()
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed into place.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| anyhow!("{} has no file name", path.display()))?;
    let tmp = path.with_file_name(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        crate::load::temporary_suffix()
    ));
    let mut f =
        fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(bytes)?;
    f.sync_all()?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Hidden temporary folders of `folder` left by a killed task (`.FOLDER.tmp-SUFFIX`,
/// `.FOLDER.old-SUFFIX`, [`crate::load::temporary_suffix`]), removed; only the task that owns
/// `folder` calls this.
pub fn remove_leftovers(out: &Path, folder: &str) {
    let Ok(list) = fs::read_dir(out) else { return };
    let prefixes = [format!(".{folder}.tmp-"), format!(".{folder}.old-")];
    for e in list.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if prefixes.iter().any(|p| name.starts_with(p.as_str())) {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// A rank's tables and entry, to be written.
pub struct RankFiles<'a> {
    pub digest: &'a RankDigest,
    pub kernels: &'a Table,
    pub cuda_api: &'a Table,
    pub entry: &'a Entry,
}

/// Writes a rank's folder `out/entry.folder` whole: into a hidden temporary folder first (one
/// per write: threads of one process and tasks of several hosts may write the same folder),
/// then renamed into place. A folder already there is kept when `keep` says its entry is as good
/// as this one (another task cached the same digest meanwhile: a reader of it never finds it
/// missing); any other is replaced, and restored if the new one cannot take its place.
pub fn write_rank(out: &Path, files: &RankFiles, keep: &dyn Fn(&Entry) -> bool) -> Result<()> {
    let folder = &files.entry.folder;
    let suffix = crate::load::temporary_suffix();
    let tmp = out.join(format!(".{folder}.tmp-{suffix}"));
    // A name no other write uses: never someone else's folder, so never removed here.
    fs::create_dir(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let written = write_tables(&tmp, files).and_then(|()| place_rank(out, &tmp, files, keep));
    if written.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    written
}

/// The tables and entry of a rank, into folder `dir`.
fn write_tables(dir: &Path, files: &RankFiles) -> Result<()> {
    let d = files.digest;
    let tables: [(&str, Columns); 6] = [
        ("rank", tables::rank_table(d)),
        ("busy", tables::busy_table(d)),
        ("collectives", tables::occurrence_table(&d.collectives.list)),
        ("steps", tables::occurrence_table(&d.steps)),
        ("kernels", tables::report_columns(files.kernels)),
        ("cuda_api", tables::report_columns(files.cuda_api)),
    ];
    for (name, columns) in &tables {
        let path = dir.join(format!("{name}.parquet"));
        let file = fs::File::create(&path)?;
        let mut w = std::io::BufWriter::new(file);
        columns::write(columns, &mut w).with_context(|| format!("writing {}", path.display()))?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    let json = serde_json::to_vec_pretty(files.entry)?;
    fs::write(dir.join(ENTRY_FILE), json)?;
    Ok(())
}

/// Moves the written folder `tmp` into `out/entry.folder` (see [`write_rank`]). Another task
/// may be replacing the same folder at the same moment: a step that finds the folder gone
/// tries again, a few times.
fn place_rank(
    out: &Path,
    tmp: &Path,
    files: &RankFiles,
    keep: &dyn Fn(&Entry) -> bool,
) -> Result<()> {
    let folder = &files.entry.folder;
    let place = out.join(folder);
    for _ in 0..4 {
        if fs::rename(tmp, &place).is_ok() {
            return Ok(());
        }
        if !place.exists() {
            continue;
        }
        if read_entry(&place).is_ok_and(|e| keep(&e)) {
            fs::remove_dir_all(tmp)?;
            return Ok(());
        }
        let old = out.join(format!(".{folder}.old-{}", crate::load::temporary_suffix()));
        if fs::rename(&place, &old).is_err() {
            continue;
        }
        if let Err(e) = fs::rename(tmp, &place) {
            let _ = fs::rename(&old, &place);
            return Err(e)
                .with_context(|| format!("cannot move the digest into {}", place.display()));
        }
        let _ = fs::remove_dir_all(&old);
        return Ok(());
    }
    bail!(
        "cannot move the digest into {}: other tasks keep replacing it",
        place.display()
    )
}

/// The entry of the rank folder `dir`.
pub fn read_entry(dir: &Path) -> Result<Entry> {
    let path = dir.join(ENTRY_FILE);
    let text = fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let entry: Entry = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a rank digest's entry", path.display()))?;
    if entry.format != ENTRY_FORMAT || entry.version != VERSION {
        bail!(
            "{} is a digest of version {} ({}), this Sightline reads version {VERSION}: digest \
             the traces again",
            dir.display(),
            entry.version,
            entry.format
        );
    }
    Ok(entry)
}

/// The digest of the rank folder `dir`, with its entry.
pub fn read_rank(dir: &Path) -> Result<(Entry, RankDigest)> {
    let entry = read_entry(dir)?;
    let digest = read_digest(dir, &entry)?;
    Ok((entry, digest))
}

/// The digest of the rank folder `dir` whose entry has been read.
pub fn read_digest(dir: &Path, entry: &Entry) -> Result<RankDigest> {
    let table = |name: &str| columns::read_file(&dir.join(format!("{name}.parquet")));
    let digest = tables::digest_of(
        &table("rank")?,
        &table("busy")?,
        &table("collectives")?,
        &table("steps")?,
    )
    .with_context(|| format!("{} is not a whole digest", dir.display()))?;
    Ok(RankDigest {
        source_stamp: Some((entry.size, entry.mtime_ns)),
        ..digest
    })
}

/// The rank folders under `out` (those with an entry), by name.
pub fn rank_folders(out: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = fs::read_dir(out)
        .with_context(|| format!("cannot list {}", out.display()))?
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join(ENTRY_FILE).is_file())
        .collect();
    found.sort();
    Ok(found)
}

/// The rank folders of the folder of digests `dir` with their entries, in the order their
/// traces were given to `digest` (the order a run takes its ranks in where no rank is found in
/// them); an error when some of the run's digests are missing ([`incomplete`]).
pub fn read_run(dir: &Path) -> Result<Vec<(PathBuf, Entry)>> {
    let mut found = rank_folders(dir)?
        .into_iter()
        .map(|d| Ok((read_entry(&d)?, d)))
        .collect::<Result<Vec<_>>>()?;
    found.sort_by_key(|(e, _)| e.index);
    if let Some(why) = incomplete(dir, &found.iter().map(|(e, _)| e).collect::<Vec<_>>()) {
        bail!("{why}");
    }
    Ok(found.into_iter().map(|(e, d)| (d, e)).collect())
}

/// Why the digests of `entries` (a folder's) are not a whole run, if they are not: the traces
/// `sightline digest` was given that have no digest there (shards not finished, or failed).
pub fn incomplete(dir: &Path, entries: &[&Entry]) -> Option<String> {
    let total = entries.iter().map(|e| e.total).max()?;
    let have: std::collections::BTreeSet<usize> = entries.iter().map(|e| e.index).collect();
    let missing: Vec<usize> = (0..total).filter(|i| !have.contains(i)).collect();
    if missing.is_empty() {
        return None;
    }
    let listed: Vec<String> = missing.iter().take(8).map(|i| format!("#{i}")).collect();
    Some(format!(
        "{} holds {} of the run's {total} digests (no digest of trace {}{} of the list \
         digested): its other shards have not finished, or failed; run `sightline digest` for \
         them (it keeps the digests that are current)",
        dir.display(),
        have.len(),
        listed.join(", "),
        if missing.len() > 8 { ", …" } else { "" }
    ))
}

/// Whether `dir` is a folder of digests: it has a manifest or a rank folder (the first one
/// found answers).
pub fn is_digests(dir: &Path) -> bool {
    dir.join(MANIFEST_FILE).is_file()
        || fs::read_dir(dir).is_ok_and(|mut list| {
            list.any(|e| {
                e.is_ok_and(|e| {
                    !e.file_name().to_string_lossy().starts_with('.')
                        && e.path().join(ENTRY_FILE).is_file()
                })
            })
        })
}

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    /// Whether every rank records an absolute clock (the run can use the recorded clock).
    pub recorded_clock: bool,
    pub ranks: Vec<ManifestRank>,
}

/// A row of the manifest: a digest's entry with the rank the run gives it (as `sightline ranks`
/// finds ranks, among the digests present when the manifest was written) and where that came
/// from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestRank {
    pub rank: u32,
    pub rank_from: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What [`merge_manifest`] locks: the folder itself where the system opens a folder as a file
/// (Linux, macOS: `flock` on it), so that nothing is left in it; else a `.lock` file in it
/// (Windows), kept, since removing a lock file others may be waiting on would let two tasks
/// in at once.
fn folder_lock(out: &Path) -> Result<fs::File> {
    if let Ok(dir) = fs::File::open(out)
        && dir.metadata().is_ok_and(|m| m.is_dir())
    {
        return Ok(dir);
    }
    fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out.join(".lock"))
        .with_context(|| format!("cannot lock {}", out.display()))
}

/// Rewrites `out/manifest.json` from the rank folders present, under a lock on the folder
/// (tasks of other shards ending at the same time wait their turn).
pub fn merge_manifest(out: &Path) -> Result<Manifest> {
    let lock = folder_lock(out)?;
    lock.lock()?;
    let mut ranks = rank_folders(out)?
        .iter()
        .map(|d| read_entry(d))
        .collect::<Result<Vec<_>>>()?;
    ranks.sort_by_key(|e| e.index);
    let hints: Vec<RankHints> = ranks
        .iter()
        .map(|e| RankHints {
            distributed: e.rank_distributed,
            environment: e.rank_environment,
            path: e.source.clone(),
        })
        .collect();
    let found = ranks_from_hints(&hints);
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        version: VERSION,
        recorded_clock: !ranks.is_empty() && ranks.iter().all(|e| e.utc_origin_ns.is_some()),
        ranks: ranks
            .into_iter()
            .zip(found)
            .map(|(entry, (rank, from))| ManifestRank {
                rank,
                rank_from: from.label().to_string(),
                entry,
            })
            .collect(),
    };
    write_atomic(
        &out.join(MANIFEST_FILE),
        &serde_json::to_vec_pretty(&manifest)?,
    )?;
    lock.unlock()?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_named_by_the_path_below_the_common_folder() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            folder_names(&[p("/r/a/rank_0.sqlite"), p("/r/a/rank_1.sqlite")]),
            ["rank_0.sqlite", "rank_1.sqlite"]
        );
        assert_eq!(
            folder_names(&[p("/r/host1/trace.json"), p("/r/host2/trace.json")]),
            ["host1__trace.json", "host2__trace.json"]
        );
        assert_eq!(folder_names(&[p("/r/.hidden.json")]), ["hidden.json"]);
    }
}
