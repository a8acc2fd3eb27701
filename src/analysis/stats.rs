//! The five classic `nsys stats` summary reports, computed over a filter, as Nsight Systems 2023.4
//! or 2025.3 prints them ([`NsysFormat`]).
//!
//! Semantics follow nsys's report scripts (`cuda_gpu_kern_sum.py`, `cuda_api_sum.py`,
//! `cuda_gpu_mem_time_sum.py`, `cuda_gpu_mem_size_sum.py`, `nvtx_sum.py`): median of an even
//! count is the mean of the middle two, standard deviation is the sample one (n−1), and rows are
//! ordered as their `ORDER BY` clauses order them, ties falling back to the grouping key.

use rustc_hash::FxHashMap;

use super::filter::{EventTable, Filter};
use super::nsys_format::NsysFormat;
use crate::trace::{NvtxStyle, StrId, Trace};

/// One of the reports `sightline summary` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Report {
    Kernels,
    CudaApi,
    MemoryTime,
    MemorySize,
    Nvtx,
}

impl Report {
    pub const ALL: [Report; 5] = [
        Report::Kernels,
        Report::CudaApi,
        Report::MemoryTime,
        Report::MemorySize,
        Report::Nvtx,
    ];

    /// The name nsys gives the report.
    pub fn id(self) -> &'static str {
        match self {
            Report::Kernels => "cuda_gpu_kern_sum",
            Report::CudaApi => "cuda_api_sum",
            Report::MemoryTime => "cuda_gpu_mem_time_sum",
            Report::MemorySize => "cuda_gpu_mem_size_sum",
            Report::Nvtx => "nvtx_sum",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Report::Kernels => "CUDA GPU Kernel Summary",
            Report::CudaApi => "CUDA API Summary",
            Report::MemoryTime => "CUDA GPU MemOps Summary (by Time)",
            Report::MemorySize => "CUDA GPU MemOps Summary (by Size)",
            Report::Nvtx => "NVTX Range Summary",
        }
    }

    pub fn from_id(id: &str) -> Option<Report> {
        Report::ALL.into_iter().find(|r| r.id() == id)
    }

    /// What the report is empty for, as nsys words it.
    pub fn missing_data(self) -> &'static str {
        match self {
            Report::Kernels => "CUDA kernel data",
            Report::CudaApi => "CUDA API data",
            Report::MemoryTime | Report::MemorySize => "GPU memory data",
            Report::Nvtx => "NV Tools Extension (NVTX) data",
        }
    }
}

/// Summary statistics of one group of values (durations in ns, or sizes in bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub total: i64,
    pub count: u64,
    pub avg: f64,
    pub median: f64,
    pub min: i64,
    pub max: i64,
    /// Sample standard deviation; 0 for a single value.
    pub stddev: f64,
}

impl Summary {
    /// Computes the summary of `values`, which it sorts.
    pub fn of(values: &mut [i64]) -> Summary {
        values.sort_unstable();
        let n = values.len();
        if n == 0 {
            return Summary {
                total: 0,
                count: 0,
                avg: 0.0,
                median: 0.0,
                min: 0,
                max: 0,
                stddev: 0.0,
            };
        }
        // Summed wide: a damaged file's huge values must not wrap around.
        let wide: i128 = values.iter().map(|&v| i128::from(v)).sum();
        let total = i64::try_from(wide).unwrap_or(if wide < 0 { i64::MIN } else { i64::MAX });
        let avg = total as f64 / n as f64;
        let median = if n % 2 == 1 {
            values[n / 2] as f64
        } else {
            (values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0
        };
        let stddev = if n < 2 {
            0.0
        } else {
            let ss: f64 = values.iter().map(|&v| (v as f64 - avg).powi(2)).sum();
            (ss / (n - 1) as f64).sqrt()
        };
        Summary {
            total,
            count: n as u64,
            avg,
            median,
            min: values[0],
            max: values[n - 1],
            stddev,
        }
    }
}

/// One row of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The name as the report prints it.
    pub name: String,
    /// NVTX only: PushPop or StartEnd.
    pub style: Option<NvtxStyle>,
    pub stats: Summary,
    /// Share of the report's total, in percent (not rounded).
    pub percent: f64,
    /// The string id the rows were grouped by, to find the events of a row again.
    pub name_id: StrId,
}

