//! Reads what a report's Source page shows, in one pass over the file: every module's source
//! messages (cubin, functions, imported CUDA files) and, for the kernels asked for, the
//! per-instruction values of the metrics asked for (the Source Counters' list, keyed by PC).
//! The main load leaves all of this in the file; a page that needs it reads it here.

use std::collections::HashSet;
use std::path::Path;

use prost::Message;

use super::source_messages::{ProfileSource, SourceResult};
use super::{Stop, elf, instances, open_blocks};
use crate::load::LoadError;
use crate::trace::ncu::ScalarValue;
use crate::trace::ncu_source::{
    KernelSource, NcuFunction, NcuModule, NcuSourceData, NcuSourceFile, PcValues,
};

/// The source data of the kernels whose IDs `wanted` accepts, with the per-instruction values of
/// the metrics named in `metrics` (the others are not decoded).
pub fn read_source_data(
    path: &Path,
    wanted: &dyn Fn(u32) -> bool,
    metrics: &HashSet<String>,
) -> Result<NcuSourceData, LoadError> {
    let (mut blocks, _, _) = open_blocks(path)?;
    let mut data = NcuSourceData::default();
    // The current block's string table (a block with an empty one uses the previous one's).
    let mut names: Vec<String> = Vec::new();
    let mut workload = 0u32;
    loop {
        let block = match blocks.raw_block() {
            Ok(b) => b,
            Err(Stop::End) => break,
            // The page shows what was read before the damage (the main load has said so).
            Err(Stop::Damaged(_)) => break,
        };
        // Each block's strings extend the report's table (see `Converter::block_header`).
        if let Some(table) = &block.header.string_table {
            names.extend(table.strings.iter().cloned());
        }
        let sources = block.header.num_sources.unwrap_or(0) as usize;
        let results = block.header.num_results.unwrap_or(0) as usize;
        let payload = &block.payload;
        let mut at = 0usize;
        for index in 0..sources.saturating_add(results) {
            let Some(len) = payload.get(at..at + 4) else {
                break;
            };
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let start = at + 4;
            let Some(end) = start.checked_add(len).filter(|&e| e <= payload.len()) else {
                break;
            };
            at = end;
            let bytes = payload.slice(start..end);
            if index < sources {
                if let Ok(source) = ProfileSource::decode(bytes) {
                    add_module(&mut data, source);
                }
                continue;
            }
            let id = workload;
            workload += 1;
            if !wanted(id) {
                continue;
            }
            let Ok(result) = SourceResult::decode(bytes) else {
                continue;
            };
            data.kernels.push(kernel(id, &result, &names, metrics));
        }
    }
    for module in data.modules.values_mut() {
        functions_from_symbols(module);
    }
    Ok(data)
}

/// The functions of a module that lists none (reports of ncu 2020.2–2022.1): those its cubin's
/// symbol table places, as ncu kept the image after loading it (a function's symbol holds its
/// load address; a cubin as built has 0, and names no place).
fn functions_from_symbols(module: &mut NcuModule) {
    let Some(cubin) = module
        .cubin
        .as_ref()
        .filter(|_| module.functions.is_empty())
    else {
        return;
    };
    module.functions = elf::function_symbols(cubin)
        .into_iter()
        .filter(|(_, address)| *address != 0)
        .map(|(mangled_name, address)| NcuFunction {
            mangled_name,
            address,
        })
        .collect();
}

fn add_module(data: &mut NcuSourceData, source: ProfileSource) {
    let Some(reference) = source.reference else {
        return;
    };
    let module: &mut NcuModule = data.modules.entry(reference).or_default();
    module.copies += 1;
    if source.binary.is_some() {
        module.cubin = source.binary;
    }
    if source.sm_revision.is_some() {
        module.sm_revision = source.sm_revision;
    }
    for f in source.files.into_iter().flat_map(|f| f.files) {
        let path = f.path.unwrap_or_default();
        if module.files.iter().any(|known| known.path == path) {
            continue;
        }
        let text = String::from_utf8_lossy(&f.text.unwrap_or_default()).into_owned();
        module.files.push(NcuSourceFile { path, text });
    }
    for f in source.functions.into_iter().flat_map(|f| f.functions) {
        let function = NcuFunction {
            mangled_name: f.mangled_name.unwrap_or_default(),
            address: f.address.unwrap_or(0),
        };
        if !module.functions.contains(&function) {
            module.functions.push(function);
        }
    }
}

fn kernel(
    id: u32,
    result: &SourceResult,
    names: &[String],
    wanted: &HashSet<String>,
) -> KernelSource {
    let mut metrics = Vec::new();
    for m in &result.metric_results {
        let Some(name) = m.name_id.and_then(|i| names.get(i as usize)) else {
            continue;
        };
        if m.metric_value_list.is_empty() || !wanted.contains(name) {
            continue;
        }
        let Ok(list) = instances::decode_elements(&m.metric_value_list) else {
            continue;
        };
        let mut values: Vec<(u64, f64)> = list
            .iter()
            .filter_map(|i| {
                let pc = match i.correlation.as_ref()? {
                    ScalarValue::U64(v) => *v,
                    ScalarValue::U32(v) => u64::from(*v),
                    _ => return None,
                };
                Some((pc, i.value.as_f64()?))
            })
            .collect();
        values.sort_by_key(|&(pc, _)| pc);
        metrics.push(PcValues {
            metric: name.clone(),
            values,
        });
    }
    KernelSource {
        workload: id,
        module: result.source.as_ref().and_then(|s| s.reference),
        metrics,
    }
}
