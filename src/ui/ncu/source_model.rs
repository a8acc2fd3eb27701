//! What the Source view ([`super::source`]) shows of one kernel, gathered once on a worker
//! thread: its SASS with every Source Counters column's value per instruction (the columns and
//! values of [`crate::analysis::ncu::source::columns`], the command line's `--report
//! ncu_source` page's one definition), each column's largest value (for the heat colours), and
//! with a line table its CUDA source lines, grouped as the CUDA view groups them
//! ([`cuda_lines`]), with their cells as that page prints them. No egui here.

use std::collections::HashMap;
use std::path::Path;

use crate::analysis::ncu::source::{ColumnKind, columns, cuda_lines, source_metric_names};
use crate::load::ncu_rep::{Disassemble, SourceInputs, source_inputs_for};
use crate::trace::ncu::NcuReport;
use crate::trace::ncu_source::SassInstruction;

/// The column a view sorts by when opened: ncu-ui's hottest first.
pub const DEFAULT_SORT_LABEL: &str = "Warp Stall Sampling (All Samples)";
/// The column an uncoalesced global access rule points at.
pub const GLOBAL_EXCESS_LABEL: &str = "L2 Theoretical Sectors Global Excessive";
/// The column an uncoalesced shared access rule points at.
pub const SHARED_EXCESS_LABEL: &str = "L1 Wavefronts Shared Excessive";

/// How a view is asked to sort once its kernel's data is in (from the details page's links).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SortRequest {
    /// By the sampled stall reason with the most samples over the kernel.
    LargestStall,
    /// By the column with this label.
    Column(String),
}

/// A column's name and how its values print.
#[derive(Debug, Clone)]
pub struct ColumnInfo {
    pub label: String,
    pub metric: String,
    pub kind: ColumnKind,
    /// One sampled stall reason (all samples), not a sum nor a not-issued count.
    pub stall_reason: bool,
}

/// A CUDA source line that has instructions.
#[derive(Debug, Clone)]
pub struct LineRow {
    /// Index into [`KernelSourceModel::files`].
    pub file: usize,
    /// From 1.
    pub number: u32,
    /// Indices into the instructions.
    pub instructions: Vec<usize>,
    /// Each column's cell as the CUDA view prints it.
    pub cells: Vec<String>,
    /// Each number column's sum over the line's instructions (0 for the others).
    pub sums: Vec<f64>,
}

/// A stored CUDA source file of the kernel's module.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: String,
    pub lines: Vec<String>,
}

/// One kernel's Source page as values.
#[derive(Debug, Clone)]
pub struct KernelSourceModel {
    /// Index of the kernel in the report's workloads.
    pub workload: usize,
    pub columns: Vec<ColumnInfo>,
    /// Its function's SASS, by address.
    pub instructions: Vec<SassInstruction>,
    /// `values[column][instruction]`: the column's value at the instruction (`None`: no value).
    pub values: Vec<Vec<Option<f64>>>,
    /// Each column's largest value over the instructions (0 for a memory column).
    pub max: Vec<f64>,
    /// The source files the lines are in (empty without a line table).
    pub files: Vec<SourceFile>,
    /// Lines with instructions, by file then number.
    pub lines: Vec<LineRow>,
    /// Each column's largest line sum.
    pub line_max: Vec<f64>,
    /// The line (index into `lines`) of each instruction that has one.
    pub line_of: Vec<Option<usize>>,
    /// Why the CUDA source is not shown (no line table, files not in the report, …).
    pub cuda_note: Option<String>,
}

