//! A machine without `nvdisasm` (no CUDA toolkit, `SIGHTLINE_NVDISASM` unset): the Source view
//! of a kernel whose report holds SASS says what is missing and how to get it, in the window and
//! on the command line, instead of an empty table. The report is a fixture (`ncu_kt_pair`), so
//! this runs everywhere; it skips loudly where a CUDA toolkit sits at `/usr/local/cuda`, which
//! the search always finds. Its own test binary: it takes nvdisasm off this process's PATH.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::ui::DroppedPath;
use egui_kittest::kittest::Queryable;
use sightline::ui::ncu::Page;

const MISSING: &str = "nvdisasm (NVIDIA's disassembler) was not found: install the CUDA toolkit \
                       or `pip install nvidia-cuda-nvdisasm`, or name it with \
                       SIGHTLINE_NVDISASM=PATH";

/// A PATH without a folder that holds `nvdisasm`; `None` (skip) where the search would find one
/// anyway.
fn path_without_nvdisasm() -> Option<std::ffi::OsString> {
    if PathBuf::from("/usr/local/cuda/bin/nvdisasm").is_file() {
        eprintln!("SKIPPED: /usr/local/cuda/bin/nvdisasm is there (a machine with CUDA)");
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| !d.join("nvdisasm").is_file())
        .collect();
    Some(std::env::join_paths(kept).expect("PATH folders"))
}

fn report() -> PathBuf {
    common::fixtures().join("ncu_kt_pair.ncu-repz")
}

#[test]
fn without_nvdisasm_the_source_view_says_what_to_install() {
    let Some(path) = path_without_nvdisasm() else {
        return;
    };
    // SAFETY: this binary's only test; set before any worker thread starts.
    unsafe {
        std::env::set_var("PATH", &path);
        for var in ["SIGHTLINE_NVDISASM", "CUDA_HOME", "CUDA_PATH"] {
            std::env::remove_var(var);
        }
    }

    // The command line: the page is refused with the reason, exit status non-zero.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["summary", &report().to_string_lossy()])
        .args(["--report", "ncu_source"])
        .output()
        .expect("run sightline");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains(MISSING), "{stderr}");
    assert!(out.stdout.is_empty());

    // The window: the report dropped on it, its first kernel's Source page.
    let mut h = common::ui::harness(None);
    h.input_mut()
        .dropped_files
        .push(Arc::new(DroppedPath(report())));
    let loading = common::ui::loading_or_gathering_source;
    common::ui::settle_with(&mut h, loading);
    h.state_mut()
        .tab_mut()
        .ncu
        .as_deref_mut()
        .expect("the report")
        .selected = Some(0);
    h.run();
    h.get_all_by_label("Source").last().unwrap().click();
    h.step();
    common::ui::settle_with(&mut h, loading);
    h.run();
    let view = h.state().tab().ncu.as_deref().expect("the report");
    assert_eq!(view.page, Page::Source);
    let source = view.source.as_ref().expect("a Source view");
    assert!(source.model.is_none());
    let error = source.error.as_deref().expect("the reason");
    assert!(error.contains(MISSING), "{error}");
    assert!(
        h.query_by_label_contains("nvdisasm (NVIDIA's disassembler) was not found")
            .is_some(),
        "the reason is on the page"
    );
}
