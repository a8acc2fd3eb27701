//! The report's top tables: the first rows of the existing `nsys stats` reports (kernels, CUDA
//! calls, NVTX ranges or PyTorch operators), and with a baseline their per-name diff as
//! `sightline diff` computes it ([`crate::analysis::diff`]).

use crate::analysis::diff::{self, DiffRow};
use crate::analysis::reports::{self, has_data};
use crate::analysis::{Filter, NsysFormat, ReportInput, ReportOptions, Table};
use crate::trace::{Trace, TraceFormat};

/// Rows of each top table shown.
pub const TOP_ROWS: usize = 10;

/// One top table.
#[derive(Debug, Clone)]
pub struct TopTable {
    /// The report's name (`cuda_gpu_kern_sum`).
    pub report: &'static str,
    pub title: &'static str,
    /// The whole report (the page shows its first [`TOP_ROWS`] rows).
    pub table: Table,
}

/// The reports the page shows, in order: kernels, CUDA calls, then NVTX ranges (nsys) or
/// PyTorch operators.
pub fn top_report_names(format: TraceFormat) -> [&'static str; 3] {
    match format {
        TraceFormat::NsysSqlite => ["cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum"],
        TraceFormat::Kineto => ["cuda_gpu_kern_sum", "cuda_api_sum", "torch_ops"],
        TraceFormat::NsightCompute | TraceFormat::XPlane => {
            ["cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum"]
        }
    }
}

/// The top reports `trace` has data for, computed over `filter` as `nsys_format` prints them.
pub fn top_tables(trace: &Trace, filter: &Filter, nsys_format: NsysFormat) -> Vec<TopTable> {
    let options = ReportOptions::default();
    top_report_names(trace.format)
        .into_iter()
        .filter_map(reports::find)
        .filter(|r| has_data(*r, trace))
        .map(|r| TopTable {
            report: r.name(),
            title: r.title(),
            table: r.compute(&ReportInput {
                trace,
                filter,
                options: &options,
                with_events: false,
                row_limit: None,
                nsys_format,
                sink: None,
            }),
        })
        .collect()
}

/// One report diffed between the baseline and this run.
#[derive(Debug, Clone)]
pub struct TopDiff {
    pub report: &'static str,
    pub title: &'static str,
    /// `ns` or `MB`.
    pub unit: &'static str,
    /// By |Δ total| descending.
    pub rows: Vec<DiffRow>,
}

/// The diffs of the reports both runs have, the kernel names in one spelling when the two runs
/// come from different profilers.
pub fn top_diffs(
    base: &[TopTable],
    new: &[TopTable],
    base_format: TraceFormat,
    new_format: TraceFormat,
) -> Vec<TopDiff> {
    let mut out = Vec::new();
    for n in new {
        let Some(b) = base.iter().find(|b| b.report == n.report) else {
            continue;
        };
        let (mut bt, mut nt) = (b.table.clone(), n.table.clone());
        if base_format != new_format {
            diff::canonical_kernel_names(n.report, &mut bt);
            diff::canonical_kernel_names(n.report, &mut nt);
        }
        let Some(unit) = diff::diff_columns(&bt)
            .or_else(|| diff::diff_columns(&nt))
            .map(|c| c.unit)
        else {
            continue;
        };
        if let Ok(rows) = diff::diff(&bt, &nt, None) {
            out.push(TopDiff {
                report: n.report,
                title: n.title,
                unit,
                rows,
            });
        }
    }
    out
}
