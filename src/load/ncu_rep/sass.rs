//! The SASS of a kernel, from the cubin its report stores. A report keeps each module's ELF
//! image, not the instruction text: ncu disassembles the function's `.text.<mangled name>`
//! section when it shows the Source page. Sightline does the same with NVIDIA's disassembler,
//! `nvdisasm` (CUDA toolkit, or `pip install nvidia-cuda-nvdisasm`), on the section's raw
//! instructions at the function's load address, so that branch targets are the addresses ncu
//! prints. The text is then written as ncu 2025.3 writes it: the predicate in a column of six (five
//! before SM 8.0), no `.reuse` flags, no `;`.
//!
//! Also here: the PTX a cubin built with `-lineinfo` carries (`.nv_debug_ptx_txt`) and whether it
//! has a line table (`.debug_line`; the table itself: [`super::line_table`]).

use super::elf;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::trace::ncu_source::SassInstruction;

/// Why a function's SASS could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SassError {
    #[error(
        "nvdisasm (NVIDIA's disassembler) was not found: install the CUDA toolkit or \
         `pip install nvidia-cuda-nvdisasm`, or name it with SIGHTLINE_NVDISASM=PATH"
    )]
    NoDisassembler,
    #[error("the report's cubin has no code for {0}")]
    NoCode(String),
    #[error("nvdisasm failed on {function}: {detail}")]
    Failed { function: String, detail: String },
    #[error("nvdisasm could not print the line table of a cubin: {0}")]
    LineTable(String),
}

/// The SM version a cubin is for (`90`), from its ELF flags: ABI version 8 (CUDA 12.8 and
/// later) keeps it in bits 8–15, earlier ones in bits 0–7.
pub fn cubin_sm(elf: &[u8]) -> Option<u32> {
    let abi = *elf.get(8)?;
    let flags = u32::from_le_bytes(elf.get(0x30..0x34)?.try_into().ok()?);
    let sm = if abi >= 8 {
        (flags >> 8) & 0xff
    } else {
        flags & 0xff
    };
    (sm > 0).then_some(sm)
}

/// The PTX a cubin carries (built with `-lineinfo`): its lines, as ncu numbers them (the
/// section separates lines with NUL).
pub fn cubin_ptx(elf: &[u8]) -> Option<Vec<String>> {
    let text = elf::section(elf, ".nv_debug_ptx_txt")?;
    let text = String::from_utf8_lossy(text);
    let text = text.strip_suffix('\0').unwrap_or(&text);
    Some(text.split('\0').map(str::to_string).collect())
}

/// Whether the cubin has a line table (built with `-lineinfo` or `-G`).
pub fn cubin_has_lineinfo(elf: &[u8]) -> bool {
    elf::section(elf, ".debug_line").is_some()
}

/// The disassembler: `SIGHTLINE_NVDISASM`, else `nvdisasm` on the PATH, under `CUDA_HOME` or
/// `/usr/local/cuda`.
pub fn find_nvdisasm() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SIGHTLINE_NVDISASM") {
        return Some(PathBuf::from(p));
    }
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join("nvdisasm"))
                .collect()
        })
        .unwrap_or_default();
    for home in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(h) = std::env::var_os(home) {
            candidates.push(PathBuf::from(h).join("bin").join("nvdisasm"));
        }
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvdisasm"));
    candidates.into_iter().find(|p| p.is_file())
}

/// A function's index among those asked for, and its code.
type IndexedCode<'a> = (usize, &'a [u8]);

/// A function to disassemble: its cubin, mangled name and load address.
pub struct FunctionCode<'a> {
    pub cubin: &'a [u8],
    pub mangled: &'a str,
    pub address: u64,
}

