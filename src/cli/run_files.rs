//! A run's traces on the command line: files and folders expanded into the run's traces, each
//! loaded on a thread of its own, and two ranks of a run picked by their rank (`diff --run`).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use crate::analysis::ranks::find_ranks;
use crate::load::folder::run_traces;
use crate::trace::{Needs, Trace};

/// The run's traces (folders expanded), each loaded with `needs` on a thread of its own: a loader
/// blocks on its own rayon work, so loads must not sit on rayon's threads themselves.
pub fn load_run(paths: &[PathBuf], needs: Needs) -> Result<Vec<Trace>> {
    let files = run_traces(paths).map_err(|e| anyhow!(e))?;
    if files.len() < 2 {
        bail!("a run needs two traces or more (one per rank)");
    }
    std::thread::scope(|s| {
        let loads: Vec<_> = files
            .iter()
            .map(|p| s.spawn(move || super::load_for_cli(p, needs)))
            .collect();
        loads
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| bail!("a trace failed to load")))
            .collect::<Result<Vec<_>>>()
    })
}

/// A rank as the command line writes it: `3`, `rank:3` or `rank3`.
fn parse_rank(text: &Path) -> Result<u32> {
    let s = text.to_string_lossy();
    let digits = s
        .strip_prefix("rank:")
        .or_else(|| s.strip_prefix("rank"))
        .unwrap_or(&s);
    digits
        .parse()
        .map_err(|_| anyhow!("with --run, '{s}' must name a rank: 3, rank:3 or rank3"))
}

/// The files of ranks `a` and `b` of the run `paths`, the ranks found as `sightline ranks` finds
/// them; says on stderr which file each is and where its rank came from.
pub fn two_ranks(paths: &[PathBuf], a: &Path, b: &Path) -> Result<(PathBuf, PathBuf)> {
    let (a, b) = (parse_rank(a)?, parse_rank(b)?);
    // Only what tells a trace's rank: its metadata, not its events.
    let traces = load_run(paths, Needs::NONE)?;
    let refs: Vec<&Trace> = traces.iter().collect();
    let ranks = find_ranks(&refs);
    let pick = |want: u32| -> Result<PathBuf> {
        let i = ranks.iter().position(|r| r.0 == want).ok_or_else(|| {
            let mut have: Vec<u32> = ranks.iter().map(|r| r.0).collect();
            have.sort_unstable();
            anyhow!("the run has no rank {want} (its ranks: {have:?})")
        })?;
        let path = traces[i].path.clone();
        eprintln!("rank {want} ({}): {}", ranks[i].1.label(), path.display());
        Ok(path)
    };
    Ok((pick(a)?, pick(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_written_three_ways() {
        for text in ["3", "rank:3", "rank3"] {
            assert_eq!(parse_rank(Path::new(text)).unwrap(), 3);
        }
        let e = parse_rank(Path::new("n25_rank3.sqlite")).unwrap_err();
        assert!(e.to_string().contains("must name a rank"), "{e}");
    }
}
