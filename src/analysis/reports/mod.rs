//! Every `nsys stats` report Sightline speaks, one module each, registered in [`REPORTS`].
//!
//! A report declares its nsys name, title, the options nsys accepts for it (`cuda_gpu_kern_sum:base`)
//! and what it computes over a trace and a [`Filter`]: a [`Table`] with the columns and rows that
//! `nsys stats --format csv` prints, as Nsight Systems 2023.4.4 or 2025.3.1 prints it
//! ([`NsysFormat`], chosen in [`ReportInput`]). The command line, the panel,
//! `--report all` and the golden test all iterate [`REPORTS`]; adding a report is one file plus
//! one line there.

pub mod classic;
pub mod comm_overlap;
mod cpu_samples_sum;
pub mod critical_path;
mod cuda_api_gpu_sum;
mod cuda_api_trace;
mod cuda_gpu_kern_gb_sum;
mod cuda_gpu_sum;
mod cuda_gpu_trace;
mod cuda_kern_exec_sum;
mod cuda_kern_exec_trace;
mod duration_summary;
mod gpu_metrics_sum;
mod idle_causes;
pub mod iterations;
mod kern_exec;
pub mod kernel_names;
mod nvtx_gpu_proj_sum;
mod nvtx_gpu_proj_trace;
mod nvtx_kern_sum;
pub mod nvtx_projection;
mod nvtx_pushpop_sum;
mod nvtx_pushpop_trace;
mod nvtx_startend_sum;
pub mod nvtx_tree;
pub mod op_efficiency;
mod openacc_sum;
mod openmp_sum;
mod osrt_sum;
pub mod shared_texts;
mod thread_states;
pub mod torch_ops;
mod um_cpu_page_faults_sum;
mod um_sum;
mod um_total_sum;
pub mod xla_kernel_stats;
pub mod xla_op_stats;

use super::filter::Filter;
use super::nsys_format::NsysFormat;
use super::table::{SharedSink, Table};
use crate::trace::{Needs, Trace};

/// What a report is computed from.
pub struct ReportInput<'a> {
    pub trace: &'a Trace,
    /// Which events count: a time range (by start) and warm-up exclusion.
    pub filter: &'a Filter<'a>,
    pub options: &'a ReportOptions,
    /// Fill [`super::table::Row::events`] (the panel wants them; the command line does not).
    pub with_events: bool,
    /// Build at most this many rows of a row dump (the panel's bound on memory); `None`: all.
    pub row_limit: Option<usize>,
    /// Whose output to copy: Nsight Systems 2023.4's or 2025.3's (by default
    /// [`NsysFormat::of_trace`], the release that wrote the export).
    pub nsys_format: NsysFormat,
    /// Where a row dump that streams ([`StatsReport::streams`]) sends its rows instead of
    /// keeping them: the command line's CSV writer. `None`: rows are kept in the table.
    pub sink: Option<SharedSink>,
}

/// Options given after the report name, nsys-style: `name:opt[:opt=value]…`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportOptions {
    /// (name, value); value is empty for a flag such as `base`.
    pub values: Vec<(String, String)>,
}

impl ReportOptions {
    pub fn has(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| n == name)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One `nsys stats` report.
pub trait StatsReport: Sync {
    /// The name nsys gives it (`cuda_gpu_kern_sum`).
    fn name(&self) -> &'static str;
    /// Its title as nsys prints above the table ("CUDA GPU Kernel Summary").
    fn title(&self) -> &'static str;
    /// What the trace lacks when the report is empty, as nsys words it: "CUDA kernel data".
    fn missing_data(&self) -> &'static str;
    /// Options nsys accepts for it, e.g. `["base", "mangled"]`; `name=value` ones too.
    fn options(&self) -> &'static [&'static str] {
        &[]
    }
    /// Refuses option values nsys would refuse (`um_sum:rows=x`), with the reason.
    fn check_options(&self, _options: &ReportOptions) -> Result<(), String> {
        Ok(())
    }
    /// What it reads from a trace under these options; a command loads only what its reports
    /// need. Undeclared: everything.
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::ALL
    }
    /// The report; no rows when the trace (or the filtered part) has no such data.
    fn compute(&self, input: &ReportInput) -> Table;
    /// Whether [`StatsReport::compute`] sends its rows to [`ReportInput::sink`] as it makes
    /// them, in their final order: the row dumps, which the command line writes out without
    /// holding them.
    fn streams(&self) -> bool {
        false
    }
    /// Whether it is a row dump: one row per event or per stretch of time (the `*_trace`
    /// reports, `critical_path_segments`), thousands of lines on a real trace, which `summary`
    /// prints only when asked for, as `nsys stats` prints its `*_trace` reports.
    fn row_dump(&self) -> bool {
        false
    }
    /// Its rows depend on a threshold (`idle_causes:min=`), so [`has_data`] says whether the trace
    /// has the events it reads, and no rows is itself an answer ("no gap that long").
    fn rows_depend_on_threshold(&self) -> bool {
        false
    }
}

