//! The Source page of a profiled kernel, as ncu's `--page source` and ncu-ui's Source view lay it
//! out: one row per SASS instruction, one column per Source Counters metric the kernel has, in
//! the order the section lists them (`Warp Stall Sampling (All Samples)`, `Instructions
//! Executed`, …, one per stall reason). A column is shown when the report holds the metric's
//! per-instruction list for the kernel (a group — the sampled warp stall reasons — when the
//! kernel has the group); a cell is the list's value at the instruction's PC, `0` where the list
//! has none. The memory columns are what ncu prints for its enumerations: `-` for an instruction
//! that is no memory access, empty for one never executed, the access's kinds otherwise. The
//! CUDA view's row of a source line has its instructions' cells added up, the memory columns'
//! names counted ([`SourceColumn::write_line_cell`]); its lines are grouped by [`cuda_lines`].
//!
//! Checked cell for cell against ncu 2025.3.1's `--page source --csv` on the shared reports
//! (`tests/ncu_source.rs`).

use std::collections::BTreeMap;

use regex::Regex;

use super::listed;
use crate::trace::ncu::{GROUP_PREFIX, NcuReport, NcuWorkload};
use crate::trace::ncu_source::{KernelSource, LineTable, NcuModule, PcValues, SassInstruction};

/// The Source Counters section's identifier.
pub const SOURCE_COUNTERS: &str = "SourceCounters";

/// How a column's values print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// A count (or an average): the number.
    Number,
    /// `memory_type`: the address spaces an access touches.
    AddressSpace,
    /// `memory_access_type`: load, store, atomic.
    AccessOperation,
    /// `memory_access_size_type`: the access size in bits.
    AccessSize,
    /// `smsp__sass_inst_executed_memdesc_explicit_evict_type`.
    EvictPolicies,
}

impl ColumnKind {
    fn of(metric: &str) -> Self {
        match metric {
            "memory_type" => ColumnKind::AddressSpace,
            "memory_access_type" => ColumnKind::AccessOperation,
            "memory_access_size_type" => ColumnKind::AccessSize,
            "smsp__sass_inst_executed_memdesc_explicit_evict_type" => ColumnKind::EvictPolicies,
            _ => ColumnKind::Number,
        }
    }
}

/// One column of a kernel's Source page.
#[derive(Debug, Clone)]
pub struct SourceColumn<'d> {
    pub label: String,
    pub metric: String,
    pub kind: ColumnKind,
    /// The lists it sums: one, or a group's members the kernel has.
    lists: Vec<&'d PcValues>,
    group: bool,
}

impl SourceColumn<'_> {
    /// The column's value at `pc`: `None` where its list has none (a group sums what its members
    /// have, 0 where none has a value).
    pub fn value(&self, pc: u64) -> Option<f64> {
        if self.group {
            return Some(self.lists.iter().filter_map(|l| l.at(pc)).sum());
        }
        self.lists.first().and_then(|l| l.at(pc))
    }

    /// Whether the column is one of the sampled warp stall reasons (or their sums).
    pub fn is_stall(&self) -> bool {
        self.metric.starts_with("smsp__pcsamp_warps_issue_stalled")
            || self.metric.starts_with("group:smsp__pcsamp")
    }

    /// The cell at `pc` as ncu prints it, appended to `out`.
    pub fn write_cell(&self, pc: u64, out: &mut String) {
        write_value(self.kind, self.value(pc), out);
    }

    /// The CUDA view's cell (`--print-source cuda,sass`) of a source line whose instructions
    /// are at `pcs`, as ncu 2025.3 prints it: a number column's sum over
    /// them (the `Avg.` columns too: ncu adds those up as well); a memory column's names, each
    /// once in the order first met, with how many instructions have it in parentheses where
    /// more than one does (`Load(2),Store`), empty where the line's accesses never ran, `-`
    /// where none of its instructions is an access.
    pub fn write_line_cell(&self, pcs: &[u64], out: &mut String) {
        if self.kind == ColumnKind::Number {
            let sum: f64 = pcs.iter().map(|&pc| self.value(pc).unwrap_or(0.0)).sum();
            write_number(sum, out);
            return;
        }
        let mut any = false;
        let mut names: Vec<(String, usize)> = Vec::new();
        let mut cell = String::new();
        for &pc in pcs {
            if self.value(pc).is_none() {
                continue;
            }
            any = true;
            cell.clear();
            self.write_cell(pc, &mut cell);
            for name in cell.split(',').filter(|n| !n.is_empty()) {
                match names.iter_mut().find(|(n, _)| n == name) {
                    Some((_, count)) => *count += 1,
                    None => names.push((name.to_string(), 1)),
                }
            }
        }
        if !any {
            out.push('-');
            return;
        }
        for (i, (name, count)) in names.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(name);
            if *count > 1 {
                out.push('(');
                out.push_str(itoa::Buffer::new().format(*count));
                out.push(')');
            }
        }
    }
}

