//! The parts of a cubin (an ELF64 image, as a report stores a module) that Sightline reads: a
//! section's bytes by name, and the functions its symbol table names with their values. Every
//! offset is checked: a damaged image gives `None` or fewer symbols, never a panic.

/// A section header's fields that are read here.
struct Section {
    name: u32,
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

/// An ELF64 image's section headers.
struct Elf<'a> {
    bytes: &'a [u8],
    sections: Vec<Section>,
    names: usize,
}

const SYMTAB: u32 = 2;
const STT_FUNC: u8 = 2;

impl<'a> Elf<'a> {
    fn parse(bytes: &'a [u8]) -> Option<Self> {
        if !bytes.starts_with(b"\x7fELF") || bytes.get(4) != Some(&2) {
            return None;
        }
        let u16_at = |at: usize| {
            Some(usize::from(u16::from_le_bytes(
                bytes.get(at..at + 2)?.try_into().ok()?,
            )))
        };
        let shoff = usize::try_from(u64_at(bytes, 0x28)?).ok()?;
        let (entsize, count, names) = (u16_at(0x3a)?, u16_at(0x3c)?, u16_at(0x3e)?);
        let sections = (0..count)
            .map(|i| {
                let h = shoff.checked_add(i.checked_mul(entsize)?)?;
                Some(Section {
                    name: u32_at(bytes, h)?,
                    kind: u32_at(bytes, h + 4)?,
                    offset: usize::try_from(u64_at(bytes, h + 0x18)?).ok()?,
                    size: usize::try_from(u64_at(bytes, h + 0x20)?).ok()?,
                    link: u32_at(bytes, h + 0x28)? as usize,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Elf {
            bytes,
            sections,
            names,
        })
    }

    fn data(&self, s: &Section) -> Option<&'a [u8]> {
        self.bytes.get(s.offset..s.offset.checked_add(s.size)?)
    }

    fn section_name(&self, s: &Section) -> Option<&'a [u8]> {
        let names = self.data(self.sections.get(self.names)?)?;
        c_string(names, s.name as usize)
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The NUL-terminated string at `at` of a string table.
fn c_string(table: &[u8], at: usize) -> Option<&[u8]> {
    let s = table.get(at..)?;
    Some(&s[..s.iter().position(|&b| b == 0)?])
}

/// A section of an ELF64 image by name: its bytes.
pub fn section<'a>(elf: &'a [u8], wanted: &str) -> Option<&'a [u8]> {
    let image = Elf::parse(elf)?;
    let found = image
        .sections
        .iter()
        .find(|s| image.section_name(s) == Some(wanted.as_bytes()))?;
    image.data(found)
}

/// The functions the image's symbol tables name (`STT_FUNC`), each with its value: the offset
/// in its section in a cubin as built, the address it was loaded at in the cubins that ncu
/// 2020.2–2022.1 kept (the modules of those reports list no functions of their own).
pub fn function_symbols(elf: &[u8]) -> Vec<(String, u64)> {
    let Some(image) = Elf::parse(elf) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in image.sections.iter().filter(|s| s.kind == SYMTAB) {
        let (Some(symbols), Some(strings)) = (
            image.data(table),
            image.sections.get(table.link).and_then(|s| image.data(s)),
        ) else {
            continue;
        };
        // Elf64_Sym: name u32, info u8, other u8, shndx u16, value u64, size u64.
        for symbol in symbols.chunks_exact(24) {
            if symbol[4] & 0xf != STT_FUNC {
                continue;
            }
            let (Some(name), Some(value)) = (
                u32_at(symbol, 0).and_then(|at| c_string(strings, at as usize)),
                u64_at(symbol, 8),
            ) else {
                continue;
            };
            out.push((String::from_utf8_lossy(name).into_owned(), value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_image_has_no_sections_or_symbols() {
        assert_eq!(section(b"\x7fELF\x02", ".text.f"), None);
        assert_eq!(section(&[], ".text.f"), None);
        assert!(function_symbols(b"\x7fELF\x02\x01\x01").is_empty());
        let mut truncated = b"\x7fELF\x02\x01\x01".to_vec();
        truncated.resize(0x40, 0xff);
        assert!(function_symbols(&truncated).is_empty());
    }
}
