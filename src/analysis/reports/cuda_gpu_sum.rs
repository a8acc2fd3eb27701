//! `cuda_gpu_sum` (CUDA GPU Summary (Kernels/MemOps)), after nsys 2023.4.4's `cuda_gpu_sum.py`:
//! kernels (named as the `base` / `mangled` / `nvtx-name` options say) and memory operations
//! (`[CUDA memcpy <kind>]`, `[CUDA memset]`) grouped by name, rows by total time descending.
//! [`gpu_summary`] with the CUDA API calls added is `cuda_api_gpu_sum`.

use crate::trace::Needs;
use std::borrow::Cow;
use std::collections::HashMap;

use super::duration_summary::{Groups, header};
use super::kernel_names::KernelNaming;
use super::shared_texts::SharedTexts;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::stats::strip_version_suffix;
use crate::analysis::table::{Cell, EventRef, Table};
use crate::trace::StrId;

pub struct CudaGpuSum;

impl StatsReport for CudaGpuSum {
    fn name(&self) -> &'static str {
        "cuda_gpu_sum"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::GPU_LINKS.union(KernelNaming::needs(options))
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Summary (Kernels/MemOps)"
    }

    fn missing_data(&self) -> &'static str {
        "GPU kernel/memory operations data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, input: &ReportInput) -> Table {
        gpu_summary(input, false)
    }
}

const CUDA_API: &str = "CUDA_API";
const CUDA_KERNEL: &str = "CUDA_KERNEL";
const MEMORY_OPER: &str = "MEMORY_OPER";

/// Kernels, memory copies and memory sets (and CUDA API calls when `with_api`) grouped by the
/// name they print, each group with its category.
pub(super) fn gpu_summary<'t>(input: &ReportInput<'t>, with_api: bool) -> Table {
    let trace = input.trace;
    let filter = input.filter;
    // The union's order (API calls, kernels, copies, sets) decides the category of a name two
    // parts share; nsys leaves that case to SQLite's bare-column choice.
    let mut category: HashMap<Cow<'t, str>, &'static str> = HashMap::new();
    let mut all: Groups<Cow<'t, str>> = Groups::new(input.with_events);
    let mut add = |groups: Groups<Cow<'t, str>>, cat: &'static str| {
        for name in groups.by_key.keys() {
            category.entry(name.clone()).or_insert(cat);
        }
        all.merge(groups);
    };

    if with_api {
        let api = &trace.api_calls.spans;
        let mut by_id: Groups<StrId> = Groups::new(input.with_events);
        for i in filter.indices(trace, EventTable::ApiCalls) {
            by_id.add(api.name[i], api.duration_ns(i), || {
                EventRef::new(EventTable::ApiCalls, i)
            });
        }
        add(
            by_id.map_keys(|id| Cow::Borrowed(strip_version_suffix(trace.str(id)))),
            CUDA_API,
        );
    }

    let naming = KernelNaming::from_options(trace, input.options);
    let k = &trace.kernels.spans;
    let mut kernels = Groups::new(input.with_events);
    for i in filter.indices(trace, EventTable::Kernels) {
        kernels.add(naming.key(i), k.duration_ns(i), || {
            EventRef::new(EventTable::Kernels, i)
        });
    }
    add(kernels.map_keys(|key| naming.name_of(key)), CUDA_KERNEL);

    let m = &trace.memcpys;
    let mut copies: Groups<StrId> = Groups::new(input.with_events);
    for i in filter.indices(trace, EventTable::Memcpys) {
        // The report joins ENUM_CUDA_MEMCPY_OPER, whose ids stop at 13.
        if m.copy_kind[i].0 <= 13 {
            copies.add(m.spans.name[i], m.spans.duration_ns(i), || {
                EventRef::new(EventTable::Memcpys, i)
            });
        }
    }
    add(
        copies.map_keys(|id| Cow::Borrowed(trace.str(id))),
        MEMORY_OPER,
    );

    let s = &trace.memsets.spans;
    let mut sets: Groups<StrId> = Groups::new(input.with_events);
    for i in filter.indices(trace, EventTable::Memsets) {
        sets.add(s.name[i], s.duration_ns(i), || {
            EventRef::new(EventTable::Memsets, i)
        });
    }
    add(
        sets.map_keys(|id| Cow::Borrowed(trace.str(id))),
        MEMORY_OPER,
    );

    let (mut rows, grand_total) = all.summarize();
    // ORDER BY total DESC; equal totals keep the GROUP BY order (the name).
    rows.sort_by(|a, b| {
        b.stats
            .total
            .cmp(&a.stats.total)
            .then_with(|| a.key.cmp(&b.key))
    });
    let mut table = Table::new(&header("Instances", &["Category", "Operation"]));
    let mut texts = SharedTexts::new(trace);
    for mut row in rows {
        let mut cells = row.leading_cells(grand_total, input.nsys_format);
        let events = row.take_events();
        cells.push(Cell::text(
            category.get(&row.key).copied().unwrap_or(MEMORY_OPER),
        ));
        cells.push(Cell::text(texts.text(&row.key)));
        table.push(cells, events);
    }
    table
}
