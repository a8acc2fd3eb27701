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

/// FNV-1a, 64 bits: a stable key across builds and machines.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
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
        let key = fnv1a(&[
            source.as_os_str().as_encoded_bytes(),
            &size.to_le_bytes(),
            &mtime.to_le_bytes(),
            pattern.as_bytes(),
            &store::VERSION.to_le_bytes(),
            &exe_size.to_le_bytes(),
            &exe_mtime.to_le_bytes(),
        ]);
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
        if let Ok(f) = fs::File::options()
            .write(true)
            .open(dir.join(store::ENTRY_FILE))
        {
            let _ = f.set_modified(SystemTime::now());
        }
        Some((entry, digest, dir))
    }

    /// Keeps `made` in the cache (its entry's folder is replaced by the cache's key); gives the
    /// folder it is kept in.
    pub fn store(&self, made: &super::Made) -> Result<PathBuf> {
        let pattern = &made.entry.collectives_pattern;
        let folder = Self::folder_for(&made.entry.source, pattern)
            .ok_or_else(|| anyhow::anyhow!("{} cannot be read", made.entry.source.display()))?;
        fs::create_dir_all(&self.dir)?;
        let entry = Entry {
            folder,
            ..made.entry.clone()
        };
        let files = store::RankFiles {
            entry: &entry,
            ..made.files()
        };
        store::write_rank(&self.dir, &files)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_every_part() {
        let a = fnv1a(&[b"/t/rank_0.sqlite", b"1"]);
        assert_ne!(a, fnv1a(&[b"/t/rank_1.sqlite", b"1"]));
        assert_ne!(a, fnv1a(&[b"/t/rank_0.sqlite", b"2"]));
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_eq!(a, fnv1a(&[b"/t/rank_0.sqlite", b"1"]));
    }
}