/// The SASS of each function (in order; an error for one whose cubin has no code for it), with
/// as few runs of `nvdisasm` as there are architectures: its start-up (loading an
/// architecture's tables, a third of a second) would otherwise be paid per function. The
/// functions' code is laid end to end and disassembled twice, at two base addresses: an operand
/// that differs between the two is an address (a branch, call or return target, pc-relative),
/// and is moved to where the function was loaded; everything else prints as it would alone.
pub fn disassemble_all(
    nvdisasm: &std::path::Path,
    functions: &[FunctionCode<'_>],
) -> Vec<Result<Vec<SassInstruction>, SassError>> {
    let mut results: Vec<Option<Result<Vec<SassInstruction>, SassError>>> =
        functions.iter().map(|_| None).collect();
    // (function index, code) by architecture.
    let mut by_sm: Vec<(u32, Vec<IndexedCode<'_>>)> = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        let Some(code) = elf::section(f.cubin, &format!(".text.{}", f.mangled)) else {
            results[i] = Some(Err(SassError::NoCode(f.mangled.to_string())));
            continue;
        };
        let sm = cubin_sm(f.cubin).unwrap_or(90);
        match by_sm.iter_mut().find(|(s, _)| *s == sm) {
            Some((_, list)) => list.push((i, code)),
            None => by_sm.push((sm, vec![(i, code)])),
        }
    }
    for (sm, list) in by_sm {
        let mut blob = Vec::new();
        let mut starts = Vec::with_capacity(list.len());
        for (_, code) in &list {
            starts.push(blob.len() as u64);
            blob.extend_from_slice(code);
            // Instructions are 16 bytes from SM 7.0 on: keep each function aligned.
            blob.resize(blob.len().div_ceil(16) * 16, 0);
        }
        let names: Vec<&str> = list.iter().map(|(i, _)| functions[*i].mangled).collect();
        let listing = run_twice(nvdisasm, sm, &blob);
        for (k, (i, code)) in list.iter().enumerate() {
            let f = &functions[*i];
            let start = starts[k];
            let end = start + code.len() as u64;
            results[*i] = Some(match &listing {
                Err(detail) => Err(SassError::Failed {
                    function: names[k].to_string(),
                    detail: detail.clone(),
                }),
                Ok((low, high)) => Ok(low
                    .iter()
                    .zip(high)
                    .filter(|(l, _)| l.0 >= start && l.0 < end)
                    .map(|(l, h)| SassInstruction {
                        address: f.address + (l.0 - start),
                        text: ncu_text(
                            &relocated(&l.1, &h.1, |v| {
                                f.address.wrapping_add(v.wrapping_sub(start))
                            }),
                            guard_width(sm),
                        ),
                    })
                    .collect()),
            });
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(SassError::NoCode(String::new()))))
        .collect()
}

/// A name in the temp folder for `nvdisasm`'s input, unique to this process and call.
pub(super) fn scratch_file() -> PathBuf {
    static FILES: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "sightline-sass-{}-{}.bin",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The second base address: far from any offset within a blob of code.
const HIGH_BASE: u64 = 0x4000_0000_0000;

/// The listing of `blob` at base 0 and at [`HIGH_BASE`], as (offset, instruction) lines; an
/// arch-specific cubin (sm_90a) has instructions that only `SM90a` decodes, tried second.
#[allow(clippy::type_complexity)]
fn run_twice(
    nvdisasm: &std::path::Path,
    sm: u32,
    blob: &[u8],
) -> Result<(Vec<(u64, String)>, Vec<(u64, String)>), String> {
    let file = scratch_file();
    std::fs::write(&file, blob).map_err(|e| e.to_string())?;
    let run = |arch: &str, base: u64| -> Result<Vec<(u64, String)>, String> {
        let output = Command::new(nvdisasm)
            .args(["-ndf", "-b", arch, "-base", &format!("{base:#x}")])
            .arg(&file)
            .output()
            .map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
        }
        Ok(parse(&String::from_utf8_lossy(&output.stdout))
            .into_iter()
            .map(|(address, text)| (address.wrapping_sub(base), text))
            .collect())
    };
    let mut result = Err("no architecture tried".to_string());
    for arch in [format!("SM{sm}"), format!("SM{sm}a")] {
        // The two runs at once: each is a process of its own.
        let (low, high) = std::thread::scope(|scope| {
            let high = scope.spawn(|| run(&arch, HIGH_BASE));
            let low = run(&arch, 0);
            let high = high
                .join()
                .unwrap_or_else(|_| Err("the disassembler's thread failed".to_string()));
            (low, high)
        });
        result = low.and_then(|low| Ok((low, high?)));
        if result.is_ok() {
            break;
        }
    }
    let _ = std::fs::remove_file(&file);
    result
}