/// Every report, in the order `--report all` prints them.
pub static REPORTS: &[&dyn StatsReport] = &[
    &classic::CudaApiSum,
    &classic::CudaGpuKernSum,
    &classic::CudaGpuMemTimeSum,
    &classic::CudaGpuMemSizeSum,
    &classic::NvtxSum,
    &cuda_api_gpu_sum::CudaApiGpuSum,
    &cuda_gpu_sum::CudaGpuSum,
    &cuda_gpu_kern_gb_sum::CudaGpuKernGbSum,
    &cuda_kern_exec_sum::CudaKernExecSum,
    &nvtx_gpu_proj_sum::NvtxGpuProjSum,
    &nvtx_kern_sum::NvtxKernSum,
    &nvtx_pushpop_sum::NvtxPushpopSum,
    &nvtx_startend_sum::NvtxStartendSum,
    &osrt_sum::OsrtSum,
    &um_sum::UmSum,
    &um_total_sum::UmTotalSum,
    &um_cpu_page_faults_sum::UmCpuPageFaultsSum,
    &openacc_sum::OpenaccSum,
    &openmp_sum::OpenmpSum,
    &gpu_metrics_sum::GpuMetricsSum,
    &comm_overlap::CommOverlap,
    &idle_causes::IdleCauses,
    &thread_states::ThreadStatesReport,
    &cpu_samples_sum::CpuSamplesSum,
    &torch_ops::TorchOps,
    &xla_kernel_stats::XlaKernelStats,
    &xla_op_stats::XlaOpStats,
    &op_efficiency::OpEfficiencyReport,
    &iterations::IterationsReport,
    &critical_path::CRITICAL_PATH,
    &critical_path::CRITICAL_PATH_SEGMENTS,
    &cuda_gpu_trace::CudaGpuTrace,
    &cuda_api_trace::CudaApiTrace,
    &cuda_kern_exec_trace::CudaKernExecTrace,
    &nvtx_gpu_proj_trace::NvtxGpuProjTrace,
    &nvtx_pushpop_trace::NvtxPushpopTrace,
];

/// Whether the report is a row dump ([`StatsReport::row_dump`]), which `summary` prints only
/// when asked for by name or by `all`.
pub fn is_row_dump(report: &dyn StatsReport) -> bool {
    report.row_dump()
}

/// The report named `name`.
pub fn find(name: &str) -> Option<&'static dyn StatsReport> {
    let name = current_name(name).unwrap_or(name);
    REPORTS.iter().copied().find(|r| r.name() == name)
}

/// nsys's older report names that Nsight Systems 2023.4 still accepts (its `reports/` scripts
/// titled "DEPRECATED - Use … instead"), with the report each now names. Only those whose current
/// report Sightline has.
pub const LEGACY_NAMES: &[(&str, &str)] = &[
    ("apigpusum", "cuda_api_gpu_sum"),
    ("cudaapisum", "cuda_api_sum"),
    ("cudaapitrace", "cuda_api_trace"),
    ("gpukerngbsum", "cuda_gpu_kern_gb_sum"),
    ("gpukernsum", "cuda_gpu_kern_sum"),
    ("gpumemsizesum", "cuda_gpu_mem_size_sum"),
    ("gpumemtimesum", "cuda_gpu_mem_time_sum"),
    ("gpusum", "cuda_gpu_sum"),
    ("gputrace", "cuda_gpu_trace"),
    ("kernexecsum", "cuda_kern_exec_sum"),
    ("kernexectrace", "cuda_kern_exec_trace"),
    ("nvtxgpuproj", "nvtx_gpu_proj_trace"),
    ("nvtxkernsum", "nvtx_kern_sum"),
    ("nvtxppsum", "nvtx_pushpop_sum"),
    ("nvtxpptrace", "nvtx_pushpop_trace"),
    ("nvtxsesum", "nvtx_startend_sum"),
    ("nvtxsssum", "nvtx_startend_sum"),
    ("nvtxsum", "nvtx_sum"),
    ("openaccsum", "openacc_sum"),
    ("openmpevtsum", "openmp_sum"),
    ("osrtsum", "osrt_sum"),
    ("umcpupagefaults", "um_cpu_page_faults_sum"),
    ("unifiedmemory", "um_sum"),
    ("unifiedmemorytotals", "um_total_sum"),
];

