//! ncu's per-kernel summary (`ncu --import R --csv --print-summary per-kernel`): the workloads
//! grouped by process, kernel name, launch shape and device, each group's invocation count and
//! the minimum, maximum and average of every numeric metric of its sections' headers (sections
//! in name order), with two decimals in a unit scaled for the group.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::format::separated;
use super::names::KernelNames;
use super::raw::device_and_cc;
use super::{UnitMode, write_row};
use crate::analysis::ncu::shown;
use crate::analysis::ncu::units::{named_unit, scaled};
use crate::trace::ncu::{NcuReport, NcuSection, NcuWorkload};

const HEADER: [&str; 15] = [
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
    "Invocations",
    "Section Name",
    "Metric Name",
    "Metric Unit",
    "Minimum",
    "Maximum",
    "Average",
];

fn shape(v: [u64; 3]) -> String {
    format!("({}, {}, {})", v[0], v[1], v[2])
}

/// A group's key cells: what ncu groups invocations by.
fn key(report: &NcuReport, names: &KernelNames, w: &NcuWorkload) -> Vec<String> {
    let process = report.process(w);
    let (device, cc) = device_and_cc(report, w);
    vec![
        w.pid.to_string(),
        process.map(|p| p.name().to_string()).unwrap_or_default(),
        process.map(|p| p.host_name.clone()).unwrap_or_default(),
        names.get(w).to_string(),
        shape(w.block),
        shape(w.grid),
        device,
        cc,
    ]
}

/// Where a group comes on the page: kernel name, block size and shape, grid size and shape.
type GroupOrder = (String, u64, [u64; 3], u64, [u64; 3]);

/// A group's key cells and its workloads.
type Group<'a> = (Vec<String>, Vec<&'a NcuWorkload>);

fn two_decimals(x: f64) -> String {
    let text = format!("{x:.2}");
    separated(
        text.strip_prefix('-')
            .filter(|r| r == &"0.00")
            .unwrap_or(&text),
    )
}

/// Writes the summary page.
pub fn write(report: &NcuReport, mode: UnitMode, out: &mut dyn Write) -> io::Result<()> {
    write_row(out, &HEADER)?;
    // ncu orders groups by kernel name, then by block and grid: by their number of threads
    // and blocks first ((64, 1, 1) before (9, 16, 1)), then by x, y, z.
    let mut groups: BTreeMap<GroupOrder, Group> = BTreeMap::new();
    let names = KernelNames::of(report);
    let volume = |v: [u64; 3]| v.iter().fold(1u64, |a, &b| a.saturating_mul(b));
    for w in &report.workloads {
        let k = key(report, &names, w);
        let sort = (
            k[3].clone(),
            volume(w.block),
            w.block,
            volume(w.grid),
            w.grid,
        );
        let entry = groups
            .entry(sort)
            .or_insert_with(|| (k.clone(), Vec::new()));
        entry.1.push(w);
    }
    for (cells, members) in groups.values() {
        let Some(first) = members.first() else {
            continue;
        };
        let mut sections: Vec<&NcuSection> = first
            .sections
            .iter()
            .filter_map(|&id| report.section(id))
            .collect();
        sections.sort_by(|a, b| a.display_name.cmp(&b.display_name));
        for section in sections {
            // ncu lists a section's metrics by metric name.
            let mut rows: Vec<(&str, Vec<String>)> = Vec::new();
            for m in &section.header {
                let Some((name, label, _)) = shown(report, first, m) else {
                    continue;
                };
                let values: Vec<f64> = members
                    .iter()
                    .filter_map(|w| report.number(w, name))
                    .collect();
                if values.is_empty() {
                    continue;
                }
                let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let avg = values.iter().sum::<f64>() / values.len() as f64;
                let unit = if m.unit.is_empty() {
                    named_unit(report, name)
                } else {
                    m.unit.clone()
                };
                let (unit, factor) = match mode {
                    UnitMode::Auto if !unit.is_empty() => scaled(&unit, max.abs()),
                    _ => (unit, 1.0),
                };
                let f = |x: f64| two_decimals(if factor == 1.0 { x } else { x * (1.0 / factor) });
                let mut row = cells.clone();
                row.extend([
                    members.len().to_string(),
                    section.display_name.clone(),
                    label,
                    unit,
                    f(min),
                    f(max),
                    f(avg),
                ]);
                rows.push((name, row));
            }
            rows.sort_by(|a, b| a.0.cmp(b.0));
            for (_, row) in rows {
                write_row(out, &row)?;
            }
        }
    }
    Ok(())
}
