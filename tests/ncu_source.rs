//! ncu's Source page (`sightline summary R --report ncu_source --print-source …`) compared cell
//! for cell, line for line, with what ncu 2025.3.1 printed for the same reports
//! (`../shared/traces/ncu/oracle/NAME.source_{sass,cuda_sass,ptx}.csv[.gz]`): the SASS of every
//! profiled kernel of `ncu_lineinfo`, `ncu_train_gemm` and `ncu_moe_full` with each
//! instruction's Source Counters, the CUDA view of `ncu_lineinfo` (each CUDA source line with
//! its counters and its instructions), ncu's warnings where a kernel has no line table or PTX,
//! and the PTX `ncu_lineinfo` carries.
//!
//! The SASS text comes from the cubin the report stores, disassembled by NVIDIA's `nvdisasm`:
//! `SIGHTLINE_NVDISASM`, else the `nvidia-cuda-nvdisasm` package installed into a scratch venv
//! (skipped loudly when neither can be had). Skipped loudly without `../shared/traces/ncu`.

#![allow(clippy::expect_used, clippy::unwrap_used)] // a failed expectation fails the test

mod common;

/// (report, `--print-source`, oracle file).
const PAGES: [(&str, &str, &str); 9] = [
    ("ncu_lineinfo", "sass", "ncu_lineinfo.source_sass.csv"),
    (
        "ncu_lineinfo",
        "cuda,sass",
        "ncu_lineinfo.source_cuda_sass.csv",
    ),
    ("ncu_lineinfo", "ptx", "ncu_lineinfo.source_ptx.csv"),
    (
        "ncu_train_gemm",
        "sass",
        "ncu_train_gemm.source_sass.csv.gz",
    ),
    (
        "ncu_train_gemm",
        "cuda,sass",
        "ncu_train_gemm.source_cuda_sass.csv",
    ),
    ("ncu_train_gemm", "ptx", "ncu_train_gemm.source_ptx.csv"),
    ("ncu_moe_full", "sass", "ncu_moe_full.source_sass.csv.gz"),
    (
        "ncu_moe_full",
        "cuda,sass",
        "ncu_moe_full.source_cuda_sass.csv",
    ),
    ("ncu_moe_full", "ptx", "ncu_moe_full.source_ptx.csv"),
];

/// A line's cells as a CSV reader reads them (a warning line is one cell).
fn cells(line: &str) -> Vec<String> {
    if !line.starts_with('"') {
        return vec![line.to_string()];
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    reader
        .records()
        .next()
        .and_then(Result::ok)
        .map(|r| r.iter().map(str::to_string).collect())
        .unwrap_or_else(|| vec![line.to_string()])
}

#[test]
fn source_pages_equal_ncus_cell_for_cell() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let Some(nvdisasm) = common::nvdisasm::nvdisasm() else {
        return;
    };
    let nvdisasm = nvdisasm.to_string_lossy().into_owned();
    let (mut total_cells, mut total_blocks, mut total_warnings) = (0usize, 0usize, 0usize);
    let mut total_source_lines = 0usize;
    for (name, view, oracle) in PAGES {
        let report = dir.join(format!("{name}.ncu-rep.gz"));
        let out = common::sightline_ok(
            &[
                "summary",
                &report.to_string_lossy(),
                "--report",
                "ncu_source",
                "--print-source",
                view,
            ],
            &[("SIGHTLINE_NVDISASM", &nvdisasm)],
        );
        let ours = String::from_utf8(out.stdout).expect("utf-8 page");
        let theirs = common::read_text(&dir.join("oracle").join(oracle));
        let (ours, theirs): (Vec<&str>, Vec<&str>) =
            (ours.lines().collect(), theirs.lines().collect());
        assert_eq!(
            ours.len(),
            theirs.len(),
            "{name} --print-source {view}: {} lines, ncu printed {}",
            ours.len(),
            theirs.len()
        );
        let (mut page_cells, mut blocks, mut warnings) = (0usize, 0usize, 0usize);
        let mut source_lines = 0usize;
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            let (ca, cb) = (cells(a), cells(b));
            assert_eq!(
                ca.len(),
                cb.len(),
                "{name} {view} line {}: {a}\nncu: {b}",
                i + 1
            );
            for (k, (x, y)) in ca.iter().zip(&cb).enumerate() {
                assert_eq!(
                    x,
                    y,
                    "{name} {view} line {} cell {}:\n{a}\nncu: {b}",
                    i + 1,
                    k + 1
                );
            }
            assert_eq!(a, b, "{name} {view} line {}: quoted differently", i + 1);
            page_cells += ca.len();
            // A kernel's block: the SASS view's "Kernel Name", the CUDA view's "Function Name".
            blocks +=
                usize::from(b.starts_with("\"Kernel Name\"") || b.starts_with("\"Function Name\""));
            warnings += usize::from(b.starts_with("==WARNING=="));
            // The CUDA view's source lines: a row that starts with a line number.
            source_lines += usize::from(view == "cuda,sass" && cb[0].parse::<u32>().is_ok());
        }
        eprintln!(
            "{name} --print-source {view}: {page_cells} cells in {} lines equal ncu's \
             ({blocks} kernel blocks, {source_lines} CUDA source lines, {warnings} warnings)",
            theirs.len()
        );
        total_cells += page_cells;
        total_blocks += blocks;
        total_warnings += warnings;
        total_source_lines += source_lines;
    }
    eprintln!(
        "ncu_source: {total_cells} cells of {} pages equal ncu's ({total_blocks} kernel blocks, \
         {total_source_lines} CUDA source lines, {total_warnings} warnings)",
        PAGES.len()
    );
    assert!(
        total_blocks >= 48 + 24 + 96 + 225,
        "every kernel block compared"
    );
    assert!(total_source_lines >= 174, "every CUDA source line compared");
}

