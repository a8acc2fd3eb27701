//! `sightline summary REPORT.ncu-rep --report ncu_source [--print-source sass|cuda,sass|ptx]
//! [--kernel REGEX] [--launch N]`: ncu's Source page. Reads the kernels' source data in a pass
//! over the report, disassembles each function once (with `nvdisasm`, as ncu disassembles the
//! cubin it stores), then writes the page.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{Context, Result, bail};

use super::{SummaryArgs, load_for_cli};
use crate::analysis::ncu::source::{KernelSelection, source_metric_names};
use crate::export::ncu_pages::source::{SourceInput, SourceView, write};
use crate::load::ncu_rep::{read_source_data, sass};
use crate::trace::Needs;

/// The `--report` name of the page.
pub const NAME: &str = "ncu_source";

pub fn print(args: &SummaryArgs) -> Result<i32> {
    let selection =
        KernelSelection::parse(args.kernel.as_deref(), args.launch).map_err(anyhow::Error::msg)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for path in &args.traces {
        let trace = load_for_cli(path, Needs::ALL)?;
        let Some(report) = trace.ncu.as_deref() else {
            bail!(
                "{}: ncu_source is a page of an Nsight Compute report (.ncu-rep); this is an \
                 Nsight Systems trace",
                path.display()
            );
        };
        let ids = selection.select(report);
        let wanted: std::collections::HashSet<u32> = ids.iter().copied().collect();
        let data = read_source_data(
            path,
            &|id| wanted.contains(&id),
            &source_metric_names(report),
        )
        .with_context(|| format!("{}: reading the source data", path.display()))?;
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
        if args.print_source == SourceView::Sass {
            for k in &data.kernels {
                let (Some(r), Some(w)) = (k.module, report.workloads.get(k.workload as usize))
                else {
                    continue;
                };
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
        let mut disassembled = Vec::new();
        for (key, listing) in keys.into_iter().zip(listings) {
            match listing {
                Ok(listing) => disassembled.push((key, listing)),
                Err(e) => eprintln!("warning: {}: {e}", path.display()),
            }
        }
        let sass_by_function: HashMap<_, _> = disassembled.into_iter().collect();
        if args.traces.len() > 1 {
            writeln!(out, "# {}", path.display())?;
        }
        let input = SourceInput {
            data: &data,
            sass: &sass_by_function,
            lineinfo: &lineinfo,
            ptx: &ptx,
        };
        let counts = write(report, &input, args.print_source, &ids, &mut out)?;
        if counts.cuda_not_printed > 0 {
            eprintln!(
                "note: {}: {} kernels have a line table; their CUDA source view is not printed \
                 yet (--print-source sass prints their SASS)",
                path.display(),
                counts.cuda_not_printed
            );
        }
    }
    out.flush()?;
    Ok(0)
}
