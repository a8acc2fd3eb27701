//! NVIDIA's disassembler for the tests that need a kernel's SASS: `SIGHTLINE_NVDISASM`, else the
//! `nvidia-cuda-nvdisasm` package installed into a scratch venv ([`super::venv`]); `None`, said
//! loudly on stderr, when neither can be had.

use std::path::{Path, PathBuf};

/// The disassembler's path.
pub fn nvdisasm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SIGHTLINE_NVDISASM") {
        return Some(PathBuf::from(p));
    }
    let python = super::venv::python_with(
        "sightline-nvdisasm-venv",
        "nvidia",
        &["nvidia-cuda-nvdisasm"],
        None,
    )?;
    let venv = python.parent()?.parent()?.to_path_buf();
    let found = find_file(&venv.join("lib"), "nvdisasm");
    if found.is_none() {
        eprintln!(
            "SKIPPED: nvidia-cuda-nvdisasm installed no nvdisasm under {}",
            venv.display()
        );
    }
    found
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, name) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == name) {
            return Some(path);
        }
    }
    None
}