impl KernelSourceModel {
    /// The model of workload `index` of `report` from the gathered `inputs`; an error names what
    /// is missing (no Source Counters, no SASS).
    pub fn build(report: &NcuReport, index: usize, inputs: &SourceInputs) -> Result<Self, String> {
        let workload = report
            .workloads
            .get(index)
            .ok_or_else(|| format!("the report has no kernel {index}"))?;
        let kernel = inputs.data.kernel(workload.id).ok_or(
            "the report holds no per-instruction data for this kernel (profile it with the \
             SourceCounters section, e.g. --set full)",
        )?;
        let module_ref = kernel.module;
        let key = module_ref.map(|r| (r, workload.mangled_name.clone()));
        let sass = key.as_ref().and_then(|k| inputs.sass.get(k));
        let Some(sass) = sass else {
            let why = inputs
                .warnings
                .first()
                .cloned()
                .unwrap_or_else(|| "the report stores no code (cubin) for it".to_string());
            return Err(format!("No SASS for this kernel: {why}"));
        };
        let source_columns = columns(report, workload, kernel);
        let columns: Vec<ColumnInfo> = source_columns
            .iter()
            .map(|c| ColumnInfo {
                label: c.label.clone(),
                metric: c.metric.clone(),
                kind: c.kind,
                stall_reason: c.is_stall()
                    && !c.metric.starts_with("group:")
                    && !c.metric.contains("not_issued"),
            })
            .collect();
        let values: Vec<Vec<Option<f64>>> = source_columns
            .iter()
            .map(|c| sass.iter().map(|i| c.value(i.address)).collect())
            .collect();
        let max = columns
            .iter()
            .zip(&values)
            .map(|(c, v)| match c.kind {
                ColumnKind::Number => v.iter().flatten().fold(0.0, |m: f64, &x| m.max(x)),
                _ => 0.0,
            })
            .collect();
        let mut model = KernelSourceModel {
            workload: index,
            columns,
            instructions: sass.clone(),
            values,
            max,
            files: Vec::new(),
            lines: Vec::new(),
            line_max: Vec::new(),
            line_of: vec![None; sass.len()],
            cuda_note: None,
        };
        let module = module_ref.and_then(|r| inputs.data.modules.get(&r));
        let table = key.as_ref().and_then(|k| inputs.lines.get(k));
        let has_table = module_ref.and_then(|r| inputs.lineinfo.get(&r)) == Some(&true);
        match (module, table) {
            (Some(module), Some(table)) if !table.lines.is_empty() => {
                let (lines, missing) = cuda_lines(module, sass, table);
                if missing {
                    model.cuda_note = Some(
                        "Some lines are in source files the report does not hold (profile with \
                         --import-source yes)."
                            .to_string(),
                    );
                }
                // The files the lines are in, renumbered in the order met.
                let mut file_index: HashMap<usize, usize> = HashMap::new();
                for line in &lines {
                    let next = file_index.len();
                    let shown = *file_index.entry(line.file).or_insert(next);
                    if shown == model.files.len()
                        && let Some(f) = module.files.get(line.file)
                    {
                        model.files.push(SourceFile {
                            path: f.path.clone(),
                            lines: f.text.lines().map(|l| l.trim_end().to_string()).collect(),
                        });
                    }
                }
                for line in lines {
                    let pcs: Vec<u64> =
                        line.instructions.iter().map(|&i| sass[i].address).collect();
                    let mut cells = Vec::with_capacity(source_columns.len());
                    let mut sums = Vec::with_capacity(source_columns.len());
                    for c in &source_columns {
                        let mut cell = String::new();
                        c.write_line_cell(&pcs, &mut cell);
                        cells.push(cell);
                        sums.push(match c.kind {
                            ColumnKind::Number => {
                                pcs.iter().map(|&pc| c.value(pc).unwrap_or(0.0)).sum()
                            }
                            _ => 0.0,
                        });
                    }
                    let row = model.lines.len();
                    for &i in &line.instructions {
                        model.line_of[i] = Some(row);
                    }
                    model.lines.push(LineRow {
                        file: file_index.get(&line.file).copied().unwrap_or(0),
                        number: line.number,
                        instructions: line.instructions,
                        cells,
                        sums,
                    });
                }
                model.line_max = (0..model.columns.len())
                    .map(|c| model.lines.iter().fold(0.0, |m: f64, l| m.max(l.sums[c])))
                    .collect();
            }
            _ if has_table => {
                model.cuda_note = Some(
                    inputs
                        .warnings
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "The line table could not be read.".to_string()),
                )
            }
            _ => {
                model.cuda_note = Some(
                    "No CUDA source: the kernel was not built with -lineinfo (build with nvcc \
                     -lineinfo and profile with ncu --import-source yes)."
                        .to_string(),
                )
            }
        }
        Ok(model)
    }

    /// The column with this label.
    pub fn column(&self, label: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.label == label)
    }

    /// The column a request asks for, once the data is in.
    pub fn resolve(&self, request: &SortRequest) -> Option<usize> {
        match request {
            SortRequest::LargestStall => self.largest_stall(),
            SortRequest::Column(label) => self.column(label),
        }
    }

    /// The sampled stall reason with the most samples over the kernel.
    pub fn largest_stall(&self) -> Option<usize> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.stall_reason)
            .map(|(i, _)| (i, self.total(i)))
            .filter(|(_, total)| *total > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// A column's sum over the instructions.
    pub fn total(&self, column: usize) -> f64 {
        self.values
            .get(column)
            .map_or(0.0, |v| v.iter().flatten().sum())
    }

    /// The instruction's value in `column`, 0 where it has none.
    pub fn number(&self, column: usize, instruction: usize) -> f64 {
        self.values
            .get(column)
            .and_then(|v| v.get(instruction).copied().flatten())
            .unwrap_or(0.0)
    }

    /// The cell as ncu prints it.
    pub fn write_cell(&self, column: usize, instruction: usize, out: &mut String) {
        let (Some(info), Some(values)) = (self.columns.get(column), self.values.get(column)) else {
            return;
        };
        let value = values.get(instruction).copied().flatten();
        crate::analysis::ncu::source::write_value(info.kind, value, out);
    }

    /// The instructions ordered by `column` (largest first when `descending`), ties by address.
    pub fn sorted(&self, column: usize, descending: bool) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.instructions.len()).collect();
        let Some(values) = self.values.get(column) else {
            return order;
        };
        // A missing value below every value (a memory column's non-access).
        let key = |i: usize| values[i].unwrap_or(f64::NEG_INFINITY);
        order.sort_by(|&a, &b| {
            let by_value = key(a).total_cmp(&key(b));
            let by_value = if descending {
                by_value.reverse()
            } else {
                by_value
            };
            by_value.then(a.cmp(&b))
        });
        order
    }

    /// The selected instruction's sampled stall reasons with samples, most first.
    pub fn stall_mix(&self, instruction: usize) -> Vec<(usize, f64)> {
        let mut mix: Vec<(usize, f64)> = self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.stall_reason)
            .map(|(i, _)| (i, self.number(i, instruction)))
            .filter(|(_, v)| *v > 0.0)
            .collect();
        mix.sort_by(|a, b| b.1.total_cmp(&a.1));
        mix
    }
}

/// Gathers workload `index` of `report` (read from `path`) as the command line's page does:
/// its Source Counters, its function's SASS (`nvdisasm`) and, where the cubin has one, its line
/// table and the stored source files. Slow (it runs nvdisasm): call it off the UI thread.
pub fn gather(path: &Path, report: &NcuReport, index: usize) -> Result<KernelSourceModel, String> {
    let workload = report
        .workloads
        .get(index)
        .ok_or_else(|| format!("the report has no kernel {index}"))?;
    let ids = [workload.id];
    let metrics = source_metric_names(report);
    let read = |disassemble| {
        source_inputs_for(path, report, &ids, &metrics, disassemble).map_err(|e| e.to_string())
    };
    // With a line table, the kernel's SASS and its lines; without, its SASS alone: one read of
    // the report. A kernel whose module has a line table but whose function gave no SASS is
    // read again for the SASS alone.
    let mut inputs = read(Disassemble::LineTablesElseAll)?;
    if inputs.sass.is_empty() && inputs.lineinfo.values().any(|&has| has) {
        inputs = read(Disassemble::All)?;
    }
    KernelSourceModel::build(report, index, &inputs)
}
