//! The `nsys analyze` expert-system rules, one module each, registered in [`RULES`].
//!
//! A rule declares its nsys name, its own options (`gap=`, `threshold=`, …) beside the common
//! `rows=`, `start=`, `end=` and `nvtx=`, nsys's advice, and computes its findings over a trace
//! and a [`Filter`] as a [`Table`] with the columns `nsys analyze --format csv` (Nsight Systems
//! 2023.4.4) prints. Each row points at the event or the span of time it is about.

mod api_matches;
mod cuda_api_sync;
mod cuda_memcpy_async;
mod cuda_memcpy_sync;
mod cuda_memset_sync;
mod gpu_gaps;
mod gpu_ops;
mod gpu_time_util;
mod scope;

/// `gpu_gaps`'s threshold when `gap=` is absent (nsys's 500 ms), in ms.
pub use gpu_gaps::DEFAULT_GAP_MS as GPU_GAPS_DEFAULT_MS;

use super::filter::Filter;
use super::nsys_format::NsysFormat;
use super::reports::{ReportOptions, parse_options};
use super::table::Table;
use crate::trace::{Needs, Trace};

/// What a rule is computed from.
pub struct RuleInput<'a> {
    pub trace: &'a Trace,
    /// Which events count (the panel's range and warm-up exclusion; everything on the CLI).
    pub filter: &'a Filter<'a>,
    /// The options as given (`rows=-1`, `gap=1`, …), common ones included.
    pub options: &'a ReportOptions,
    /// Whose output to copy (the rules' scripts are the same in 2023.4 and 2025.3; SQLite's
    /// rounding is not).
    pub nsys_format: NsysFormat,
}

/// Options every rule takes (nsysstats.ExpertSystemsReport).
pub const COMMON_OPTIONS: [&str; 4] = ["rows", "start", "end", "nvtx"];

/// One `nsys analyze` rule.
pub trait Rule: Sync {
    /// The name nsys gives it (`cuda_memcpy_sync`).
    fn name(&self) -> &'static str;
    /// nsys's display name ("CUDA Synchronous Memcpy").
    fn title(&self) -> &'static str;
    /// nsys's advice above the findings, in one line.
    fn advice(&self) -> &'static str;
    /// What nsys says when the rule finds nothing.
    fn no_result(&self) -> &'static str;
    /// Options of its own beside [`COMMON_OPTIONS`].
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// The findings; an error for a bad option value or an NVTX range that does not exist.
    fn compute(&self, input: &RuleInput) -> Result<Table, String>;
    /// What it reads from a trace with these options: the rules look at GPU work with the calls
    /// that launched it, the calls and synchronization on the CPU, the profiler's own overhead
    /// and (`nvtx=`) NVTX.
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS | Needs::SYNCS | Needs::NVTX | Needs::PROFILER_OVERHEAD
    }
}

/// What the two rules over GPU busy time read ([`gpu_ops`]): the GPU work where it ran, the
/// profiler's overhead, and NVTX only for an `nvtx=` window.
fn gpu_ops_needs(options: &ReportOptions) -> Needs {
    let needs = Needs::GPU_WORK | Needs::PROFILER_OVERHEAD;
    if options.has("nvtx") {
        needs | Needs::NVTX
    } else {
        needs
    }
}

/// Every rule, in the order the Findings tab lists them.
pub static RULES: &[&dyn Rule] = &[
    &cuda_api_sync::CudaApiSync,
    &cuda_memcpy_async::CudaMemcpyAsync,
    &cuda_memcpy_sync::CudaMemcpySync,
    &cuda_memset_sync::CudaMemsetSync,
    &gpu_gaps::GpuGaps,
    &gpu_time_util::GpuTimeUtil,
];

/// The rule named `name`.
pub fn find(name: &str) -> Option<&'static dyn Rule> {
    let name = current_name(name).unwrap_or(name);
    RULES.iter().copied().find(|r| r.name() == name)
}

/// nsys's older rule names that Nsight Systems 2023.4 still accepts (its `rules/` scripts titled
/// "DEPRECATED - Use … instead"), with the rule each now names.
pub const LEGACY_NAMES: &[(&str, &str)] = &[
    ("cuda-async-memcpy", "cuda_memcpy_async"),
    ("cuda-sync-api", "cuda_api_sync"),
    ("cuda-sync-memcpy", "cuda_memcpy_sync"),
    ("cuda-sync-memset", "cuda_memset_sync"),
    ("gpu-low-util", "gpu_time_util"),
    ("gpu-starv", "gpu_gaps"),
];

/// The current name of a rule given by an older name; `None` for any other name.
pub fn current_name(name: &str) -> Option<&'static str> {
    LEGACY_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map(|&(_, new)| new)
}

/// Parses `name[:opt=value]…` against [`RULES`].
pub fn parse_spec(spec: &str) -> Result<(&'static dyn Rule, ReportOptions), String> {
    let mut parts = spec.trim().split(':');
    let name = parts.next().unwrap_or_default();
    let Some(rule) = find(name) else {
        let known: Vec<&str> = RULES.iter().map(|r| r.name()).collect();
        return Err(format!(
            "unknown rule '{name}' (known: {}, all)",
            known.join(", ")
        ));
    };
    let known: Vec<&str> = COMMON_OPTIONS
        .iter()
        .chain(rule.options())
        .copied()
        .collect();
    let options = parse_options(parts, &known).map_err(|e| format!("rule {name}: {e}"))?;
    Ok((rule, options))
}