/// A computed report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportTable {
    pub report: Report,
    pub rows: Vec<SummaryRow>,
    /// Whose output the rows copy (NVTX names here, rounding when printed).
    pub format: NsysFormat,
}

/// A group of values with the key that decides ties.
struct Group {
    name: String,
    style: Option<NvtxStyle>,
    name_id: StrId,
    values: Vec<i64>,
}

/// Computes `report` over the events `filter` keeps, as the nsys that wrote the trace prints it
/// ([`NsysFormat::of_trace`]).
pub fn compute(trace: &Trace, report: Report, filter: &Filter) -> ReportTable {
    compute_as(trace, report, filter, NsysFormat::of_trace(trace))
}

/// Computes `report` over the events `filter` keeps, as Nsight Systems `format` prints it.
pub fn compute_as(
    trace: &Trace,
    report: Report,
    filter: &Filter,
    format: NsysFormat,
) -> ReportTable {
    let mut groups: Vec<Group> = match report {
        Report::Kernels => group_by_name(trace, EventTable::Kernels, filter, |i| {
            (
                trace.kernels.spans.name[i],
                trace.kernels.spans.duration_ns(i),
            )
        }),
        Report::CudaApi => group_by_name(trace, EventTable::ApiCalls, filter, |i| {
            (
                trace.api_calls.spans.name[i],
                trace.api_calls.spans.duration_ns(i),
            )
        }),
        Report::MemoryTime => memory_groups(trace, filter, false),
        Report::MemorySize => memory_groups(trace, filter, true),
        Report::Nvtx => nvtx_groups(trace, filter, format),
    };
    if report == Report::CudaApi {
        // cuda_api_sum.py: a name whose 6th- and 5th-last characters are "_v" loses its last
        // six characters (cudaLaunchKernel_v7000 -> cudaLaunchKernel); grouping stays by nameId.
        for g in &mut groups {
            g.name = strip_version_suffix(&g.name).to_string();
        }
    }
    let mut rows: Vec<(SummaryRow, Group)> = groups
        .into_iter()
        .map(|mut g| {
            let stats = Summary::of(&mut g.values);
            let row = SummaryRow {
                name: g.name.clone(),
                style: g.style,
                stats,
                percent: 0.0,
                name_id: g.name_id,
            };
            (row, g)
        })
        .collect();
    let grand_total = rows
        .iter()
        .fold(0i64, |sum, r| sum.saturating_add(r.0.stats.total));
    for (row, _) in &mut rows {
        row.percent = if grand_total == 0 {
            0.0
        } else {
            row.stats.total as f64 * 100.0 / grand_total as f64
        };
    }
    rows.sort_by(|(a, ga), (b, gb)| {
        let by_total = b.stats.total.cmp(&a.stats.total);
        match report {
            // ORDER BY 2 DESC, 3, "Name"
            Report::Kernels => by_total
                .then(a.stats.count.cmp(&b.stats.count))
                .then_with(|| a.name.cmp(&b.name)),
            // ORDER BY 2 DESC; ties keep the GROUP BY order (nameId).
            Report::CudaApi => by_total.then(ga.name_id.cmp(&gb.name_id)),
            // ORDER BY total DESC; ties keep the GROUP BY order (name, style).
            _ => by_total
                .then_with(|| ga.name.cmp(&gb.name))
                .then(ga.style.cmp(&gb.style)),
        }
    });
    ReportTable {
        report,
        rows: rows.into_iter().map(|(r, _)| r).collect(),
        format,
    }
}

/// `cudaLaunchKernel_v7000` → `cudaLaunchKernel`: nsys drops the last six characters of a name
/// whose 6th- and 5th-last characters are `_v` (cuda_api_sum.py).
pub fn strip_version_suffix(name: &str) -> &str {
    let b = name.as_bytes();
    if b.len() >= 6 && &b[b.len() - 6..b.len() - 4] == b"_v" && name.is_char_boundary(b.len() - 6) {
        &name[..b.len() - 6]
    } else {
        name
    }
}