/// A cell of a column of `kind` whose value is `value` ([`SourceColumn::value`]), as ncu prints
/// it ([`SourceColumn::write_cell`]): for a viewer that keeps the values and prints only the cells
/// on screen.
pub fn write_value(kind: ColumnKind, value: Option<f64>, out: &mut String) {
    match kind {
        ColumnKind::Number => write_number(value.unwrap_or(0.0), out),
        kind => match value {
            None => out.push('-'),
            Some(0.0) => {}
            Some(v) => write_enum(kind, v, out),
        },
    }
}

fn write_number(v: f64, out: &mut String) {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        out.push_str(itoa::Buffer::new().format(v as i64));
    } else {
        out.push_str(&v.to_string());
    }
}

/// The access size, in bits, that ncu prints for a `memory_access_size_type` value. The value is
/// a flag of the instruction's size modifier, not a size: `.U8` accesses carry 2 and print `8`
/// (`LDG.E.U8` in `ncu_moe_full`), `.U16` ones carry 8 and print `16` (`LDG.E.U16`, `STG.E.U16` in
/// the `--set detailed` fixture); the signed forms' flags lie between them (`.S8` 4, `.S16` 16:
/// not seen in a report). 32-, 64- and 128-bit accesses carry their size.
pub fn access_size_bits(flag: u64) -> u64 {
    match flag {
        2 | 4 => 8,
        8 | 16 => 16,
        other => other,
    }
}

/// A memory column's value: the names of its flags (bits as the shared reports' `Global` 4,
/// `Shared` 16, `Load` 2, `Store` 4, `Atomic` 8, joined by `,` as ncu joins them), an access
/// size in bits ([`access_size_bits`]), a number where no name is known.
fn write_enum(kind: ColumnKind, v: f64, out: &mut String) {
    let bits = v as u64;
    let names: &[(u64, &str)] = match kind {
        ColumnKind::AddressSpace => &[(4, "Global"), (16, "Shared")],
        ColumnKind::AccessOperation => &[(2, "Load"), (4, "Store"), (8, "Atomic")],
        ColumnKind::AccessSize => {
            out.push_str(itoa::Buffer::new().format(access_size_bits(bits)));
            return;
        }
        ColumnKind::EvictPolicies | ColumnKind::Number => &[],
    };
    let known: u64 = names.iter().map(|(b, _)| b).sum();
    if names.is_empty() || bits & !known != 0 || v.fract() != 0.0 {
        write_number(v, out);
        return;
    }
    let mut first = true;
    for (bit, name) in names {
        if bits & bit != 0 {
            if !first {
                out.push(',');
            }
            out.push_str(name);
            first = false;
        }
    }
}

