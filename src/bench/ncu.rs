//! `sightline bench REPORT.ncu-rep`: how fast an Nsight Compute report opens to its kernel
//! table — the load (median of the runs) and the table's rows built from the loaded report —
//! and the resident memory the process holds with the report loaded.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::{median, memory, ms, timed_load, warm_page_cache};
use crate::analysis::ncu::kernels::kernel_rows;
use crate::load::LoadError;

#[derive(Debug, Clone, Serialize)]
pub struct NcuBenchReport {
    pub report: String,
    pub file_bytes: u64,
    pub kernels: usize,
    pub runs: u32,
    /// Each load, in ms.
    pub load_ms: Vec<f64>,
    pub load_median_ms: f64,
    /// Building the kernel table's rows (every column of every kernel), median, ms.
    pub table_median_ms: f64,
    /// Load and table: the time to an interactive kernel table, median, ms.
    pub to_table_median_ms: f64,
    /// Resident memory with one report loaded and its table built, and the peak, in bytes.
    pub rss_bytes: Option<u64>,
    pub peak_rss_bytes: Option<u64>,
}

pub fn run(path: &Path, runs: u32) -> Result<NcuBenchReport, LoadError> {
    let file_bytes = warm_page_cache(path);
    let runs = runs.max(1);
    let (mut loads, mut tables, mut totals) = (Vec::new(), Vec::new(), Vec::new());
    let mut kernels = 0;
    let mut held: Option<crate::trace::Trace> = None;
    for _ in 0..runs {
        // The previous run's report is dropped first: one report in memory at a time.
        drop(held.take());
        let (trace, load, _) = timed_load(path)?;
        let t = Instant::now();
        let rows = trace.ncu.as_deref().map(kernel_rows).unwrap_or_default();
        let table = t.elapsed();
        kernels = rows.len();
        loads.push(ms(load));
        tables.push(ms(table));
        totals.push(ms(load + table));
        held = Some(trace);
    }
    let resident = memory::resident();
    drop(held);
    Ok(NcuBenchReport {
        report: path.display().to_string(),
        file_bytes,
        kernels,
        runs,
        load_median_ms: median(&loads),
        load_ms: loads,
        table_median_ms: median(&tables),
        to_table_median_ms: median(&totals),
        rss_bytes: resident.map(|r| r.now_bytes),
        peak_rss_bytes: resident.map(|r| r.peak_bytes),
    })
}

impl NcuBenchReport {
    pub fn to_table(&self) -> String {
        let mib = |b: Option<u64>| {
            b.map_or("–".to_string(), |b| {
                format!("{:.0} MiB", b as f64 / 1048576.0)
            })
        };
        format!(
            "{}: {:.1} MB, {} kernels, {} runs\n\
             load                 {:>9.1} ms (median; runs: {})\n\
             kernel table         {:>9.1} ms\n\
             to interactive table {:>9.1} ms\n\
             resident memory      {} (peak {})\n",
            self.report,
            self.file_bytes as f64 / 1e6,
            self.kernels,
            self.runs,
            self.load_median_ms,
            self.load_ms
                .iter()
                .map(|v| format!("{v:.1}"))
                .collect::<Vec<_>>()
                .join(", "),
            self.table_median_ms,
            self.to_table_median_ms,
            mib(self.rss_bytes),
            mib(self.peak_rss_bytes),
        )
    }
}