fn group_by_name(
    trace: &Trace,
    table: EventTable,
    filter: &Filter,
    value: impl Fn(usize) -> (StrId, i64),
) -> Vec<Group> {
    let mut by_id: FxHashMap<StrId, Vec<i64>> = FxHashMap::default();
    for i in filter.indices(trace, table) {
        let (id, v) = value(i);
        by_id.entry(id).or_default().push(v);
    }
    by_id
        .into_iter()
        .map(|(id, values)| Group {
            name: trace.str(id).to_string(),
            style: None,
            name_id: id,
            values,
        })
        .collect()
}

fn memory_groups(trace: &Trace, filter: &Filter, by_size: bool) -> Vec<Group> {
    let mut by_id: FxHashMap<StrId, Vec<i64>> = FxHashMap::default();
    let m = &trace.memcpys;
    for i in filter.indices(trace, EventTable::Memcpys) {
        // The report joins ENUM_CUDA_MEMCPY_OPER, whose ids stop at 13.
        if m.copy_kind[i].0 > 13 {
            continue;
        }
        let v = if by_size {
            m.bytes[i] as i64
        } else {
            m.spans.duration_ns(i)
        };
        by_id.entry(m.spans.name[i]).or_default().push(v);
    }
    let s = &trace.memsets;
    for i in filter.indices(trace, EventTable::Memsets) {
        let v = if by_size {
            s.bytes[i] as i64
        } else {
            s.spans.duration_ns(i)
        };
        by_id.entry(s.spans.name[i]).or_default().push(v);
    }
    by_id
        .into_iter()
        .map(|(id, values)| Group {
            name: trace.str(id).to_string(),
            style: None,
            name_id: id,
            values,
        })
        .collect()
}

/// NVTX ranges grouped by (printed name, style); marks are not ranges.
fn nvtx_groups(trace: &Trace, filter: &Filter, format: NsysFormat) -> Vec<Group> {
    let n = &trace.nvtx;
    let mut by_key: FxHashMap<(StrId, StrId, NvtxStyle), Vec<i64>> = FxHashMap::default();
    for i in filter.indices(trace, EventTable::Nvtx) {
        if n.style[i] == NvtxStyle::Mark {
            continue;
        }
        by_key
            .entry((n.domain[i], n.spans.name[i], n.style[i]))
            .or_default()
            .push(n.spans.duration_ns(i));
    }
    // Different (domain, text) pairs can print the same name; nsys groups by the printed name.
    let mut merged: FxHashMap<(String, NvtxStyle), (StrId, Vec<i64>)> = FxHashMap::default();
    for ((domain, text, style), values) in by_key {
        // nsys 2023.4 names a range `domain || ':' || text`, NULL (printed empty) without text
        // even in a named domain; 2025.3 always `domain:text`. The model keeps an absent text as
        // the empty string.
        let name = crate::analysis::reports::nvtx_tree::printed_name(trace, domain, text, format)
            .unwrap_or_default();
        match merged.entry((name, style)) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert((text, values));
            }
            std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().1.extend(values),
        }
    }
    merged
        .into_iter()
        .map(|((name, style), (id, values))| Group {
            name,
            style: Some(style),
            name_id: id,
            values,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_matches_nsys_definitions() {
        let s = Summary::of(&mut [4, 1, 3, 2]);
        assert_eq!((s.total, s.count, s.min, s.max), (10, 4, 1, 4));
        assert_eq!(s.median, 2.5);
        assert_eq!(s.avg, 2.5);
        assert!((s.stddev - (5.0f64 / 3.0).sqrt()).abs() < 1e-12);
        let one = Summary::of(&mut [7]);
        assert_eq!((one.median, one.stddev), (7.0, 0.0));
    }

    #[test]
    fn strips_only_version_suffixes() {
        assert_eq!(
            strip_version_suffix("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(
            strip_version_suffix("cudaLaunchKernelExC_v11060"),
            "cudaLaunchKernelExC_v11060"
        );
        assert_eq!(
            strip_version_suffix("cuMemcpyHtoDAsync_v2"),
            "cuMemcpyHtoDAsync_v2"
        );
        assert_eq!(strip_version_suffix("_v"), "_v");
    }
}
