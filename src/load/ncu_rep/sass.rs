//! The SASS of a kernel, from the cubin its report stores. A report keeps each module's ELF
//! image, not the instruction text: ncu disassembles the function's `.text.<mangled name>`
//! section when it shows the Source page. Sightline does the same with NVIDIA's disassembler,
//! `nvdisasm` (CUDA toolkit, or `pip install nvidia-cuda-nvdisasm`), on the section's raw
//! instructions at the function's load address, so that branch targets are the addresses ncu
//! prints. The text is then written as ncu 2025.3 writes it: the predicate in a column of six,
//! no `.reuse` flags, no `;`.
//!
//! Also here: the PTX a cubin built with `-lineinfo` carries (`.nv_debug_ptx_txt`) and whether it
//! has a line table (`.debug_line`).

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
}

/// A section of an ELF64 image by name: its bytes.
pub fn elf_section<'a>(elf: &'a [u8], wanted: &str) -> Option<&'a [u8]> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    if !elf.starts_with(b"\x7fELF") || elf.get(4) != Some(&2) {
        return None;
    }
    let shoff = usize::try_from(u64_at(0x28)?).ok()?;
    let entsize = usize::from(u16_at(0x3a)?);
    let count = usize::from(u16_at(0x3c)?);
    let strndx = usize::from(u16_at(0x3e)?);
    let header = |i: usize| shoff.checked_add(i.checked_mul(entsize)?);
    let range = |i: usize| -> Option<(usize, usize)> {
        let h = header(i)?;
        let offset = usize::try_from(u64_at(h + 0x18)?).ok()?;
        let size = usize::try_from(u64_at(h + 0x20)?).ok()?;
        Some((offset, offset.checked_add(size)?))
    };
    let (names_start, names_end) = range(strndx)?;
    let names = elf.get(names_start..names_end)?;
    for i in 0..count {
        let name_at = u32_at(header(i)?)? as usize;
        let name = names.get(name_at..)?;
        let name = &name[..name.iter().position(|&b| b == 0)?];
        if name == wanted.as_bytes() {
            let (start, end) = range(i)?;
            return elf.get(start..end);
        }
    }
    None
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
    let text = elf_section(elf, ".nv_debug_ptx_txt")?;
    let text = String::from_utf8_lossy(text);
    let text = text.strip_suffix('\0').unwrap_or(&text);
    Some(text.split('\0').map(str::to_string).collect())
}

/// Whether the cubin has a line table (built with `-lineinfo` or `-G`).
pub fn cubin_has_lineinfo(elf: &[u8]) -> bool {
    elf_section(elf, ".debug_line").is_some()
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

/// The SASS of function `mangled` (loaded at `address`) of a cubin, disassembled by `nvdisasm`.
pub fn disassemble(
    nvdisasm: &std::path::Path,
    elf: &[u8],
    mangled: &str,
    address: u64,
) -> Result<Vec<SassInstruction>, SassError> {
    let code = elf_section(elf, &format!(".text.{mangled}"))
        .ok_or_else(|| SassError::NoCode(mangled.to_string()))?;
    let failed = |detail: String| SassError::Failed {
        function: mangled.to_string(),
        detail,
    };
    static FILES: AtomicU64 = AtomicU64::new(0);
    let file = std::env::temp_dir().join(format!(
        "sightline-sass-{}-{}.bin",
        std::process::id(),
        FILES.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, code).map_err(|e| failed(e.to_string()))?;
    let sm = cubin_sm(elf).unwrap_or(90);
    // An arch-specific cubin (sm_90a) has instructions that only `SM90a` decodes.
    let mut result = Err(failed("no architecture tried".into()));
    for arch in [format!("SM{sm}"), format!("SM{sm}a")] {
        let output = Command::new(nvdisasm)
            .args(["-b", &arch, "-base", &format!("{address:#x}")])
            .arg(&file)
            .output();
        result = match output {
            Ok(o) if o.status.success() => Ok(parse(&String::from_utf8_lossy(&o.stdout))),
            Ok(o) => Err(failed(
                String::from_utf8_lossy(&o.stderr).trim().to_string(),
            )),
            Err(e) => Err(failed(e.to_string())),
        };
        if result.is_ok() {
            break;
        }
    }
    let _ = std::fs::remove_file(&file);
    result
}

/// nvdisasm's lines (`/*7fc5577a0b40*/  @P0 EXIT ;`) as ncu's instructions.
fn parse(listing: &str) -> Vec<SassInstruction> {
    listing
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix("/*")?;
            let end = rest.find("*/")?;
            let address = u64::from_str_radix(&rest[..end], 16).ok()?;
            Some(SassInstruction {
                address,
                text: ncu_text(&rest[end + 2..]),
            })
        })
        .collect()
}

/// An instruction as ncu 2025.3 prints it: the predicate left-aligned in six columns, no
/// `.reuse` operand flags, no closing `;`. Two instructions nvdisasm 13.2 and later print in a
/// newer operand order are put back in ncu 2025.3's (seen on the shared reports' cuBLAS and
/// PyTorch kernels): `LDGSTS [smem], desc[..][..], P` → `LDGSTS desc[..][..], P, [smem]`, and
/// `RET.REL.NODEC R6 0x…` → `RET.REL.NODEC R6, 0x…`.
pub fn ncu_text(instruction: &str) -> String {
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
    if predicate.len() < 6 {
        format!("{predicate:<6}{body}")
    } else {
        format!("{predicate} {body}")
    }
}

fn ncu_operand_order(body: &str) -> String {
    let Some((opcode, operands)) = body.split_once(' ') else {
        return body.to_string();
    };
    if opcode.starts_with("LDGSTS") {
        let mut parts: Vec<&str> = operands.split(", ").collect();
        if parts.len() > 1 && parts[0].starts_with('[') {
            let shared = parts.remove(0);
            parts.push(shared);
            return format!("{opcode} {}", parts.join(", "));
        }
    }
    if opcode.starts_with("RET")
        && !operands.contains(',')
        && let Some((register, target)) = operands.split_once(' ')
    {
        return format!("{opcode} {register}, {target}");
    }
    body.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_print_as_ncu_prints_them() {
        assert_eq!(
            ncu_text("LDC R1, c[0x0][0x28] ;"),
            "      LDC R1, c[0x0][0x28]"
        );
        assert_eq!(ncu_text("@P0 EXIT ;"), "@P0   EXIT");
        assert_eq!(
            ncu_text("@!P0 BRA 0x7fc5577a0c20 ;"),
            "@!P0  BRA 0x7fc5577a0c20"
        );
        assert_eq!(ncu_text("NOP;"), "      NOP");
        assert_eq!(
            ncu_text("MUFU.RSQ R0, -QNAN  ;"),
            "      MUFU.RSQ R0, -QNAN "
        );
        assert_eq!(ncu_text("FADD R8, R5.reuse, R8 ;"), "      FADD R8, R5, R8");
        assert_eq!(
            ncu_text("LDGSTS.E.LTC128B [R45+0x40], desc[UR22][R68.64], P1 ;"),
            "      LDGSTS.E.LTC128B desc[UR22][R68.64], P1, [R45+0x40]"
        );
        assert_eq!(
            ncu_text("RET.REL.NODEC R6 0x7fc5577a0b00 ;"),
            "      RET.REL.NODEC R6, 0x7fc5577a0b00"
        );
    }

    #[test]
    fn a_damaged_elf_has_no_sections() {
        assert_eq!(elf_section(b"\x7fELF\x02", ".text.f"), None);
        assert_eq!(elf_section(&[], ".text.f"), None);
        assert_eq!(cubin_sm(&[]), None);
    }
}