/// The current name of a report given by an older name; `None` for any other name.
pub fn current_name(name: &str) -> Option<&'static str> {
    LEGACY_NAMES
        .iter()
        .find(|(old, _)| *old == name)
        .map(|&(_, new)| new)
}

/// Parses `name[:opt[=value]]…` against [`REPORTS`]; the error says what is known.
pub fn parse_spec(spec: &str) -> Result<(&'static dyn StatsReport, ReportOptions), String> {
    let mut parts = spec.trim().split(':');
    let name = parts.next().unwrap_or_default();
    let Some(report) = find(name) else {
        let known: Vec<&str> = REPORTS.iter().map(|r| r.name()).collect();
        return Err(format!(
            "unknown report '{name}' (known: {}, all)",
            known.join(", ")
        ));
    };
    let options = parse_options(parts, report.options())
        .and_then(|o| report.check_options(&o).map(|()| o))
        .map_err(|e| format!("report {name}: {e}"))?;
    Ok((report, options))
}

/// Parses `opt[=value]` items against the names `known` allows (a known name may be written
/// `name` or `name=`).
pub fn parse_options<'a>(
    items: impl Iterator<Item = &'a str>,
    known: &[&str],
) -> Result<ReportOptions, String> {
    let mut options = ReportOptions::default();
    for item in items {
        if item.is_empty() {
            continue;
        }
        let (name, value) = item.split_once('=').unwrap_or((item, ""));
        if !known.iter().any(|k| k.trim_end_matches('=') == name) {
            return Err(if known.is_empty() {
                format!("takes no options (got '{item}')")
            } else {
                format!("unknown option '{name}' (known: {})", known.join(", "))
            });
        }
        options.values.push((name.to_string(), value.to_string()));
    }
    Ok(options)
}

/// Is `report` about data that the trace's format never holds (NVTX in a PyTorch trace, whose
/// ranges are PyTorch's own)? Such a report has no rows, as nsys prints nothing for a capture
/// without NVTX.
pub fn format_lacks(report: &dyn StatsReport, trace: &Trace) -> bool {
    report.name().starts_with("nvtx_") && !has_nvtx(trace)
}

/// Does the trace have NVTX ranges (rather than only a PyTorch trace's own ranges)?
fn has_nvtx(trace: &Trace) -> bool {
    let k = &trace.nvtx.kind;
    k.is_empty() || k.contains(&crate::trace::RangeKind::Nvtx)
}