#[test]
fn kernel_and_launch_select_as_ncu_does() {
    let Some(dir) = common::shared_ncu() else {
        return;
    };
    let report = dir.join("ncu_moe_full.ncu-rep.gz");
    let report = report.to_string_lossy();
    // --print-source ptx needs no disassembler: one warning line per selected kernel.
    let page = |extra: &[&str]| {
        let mut args = vec![
            "summary",
            &report,
            "--report",
            "ncu_source",
            "--print-source",
            "ptx",
        ];
        args.extend_from_slice(extra);
        String::from_utf8(common::sightline_ok(&args, &[]).stdout).expect("utf-8")
    };
    let all = page(&[]);
    assert_eq!(all.lines().count(), 113, "one warning per kernel");
    let reduce = page(&["--kernel", "reduce_kernel"]);
    let reduce_lines: Vec<&str> = reduce.lines().collect();
    assert!(!reduce_lines.is_empty());
    assert!(reduce_lines.iter().all(|l| l.contains("reduce_kernel")));
    let expected: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("reduce_kernel"))
        .collect();
    assert_eq!(reduce_lines, expected, "--kernel keeps ncu's order");
    let regex_prefixed = page(&["--kernel", "regex:reduce_kernel"]);
    assert_eq!(regex_prefixed, reduce);
    let second = page(&["--kernel", "reduce_kernel", "--launch", "1"]);
    assert_eq!(second.lines().collect::<Vec<_>>(), vec![expected[1]]);
    eprintln!(
        "--kernel reduce_kernel: {} of 113 kernels; --launch 1: the second of them",
        expected.len()
    );
}

/// A report of ncu 2020.2–2022.1 lists no functions in its modules (50 of the public
/// collection); the cubin it keeps is the image as loaded, whose symbol table holds each
/// function's load address. Those places are where the kernels ran: each kernel's first
/// instruction, which every launch runs, is a PC of its per-instruction `inst_executed`. (One
/// ncu 2020.2 report of the collection, whose kernel calls functions below its own code, had
/// 1,811 PCs with no instruction before: `tests/ncu_nvidia_reader.rs`.) The fixture is
/// `prof1.ncu-rep` of github.com/bwd29/self-join-MiSTIC (MIT), ncu 2021.2.
#[test]
fn an_old_reports_functions_are_placed_where_its_cubin_says() {
    let path = common::fixtures().join("ncu_public/bwd29_self_join_prof1.ncu-repz");
    let report = common::load_ncu(&path);
    let ids: Vec<u32> = (0..report.workloads.len() as u32).collect();
    let metrics = ["inst_executed".to_string()].into();
    let inputs = sightline::load::ncu_rep::source_inputs(&path, &report, &ids, &metrics, false)
        .expect("source data");
    let (mut kernels, mut functions) = (0, 0);
    for kernel in &inputs.data.kernels {
        let module = &inputs.data.modules[&kernel.module.expect("a module")];
        functions = functions.max(module.functions.len());
        let name = &report.workloads[kernel.workload as usize].mangled_name;
        let function = module
            .functions
            .iter()
            .find(|f| &f.mangled_name == name)
            .unwrap_or_else(|| panic!("{name}: not placed"));
        let pcs = &kernel.metrics.first().expect("inst_executed").values;
        assert!(
            pcs.iter().any(|&(pc, _)| pc == function.address),
            "{name}: its first instruction at {:#x} did not run",
            function.address
        );
        assert!(pcs.iter().all(|&(pc, _)| pc >= function.address));
        kernels += 1;
    }
    assert_eq!(kernels, 4);
    eprintln!("{kernels} kernels placed at their cubin's symbols ({functions} functions)");
}