/// `low` (the instruction at base 0) with each hex number that differs in `high` (the same at
/// the high base: an address) replaced by `place(number)`.
fn relocated(low: &str, high: &str, place: impl Fn(u64) -> u64) -> String {
    if low == high {
        return low.to_string();
    }
    let (lows, highs) = (hex_numbers(low), hex_numbers(high));
    if lows.len() != highs.len() {
        return low.to_string();
    }
    let mut out = String::with_capacity(low.len() + 16);
    let mut at = 0;
    for ((start, end, value), (_, _, other)) in lows.into_iter().zip(highs) {
        out.push_str(&low[at..start]);
        if value == other {
            out.push_str(&low[start..end]);
        } else {
            out.push_str(&format!("{:#x}", place(value)));
        }
        at = end;
    }
    out.push_str(&low[at..]);
    out
}

/// Every `0x…` number of a text: (start, end, value).
fn hex_numbers(text: &str) -> Vec<(usize, usize, u64)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'0'
            && bytes[i + 1] == b'x'
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
        {
            let mut j = i + 2;
            while j < bytes.len() && bytes[j].is_ascii_hexdigit() {
                j += 1;
            }
            if let Ok(v) = u64::from_str_radix(&text[i + 2..j], 16) {
                out.push((i, j, v));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// nvdisasm's lines (`/*7fc5577a0b40*/  @P0 EXIT ;`) as (address, instruction).
fn parse(listing: &str) -> Vec<(u64, String)> {
    listing
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix("/*")?;
            let end = rest.find("*/")?;
            let address = u64::from_str_radix(&rest[..end], 16).ok()?;
            Some((address, rest[end + 2..].to_string()))
        })
        .collect()
}

/// The columns ncu gives an instruction's guard predicate on architecture `sm`: 6 from SM 8.0
/// (where `@!UP0`, a uniform predicate, can guard), 5 before (`@!P0`: the public reports of
/// sm_75, ncu 2021.1–2025.1, as NVIDIA's reader prints them).
pub fn guard_width(sm: u32) -> usize {
    if sm < 80 { 5 } else { 6 }
}

/// An instruction as ncu 2025.3 prints it: the predicate left-aligned in `width` columns
/// ([`guard_width`]), no `.reuse` operand flags, no closing `;`. Instructions nvdisasm 13.2 and
/// later print in a newer operand order are put back in ncu's ([`ncu_operand_order`]).
pub fn ncu_text(instruction: &str, width: usize) -> String {
    let mut text = instruction.trim_start().replace(".reuse", "");
    if let Some(t) = text.strip_suffix(';') {
        text = t.strip_suffix(' ').unwrap_or(t).to_string();
    }
    let (predicate, body) = match text.strip_prefix('@') {
        Some(_) => match text.split_once(' ') {
            Some((p, b)) => (p.to_string(), b.to_string()),
            None => (String::new(), text.clone()),
        },
        None => (String::new(), text.clone()),
    };
    let body = ncu_operand_order(&body);
    if predicate.len() < width {
        format!("{predicate:<width$}{body}")
    } else {
        format!("{predicate} {body}")
    }
}

/// The operand order of ncu's disassembly where nvdisasm 13.2 and later differ from it (seen on
/// the shared reports' cuBLAS and PyTorch kernels and on ncu 2025.3.1's pages of the public
/// ones): `LDGSTS [smem], desc[..][..], P` → `LDGSTS desc[..][..], P, [smem]` (sm_90); without a
/// descriptor (sm_8x) the predicate operand first, `LDGSTS [smem], [gmem.64], P0` →
/// `LDGSTS P0, [smem], [gmem.64]`, and the two addresses of a `.BYPASS` copy as one operand
/// (`LDGSTS.E.BYPASS.LTC128B.128 P4, [R184][R42.64]`); a register and target of `RET` and `BRX`
/// separated by a comma (`RET.REL.NODEC R6, 0x…`, `BRX R132, -0x64d0`).
fn ncu_operand_order(body: &str) -> String {
    let Some((opcode, operands)) = body.split_once(' ') else {
        return body.to_string();
    };
    if opcode.starts_with("LDGSTS") {
        let mut parts: Vec<String> = operands.split(", ").map(str::to_string).collect();
        if parts.len() > 1 && parts[0].starts_with('[') && parts[1].starts_with("desc[") {
            let shared = parts.remove(0);
            parts.push(shared);
            return format!("{opcode} {}", parts.join(", "));
        }
        if parts.len() > 1 && parts[0].starts_with('[') && parts[1].starts_with('[') {
            if opcode.contains(".BYPASS") {
                let global = parts.remove(1);
                parts[0].push_str(&global);
            }
            if parts.last().is_some_and(|p| is_predicate(p)) {
                let predicate = parts.pop().unwrap_or_default();
                parts.insert(0, predicate);
            }
            return format!("{opcode} {}", parts.join(", "));
        }
    }
    if (opcode.starts_with("RET") || opcode.starts_with("BRX"))
        && !operands.contains(',')
        && let Some((register, target)) = operands.split_once(' ')
    {
        return format!("{opcode} {register}, {target}");
    }
    body.to_string()
}

