//! The Source page's CUDA view (`--print-source cuda,sass`) of a kernel whose cubin has a line
//! table, as ncu 2025.3.1 prints it. For each CUDA source file the kernel's instructions come
//! from (in the order the report stores the files): a `"File Path"` line, a `"Function Name"`
//! line, the header (`Line No`, `Source`, `Address`, `Source`, then the kernel's Source Counters
//! columns), then each line that has instructions, by line number: a row with the line's number,
//! its text (trimmed) and its counters over its instructions
//! ([`SourceColumn::write_line_cell`]: sums, the `Avg.` columns too), then the line's
//! instructions as the SASS view prints them, by address. Lines without instructions are not
//! printed.
//!
//! Two quirks of ncu are kept: a line's instructions are listed once per source message of the
//! kernel's module in the report (twice on the shared report, as the SASS view prints a kernel
//! twice; the line's counters count each instruction once), and a `...` row (every counter `-`)
//! stands between two listed instructions where the second neither follows the first in the
//! function nor repeats it (a gap in the line's code, and where the list starts over).
//!
//! Checked cell for cell against ncu's page for `ncu_lineinfo` (`tests/ncu_source.rs`). Not
//! checked, as no shared report has them: lines of a file the report does not hold (not
//! printed, the kernel counted in [`SourcePageCounts::cuda_not_printed`]), several files in one
//! kernel (an inlined function of a header), and quotes in a source line (written as they are,
//! as ncu writes a PTX line).

use std::io::{self, Write};

use super::source::{SourcePageCounts, push_cells, push_instruction};
use super::write_row;
use crate::analysis::ncu::source::{SourceColumn, cuda_lines};
use crate::trace::ncu_source::{LineTable, NcuModule, SassInstruction};

/// What the CUDA view of one kernel shows.
pub struct Kernel<'a> {
    /// The "Function Name".
    pub name: &'a str,
    pub module: &'a NcuModule,
    /// Its function's SASS, by address.
    pub sass: &'a [SassInstruction],
    /// Its function's line table.
    pub table: &'a LineTable,
    pub columns: &'a [SourceColumn<'a>],
}

/// Writes the kernel's CUDA view.
pub fn write_kernel(
    kernel: &Kernel<'_>,
    out: &mut dyn Write,
    counts: &mut SourcePageCounts,
) -> io::Result<()> {
    let module = kernel.module;
    let (lines, missing) = cuda_lines(module, kernel.sass, kernel.table);
    counts.cuda_not_printed += usize::from(missing);
    let mut header: Vec<&str> = vec!["Line No", "Source", "Address", "Source"];
    header.extend(kernel.columns.iter().map(|c| c.label.as_str()));
    let copies = module.copies.max(1);
    let mut row = String::with_capacity(1 << 12);
    let mut file_lines: Vec<&str> = Vec::new();
    let mut current_file = None;
    for line in &lines {
        let (file, number, instructions) = (line.file, line.number, &line.instructions);
        if current_file != Some(file) {
            current_file = Some(file);
            let source = &module.files[file];
            write_row(out, &["File Path", source.path.as_str()])?;
            write_row(out, &["Function Name", kernel.name])?;
            write_row(out, &header)?;
            file_lines = source.text.lines().collect();
            counts.blocks += 1;
        }
        let text = (number as usize)
            .checked_sub(1)
            .and_then(|i| file_lines.get(i))
            .map_or("", |t| t.trim());
        let pcs: Vec<u64> = instructions
            .iter()
            .map(|&i| kernel.sass[i].address)
            .collect();
        row.clear();
        row.push('"');
        row.push_str(itoa::Buffer::new().format(number));
        // ncu writes a source line's text as it is (its quotes not doubled), as a PTX line.
        row.push_str("\",\"");
        row.push_str(text);
        row.push_str("\",\"-\",\"-\"");
        push_cells(&mut row, kernel.columns, |c, cell| {
            c.write_line_cell(&pcs, cell)
        });
        row.push('\n');
        out.write_all(row.as_bytes())?;
        counts.lines += 1;
        let mut previous: Option<usize> = None;
        for _ in 0..copies {
            for &index in instructions {
                row.clear();
                if previous.is_some_and(|p| index != p && index != p + 1) {
                    row.push_str("\"\",\"\",\"...\",\"...\"");
                    push_cells(&mut row, kernel.columns, |_, cell| cell.push('-'));
                    row.push('\n');
                }
                row.push_str("\"\",\"\",");
                push_instruction(&mut row, &kernel.sass[index], kernel.columns);
                out.write_all(row.as_bytes())?;
                counts.rows += 1;
                previous = Some(index);
            }
        }
    }
    Ok(())
}
