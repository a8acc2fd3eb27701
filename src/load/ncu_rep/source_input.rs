//! Everything ncu's Source page shows for some kernels of a report, gathered once: their source
//! data (read from the file, [`read_source_data`]), each module's line-table flag and PTX, and,
//! for the SASS and CUDA views, each function's SASS disassembled from the cubin the report
//! stores (one `nvdisasm` run per architecture, [`sass::disassemble_all`]) and, for the CUDA view,
//! its line table (one `nvdisasm -g` run per module, [`line_table::cubin_line_tables`]). The
//! command line's `--report ncu_source` and Python's `NcuReport.source` both start here.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{line_table, read_source_data, sass};
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
    let nvdisasm = if functions.is_empty() {
        None
    } else {
        Some(sass::find_nvdisasm().ok_or(sass::SassError::NoDisassembler)?)
    };
    // Functions whose module kept its cubin and names the function's load address.
    let code: Vec<((u64, String), sass::FunctionCode<'_>)> = functions
        .iter()
        .filter_map(|(reference, mangled)| {
            let module = data.modules.get(reference)?;
            let cubin = module.cubin.as_ref()?;
            let function = module
                .functions
                .iter()
                .find(|f| &f.mangled_name == mangled)?;
            Some((
                (*reference, mangled.clone()),
                sass::FunctionCode {
                    cubin,
                    mangled,
                    address: function.address,
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
    let lines = match (&nvdisasm, disassemble) {
        (Some(nvdisasm), Disassemble::WithLineTables) => {
            function_line_tables(nvdisasm, &data, &functions, &mut warnings)
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
            let Some(function) = module.functions.iter().find(|f| &f.mangled_name == mangled)
            else {
                continue;
            };
            let mut table = tables.remove(mangled).unwrap_or_default();
            for (address, _, _) in &mut table.lines {
                *address = address.wrapping_add(function.address);
            }
            out.insert((*r, mangled.clone()), table);
        }
    }
    out
}
