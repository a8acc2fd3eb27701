//! ncu's Source page (`ncu --import R --csv --page source --print-source sass|cuda,sass|ptx`),
//! as ncu 2025.3.1 prints it. `sass`: for each kernel a `"Kernel Name"` line, the header and one
//! row per SASS instruction (its address and text alone for a kernel with no Source Counters); ncu prints a kernel's block once per source message of its module
//! in the report (twice for most kernels of the shared reports: the module's message, then the
//! one that added the kernel's function), and so does this page. `cuda,sass`: per CUDA source
//! line, its counters and its instructions ([`source_cuda`]), or ncu's warning for a kernel
//! whose cubin has no line table. `ptx`: the PTX of a module that has it, once, numbered by
//! line, its quotes written as they are (as ncu writes them), or ncu's warning.

use std::collections::HashMap;
use std::io::{self, Write};

use super::names::KernelNames;
use super::source_cuda;
use super::write_row;
use crate::analysis::ncu::source::{SourceColumn, columns};
use crate::trace::ncu::NcuReport;
use crate::trace::ncu_source::{LineTable, NcuSourceData, SassInstruction};

/// `--print-source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceView {
    #[default]
    Sass,
    CudaSass,
    Ptx,
}

impl SourceView {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "sass" => Ok(SourceView::Sass),
            "cuda,sass" | "sass,cuda" => Ok(SourceView::CudaSass),
            "ptx" => Ok(SourceView::Ptx),
            other => Err(format!(
                "--print-source: '{other}' is not one of sass, cuda,sass, ptx"
            )),
        }
    }
}

/// What the page needs beyond the report: the source data of the kernels shown, and the SASS of
/// their functions by (module reference, mangled name), disassembled by the caller.
pub struct SourceInput<'a> {
    pub data: &'a NcuSourceData,
    pub sass: &'a HashMap<(u64, String), Vec<SassInstruction>>,
    /// Of each module (by reference): whether its cubin has a line table, and its PTX lines.
    pub lineinfo: &'a HashMap<u64, bool>,
    pub ptx: &'a HashMap<u64, Vec<String>>,
    /// The line tables of the functions, keyed as `sass` (the CUDA view).
    pub lines: &'a HashMap<(u64, String), LineTable>,
}

/// What the page printed, for a caller that says so.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SourcePageCounts {
    pub blocks: usize,
    /// Instruction rows.
    pub rows: usize,
    /// CUDA source line rows.
    pub lines: usize,
    /// Kernels of the CUDA view with lines in a source file the report does not hold (those
    /// lines are not printed: ncu's page for them is not known).
    pub cuda_not_printed: usize,
}

