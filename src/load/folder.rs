//! The traces of a run given as a folder: which files in it are traces, and the list of a run's
//! traces from files and folders mixed (`sightline DIR`, `ranks`, `diff --run`).

use std::path::{Path, PathBuf};

/// The traces of a folder, as a run: every `.sqlite`, `.nsys-rep`, `.xplane.pb`, `.json` and
/// `.json.gz` in it (not in its subfolders), by name; a report's `.nsys-rep` is left out when its
/// `.sqlite` export is beside it, and the JSON files `jax.profiler` writes beside an XPlane (the
/// same events) when the XPlane is there. A `jax.profiler.trace` log folder, which holds its runs
/// under `plugins/profile/`, gives its latest run's XPlanes.
pub fn traces_in_folder(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let xplanes = crate::load::xplane::xplanes_in_folder(dir);
    if !xplanes.is_empty() {
        return Ok(xplanes);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && is_trace_name(p))
        .collect();
    found.sort();
    let exported: Vec<PathBuf> = found
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sqlite"))
        .map(|p| p.with_extension("nsys-rep"))
        .collect();
    found.retain(|p| !exported.contains(p));
    Ok(found)
}

/// A run's traces from the paths given: each folder's traces ([`traces_in_folder`]) in its
/// place, files as they are.
pub fn run_traces(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = traces_in_folder(p)
                .map_err(|e| format!("cannot read the folder {}: {e}", p.display()))?;
            if found.is_empty() {
                return Err(format!(
                    "{} holds no trace (.sqlite, .nsys-rep, .xplane.pb, .json, .json.gz)",
                    p.display()
                ));
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn is_trace_name(p: &Path) -> bool {
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    [".sqlite", ".nsys-rep", ".json", ".json.gz", ".xplane.pb"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_lists_its_traces_and_an_export_hides_its_report() {
        let dir = std::env::temp_dir().join(format!("sightline_folder_{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::create_dir_all(dir.join("empty")).unwrap();
        for name in [
            "b.sqlite",
            "b.nsys-rep",
            "a.pt.trace.json.gz",
            "c.nsys-rep",
            "notes.txt",
        ] {
            std::fs::write(dir.join(name), b"x").unwrap();
        }
        std::fs::write(dir.join("sub/d.sqlite"), b"x").unwrap();
        let names: Vec<String> = traces_in_folder(&dir)
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.pt.trace.json.gz", "b.sqlite", "c.nsys-rep"]);
        let mixed = run_traces(&[dir.join("notes.txt"), dir.clone()]).unwrap();
        assert_eq!(mixed.len(), 4);
        assert_eq!(mixed[0], dir.join("notes.txt"));
        let empty = run_traces(&[dir.join("empty")]).unwrap_err();
        assert!(empty.contains("holds no trace"), "{empty}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
