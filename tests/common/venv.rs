//! A Python with an anchor package importable (NVIDIA's `ncu-report`, HTA), installed into a
//! virtual environment in the temp folder (kept between runs) with `python3 -m venv` and `pip
//! install`; `None`, said loudly on stderr, when that cannot be done here (no python3, no
//! network to the registry). The packages are anchors to run, never dependencies of the product.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `venv`'s Python once `import` works in it, installing `packages` first when needed;
/// `wheels_env` names a variable whose folder pip looks in first.
pub fn python_with(
    venv: &str,
    import: &str,
    packages: &[&str],
    wheels_env: Option<&str>,
) -> Option<PathBuf> {
    let what = packages.join(" ");
    let venv = std::env::temp_dir().join(venv);
    let python = venv.join("bin/python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", &format!("import {import}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if importable(&python) {
        return Some(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!(
                "SKIPPED: {what}: `python3 -m venv` failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            return None;
        }
        Err(e) => {
            eprintln!("SKIPPED: {what}: no python3 ({e})");
            return None;
        }
    }
    let mut pip = Command::new(venv.join("bin/pip"));
    pip.args(["install", "--quiet", "--disable-pip-version-check"]);
    if let Some(dir) = wheels_env.and_then(std::env::var_os) {
        pip.arg("--find-links").arg(dir);
    }
    pip.args(packages);
    let installed = pip.output();
    if !installed.as_ref().is_ok_and(|o| o.status.success()) || !importable(&python) {
        let why = match installed {
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        eprintln!(
            "SKIPPED: `pip install {what}` did not work here (no network to its registry?): {}",
            why.trim()
        );
        return None;
    }
    Some(python)
}
