//! The line table of a cubin built with `-lineinfo` (or `-G`): the CUDA source file and line of
//! each instruction, as NVIDIA's disassembler prints it (`nvdisasm -g`, which reads the
//! cubin's `.debug_line`), so that Sightline decodes no DWARF itself. `-g` writes
//! `//## File "PATH", line N` before the first instruction of each run of instructions of one
//! line; an instruction of an inlined function is at the inlined function's own file and line
//! (`-gi` would add where it was inlined). Instructions before a function's first such line
//! have no line.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use super::sass::{SassError, scratch_file};
use crate::trace::ncu_source::LineTable;

/// The line table of each function of `cubin` (an ELF image), by mangled name; addresses are
/// offsets from the function's start.
pub fn cubin_line_tables(
    nvdisasm: &Path,
    cubin: &[u8],
) -> Result<HashMap<String, LineTable>, SassError> {
    let file = scratch_file();
    std::fs::write(&file, cubin).map_err(|e| SassError::LineTable(e.to_string()))?;
    let output = Command::new(nvdisasm)
        .args(["-g", "-c", "-ndf"])
        .arg(&file)
        .output();
    let _ = std::fs::remove_file(&file);
    let output = output.map_err(|e| SassError::LineTable(e.to_string()))?;
    if !output.status.success() {
        let detail = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(SassError::LineTable(detail));
    }
    Ok(parse(&String::from_utf8_lossy(&output.stdout)))
}

/// `nvdisasm -g -c`'s listing: a function starts at `.section .text.NAME,"ax",@progbits`, a
/// line at `//## File "PATH", line N`, an instruction is `/*OFFSET*/ TEXT`.
fn parse(listing: &str) -> HashMap<String, LineTable> {
    let mut tables: HashMap<String, LineTable> = HashMap::new();
    let mut function: Option<String> = None;
    // The current (file, line) of the current function.
    let mut at: Option<(String, u32)> = None;
    for line in listing.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix(".section") {
            let section = rest.trim_start().split(',').next().unwrap_or_default();
            function = section.strip_prefix(".text.").map(str::to_string);
            at = None;
        } else if let Some(rest) = line.strip_prefix("//## File \"") {
            at = rest.split_once("\", line ").and_then(|(path, number)| {
                let digits = number.split(|c: char| !c.is_ascii_digit()).next()?;
                // Line 0 is DWARF's "no source line".
                let number = digits.parse::<u32>().ok().filter(|&n| n > 0)?;
                Some((path.to_string(), number))
            });
        } else if let (Some(name), Some((path, number)), Some(offset)) =
            (&function, &at, instruction_offset(line))
        {
            let table = tables.entry(name.clone()).or_default();
            let file = match table.files.iter().position(|f| f == path) {
                Some(i) => i,
                None => {
                    table.files.push(path.clone());
                    table.files.len() - 1
                }
            };
            table.lines.push((offset, file, *number));
        }
    }
    for table in tables.values_mut() {
        table.lines.sort_by_key(|&(offset, _, _)| offset);
    }
    tables
}

/// The offset of an instruction line (`/*0050*/ S2R R2, SR_TID.X ;`).
fn instruction_offset(line: &str) -> Option<u64> {
    let (hex, _) = line.strip_prefix("/*")?.split_once("*/")?;
    u64::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_take_the_line_printed_before_them() {
        let listing = r#"
//--------------------- .text._Z1fPf --------------------------
	.section	.text._Z1fPf,"ax",@progbits
        /*0000*/                   NOP ;
	//## File "/tmp/a.cu", line 54
        /*0010*/                   LDC R1, c[0x0][0x28] ;
	//## File "/usr/include/../b.hpp", line 7
        /*0020*/                   S2UR UR7, SR_CTAID.X ;
.L_x_1:
        /*0030*/               @P0 EXIT ;
	//## File "/tmp/a.cu", line 0
        /*0040*/                   EXIT ;
	.section	.text._Z1gv,"ax",@progbits
        /*0000*/                   EXIT ;
"#;
        let tables = parse(listing);
        let f = &tables["_Z1fPf"];
        assert_eq!(f.files, ["/tmp/a.cu", "/usr/include/../b.hpp"]);
        assert_eq!(f.lines, [(0x10, 0, 54), (0x20, 1, 7), (0x30, 1, 7)]);
        assert!(!tables.contains_key("_Z1gv"), "no line before it");
    }
}
