//! `um_total_sum` (Unified Memory Totals Summary), after Nsight Systems 2023.4.4's
//! `reports/um_total_sum.py`: one row with the bytes migrated each way (memcpy copyKind 11 and
//! 12), the CPU and GPU page faults, and the lowest and highest virtual address seen.
//!
//! It needs the memcpy and both page-fault tables, even empty: then the row is mostly empty
//! (sums of nothing are NULL, a count of nothing 0). SQL's many-argument `min`/`max` are NULL as
//! soon as one source has no address, and so are the address columns then.

use super::um_sum::{UNIFIED_HOST_TO_DEVICE, address_cell, migrations};
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::Needs;

pub struct UmTotalSum;

/// Lowest and highest address of one source; `None` when it has none.
type Bounds = Option<(u64, u64)>;

fn widen(bounds: Bounds, address: u64) -> Bounds {
    Some(bounds.map_or((address, address), |(lo, hi)| {
        (lo.min(address), hi.max(address))
    }))
}

impl StatsReport for UmTotalSum {
    fn name(&self) -> &'static str {
        "um_total_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::UNIFIED_MEMORY
    }

    fn title(&self) -> &'static str {
        "Unified Memory Totals Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let um = &trace.unified_memory;
        if !(um.tables.memcpy && um.tables.cpu_page_faults && um.tables.gpu_page_faults) {
            return Table::default();
        }
        let (mut cpu_faults, mut cpu_bounds) = (0i64, None);
        let cpu = &um.cpu_page_faults;
        for i in 0..cpu.spans.len() {
            if input.filter.range.contains(cpu.spans.start_ns[i]) {
                cpu_faults += 1;
                cpu_bounds = widen(cpu_bounds, cpu.address[i]);
            }
        }
        let (mut gpu_faults, mut gpu_bounds) = (None::<i64>, None);
        let gpu = &um.gpu_page_faults;
        for i in 0..gpu.spans.len() {
            if input.filter.range.contains(gpu.spans.start_ns[i]) {
                gpu_faults = Some(gpu_faults.unwrap_or(0) + i64::from(gpu.faults[i]));
                gpu_bounds = widen(gpu_bounds, gpu.address[i]);
            }
        }
        let (mut htod_bytes, mut dtoh_bytes) = (None::<u64>, None::<u64>);
        let (mut htod_bounds, mut dtoh_bounds) = (None, None);
        let m = &trace.memcpys;
        for i in migrations(input) {
            let (bytes, bounds) = match m.copy_kind[i] {
                UNIFIED_HOST_TO_DEVICE => (&mut htod_bytes, &mut htod_bounds),
                _ => (&mut dtoh_bytes, &mut dtoh_bounds),
            };
            *bytes = Some(bytes.unwrap_or(0) + m.bytes[i]);
            // A NULL virtualAddress (read as 0) is left out of min/max, as SQL does.
            if m.virtual_address[i] != 0 {
                *bounds = widen(*bounds, m.virtual_address[i]);
            }
        }
        let all = [cpu_bounds, gpu_bounds, htod_bounds, dtoh_bounds];
        let (lowest, highest) = match all.iter().copied().collect::<Option<Vec<_>>>() {
            Some(b) => (b.iter().map(|x| x.0).min(), b.iter().map(|x| x.1).max()),
            None => (None, None),
        };
        let megabytes = |b: Option<u64>| b.map_or(Cell::Null, |b| Cell::Fixed(b as f64 / 1e6, 3));
        let mut table = Table::new(&[
            "Total HtoD Migration Size (MB)",
            "Total DtoH Migration Size (MB)",
            "Total CPU Page Faults",
            "Total GPU PageFaults",
            "Minimum Virtual Address",
            "Maximum Virtual Address",
        ]);
        table.push(
            vec![
                megabytes(htod_bytes),
                megabytes(dtoh_bytes),
                Cell::Int(cpu_faults),
                Cell::opt_int(gpu_faults),
                address_cell(lowest),
                address_cell(highest),
            ],
            RowEvents::None,
        );
        table
    }
}
