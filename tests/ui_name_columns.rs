//! Issue 25 leftovers (b) and (j), driven with `egui_kittest` on the bundled exports: at the
//! window's default size (1500×900) and the panel's default width, the kernel table of moe and
//! transformer shows each kernel's whole function name (the name nsys demangled, without its
//! return type or arguments), so rows are told apart at a glance; and at 1600 px the "MemOps by
//! Time" table of p2p_2gpu (a long report title) keeps every column and the selectors inside the
//! panel, with the copy's direction readable.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

use common::ui::{app_with_size, settle_all};
use egui::accesskit::Role;
use egui::{Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use sightline::ui::SightlineApp;

type App = Harness<'static, SightlineApp>;

/// The window's size when Sightline starts (src/ui/mod.rs).
const DEFAULT_WINDOW: Vec2 = Vec2::new(1500.0, 900.0);

/// The kernels' names as nsys's kernel summary names them (the demangled name), read from the
/// export with SQL.
fn kernel_names(fixture: &str) -> Vec<String> {
    let conn = common::open_ro(&common::fixture(fixture));
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k \
             JOIN StringIds s ON s.id = k.demangledName",
        )
        .unwrap();
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(names.len() >= 4, "{fixture}: {names:?}");
    names
}

/// The function's own name in a demangled kernel name: no `void `, no template arguments, no
/// parameters (`void gemm_tiled_kernel<(int)16>(…)` → `gemm_tiled_kernel`).
fn function_name(full: &str) -> &str {
    let name = full.strip_prefix("void ").unwrap_or(full);
    let end = name.find(['(', '<']).unwrap_or(name.len());
    &name[..end]
}

/// The analysis panel's left edge: its first widget, flush with its margin.
fn panel_left(h: &App) -> f32 {
    h.get_by_label("Exclude warm-up").rect().left() - 12.0
}

#[test]
fn kernel_tables_show_each_whole_function_name_at_the_default_width() {
    for fixture in ["moe", "transformer"] {
        let h = app_with_size(vec![common::fixture(fixture)], DEFAULT_WINDOW);
        assert_eq!(h.state().tab().analysis.report, "cuda_gpu_kern_sum");
        let left = panel_left(&h);
        assert!(left > DEFAULT_WINDOW.x / 2.0, "{fixture}: panel at {left}");
        let names = kernel_names(fixture);
        let mut shown = Vec::new();
        for full in &names {
            // The row's name button is named by the whole name; its value is the text shown.
            let node = h.get_by_label(full);
            let text = node.value().unwrap_or_default();
            let rect: Rect = node.rect();
            assert!(
                rect.left() >= left && rect.right() <= DEFAULT_WINDOW.x,
                "{fixture}: '{text}' at {rect:?}, outside the panel from {left}"
            );
            let function = function_name(full);
            assert!(
                text.contains(function),
                "{fixture}: '{text}' hides part of '{function}' (full name {full})"
            );
            let (head, tail) = text.split_once('…').unwrap_or((&text, ""));
            assert!(
                full.starts_with(head) && full.ends_with(tail),
                "{fixture}: '{text}' is not cut from '{full}'"
            );
            shown.push(text);
        }
        let mut distinct = shown.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{fixture}: {shown:?}");
        // Every number column is still inside the panel.
        for column in ["Time (%)", "Total Time (ns)", "Instances", "StdDev (ns)"] {
            let r = h.get_by_label(column).rect();
            assert!(
                r.left() >= left && r.right() <= DEFAULT_WINDOW.x && r.width() > 10.0,
                "{fixture}: header {column} at {r:?}"
            );
        }
    }
}

