//! Everything ncu's Source page shows for some kernels of a report, gathered once: their source
//! data (read from the file, [`read_source_data`]), each module's line-table flag and PTX, and,
//! for the SASS and CUDA views, each function's SASS disassembled from the cubin the report
//! stores (one `nvdisasm` run per architecture, [`sass::disassemble_all`]) and, for the CUDA view,
//! its line table (one `nvdisasm -g` run per module, [`line_table::cubin_line_tables`]). The
//! command line's `--report ncu_source` and Python's `NcuReport.source` both start here.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{elf, line_table, read_source_data, sass};
use crate::load::LoadError;
use crate::trace::ncu::NcuReport;
use crate::trace::ncu_source::{LineTable, NcuSourceData, SassInstruction};

/// The source page's inputs for the kernels asked for.
pub struct SourceInputs {
    pub data: NcuSourceData,
    /// Each function's SASS by (module reference, mangled name); empty unless disassembled.
    pub sass: HashMap<(u64, String), Vec<SassInstruction>>,
    /// Of each module (by reference): whether its cubin has a line table.
    pub lineinfo: HashMap<u64, bool>,
    /// Of each module that has it: its PTX, by line.
    pub ptx: HashMap<u64, Vec<String>>,
    /// Each function's line table by (module reference, mangled name), addresses where the
    /// function was loaded; empty unless asked for ([`Disassemble::WithLineTables`]).
    pub lines: HashMap<(u64, String), LineTable>,
    /// Functions that could not be disassembled, one line each.
    pub warnings: Vec<String>,
}

