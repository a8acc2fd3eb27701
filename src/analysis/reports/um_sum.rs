//! `um_sum` (Unified Memory Analysis Summary), after Nsight Systems 2023.4.4's
//! `reports/um_sum.py`: per virtual address, the bytes migrated each way (memcpy copyKind 11 and
//! 12), the CPU and GPU page faults, and the migration throughput, highest throughput first;
//! `rows=` of them (default 10).
//!
//! The throughput is SQL integer arithmetic: bytes × (10⁹ / nanoseconds), the division
//! truncated. Rows come as nsys's `UNION ALL` makes them — addresses with page faults (CPU, then
//! GPU-only), then addresses with migrations only (DtoH, then HtoD-only), each in address order —
//! and a stable sort by throughput keeps that order for ties, rows without a throughput last.

use crate::trace::Needs;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::{ReportInput, ReportOptions, StatsReport};
use crate::analysis::filter::EventTable;
use crate::analysis::table::{Cell, EventRef, RowEvents, Table};
use crate::trace::CopyKind;

pub struct UmSum;

/// Unified-memory migrations, host to device and device to host.
pub const UNIFIED_HOST_TO_DEVICE: CopyKind = CopyKind(11);
pub const UNIFIED_DEVICE_TO_HOST: CopyKind = CopyKind(12);

/// `rows=` when absent.
const DEFAULT_ROWS: i64 = 10;

/// Indices of the unified-memory migrations (copyKind 11 and 12) the filter keeps.
pub fn migrations(input: &ReportInput) -> Vec<usize> {
    let m = &input.trace.memcpys;
    (0..m.spans.len())
        .filter(|&i| {
            matches!(
                m.copy_kind[i],
                UNIFIED_HOST_TO_DEVICE | UNIFIED_DEVICE_TO_HOST
            )
        })
        .filter(|&i| {
            input
                .filter
                .keeps(EventTable::Memcpys, i, m.spans.start_ns[i])
        })
        .collect()
}

/// An address as nsys prints `:addr_uint` columns (`0x7FA74C901000`); empty for NULL.
pub fn address_cell(address: Option<u64>) -> Cell {
    address.map_or(Cell::Null, |a| Cell::text(format!("0x{a:X}")))
}

/// `rows=`: at most that many rows, `None` for all (a negative value, as SQL's `LIMIT -1`). A
/// value that is not a number counts as absent (a report cannot fail; nsys would refuse it).
fn row_limit(options: &ReportOptions) -> Option<usize> {
    let rows = options
        .value("rows")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(DEFAULT_ROWS);
    usize::try_from(rows).ok()
}

/// Migrations of one direction to one address.
#[derive(Debug, Default)]
struct Moved {
    bytes: i128,
    duration_ns: i128,
    events: Vec<EventRef>,
}

/// One row before sorting.
struct UmRow {
    address: Option<u64>,
    htod: Option<i128>,
    dtoh: Option<i128>,
    cpu_faults: Option<i64>,
    gpu_faults: Option<i64>,
    throughput: Option<i128>,
    events: Vec<EventRef>,
}

