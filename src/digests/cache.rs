//! The digest cache of local opens: a run of traces opened in the window or with `sightline
//! ranks` keeps each rank's digest under `digests/` in Sightline's cache folder
//! (`$SIGHTLINE_CACHE_DIR`, else `$XDG_CACHE_HOME/sightline`, else `~/.cache/sightline`), never
//! beside the traces, in a folder keyed by the trace's
//! absolute path, size and modification time, the collectives' pattern and the build of
//! Sightline; the next open of
//! the same unchanged trace reads the digest instead. The cache is bounded
//! ([`DEFAULT_LIMIT_BYTES`], or `SIGHTLINE_CACHE_LIMIT_MB`): the least recently used digests
//! are dropped first. `--no-cache` leaves it alone.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Result;

use super::store::{self, Entry};
use crate::analysis::ranks::digest::RankDigest;

/// 2 GiB: about a thousand digests of 1 M-event ranks.
pub const DEFAULT_LIMIT_BYTES: u64 = 2 << 30;

/// The cache's folder and bound.
#[derive(Debug, Clone)]
pub struct Cache {
    pub dir: PathBuf,
    pub limit_bytes: u64,
}

impl Cache {
    /// The user's cache: `digests/` in Sightline's cache folder (`$SIGHTLINE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/sightline`, else `~/.cache/sightline`, as for converted reports), if
    /// one of them is set.
    pub fn user() -> Option<Cache> {
        let base = crate::load::nsys_rep::cache_dir()?;
        let limit_bytes = std::env::var("SIGHTLINE_CACHE_LIMIT_MB")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map_or(DEFAULT_LIMIT_BYTES, |mb| mb << 20);
        Some(Cache {
            dir: base.join("digests"),
            limit_bytes,
        })
    }

    /// The folder name of `source` (absolute) as it is now, digested with `pattern` by this
    /// build of Sightline (its executable's size and time are part of the key: another build
    /// may digest differently, and never reads this one's digests).
    pub fn folder_for(source: &Path, pattern: &str) -> Option<String> {
        let (size, mtime) = store::stamp(source).ok()?;
        let (exe_size, exe_mtime) = std::env::current_exe()
            .ok()
            .and_then(|p| store::stamp(&p).ok())
            .unwrap_or((0, 0));
        // Parts joined by NUL, which neither a path nor a pattern given on a command line holds.
        let key = crate::load::nsys_rep::path_hash(&format!(
            "{}\0{size}\0{mtime}\0{pattern}\0{}\0{exe_size}\0{exe_mtime}",
            source.display(),
            store::VERSION
        ));
        Some(format!("{key:016x}"))
    }

    /// The current digest of `source` (absolute) made with `pattern`, if the cache has one; a
    /// hit counts as a use (the digest is kept longer).
    /// Also gives the digest's folder.
    pub fn lookup(&self, source: &Path, pattern: &str) -> Option<(Entry, RankDigest, PathBuf)> {
        let dir = self.dir.join(Self::folder_for(source, pattern)?);
        let (entry, digest) = store::read_rank(&dir).ok()?;
        if !entry.is_current(source, pattern) {
            return None;
        }
        touch(&dir);
        Some((entry, digest, dir))
    }

    /// Keeps `made` in the cache (its entry's folder is replaced by the cache's key); gives the
    /// folder it is kept in.
    pub fn store(&self, made: &super::Made) -> Result<PathBuf> {
        let pattern = &made.entry.collectives_pattern;
        let folder = Self::folder_for(&made.entry.source, pattern)
            .ok_or_else(|| anyhow::anyhow!("{} cannot be read", made.entry.source.display()))?;
        let place = self.dir.join(&folder);
        // A current digest of the same trace (cached meanwhile by a second window, a test
        // beside this one, the same trace at another place of another run) is kept, never
        // replaced under a reader; keeping it counts as a use.
        let source = &made.entry.source;
        let current = |e: &Entry| e.is_current(source, pattern);
        if store::read_entry(&place).is_ok_and(|e| current(&e)) {
            touch(&place);
            return Ok(place);
        }
        fs::create_dir_all(&self.dir)?;
        let entry = Entry {
            folder,
            ..made.entry.clone()
        };
        let files = store::RankFiles {
            entry: &entry,
            ..made.files()
        };
        store::write_rank(&self.dir, &files, &current)?;
        Ok(self.dir.join(&entry.folder))
    }

    /// Drops the least recently used digests until the cache is within its bound; returns how
    /// many were dropped.
    pub fn trim(&self) -> usize {
        let Ok(list) = fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut folders: Vec<(SystemTime, u64, PathBuf)> = list
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .map(|p| {
                let used = fs::metadata(p.join(store::ENTRY_FILE))
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let size = fs::read_dir(&p)
                    .map(|l| {
                        l.flatten()
                            .filter_map(|f| f.metadata().ok())
                            .map(|m| m.len())
                            .sum()
                    })
                    .unwrap_or(0);
                (used, size, p)
            })
            .collect();
        let mut total: u64 = folders.iter().map(|f| f.1).sum();
        folders.sort();
        let mut dropped = 0;
        for (_, size, path) in folders {
            if total <= self.limit_bytes {
                break;
            }
            if fs::remove_dir_all(&path).is_ok() {
                total = total.saturating_sub(size);
                dropped += 1;
            }
        }
        dropped
    }
}

/// Marks the digest in `dir` as used now (the cache drops the least recently used first).
fn touch(dir: &Path) {
    if let Ok(f) = fs::File::options()
        .write(true)
        .open(dir.join(store::ENTRY_FILE))
    {
        let _ = f.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_the_trace_and_the_pattern() {
        let a = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        let b = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
        let key = |p: &Path, pattern| Cache::folder_for(p, pattern).expect("a file");
        assert_eq!(key(&a, "x"), key(&a, "x"));
        assert_ne!(key(&a, "x"), key(&b, "x"));
        assert_ne!(key(&a, "x"), key(&a, "y"));
        assert!(Cache::folder_for(&a.join("missing"), "x").is_none());
    }

    /// A cache over its bound drops its least recently used digests first, down to the bound.
    #[test]
    fn trimming_drops_the_least_recently_used_first() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("sightline-cache-trim-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let day = std::time::Duration::from_secs(86_400);
        // Three digests of 1 MiB, used 3, 2 and 1 days ago.
        for (name, age) in [("old", 3), ("mid", 2), ("new", 1)] {
            let d = dir.join(name);
            fs::create_dir_all(&d)?;
            fs::write(d.join("busy.parquet"), vec![0u8; 1 << 20])?;
            let entry = fs::File::create(d.join(store::ENTRY_FILE))?;
            entry.set_modified(SystemTime::now() - day * age)?;
        }
        let cache = Cache {
            dir: dir.clone(),
            limit_bytes: (2 << 20) + 100,
        };
        assert_eq!(cache.trim(), 1);
        let mut left: Vec<String> = fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["mid", "new"]);
        assert_eq!(cache.trim(), 0, "within the bound now");
        fs::remove_dir_all(&dir)?;
        Ok(())
    }
}