/// Writes the page for the kernels `ids` (in ID order).
pub fn write(
    report: &NcuReport,
    input: &SourceInput<'_>,
    view: SourceView,
    ids: &[u32],
    out: &mut dyn Write,
) -> io::Result<SourcePageCounts> {
    let names = KernelNames::of(report);
    let mut counts = SourcePageCounts::default();
    let mut ptx_printed: Vec<u64> = Vec::new();
    let mut line = String::with_capacity(1 << 12);
    for &id in ids {
        let Some(workload) = report.workloads.get(id as usize) else {
            continue;
        };
        let Some(kernel) = input.data.kernel(id) else {
            continue;
        };
        let module_ref = kernel.module;
        let module = module_ref.and_then(|r| input.data.modules.get(&r));
        match view {
            SourceView::Sass => {}
            SourceView::CudaSass => {
                let has_table = module_ref.and_then(|r| input.lineinfo.get(&r)) == Some(&true);
                let key = module_ref.map(|r| (r, workload.mangled_name.clone()));
                let table = key.as_ref().and_then(|k| input.lines.get(k));
                let sass = key.as_ref().and_then(|k| input.sass.get(k));
                match (module, table, sass) {
                    (Some(module), Some(table), Some(sass)) if !table.lines.is_empty() => {
                        let columns = columns(report, workload, kernel);
                        let cuda = source_cuda::Kernel {
                            // As the SASS view's "Kernel Name" (casts kept: `<(int)16>`).
                            name: workload.display_name(),
                            module,
                            sass,
                            table,
                            columns: &columns,
                        };
                        source_cuda::write_kernel(&cuda, out, &mut counts)?;
                    }
                    // A line table or SASS that could not be had: the caller says why.
                    (_, None, _) | (_, _, None) if has_table => {}
                    _ => writeln!(
                        out,
                        "==WARNING== No lineinfo available to show CUDA-C source related to '{}'.",
                        names.get(workload)
                    )?,
                }
                continue;
            }
            SourceView::Ptx => {
                match module_ref.and_then(|r| input.ptx.get(&r).map(|p| (r, p))) {
                    Some((r, ptx)) => {
                        if !ptx_printed.contains(&r) {
                            ptx_printed.push(r);
                            write_row(out, &["Line No", "Source"])?;
                            // ncu writes the PTX lines as they are: quotes in them are not
                            // doubled (`.pragma "nounroll";`).
                            for (i, text) in ptx.iter().enumerate() {
                                writeln!(out, "\"{}\",\"{}\"", i + 1, text.trim())?;
                            }
                            counts.blocks += 1;
                            counts.rows += ptx.len();
                        }
                    }
                    None => writeln!(
                        out,
                        "==WARNING== PTX source is not available for {}.",
                        names.get(workload)
                    )?,
                }
                continue;
            }
        }
        let sass = module_ref
            .and_then(|r| input.sass.get(&(r, workload.mangled_name.clone())))
            .map(Vec::as_slice)
            .unwrap_or_default();
        let columns = columns(report, workload, kernel);
        let mut header: Vec<&str> = vec!["Address", "Source"];
        header.extend(columns.iter().map(|c| c.label.as_str()));
        let copies = module.map_or(1, |m| m.copies.max(1));
        for _ in 0..copies {
            line.clear();
            line.push_str("\"Kernel Name\",");
            quoted(&mut line, workload.display_name());
            // ncu ends the line with an empty cell where the kernel has Source Counters, not
            // where its page is the SASS alone (a report collected without that section).
            line.push_str(if columns.is_empty() { "\n" } else { ",\n" });
            out.write_all(line.as_bytes())?;
            write_row(out, &header)?;
            for instruction in sass {
                line.clear();
                push_instruction(&mut line, instruction, &columns);
                out.write_all(line.as_bytes())?;
            }
            counts.blocks += 1;
            counts.rows += sass.len();
        }
    }
    Ok(counts)
}

/// An instruction's row (its address, text and cells, `\n`), appended to `line`.
pub(super) fn push_instruction(
    line: &mut String,
    instruction: &SassInstruction,
    columns: &[SourceColumn<'_>],
) {
    line.push_str("\"0x");
    line.push_str(&format!("{:x}", instruction.address));
    line.push_str("\",");
    quoted(line, &instruction.text);
    push_cells(line, columns, |c, cell| {
        c.write_cell(instruction.address, cell)
    });
    line.push('\n');
}

/// `,"CELL"` for each column, `write` writing the cell, its quotes doubled.
pub(super) fn push_cells(
    line: &mut String,
    columns: &[SourceColumn<'_>],
    mut write: impl FnMut(&SourceColumn<'_>, &mut String),
) {
    for c in columns {
        line.push_str(",\"");
        let start = line.len();
        write(c, line);
        if line[start..].contains('"') {
            let cell = line.split_off(start).replace('"', "\"\"");
            line.push_str(&cell);
        }
        line.push('"');
    }
}

fn quoted(line: &mut String, text: &str) {
    line.push('"');
    line.push_str(&text.replace('"', "\"\""));
    line.push('"');
}
