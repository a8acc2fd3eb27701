//! What an Nsight Compute report stores for its Source page, read on demand (it is large and
//! only this page needs it): the modules (each a cubin with its functions' load addresses, the
//! CUDA source files ncu imported with `--import-source yes`), and per profiled kernel the
//! Source Counters' per-instruction values, keyed by PC.

use std::collections::HashMap;

use bytes::Bytes;

/// A module ncu saw loaded: what its `ProfileSource` messages of one reference hold.
#[derive(Debug, Default, Clone)]
pub struct NcuModule {
    /// How many `ProfileSource` messages carry this reference (ncu writes one when the module
    /// is loaded and one more each time it adds functions; its source page prints a kernel's
    /// block once per message).
    pub copies: u32,
    /// The module's ELF image (cubin), when the report kept it.
    pub cubin: Option<Bytes>,
    /// The GPU's SM revision as the report writes it (`0x90000` for SM 9.0).
    pub sm_revision: Option<u32>,
    pub functions: Vec<NcuFunction>,
    /// CUDA source files imported into the report, in file order.
    pub files: Vec<NcuSourceFile>,
}

/// A function of a module: its mangled name and where it was loaded on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcuFunction {
    pub mangled_name: String,
    pub address: u64,
}

/// A source file as ncu imported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NcuSourceFile {
    pub path: String,
    pub text: String,
}

/// One per-instruction metric of a kernel: `(pc, value)` by PC.
#[derive(Debug, Clone, PartialEq)]
pub struct PcValues {
    pub metric: String,
    pub values: Vec<(u64, f64)>,
}

impl PcValues {
    /// The value at `pc`, when the list has one.
    pub fn at(&self, pc: u64) -> Option<f64> {
        self.values
            .binary_search_by_key(&pc, |&(p, _)| p)
            .ok()
            .map(|i| self.values[i].1)
    }
}

/// The source data of one profiled kernel (workload).
#[derive(Debug, Clone, Default)]
pub struct KernelSource {
    /// The workload's ID (its index in the report).
    pub workload: u32,
    /// The reference of the module its code is in.
    pub module: Option<u64>,
    /// Its per-instruction metrics, in the order the report lists them.
    pub metrics: Vec<PcValues>,
}

impl KernelSource {
    pub fn metric(&self, name: &str) -> Option<&PcValues> {
        self.metrics.iter().find(|m| m.metric == name)
    }
}

/// The Source page's data of a report: modules by reference, and the kernels asked for, in ID
/// order.
#[derive(Debug, Clone, Default)]
pub struct NcuSourceData {
    pub modules: HashMap<u64, NcuModule>,
    pub kernels: Vec<KernelSource>,
}

impl NcuSourceData {
    pub fn kernel(&self, workload: u32) -> Option<&KernelSource> {
        self.kernels
            .binary_search_by_key(&workload, |k| k.workload)
            .ok()
            .map(|i| &self.kernels[i])
    }
}

/// One SASS instruction of a function: its address and its text as ncu prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SassInstruction {
    pub address: u64,
    pub text: String,
}

/// A function's line table: the CUDA source line of each of its instructions that has one (an
/// inlined function's instruction at the inlined function's own line), as the cubin's
/// `.debug_line` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineTable {
    /// The source files it names, as it spells them (`/usr/local/cuda/bin/../targets/…`).
    pub files: Vec<String>,
    /// (instruction address, index into `files`, line number from 1), by address.
    pub lines: Vec<(u64, usize, u32)>,
}

impl NcuModule {
    /// The index in `files` of the imported source file at `path` (as a line table spells it:
    /// `..` and `.` steps are compared resolved, as ncu stores the paths).
    pub fn file_index(&self, path: &str) -> Option<usize> {
        let wanted = resolved(path);
        self.files.iter().position(|f| resolved(&f.path) == wanted)
    }
}

/// A path with its `.` and `..` steps resolved, by its text alone.
fn resolved(path: &str) -> String {
    let mut steps: Vec<&str> = Vec::new();
    for step in path.split('/') {
        match step {
            "." => {}
            ".." if steps.last().is_some_and(|s| !s.is_empty() && *s != "..") => {
                steps.pop();
            }
            _ => steps.push(step),
        }
    }
    steps.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_resolved() {
        assert_eq!(
            resolved("/usr/local/cuda/bin/../targets/x86_64-linux/include/a.hpp"),
            "/usr/local/cuda/targets/x86_64-linux/include/a.hpp"
        );
        assert_eq!(
            resolved("/tmp/./w/li/workloads.cu"),
            "/tmp/w/li/workloads.cu"
        );
        assert_eq!(resolved("../a/b.cu"), "../a/b.cu");
        assert_eq!(resolved("/../a.cu"), "/../a.cu");
    }
}