#[test]
fn memops_by_time_of_p2p_fits_the_panel_at_1600_px() {
    let window = Vec2::new(1600.0, 1000.0);
    let mut h = app_with_size(vec![common::fixture("p2p_2gpu")], window);
    h.state_mut().tab_mut().analysis.report = "cuda_gpu_mem_time_sum";
    settle_all(&mut h);
    h.run();
    let left = panel_left(&h);
    let inside = |r: Rect| r.left() >= left - 1.0 && r.right() <= window.x;
    let text = std::fs::read_to_string(
        common::fixtures().join("golden/p2p_2gpu/cuda_gpu_mem_time_sum.csv"),
    )
    .unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let columns: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    assert!(columns.len() >= 9, "{columns:?}");
    for column in &columns {
        let r = h.get_by_label(column).rect();
        assert!(
            inside(r) && r.width() > 10.0,
            "header '{column}' at {r:?}, outside the panel [{left}, {}]",
            window.x
        );
    }
    // The report's selector and the nsys-version selector beside it stay in the panel too
    // (the long title of this report pushed both, and with them the table, past its edge).
    let combos: Vec<_> = h.get_all_by_role(Role::ComboBox).collect();
    assert!(combos.len() >= 2, "the report and the format selectors");
    for node in combos {
        let value = node.value().unwrap_or_default();
        assert!(inside(node.rect()), "{value} at {:?}", node.rect());
    }
    // Each operation's row names its direction.
    let operations: Vec<String> = csv
        .records()
        .map(|r| {
            r.unwrap()
                .get(columns.iter().position(|c| c == "Operation").unwrap())
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(!operations.is_empty());
    for op in &operations {
        let node = h.get_by_label(op);
        let shown = node.value().unwrap_or_default();
        assert!(inside(node.rect()), "{op} at {:?}", node.rect());
        let direction = op.trim_matches(['[', ']']).rsplit(' ').next().unwrap();
        assert!(shown.contains(direction), "'{shown}' hides '{direction}'");
    }
}

#[test]
fn a_table_wider_than_the_panel_gives_its_names_room_before_its_numbers() {
    // The NVTX GPU projection's long titles fill the panel: the table scrolls sideways, and the
    // range names (`backward_pass`, `layer_0_backward`) are shown whole rather than cut to
    // `backward_…` to keep more numbers in view.
    let mut h = app_with_size(vec![common::fixture("transformer")], DEFAULT_WINDOW);
    h.state_mut().tab_mut().analysis.report = "nvtx_gpu_proj_sum";
    settle_all(&mut h);
    h.run();
    let text = std::fs::read_to_string(
        common::fixtures().join("golden/transformer/nvtx_gpu_proj_sum.csv"),
    )
    .unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let ranges: Vec<String> = csv
        .records()
        .map(|r| r.unwrap().get(0).unwrap().to_string())
        .collect();
    assert!(ranges.len() >= 20, "{ranges:?}");
    let left = panel_left(&h);
    // The rows on screen (the list scrolls): at least the first ten.
    let mut seen = 0;
    for range in &ranges {
        let Some(node) = h.query_by_label(range) else {
            continue;
        };
        seen += 1;
        assert!(node.rect().left() >= left, "{range} at {:?}", node.rect());
        assert_eq!(node.value().unwrap_or_default(), *range, "shown whole");
    }
    assert!(seen >= 10, "{seen} rows on screen");
    // The table is wider than the panel: its last column is past the window's edge.
    let last = h.get_by_label("Proj StdDev (ns)").rect();
    assert!(last.right() > DEFAULT_WINDOW.x, "{last:?}");
}

#[test]
fn kernels_sharing_a_long_start_are_cut_where_they_differ() {
    // kt_train (PyTorch profiler): six cuBLAS kernels `sm80_xmma_gemm_f32f32_f32f32_f32_…` share
    // 33 characters, more than the Name column shows; cut at the end they all read
    // `sm80_xmma_gemm_f32f32_f…`. Names from PyTorch's own key_averages of the capture.
    let Some(shared) = common::shared_traces() else {
        eprintln!("../shared/traces is absent: skipped");
        return;
    };
    let text =
        std::fs::read_to_string(shared.join("pytorch/golden/kt_train/key_averages.csv")).unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let gemms: Vec<String> = csv
        .records()
        .map(|r| r.unwrap().get(0).unwrap().to_string())
        .filter(|k| k.starts_with("sm80_xmma_gemm_"))
        .collect();
    assert!(gemms.len() >= 5, "{gemms:?}");
    let h = app_with_size(
        vec![shared.join("pytorch/kt_train.pt.trace.json.gz")],
        DEFAULT_WINDOW,
    );
    assert_eq!(h.state().tab().analysis.report, "cuda_gpu_kern_sum");
    let shown: Vec<String> = gemms
        .iter()
        .filter_map(|g| h.query_by_label(g))
        .map(|n| n.value().unwrap_or_default())
        .collect();
    assert!(shown.len() >= 5, "{shown:?}");
    let mut distinct = shown.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), shown.len(), "rows told apart: {shown:?}");
    for s in &shown {
        assert!(s.starts_with("sm80"), "{s}");
    }
}

#[test]
fn copies_sharing_their_end_are_told_apart() {
    // Issue 47 item 5: moe's "MemOps by Size" table cut `[CUDA memcpy Host-to-Device]` and
    // `[CUDA memcpy Device-to-Device]` both to `[…to-Device]`: only a hover told them apart.
    // Operations from nsys's own report of the export; at the default window and narrower.
    let text =
        std::fs::read_to_string(common::fixtures().join("golden/moe/cuda_gpu_mem_size_sum.csv"))
            .unwrap();
    let mut csv = csv::Reader::from_reader(text.as_bytes());
    let columns: Vec<String> = csv.headers().unwrap().iter().map(String::from).collect();
    let k = columns.iter().position(|c| c == "Operation").unwrap();
    let operations: Vec<String> = csv
        .records()
        .map(|r| r.unwrap().get(k).unwrap().to_string())
        .collect();
    assert!(operations.len() >= 3, "{operations:?}");
    let mut cut = 0;
    // The Operation column as a person narrows it by dragging its header's edge.
    for width in [200.0, 140.0, 110.0, 90.0, 70.0] {
        let mut h = app_with_size(vec![common::fixture("moe")], DEFAULT_WINDOW);
        let mut set = sightline::ui::columns::ColumnWidths::default();
        set.0.insert("Operation".to_string(), width);
        set.store(&h.ctx, "stats:cuda_gpu_mem_size_sum");
        h.state_mut().tab_mut().analysis.report = "cuda_gpu_mem_size_sum";
        settle_all(&mut h);
        h.run();
        let shown: Vec<String> = operations
            .iter()
            .map(|op| h.get_by_label(op).value().unwrap_or_default())
            .collect();
        eprintln!("{width} px: {shown:?}");
        cut += usize::from(shown.iter().zip(&operations).any(|(s, o)| s != o));
        let mut distinct = shown.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            shown.len(),
            "{width} px: rows read the same: {shown:?}"
        );
        // A copy's whole direction stays readable.
        for (s, op) in shown.iter().zip(&operations) {
            let direction = op.trim_matches(['[', ']']).rsplit(' ').next().unwrap();
            assert!(
                s.contains(direction),
                "{width} px: '{s}' hides '{direction}'"
            );
        }
    }
    assert!(cut >= 1, "no width cut the names");
}
