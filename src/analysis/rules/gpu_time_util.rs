//! `gpu_time_util` (GPU Time Utilization), after Nsight Systems 2023.4.4's
//! `rules/gpu_time_util.py`: the span from a device's first to its last operation (per process)
//! is cut into `chunks=` (default 30) equal chunks, each chunk's share of time covered by GPU
//! work and profiling overhead is added up (operations on several streams count each, so it may
//! pass 100%), and runs of consecutive chunks below `threshold=` percent (default 50) are
//! reported as one row with the size-weighted average. Rows by average, then duration.

use super::gpu_ops::{DeviceOps, device_ops};
use super::scope::{RuleScope, int_option};
use super::{Rule, RuleInput};
use crate::analysis::NsysFormat;
use crate::analysis::ReportOptions;
use crate::analysis::table::{Cell, RowEvents, Table};
use crate::trace::Needs;

pub struct GpuTimeUtil;

const DEFAULT_THRESHOLD_PERCENT: i64 = 50;
const DEFAULT_CHUNKS: i64 = 30;
const MAX_CHUNKS: i64 = 1000;

/// One chunk of a device's span, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Chunk {
    index: i64,
    start_ns: i64,
    end_ns: i64,
    in_use_percent: f64,
}

/// A run of consecutive chunks below the threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LowUse {
    /// nsys's `groupId` (first chunk index minus the run's position), which orders equal rows.
    group: i64,
    start_ns: i64,
    end_ns: i64,
    average_percent: f64,
    pid: u32,
    device: u32,
    context: u32,
}

impl Rule for GpuTimeUtil {
    fn needs(&self, options: &ReportOptions) -> Needs {
        super::gpu_ops_needs(options)
    }

    fn name(&self) -> &'static str {
        "gpu_time_util"
    }

    fn title(&self) -> &'static str {
        "GPU Time Utilization"
    }

    // nsys fills in the `threshold=` value; these read as nsys prints them for the default.
    fn advice(&self) -> &'static str {
        "The following are time regions with an average GPU utilization below 50%. Addressing \
         the gaps might improve application performance."
    }

    fn no_result(&self) -> &'static str {
        "There were no problems detected with GPU utilization. No time regions have an average \
         GPU utilization below 50%."
    }

    fn options(&self) -> &'static [&'static str] {
        &["threshold", "chunks"]
    }

    fn compute(&self, input: &RuleInput) -> Result<Table, String> {
        let scope = RuleScope::parse(input.trace, input.options)?;
        let threshold =
            int_option(input.options, "threshold")?.unwrap_or(DEFAULT_THRESHOLD_PERCENT);
        let chunks = int_option(input.options, "chunks")?.unwrap_or(DEFAULT_CHUNKS);
        // nsys checks the range only for a non-zero value; 0 chunks finds nothing.
        if chunks != 0 && !(1..=MAX_CHUNKS).contains(&chunks) {
            return Err(format!(
                "chunks={chunks}: the number of chunks must be between 1 and {MAX_CHUNKS}"
            ));
        }
        let mut rows: Vec<LowUse> = Vec::new();
        for device in device_ops(input, &scope) {
            let chunks = device_chunks(&device, chunks);
            rows.extend(low_use_runs(
                &device,
                &chunks,
                threshold as f64,
                input.nsys_format,
            ));
        }
        // nsys limits the rows twice: the inner query keeps the first `rows=` runs in its GROUP BY
        // order (groupId, device, pid), the outer the first of those by (average, duration).
        rows.sort_by_key(|r| (r.group, r.device, r.pid));
        rows.truncate(scope.limit(rows.len()));
        rows.sort_by(|a, b| {
            a.average_percent
                .total_cmp(&b.average_percent)
                .then((a.end_ns - a.start_ns).cmp(&(b.end_ns - b.start_ns)))
        });
        let mut table = Table::new(&[
            "Row#",
            "In-Use (%)",
            "Duration (ns)",
            "Start (ns)",
            "PID",
            "Device ID",
            "Context ID",
        ]);
        for (row, r) in rows.iter().enumerate() {
            table.push(
                vec![
                    Cell::Int(row as i64 + 1),
                    Cell::Float(r.average_percent),
                    Cell::Int(r.end_ns - r.start_ns),
                    Cell::Int(r.start_ns),
                    Cell::Int(i64::from(r.pid)),
                    Cell::Int(i64::from(r.device)),
                    Cell::Int(i64::from(r.context)),
                ],
                RowEvents::Span {
                    start_ns: r.start_ns,
                    end_ns: r.end_ns,
                    device: Some(r.device),
                },
            );
        }
        Ok(table)
    }
}