/// What could not be gathered.
#[derive(Debug, thiserror::Error)]
pub enum SourceInputError {
    #[error(transparent)]
    Read(#[from] LoadError),
    #[error(transparent)]
    Sass(#[from] sass::SassError),
}

/// Which functions' SASS to gather (it needs `nvdisasm`: [`sass::find_nvdisasm`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disassemble {
    /// None: the PTX view, and the CUDA view's warnings.
    Nothing,
    /// Every kernel's function: the SASS view.
    All,
    /// The functions of the modules whose cubin has a line table, with their line tables: the
    /// CUDA view.
    WithLineTables,
    /// [`Self::WithLineTables`] where a kernel's module has a line table, else [`Self::All`]:
    /// the window's Source view, which shows the CUDA source beside the SASS where there is one
    /// (one read of the report either way).
    LineTablesElseAll,
}

/// Gathers the inputs of the kernels `ids` of `report` (read from `path`): the values of the
/// per-instruction `metrics`, and with `disassemble` their functions' SASS.
pub fn source_inputs(
    path: &Path,
    report: &NcuReport,
    ids: &[u32],
    metrics: &HashSet<String>,
    disassemble: bool,
) -> Result<SourceInputs, SourceInputError> {
    let disassemble = if disassemble {
        Disassemble::All
    } else {
        Disassemble::Nothing
    };
    source_inputs_for(path, report, ids, metrics, disassemble)
}

/// [`source_inputs`], with the SASS (and line tables) `disassemble` asks for.
pub fn source_inputs_for(
    path: &Path,
    report: &NcuReport,
    ids: &[u32],
    metrics: &HashSet<String>,
    disassemble: Disassemble,
) -> Result<SourceInputs, SourceInputError> {
    let wanted: HashSet<u32> = ids.iter().copied().collect();
    let data = read_source_data(path, &|id| wanted.contains(&id), metrics)?;
    let mut lineinfo = HashMap::new();
    let mut ptx = HashMap::new();
    for (&reference, module) in &data.modules {
        if let Some(cubin) = &module.cubin {
            lineinfo.insert(reference, sass::cubin_has_lineinfo(cubin));
            if let Some(lines) = sass::cubin_ptx(cubin) {
                ptx.insert(reference, lines);
            }
        }
    }
    let disassemble = match disassemble {
        Disassemble::LineTablesElseAll => {
            let with_lines = data
                .kernels
                .iter()
                .any(|k| k.module.is_some_and(|r| lineinfo.get(&r) == Some(&true)));
            if with_lines {
                Disassemble::WithLineTables
            } else {
                Disassemble::All
            }
        }
        other => other,
    };
    let mut functions: Vec<(u64, String)> = Vec::new();
    if disassemble != Disassemble::Nothing {
        for k in &data.kernels {
            let (Some(r), Some(w)) = (k.module, report.workloads.get(k.workload as usize)) else {
                continue;
            };
            if disassemble == Disassemble::WithLineTables && lineinfo.get(&r) != Some(&true) {
                continue;
            }
            let key = (r, w.mangled_name.clone());
            if !functions.contains(&key) {
                functions.push(key);
            }
        }
    }
    // The functions the kernels call (not inlined) are disassembled with them.
    let callees = callees_of(report, &data, &functions);
    let mut to_disassemble = functions.clone();
    for callee in callees.values().flatten() {
        if !to_disassemble.contains(callee) {
            to_disassemble.push(callee.clone());
        }
    }
    let nvdisasm = if functions.is_empty() {
        None
    } else {
        Some(sass::find_nvdisasm().ok_or(sass::SassError::NoDisassembler)?)
    };
    // Functions whose module kept its cubin and names the function's load address.
    let code: Vec<((u64, String), sass::FunctionCode<'_>)> = to_disassemble
        .iter()
        .filter_map(|(reference, mangled)| {
            let module = data.modules.get(reference)?;
            let cubin = module.cubin.as_ref()?;
            let address = function_address(report, &data, *reference, mangled)?;
            Some((
                (*reference, mangled.clone()),
                sass::FunctionCode {
                    cubin,
                    mangled,
                    address,
                },
            ))
        })
        .collect();
    let (keys, code): (Vec<_>, Vec<_>) = code.into_iter().unzip();
    let listings = match &nvdisasm {
        Some(nvdisasm) => sass::disassemble_all(nvdisasm, &code),
        None => Vec::new(),
    };
    let mut sass = HashMap::new();
    let mut warnings = Vec::new();
    for (key, listing) in keys.into_iter().zip(listings) {
        match listing {
            Ok(listing) => {
                sass.insert(key, listing);
            }
            Err(e) => warnings.push(e.to_string()),
        }
    }
    for (kernel, called) in &callees {
        let mut extra: Vec<SassInstruction> = called
            .iter()
            .filter_map(|c| sass.get(c))
            .flatten()
            .cloned()
            .collect();
        if let Some(own) = sass.get_mut(kernel) {
            own.append(&mut extra);
            own.sort_by_key(|i| i.address);
            own.dedup_by_key(|i| i.address);
        }
    }
    let lines = match (&nvdisasm, disassemble) {
        (Some(nvdisasm), Disassemble::WithLineTables) => {
            function_line_tables(nvdisasm, report, &data, &functions, &mut warnings)
        }
        _ => HashMap::new(),
    };
    Ok(SourceInputs {
        data,
        sass,
        lineinfo,
        ptx,
        lines,
        warnings,
    })
}

/// The line tables of `functions` (by module reference and mangled name), at the addresses the
/// functions were loaded at: one `nvdisasm -g` run per module.
fn function_line_tables(
    nvdisasm: &Path,
    report: &NcuReport,
    data: &NcuSourceData,
    functions: &[(u64, String)],
    warnings: &mut Vec<String>,
) -> HashMap<(u64, String), LineTable> {
    let mut out = HashMap::new();
    let mut modules: Vec<u64> = functions.iter().map(|(r, _)| *r).collect();
    modules.sort_unstable();
    modules.dedup();
    for reference in modules {
        let Some(module) = data.modules.get(&reference) else {
            continue;
        };
        let Some(cubin) = &module.cubin else {
            continue;
        };
        let mut tables = match line_table::cubin_line_tables(nvdisasm, cubin) {
            Ok(tables) => tables,
            Err(e) => {
                warnings.push(e.to_string());
                continue;
            }
        };
        for (r, mangled) in functions.iter().filter(|(r, _)| *r == reference) {
            let Some(base) = function_address(report, data, *r, mangled) else {
                continue;
            };
            let mut table = tables.remove(mangled).unwrap_or_default();
            for (address, _, _) in &mut table.lines {
                *address = address.wrapping_add(base);
            }
            out.insert((*r, mangled.clone()), table);
        }
    }
    out
}

/// Where function `mangled` of module `reference` was loaded: as the module's source message
/// lists it, or (reports of ncu 2020.2–2022.1 list none: 50 of the public collection) as the
/// symbol table of the loaded cubin they keep places it (`source::functions_from_symbols`).
/// Else where a profiled kernel of it ran its code: where a kernel's per-instruction values
/// (`inst_executed`) are keyed by every instruction it has, they make one run 16 bytes apart as
/// long as its code, besides those of the functions it calls: that run; else the lowest PC, the
/// first instruction, which every launch runs.
fn function_address(
    report: &NcuReport,
    data: &NcuSourceData,
    reference: u64,
    mangled: &str,
) -> Option<u64> {
    let module = data.modules.get(&reference)?;
    if let Some(f) = module.functions.iter().find(|f| f.mangled_name == mangled) {
        return Some(f.address);
    }
    let length = module
        .cubin
        .as_ref()
        .and_then(|c| elf::section(c, &format!(".text.{mangled}")))
        .map(|code| code.len() as u64 / 16);
    let kernels = data
        .kernels
        .iter()
        .filter(|k| k.module == Some(reference))
        .filter(|k| {
            report
                .workloads
                .get(k.workload as usize)
                .is_some_and(|w| w.mangled_name == mangled)
        });
    let mut lowest = None;
    for pcs in kernels.filter_map(|k| k.metrics.first()) {
        let pcs: Vec<u64> = pcs.values.iter().map(|&(pc, _)| pc).collect();
        let Some(&first) = pcs.first() else {
            continue;
        };
        lowest = Some(lowest.map_or(first, |l: u64| l.min(first)));
        // Runs of consecutive instructions.
        let mut start = 0;
        for i in 1..=pcs.len() {
            if i == pcs.len() || pcs[i] != pcs[i - 1] + 16 {
                if Some((i - start) as u64) == length {
                    return Some(pcs[start]);
                }
                start = i;
            }
        }
    }
    lowest
}

/// The functions each kernel calls (not inlined: a device function, `vprintf`), by kernel: the
/// module's other functions whose code holds a PC of the kernel's per-instruction values. ncu
/// keys those values by every PC the kernel ran, its callees' too (four public reports).
fn callees_of(
    report: &NcuReport,
    data: &NcuSourceData,
    kernels: &[(u64, String)],
) -> HashMap<(u64, String), Vec<(u64, String)>> {
    let mut out = HashMap::new();
    for (reference, mangled) in kernels {
        let Some(module) = data.modules.get(reference) else {
            continue;
        };
        let Some(cubin) = &module.cubin else {
            continue;
        };
        let mut pcs: Vec<u64> = data
            .kernels
            .iter()
            .filter(|k| k.module == Some(*reference))
            .filter(|k| {
                report
                    .workloads
                    .get(k.workload as usize)
                    .is_some_and(|w| &w.mangled_name == mangled)
            })
            .filter_map(|k| k.metrics.first())
            .flat_map(|m| m.values.iter().map(|&(pc, _)| pc))
            .collect();
        pcs.sort_unstable();
        pcs.dedup();
        let called: Vec<(u64, String)> = module
            .functions
            .iter()
            .filter(|f| &f.mangled_name != mangled)
            .filter(|f| {
                let Some(code) = elf::section(cubin, &format!(".text.{}", f.mangled_name)) else {
                    return false;
                };
                let end = f.address.saturating_add(code.len() as u64);
                let first = pcs.partition_point(|&pc| pc < f.address);
                pcs.get(first).is_some_and(|&pc| pc < end)
            })
            .map(|f| (*reference, f.mangled_name.clone()))
            .collect();
        if !called.is_empty() {
            out.insert((reference.to_owned(), mangled.clone()), called);
        }
    }
    out
}