/// The columns of a kernel's Source page (after Address and Source).
pub fn columns<'d>(
    report: &NcuReport,
    workload: &NcuWorkload,
    kernel: &'d KernelSource,
) -> Vec<SourceColumn<'d>> {
    let Some(section) = report
        .sections_in_order(workload)
        .into_iter()
        .find(|s| s.identifier == SOURCE_COUNTERS)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in &section.source_metrics {
        if m.name.starts_with(GROUP_PREFIX) {
            let Some(value) = report.value(workload, &m.name) else {
                continue;
            };
            let Some(members) = listed(&m.name, GROUP_PREFIX, value) else {
                continue;
            };
            out.push(SourceColumn {
                label: m.label.clone(),
                metric: m.name.clone(),
                kind: ColumnKind::Number,
                lists: members.filter_map(|name| kernel.metric(name)).collect(),
                group: true,
            });
        } else if let Some(list) = kernel.metric(&m.name) {
            out.push(SourceColumn {
                label: m.label.clone(),
                metric: m.name.clone(),
                kind: ColumnKind::of(&m.name),
                lists: vec![list],
                group: false,
            });
        }
    }
    out
}

/// A CUDA source line of a kernel's CUDA view: the line's instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaLine {
    /// The stored source file (index into the module's `files`).
    pub file: usize,
    /// From 1.
    pub number: u32,
    /// Indices into the function's SASS, in the line table's (address) order.
    pub instructions: Vec<usize>,
}

/// The CUDA lines of a function with SASS `sass` (by address) and line table `table`, as ncu's
/// CUDA view groups them: each instruction the table names under its (file, line), the lines by
/// stored file, then number; lines without instructions left out. Also whether some of the
/// table's lines are in a file the report does not hold (those are left out: ncu's page for
/// them is not known).
pub fn cuda_lines(
    module: &NcuModule,
    sass: &[SassInstruction],
    table: &LineTable,
) -> (Vec<CudaLine>, bool) {
    let stored: Vec<Option<usize>> = table
        .files
        .iter()
        .map(|path| module.file_index(path))
        .collect();
    let mut lines: BTreeMap<(usize, u32), Vec<usize>> = BTreeMap::new();
    let mut missing = false;
    for &(address, file, number) in &table.lines {
        let Ok(index) = sass.binary_search_by_key(&address, |i| i.address) else {
            continue;
        };
        match stored.get(file).copied().flatten() {
            Some(file) => lines.entry((file, number)).or_default().push(index),
            None => missing = true,
        }
    }
    let lines = lines
        .into_iter()
        .map(|((file, number), instructions)| CudaLine {
            file,
            number,
            instructions,
        })
        .collect();
    (lines, missing)
}

/// The per-instruction metrics a report's Source page reads: every metric its Source Counters
/// sections list, a group's members included.
pub fn source_metric_names(report: &NcuReport) -> std::collections::HashSet<String> {
    let mut names = std::collections::HashSet::new();
    for section in report
        .sections
        .iter()
        .filter(|s| s.identifier == SOURCE_COUNTERS)
    {
        for m in &section.source_metrics {
            names.insert(m.name.clone());
        }
    }
    for w in &report.workloads {
        for group in names.clone().iter().filter(|n| n.starts_with(GROUP_PREFIX)) {
            if let Some(value) = report.value(w, group)
                && let Some(members) = listed(group, GROUP_PREFIX, value)
            {
                names.extend(members.map(str::to_string));
            }
        }
    }
    names
}

/// Which kernels a page shows, as ncu's `--kernel-name regex:…` and `--launch-skip N
/// --launch-count 1` select them on import.
#[derive(Debug, Clone, Default)]
pub struct KernelSelection {
    /// Kernels whose function name (ncu's default `--kernel-name-base function`), demangled or
    /// mangled name this matches (anywhere in the name); all when `None`.
    pub name: Option<Regex>,
    /// Of the kernels the name selects, the launch with this index from 0 only.
    pub launch: Option<usize>,
}