/// The chunks of a device's span with the share of each that its operations cover.
///
/// nsys's chunk size is `ceil(span / chunks)` (an integer in SQLite 3.42), so the last chunks may
/// be cut short by the span's end or not exist at all. Every operation adds its overlap with each
/// chunk it touches; the overlaps are whole nanoseconds, so summing them in integers gives the
/// same value as SQLite's floating-point `sum`.
fn device_chunks(device: &DeviceOps, chunks: i64) -> Vec<Chunk> {
    if chunks <= 0 {
        return Vec::new();
    }
    let (first_ns, last_ns) = (device.start_ns, device.end_ns);
    let size = ((last_ns - first_ns) as f64 / chunks as f64).ceil() as i64;
    if size <= 0 {
        return Vec::new();
    }
    let bounds: Vec<(i64, i64)> = (0..chunks)
        .map(|r| {
            let start = r * size + first_ns;
            (start, (start + size).min(last_ns))
        })
        .take_while(|(s, e)| s < e)
        .collect();
    let mut covered = vec![0i64; bounds.len()];
    // Chunks an operation covers whole: +1 where the run starts, −1 after it ends.
    let mut whole = vec![0i64; bounds.len() + 1];
    let chunk_of = |t: i64| ((t - first_ns) / size).clamp(0, bounds.len() as i64 - 1) as usize;
    for op in &device.ops {
        if op.end_ns <= op.start_ns {
            continue;
        }
        let (lo, hi) = (chunk_of(op.start_ns), chunk_of(op.end_ns - 1));
        for c in [lo, hi] {
            let (cs, ce) = bounds[c];
            covered[c] += (op.end_ns.min(ce) - op.start_ns.max(cs)).max(0);
            if lo == hi {
                break;
            }
        }
        if hi > lo + 1 {
            whole[lo + 1] += 1;
            whole[hi] -= 1;
        }
    }
    let mut running = 0;
    bounds
        .iter()
        .enumerate()
        .map(|(c, &(start_ns, end_ns))| {
            running += whole[c];
            let busy = covered[c] + running * (end_ns - start_ns);
            Chunk {
                index: c as i64,
                start_ns,
                end_ns,
                in_use_percent: busy as f64 / (end_ns - start_ns) as f64 * 100.0,
            }
        })
        .collect()
}

/// Runs of consecutive chunks below `threshold` percent, each with its size-weighted average
/// (summed in chunk order, as SQLite's `sum` does, then rounded to 0.1).
fn low_use_runs(
    device: &DeviceOps,
    chunks: &[Chunk],
    threshold: f64,
    format: NsysFormat,
) -> Vec<LowUse> {
    let mut runs: Vec<LowUse> = Vec::new();
    let mut weighted = 0.0;
    let mut sizes: i64 = 0;
    let mut position = 0;
    for chunk in chunks.iter().filter(|c| c.in_use_percent < threshold) {
        position += 1;
        let group = chunk.index - position;
        let size = chunk.end_ns - chunk.start_ns;
        match runs.last_mut() {
            Some(run) if run.group == group => {
                run.end_ns = chunk.end_ns;
            }
            _ => {
                if let Some(run) = runs.last_mut() {
                    run.average_percent = format.round(weighted / sizes as f64, 1);
                }
                (weighted, sizes) = (0.0, 0);
                runs.push(LowUse {
                    group,
                    start_ns: chunk.start_ns,
                    end_ns: chunk.end_ns,
                    average_percent: 0.0,
                    pid: device.pid,
                    device: device.device,
                    context: device.context,
                });
            }
        }
        weighted += size as f64 * chunk.in_use_percent;
        sizes += size;
    }
    if let Some(run) = runs.last_mut() {
        run.average_percent = format.round(weighted / sizes as f64, 1);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::rules::gpu_ops::GpuOp;

    fn device(ops: &[(i64, i64)]) -> DeviceOps {
        DeviceOps {
            pid: 1,
            device: 0,
            ops: ops
                .iter()
                .enumerate()
                .map(|(i, &(s, e))| GpuOp {
                    start_ns: s,
                    end_ns: e,
                    context: 1,
                    scan: i as u64,
                })
                .collect(),
            start_ns: ops.iter().map(|o| o.0).min().unwrap_or(0),
            end_ns: ops.iter().map(|o| o.1).max().unwrap_or(0),
            context: 1,
        }
    }

    /// The busy share of each chunk, by brute force over every nanosecond's operations.
    fn brute_force(d: &DeviceOps, chunks: i64) -> Vec<f64> {
        let size = ((d.end_ns - d.start_ns) as f64 / chunks as f64).ceil() as i64;
        (0..chunks)
            .map(|r| {
                (
                    r * size + d.start_ns,
                    (r * size + d.start_ns + size).min(d.end_ns),
                )
            })
            .take_while(|(s, e)| s < e)
            .map(|(s, e)| {
                let busy: i64 = d
                    .ops
                    .iter()
                    .filter(|o| o.start_ns < e && o.end_ns > s)
                    .map(|o| o.end_ns.min(e) - o.start_ns.max(s))
                    .sum();
                busy as f64 / (e - s) as f64 * 100.0
            })
            .collect()
    }

    #[test]
    fn chunks_add_up_overlaps_like_the_sql() {
        let d = device(&[(100, 105), (103, 180), (150, 151), (190, 200), (120, 121)]);
        for n in [1, 3, 7, 30, 100, 1000] {
            let ours: Vec<f64> = device_chunks(&d, n)
                .iter()
                .map(|c| c.in_use_percent)
                .collect();
            assert_eq!(ours, brute_force(&d, n), "{n} chunks");
        }
    }

    #[test]
    fn consecutive_low_chunks_make_one_row() {
        // Busy, idle, idle, busy, idle over 5 chunks of 10 ns.
        let d = device(&[(0, 10), (30, 40), (49, 50)]);
        let chunks = device_chunks(&d, 5);
        let runs = low_use_runs(&d, &chunks, 50.0, NsysFormat::V2023_4);
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].start_ns, runs[0].end_ns), (10, 30));
        assert_eq!(runs[0].average_percent, 0.0);
        assert_eq!((runs[1].start_ns, runs[1].end_ns), (40, 50));
        assert_eq!(runs[1].average_percent, 10.0);
    }
}
