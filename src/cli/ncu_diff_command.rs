//! `sightline diff A.ncu-rep B.ncu-rep`: two Nsight Compute reports kernel by kernel (name +
//! invocation), every metric that changed ([`crate::analysis::ncu::diff`]); this file loads and
//! prints.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};

use super::Format;
use crate::analysis::ncu::diff::metric_changes;
use crate::export::text_table;
use crate::load::{self, ncu_rep};

/// Is the file an Nsight Compute report (plain, gzipped or zstd)? Unreadable files are not.
pub fn is_ncu_report(path: &Path) -> bool {
    let mut header = [0u8; 16];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut header))
        .unwrap_or(0);
    ncu_rep::report_packing(path, &header[..n]).is_some()
}

/// Prints the metrics that changed between two reports. Exit code 0.
pub fn diff_reports(base: &Path, new: &Path, format: Format) -> Result<i32> {
    if !(is_ncu_report(base) && is_ncu_report(new)) {
        bail!(
            "{} and {}: diff compares two Nsight Compute reports, or two traces — not one of each",
            base.display(),
            new.display()
        );
    }
    let read = |path: &Path| -> Result<crate::trace::ncu::NcuReport> {
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let control = load::LoadControl {
            progress: &|_| {},
            cancel: &cancel,
            needs: crate::trace::Needs::ALL,
        };
        let report = ncu_rep::load_report(path, &control)?;
        for line in report.warnings.messages() {
            eprintln!("warning: {}: {line}", path.display());
        }
        Ok(report)
    };
    let (a, b) = (read(base)?, read(new)?);
    let changes = metric_changes(&a, &b);
    let header = [
        "Kernel Name",
        "Invocation",
        "Metric Name",
        "Base",
        "New",
        "Change (%)",
    ];
    let rows: Vec<Vec<String>> = changes
        .iter()
        .map(|c| {
            vec![
                c.kernel.clone(),
                c.invocation.to_string(),
                c.metric.clone(),
                c.base.clone().unwrap_or_default(),
                c.new.clone().unwrap_or_default(),
                c.change_pct.map_or_else(String::new, |p| format!("{p:.2}")),
            ]
        })
        .collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match format {
        Format::Csv => {
            let mut w = csv::Writer::from_writer(&mut out);
            w.write_record(header)?;
            for r in &rows {
                w.write_record(r)?;
            }
            w.flush()?;
        }
        Format::Table => {
            write!(out, "{}", text_table::render(&header, &rows))?;
        }
    }
    out.flush()?;
    eprintln!(
        "{} kernels against {}: {} differences",
        a.workloads.len(),
        b.workloads.len(),
        changes.len()
    );
    Ok(0)
}
