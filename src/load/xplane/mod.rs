//! Loader for JAX / XLA profiles: the XPlane protobuf (`<host>.xplane.pb`) that
//! `jax.profiler.trace(DIR)` writes to `DIR/plugins/profile/<run>/` (TensorFlow's profiler writes
//! the same). Opening `DIR`, the run folder or the file opens the same profile. The messages are
//! declared in [`proto`], decoded whole with `prost` (the file is one message), and [`build`]
//! fills the same [`Trace`] as every other format.

pub mod build;
pub mod derived;
pub mod hlo;
pub mod proto;
pub mod stats;
pub mod tpu;

use std::path::{Path, PathBuf};

use prost::Message;

use crate::load::{LoadControl, LoadError, LoadProgress};
use crate::trace::Trace;

/// The file name ending XLA's profiler gives an XPlane.
pub const SUFFIX: &str = ".xplane.pb";

/// Is `path` named like an XPlane?
pub fn has_xplane_name(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().to_lowercase().ends_with(SUFFIX))
}

/// The XPlanes of a profile folder: those directly in `dir` (a run folder), else those of the
/// latest run under `dir/plugins/profile/` (a `jax.profiler.trace` log folder); by name. Empty
/// when the folder holds no profile.
pub fn xplanes_in_folder(dir: &Path) -> Vec<PathBuf> {
    let direct = xplanes_directly_in(dir);
    if !direct.is_empty() {
        return direct;
    }
    let runs_dir = dir.join("plugins").join("profile");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&runs_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    // Run folders are named by their start time (`2026_12_01_19_07_58`): the last is the latest.
    runs.sort();
    runs.iter()
        .rev()
        .map(|run| xplanes_directly_in(run))
        .find(|found| !found.is_empty())
        .unwrap_or_default()
}

fn xplanes_directly_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_file() && has_xplane_name(p))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// Decodes the XSpace of `bytes`; the error says what is wrong, for a message naming the file.
pub fn decode(bytes: &[u8]) -> Result<proto::XSpace, String> {
    proto::XSpace::decode(bytes).map_err(|e| format!("the protobuf does not decode ({e})"))
}

/// Loads an XPlane file.
pub fn load(path: &Path, control: &LoadControl) -> Result<Trace, LoadError> {
    (control.progress)(&LoadProgress {
        phase: "reading the XPlane",
        fraction: 0.0,
    });
    let bytes = std::fs::read(path).map_err(|e| LoadError::Unreadable {
        path: path.to_path_buf(),
        source: e,
    })?;
    if control.is_cancelled() {
        return Err(LoadError::Cancelled);
    }
    let not_xplane = |detail: String| LoadError::NotAnXPlane {
        path: path.to_path_buf(),
        detail,
    };
    let space = decode(&bytes).map_err(not_xplane)?;
    if space.planes.is_empty() {
        return Err(not_xplane(
            "it decodes, but holds no planes (damaged, or not an XSpace)".into(),
        ));
    }
    (control.progress)(&LoadProgress {
        phase: "building tracks",
        fraction: 0.6,
    });
    let mut trace = build::build(&space);
    trace.path = path.to_path_buf();
    if trace.event_count() == 0 {
        return Err(LoadError::EmptyTrace {
            path: path.to_path_buf(),
        });
    }
    (control.progress)(&LoadProgress {
        phase: "done",
        fraction: 1.0,
    });
    Ok(trace)
}