/// Does `trace` hold the kind of events `report` reads? Cheap (no report is computed): the panel
/// lists only the reports for which this is true.
pub fn has_data(report: &dyn StatsReport, trace: &Trace) -> bool {
    let kernels = !trace.kernels.spans.is_empty();
    let mem = !trace.memcpys.spans.is_empty() || !trace.memsets.spans.is_empty();
    let api = !trace.api_calls.spans.is_empty();
    let nvtx_style = |style: crate::trace::NvtxStyle| trace.nvtx.style.contains(&style);
    let ranges = (nvtx_style(crate::trace::NvtxStyle::PushPop)
        || nvtx_style(crate::trace::NvtxStyle::StartEnd))
        && has_nvtx(trace);
    match report.name() {
        "cuda_api_sum" | "cuda_api_trace" => api,
        "cuda_gpu_kern_sum" | "cuda_gpu_kern_gb_sum" => kernels,
        "cuda_kern_exec_sum" | "cuda_kern_exec_trace" => kernels && api,
        "cuda_gpu_mem_time_sum" | "cuda_gpu_mem_size_sum" => mem,
        "cuda_gpu_sum" => kernels || mem,
        // nsys prints the device by name, from TARGET_INFO_GPU: nothing without it.
        "cuda_gpu_trace" => (kernels || mem) && !trace.gpus.is_empty(),
        "cuda_api_gpu_sum" => api || kernels || mem,
        "nvtx_sum" => ranges,
        "nvtx_pushpop_sum" | "nvtx_pushpop_trace" => {
            nvtx_style(crate::trace::NvtxStyle::PushPop) && has_nvtx(trace)
        }
        "nvtx_startend_sum" => nvtx_style(crate::trace::NvtxStyle::StartEnd) && has_nvtx(trace),
        "nvtx_kern_sum" | "nvtx_gpu_proj_sum" | "nvtx_gpu_proj_trace" => ranges && (kernels || mem),
        "osrt_sum" => !trace.osrt.spans.is_empty(),
        // As nsys: both need the three unified-memory tables; the totals print a row even when
        // they are empty.
        "um_total_sum" => {
            let t = &trace.unified_memory.tables;
            t.memcpy && t.cpu_page_faults && t.gpu_page_faults
        }
        "um_sum" => {
            let um = &trace.unified_memory;
            let t = &um.tables;
            t.memcpy
                && t.cpu_page_faults
                && t.gpu_page_faults
                && (!um.cpu_page_faults.spans.is_empty()
                    || !um.gpu_page_faults.spans.is_empty()
                    || trace
                        .memcpys
                        .copy_kind
                        .iter()
                        .any(|k| (11..=13).contains(&k.0)))
        }
        "um_cpu_page_faults_sum" => !trace.unified_memory.cpu_page_faults.spans.is_empty(),
        "openacc_sum" => !trace.openacc.spans.is_empty(),
        "openmp_sum" => !trace.openmp.spans.is_empty(),
        "gpu_metrics_sum" => !trace.gpu_metrics.is_empty(),
        "comm_overlap" => crate::analysis::comm_overlap::has_comm(
            trace,
            &crate::analysis::comm_overlap::default_comm_regex(),
        ),
        "idle_causes" => kernels || mem,
        "thread_states" => !trace.thread_states.is_empty(),
        "cpu_samples_sum" => trace
            .cpu_samples
            .stack
            .iter()
            .any(|&s| s != crate::trace::NO_STACK),
        "torch_ops" => trace.torch.is_some() && trace.event_count() > 0,
        "xla_kernel_stats" | "xla_op_stats" => trace.xla.is_some() && kernels,
        "op_efficiency" => trace.nvtx.has_operators() && (kernels || mem),
        "iterations" | "critical_path" | "critical_path_segments" => {
            crate::analysis::iterations::default_family(trace).is_some()
        }
        // A report the checks above do not know: computing it says.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = REPORTS.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
    }

    /// Row dumps say so themselves; the `*_trace` reports (nsys's row dumps) all do.
    #[test]
    fn row_dumps_are_the_trace_reports_and_the_path_segments() {
        let dumps: Vec<&str> = REPORTS
            .iter()
            .filter(|r| is_row_dump(**r))
            .map(|r| r.name())
            .collect();
        for r in REPORTS {
            if r.name().ends_with("_trace") {
                assert!(dumps.contains(&r.name()), "{}", r.name());
            }
        }
        assert!(dumps.contains(&"critical_path_segments"));
        assert!(!dumps.contains(&"critical_path"));
        assert_eq!(dumps.len(), 6, "{dumps:?}");
    }

    #[test]
    fn parses_specs_with_options() {
        let (r, o) = parse_spec("cuda_gpu_kern_sum:base").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.name(), "cuda_gpu_kern_sum");
        assert!(o.has("base"));
        assert!(parse_spec("cuda_gpu_kern_sum:nonsense").is_err());
        assert!(parse_spec("um_sum:rows=5").is_ok());
        assert!(parse_spec("um_sum:rows=many").is_err());
        assert!(parse_spec("no_such_report").is_err());
        // Older names give the current report, options included.
        let (r, o) = parse_spec("gpukernsum:base").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((r.name(), o.has("base")), ("cuda_gpu_kern_sum", true));
        for (old, new) in LEGACY_NAMES {
            assert_eq!(find(old).map(|r| r.name()), Some(*new), "{old}");
        }
    }
}