/// A predicate operand: `P0`, `!P3`, `PT`.
fn is_predicate(operand: &str) -> bool {
    let p = operand.strip_prefix('!').unwrap_or(operand);
    p == "PT"
        || p.strip_prefix('P')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_print_as_ncu_prints_them() {
        let text = |i: &str| ncu_text(i, guard_width(90));
        assert_eq!(text("LDC R1, c[0x0][0x28] ;"), "      LDC R1, c[0x0][0x28]");
        assert_eq!(text("@P0 EXIT ;"), "@P0   EXIT");
        assert_eq!(
            text("@!P0 BRA 0x7fc5577a0c20 ;"),
            "@!P0  BRA 0x7fc5577a0c20"
        );
        assert_eq!(text("NOP;"), "      NOP");
        assert_eq!(text("MUFU.RSQ R0, -QNAN  ;"), "      MUFU.RSQ R0, -QNAN ");
        assert_eq!(text("FADD R8, R5.reuse, R8 ;"), "      FADD R8, R5, R8");
        assert_eq!(
            text("LDGSTS.E.LTC128B [R45+0x40], desc[UR22][R68.64], P1 ;"),
            "      LDGSTS.E.LTC128B desc[UR22][R68.64], P1, [R45+0x40]"
        );
        // sm_8x, as ncu 2025.3.1's pages of public reports print them.
        assert_eq!(
            text("LDGSTS.E.LTC128B [R190], [R4.64], P0 ;"),
            "      LDGSTS.E.LTC128B P0, [R190], [R4.64]"
        );
        assert_eq!(
            text("LDGSTS.E.BYPASS.LTC128B.128 [R184], [R42.64], P4 ;"),
            "      LDGSTS.E.BYPASS.LTC128B.128 P4, [R184][R42.64]"
        );
        assert_eq!(
            text("@P0 LDGSTS.E.BYPASS.LTC128B.128 [R197], [R190.64] ;"),
            "@P0   LDGSTS.E.BYPASS.LTC128B.128 [R197][R190.64]"
        );
        assert_eq!(
            text("LDGSTS.E.BYPASS.LTC128B.128 [R5+0x80], desc[UR4][R2.64+0x10] ;"),
            "      LDGSTS.E.BYPASS.LTC128B.128 desc[UR4][R2.64+0x10], [R5+0x80]"
        );
        assert_eq!(
            text("RET.REL.NODEC R6 0x7fc5577a0b00 ;"),
            "      RET.REL.NODEC R6, 0x7fc5577a0b00"
        );
        assert_eq!(text("BRX R132 -0x64d0 ;"), "      BRX R132, -0x64d0");
        assert_eq!(
            ncu_text("@!P0 BRA 0x70 ;", guard_width(75)),
            "@!P0 BRA 0x70"
        );
        assert_eq!(
            ncu_text("MOV R1, c[0x0][0x28] ;", guard_width(75)),
            "     MOV R1, c[0x0][0x28]"
        );
    }

    #[test]
    fn a_damaged_elf_has_no_sm() {
        assert_eq!(cubin_sm(&[]), None);
    }

    #[test]
    fn addresses_move_to_where_the_function_was_loaded() {
        let place = |v: u64| 0x7f00_0000_0000 + v - 0x100;
        assert_eq!(
            relocated("BRA 0x180 ;", "BRA 0x400000000180 ;", place),
            "BRA 0x7f0000000080 ;"
        );
        assert_eq!(
            relocated(
                "IMAD.WIDE R4, R5, 0x4, R6 ;",
                "IMAD.WIDE R4, R5, 0x4, R6 ;",
                place
            ),
            "IMAD.WIDE R4, R5, 0x4, R6 ;"
        );
        assert_eq!(
            relocated("BSSY B0, 0x200 ;", "BSSY B0, 0x400000000200 ;", place),
            "BSSY B0, 0x7f0000000100 ;"
        );
    }
}