impl StatsReport for UmSum {
    fn name(&self) -> &'static str {
        "um_sum"
    }
    fn needs(&self, _options: &ReportOptions) -> Needs {
        Needs::UNIFIED_MEMORY
    }

    fn title(&self) -> &'static str {
        "Unified Memory Analysis Summary"
    }

    fn missing_data(&self) -> &'static str {
        "CUDA Unified Memory CPU page faults data"
    }

    fn options(&self) -> &'static [&'static str] {
        &["rows"]
    }

    fn check_options(&self, options: &ReportOptions) -> Result<(), String> {
        match options.value("rows") {
            Some(v) if v.trim().parse::<i64>().is_err() => {
                Err(format!("rows={v}: not a whole number (-1 for all rows)"))
            }
            _ => Ok(()),
        }
    }

    fn compute(&self, input: &ReportInput) -> Table {
        let trace = input.trace;
        let um = &trace.unified_memory;
        if !(um.tables.memcpy && um.tables.cpu_page_faults && um.tables.gpu_page_faults) {
            return Table::default();
        }
        // Page faults per address (GROUP BY: ascending).
        let mut cpu: BTreeMap<u64, i64> = BTreeMap::new();
        let c = &um.cpu_page_faults;
        for i in 0..c.spans.len() {
            if input.filter.range.contains(c.spans.start_ns[i]) {
                *cpu.entry(c.address[i]).or_default() += 1;
            }
        }
        let mut gpu: BTreeMap<u64, i64> = BTreeMap::new();
        let g = &um.gpu_page_faults;
        for i in 0..g.spans.len() {
            if input.filter.range.contains(g.spans.start_ns[i]) {
                *gpu.entry(g.address[i]).or_default() += i64::from(g.faults[i]);
            }
        }
        // Migrations per address and direction; a NULL address (read as 0) is a group of its own
        // that joins nothing, and sorts first as SQL's NULL does.
        let mut htod: BTreeMap<Option<u64>, Moved> = BTreeMap::new();
        let mut dtoh: BTreeMap<Option<u64>, Moved> = BTreeMap::new();
        let m = &trace.memcpys;
        for i in migrations(input) {
            let address = Some(m.virtual_address[i]).filter(|&a| a != 0);
            let side = if m.copy_kind[i] == UNIFIED_HOST_TO_DEVICE {
                &mut htod
            } else {
                &mut dtoh
            };
            let moved = side.entry(address).or_default();
            moved.bytes += i128::from(m.bytes[i]);
            moved.duration_ns += i128::from(m.spans.duration_ns(i));
            if input.with_events {
                moved.events.push(EventRef::new(EventTable::Memcpys, i));
            }
        }
        // The Migrations rows: DtoH addresses (with their HtoD), then HtoD-only addresses.
        let mut moved_rows: Vec<(Option<u64>, Option<&Moved>, Option<&Moved>)> = Vec::new();
        for (a, d) in &dtoh {
            moved_rows.push((*a, a.and_then(|_| htod.get(a)), Some(d)));
        }
        for (a, h) in &htod {
            if a.is_none() || !dtoh.contains_key(a) {
                moved_rows.push((*a, Some(h), None));
            }
        }
        let moved_at: HashMap<u64, usize> = moved_rows
            .iter()
            .enumerate()
            .filter_map(|(k, r)| r.0.map(|a| (a, k)))
            .collect();
        let migration_of = |address: u64| {
            moved_at
                .get(&address)
                .map(|&k| (moved_rows[k].1, moved_rows[k].2))
        };
        let make_row = |address: Option<u64>,
                        cpu_faults: Option<i64>,
                        gpu_faults: Option<i64>,
                        moved: Option<(Option<&Moved>, Option<&Moved>)>| {
            let (h, d) = moved.unwrap_or((None, None));
            let bytes = h.map_or(0, |x| x.bytes) + d.map_or(0, |x| x.bytes);
            let duration = h.map_or(0, |x| x.duration_ns) + d.map_or(0, |x| x.duration_ns);
            // SQL: NULL * anything and x / 0 are NULL.
            let throughput =
                (moved.is_some() && duration != 0).then(|| bytes * (1_000_000_000 / duration));
            let mut events = Vec::new();
            for side in [h, d].into_iter().flatten() {
                events.extend_from_slice(&side.events);
            }
            UmRow {
                address,
                htod: h.map(|x| x.bytes),
                dtoh: d.map(|x| x.bytes),
                cpu_faults,
                gpu_faults,
                throughput,
                events,
            }
        };
        let mut rows: Vec<UmRow> = Vec::new();
        let mut with_faults: HashSet<u64> = HashSet::new();
        for (&a, &n) in &cpu {
            with_faults.insert(a);
            rows.push(make_row(
                Some(a),
                Some(n),
                gpu.get(&a).copied(),
                migration_of(a),
            ));
        }
        for (&a, &n) in &gpu {
            if with_faults.insert(a) {
                rows.push(make_row(Some(a), None, Some(n), migration_of(a)));
            }
        }
        for &(a, h, d) in &moved_rows {
            if a.is_none_or(|a| !with_faults.contains(&a)) {
                rows.push(make_row(a, None, None, Some((h, d))));
            }
        }
        rows.sort_by_key(|r| std::cmp::Reverse(r.throughput.map_or((0, 0), |t| (1, t))));
        rows.truncate(row_limit(input.options).unwrap_or(rows.len()));
        let megabytes = |b: Option<i128>| b.map_or(Cell::Null, |b| Cell::Fixed(b as f64 / 1e6, 3));
        let mut table = Table::new(&[
            "Virtual Address",
            "HtoD Migration size (MB)",
            "DtoH Migration size (MB)",
            "CPU Page Faults",
            " GPU Page Faults",
            "Migration Throughput (MB/s)",
        ]);
        for r in rows {
            let events = if r.events.is_empty() {
                RowEvents::None
            } else {
                RowEvents::Events(r.events)
            };
            table.push(
                vec![
                    address_cell(r.address),
                    megabytes(r.htod),
                    megabytes(r.dtoh),
                    Cell::opt_int(r.cpu_faults),
                    Cell::opt_int(r.gpu_faults),
                    megabytes(r.throughput),
                ],
                events,
            );
        }
        table
    }
}
