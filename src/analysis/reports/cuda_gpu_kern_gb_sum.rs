//! `cuda_gpu_kern_gb_sum` (CUDA GPU Kernel/Grid/Block Summary), after nsys 2023.4.4's
//! `cuda_gpu_kern_gb_sum.py`: kernel durations grouped by name and launch dimensions, rows by
//! total time descending, then instances ascending, then name. The same computation without the
//! dimensions is `cuda_gpu_kern_sum` under the `base` / `mangled` / `nvtx-name` options
//! ([`kernel_summary`]).

use super::duration_summary::{Groups, header};
use super::kernel_names::KernelNaming;
use super::shared_texts::SharedTexts;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, Table};
use crate::trace::Needs;

pub struct CudaGpuKernGbSum;

impl StatsReport for CudaGpuKernGbSum {
    fn name(&self) -> &'static str {
        "cuda_gpu_kern_gb_sum"
    }
    fn needs(&self, options: &ReportOptions) -> Needs {
        Needs::KERNEL_CONFIG.union(KernelNaming::needs(options))
    }

    fn title(&self) -> &'static str {
        "CUDA GPU Kernel/Grid/Block Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA kernel data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["nvtx-name", "base", "mangled"]
    }

    fn compute(&self, input: &ReportInput) -> Table {
        kernel_summary(input, true)
    }
}

/// Grid and block dimensions of a launch.
type LaunchDims = ([u32; 3], [u16; 3]);

/// Kernels grouped by their name under the report options (and by launch dimensions when
/// `by_launch_dims`), as `cuda_gpu_kern_gb_sum` / `cuda_gpu_kern_sum` print them.
pub(super) fn kernel_summary(input: &ReportInput, by_launch_dims: bool) -> Table {
    let trace = input.trace;
    let k = &trace.kernels;
    let naming = KernelNaming::from_options(trace, input.options);
    let mut groups = Groups::new(input.with_events);
    for i in input.filter.indices(trace, EventTable::Kernels) {
        let dims: Option<LaunchDims> = by_launch_dims.then(|| {
            (
                k.grid.get(i).copied().unwrap_or_default(),
                k.block.get(i).copied().unwrap_or_default(),
            )
        });
        groups.add((naming.key(i), dims), k.spans.duration_ns(i), || {
            EventRef::new(EventTable::Kernels, i)
        });
    }
    // nsys groups by the printed name: keys that print alike are one row.
    let groups = groups.map_keys(|(key, dims)| (naming.name_of(key), dims));
    let (mut rows, grand_total) = groups.summarize();
    // ORDER BY total DESC, instances, name; equal rows keep the GROUP BY order (the dimensions).
    rows.sort_by(|a, b| {
        b.stats
            .total
            .cmp(&a.stats.total)
            .then(a.stats.count.cmp(&b.stats.count))
            .then_with(|| a.key.cmp(&b.key))
    });
    let tail: &[&str] = if by_launch_dims {
        &["GridXYZ", "BlockXYZ", "Name"]
    } else {
        &["Name"]
    };
    let mut table = Table::new(&header("Instances", tail));
    let mut texts = SharedTexts::new(trace);
    for mut row in rows {
        let mut cells = row.leading_cells(grand_total, input.nsys_format);
        if let Some((grid, block)) = row.key.1 {
            // printf('%4d %4d %4d', ...)
            cells.push(Cell::text(format!(
                "{:4} {:4} {:4}",
                grid[0], grid[1], grid[2]
            )));
            cells.push(Cell::text(format!(
                "{:4} {:4} {:4}",
                block[0], block[1], block[2]
            )));
        }
        let events = row.take_events();
        cells.push(Cell::text(texts.text(&row.key.0)));
        table.push(cells, events);
    }
    table
}