impl KernelSelection {
    /// `--kernel REGEX` (ncu's `regex:` prefix allowed) and `--launch N`.
    pub fn parse(kernel: Option<&str>, launch: Option<usize>) -> Result<Self, String> {
        let name = kernel
            .map(|k| {
                let k = k.strip_prefix("regex:").unwrap_or(k);
                Regex::new(k).map_err(|e| format!("--kernel '{k}': {e}"))
            })
            .transpose()?;
        Ok(Self { name, launch })
    }

    /// The IDs of the selected workloads, in ID order.
    pub fn select(&self, report: &NcuReport) -> Vec<u32> {
        let matching = report.workloads.iter().filter(|w| {
            self.name.as_ref().is_none_or(|re| {
                [&w.function_name, &w.demangled_name, &w.mangled_name]
                    .iter()
                    .any(|n| re.is_match(n))
            })
        });
        match self.launch {
            Some(n) => matching.skip(n).take(1).map(|w| w.id).collect(),
            None => matching.map(|w| w.id).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(kind: ColumnKind, v: Option<f64>) -> String {
        let list = PcValues {
            metric: String::new(),
            values: v.map(|v| vec![(16, v)]).unwrap_or_default(),
        };
        let column = SourceColumn {
            label: String::new(),
            metric: String::new(),
            kind,
            lists: vec![&list],
            group: false,
        };
        let mut out = String::new();
        column.write_cell(16, &mut out);
        out
    }

    fn line_cell(kind: ColumnKind, values: &[Option<f64>]) -> String {
        let list = PcValues {
            metric: String::new(),
            values: (0u64..)
                .zip(values)
                .filter_map(|(pc, v)| Some((pc, (*v)?)))
                .collect(),
        };
        let column = SourceColumn {
            label: String::new(),
            metric: String::new(),
            kind,
            lists: vec![&list],
            group: false,
        };
        let pcs: Vec<u64> = (0..values.len() as u64).collect();
        let mut out = String::new();
        column.write_line_cell(&pcs, &mut out);
        out
    }

    #[test]
    fn line_cells_print_as_ncu_prints_them() {
        use ColumnKind::*;
        assert_eq!(line_cell(Number, &[Some(32.0), None, Some(32.0)]), "64");
        assert_eq!(line_cell(AddressSpace, &[None, None]), "-");
        assert_eq!(line_cell(AddressSpace, &[None, Some(0.0)]), "");
        assert_eq!(
            line_cell(
                AccessOperation,
                &[Some(2.0), None, Some(4.0), Some(2.0), Some(0.0)]
            ),
            "Load(2),Store"
        );
        assert_eq!(
            line_cell(AddressSpace, &[Some(4.0), Some(16.0)]),
            "Global,Shared"
        );
        assert_eq!(
            line_cell(AccessSize, &[Some(32.0), Some(128.0), Some(32.0)]),
            "32(2),128"
        );
    }

    #[test]
    fn cells_print_as_ncu_prints_them() {
        assert_eq!(cell(ColumnKind::Number, Some(4096.0)), "4096");
        assert_eq!(cell(ColumnKind::Number, None), "0");
        assert_eq!(cell(ColumnKind::AddressSpace, None), "-");
        assert_eq!(cell(ColumnKind::AddressSpace, Some(0.0)), "");
        assert_eq!(cell(ColumnKind::AddressSpace, Some(20.0)), "Global,Shared");
        assert_eq!(cell(ColumnKind::AccessOperation, Some(6.0)), "Load,Store");
        assert_eq!(cell(ColumnKind::AccessOperation, Some(8.0)), "Atomic");
        assert_eq!(cell(ColumnKind::AccessSize, Some(2.0)), "8");
        assert_eq!(cell(ColumnKind::AccessSize, Some(8.0)), "16");
        assert_eq!(cell(ColumnKind::AccessSize, Some(128.0)), "128");
        assert_eq!(cell(ColumnKind::AddressSpace, Some(1.0)), "1");
    }
}
