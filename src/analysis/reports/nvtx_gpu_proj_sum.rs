//! `nvtx_gpu_proj_sum` (NVTX GPU Projection Summary), after Nsight Systems 2023.4.4
//! `nvtx_gpu_proj_sum.py`: the rows of `nvtx_gpu_proj_trace` that have a range, grouped by
//! (name, style): projected and original total time, instances, the projected durations'
//! avg/med/min/max/stddev, GPU operations (launches) in total and on average, and the average
//! level and number of projected children. Rows by total projected time descending, then name
//! and style.

use crate::trace::Needs;
use std::collections::HashMap;
use std::sync::Arc;

use super::nvtx_projection::GpuProjection;
use super::nvtx_tree::printed_name;
use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::stats::Summary;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::{NvtxStyle, StrId};

pub struct NvtxGpuProjSum;

impl StatsReport for NvtxGpuProjSum {
    fn name(&self) -> &'static str {
        "nvtx_gpu_proj_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::NVTX.union(Needs::GPU_LINKS)
    }

    fn title(&self) -> &'static str {
        "NVTX GPU Projection Summary"
    }

    fn missing_data(&self) -> &'static str {
        "NV Tools Extension (NVTX) data"
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        if trace.nvtx.spans.is_empty() || trace.api_calls.spans.is_empty() {
            return Table::default();
        }
        let mut gp = GpuProjection::build(trace, input.filter, input.with_events);
        let forest = &gp.forest;
        let n = &trace.nvtx;
        // Each (domain, text) pair's printed name, made once and numbered (pairs that print
        // alike share a number): ranges are grouped by number, not by a copy of their name.
        let mut names: Vec<String> = Vec::new();
        let mut number_of_name: HashMap<String, usize> = HashMap::new();
        let mut number_of_pair: HashMap<(StrId, StrId), Option<usize>> = HashMap::new();
        let mut groups: HashMap<(usize, NvtxStyle), Group> = HashMap::new();
        for p in 0..forest.len() {
            let Some(proj) = gp.projection[p] else {
                continue;
            };
            let i = forest.nvtx_index(p);
            let number = *number_of_pair
                .entry((n.domain[i], n.spans.name[i]))
                .or_insert_with(|| {
                    // The script keeps `WHERE name IS NOT NULL` (in 2025.3 every range has a
                    // name).
                    let name =
                        printed_name(trace, n.domain[i], n.spans.name[i], input.nsys_format)?;
                    Some(*number_of_name.entry(name).or_insert_with_key(|name| {
                        names.push(name.clone());
                        names.len() - 1
                    }))
                });
            let Some(number) = number else {
                continue;
            };
            let g = groups.entry((number, n.style[i])).or_default();
            g.projected.push(proj.end_ns - proj.start_ns);
            g.range_ns += forest.duration_ns(trace, p);
            g.launches += proj.launches;
            g.levels += i64::from(forest.level[p]);
            g.children += gp.projected_children[p];
            if input.with_events {
                g.events.push(EventRef::new(EventTable::Nvtx, i));
                g.events.append(&mut gp.ops[p]);
            }
        }
        drop(number_of_name);
        let names: Vec<Arc<str>> = names.into_iter().map(Arc::from).collect();
        let mut rows: Vec<((usize, NvtxStyle), Group, Summary)> = groups
            .into_iter()
            .map(|(key, mut g)| {
                let s = Summary::of(&mut g.projected);
                (key, g, s)
            })
            .collect();
        rows.sort_by(|(ka, _, a), (kb, _, b)| {
            b.total
                .cmp(&a.total)
                .then_with(|| names[ka.0].cmp(&names[kb.0]))
                .then(ka.1.label().cmp(kb.1.label()))
        });
        let mut table = Table::new(&[
            "Range",
            "Style",
            "Total Proj Time (ns)",
            "Total Range Time (ns)",
            "Range Instances",
            "Proj Avg (ns)",
            "Proj Med (ns)",
            "Proj Min (ns)",
            "Proj Max (ns)",
            "Proj StdDev (ns)",
            "Total GPU Ops",
            "Avg GPU Ops",
            "Avg Range Lvl",
            "Avg Num Child",
        ]);
        let round = |x: f64| Cell::Float(input.nsys_format.round(x, 1));
        for ((name, style), mut g, s) in rows {
            let count = s.count as f64;
            let mut cells = vec![
                Cell::text(Arc::clone(&names[name])),
                Cell::text(style.label()),
                Cell::Int(s.total),
                Cell::Int(g.range_ns),
                Cell::Int(s.count as i64),
            ];
            cells.extend(super::duration_summary::spread_cells(&s, input.nsys_format));
            cells.extend([
                Cell::Int(g.launches),
                round(g.launches as f64 / count),
                round(g.levels as f64 / count),
                round(g.children as f64 / count),
            ]);
            let events = if g.events.is_empty() {
                RowEvents::None
            } else {
                RowEvents::Events(std::mem::take(&mut g.events))
            };
            table.push(cells, events);
        }
        table
    }
}

/// One (name, style) group of projected ranges.
#[derive(Debug, Default)]
struct Group {
    projected: Vec<i64>,
    range_ns: i64,
    launches: i64,
    levels: i64,
    children: i64,
    events: Vec<EventRef>,
}
