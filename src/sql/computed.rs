//! The views Sightline computes rather than reads, as tables filled from a loaded trace:
//! `gaps` — GPU idle gaps as `sightline gaps` lists them by default (per GPU, at least
//! [`crate::analysis::DEFAULT_MIN_GAP_NS`], with their cause) — and `samples` — CPU samples with
//! their thread and innermost frame. Made only where the trace has them (GPU work; CPU samples).
//! TEMP tables beside an export's views, plain tables in a PyTorch trace's in-memory database.

use rusqlite::{Connection, params};

use crate::analysis::{self, Filter, GapOptions, gap_causes};
use crate::trace::{NO_STACK, Trace};

/// Columns of `gaps`.
pub const GAPS: &str = "start, end, dur, device, stream, cause, before, after";
/// Columns of `samples`.
pub const SAMPLES: &str = "ts, pid, tid, thread, function, module, depth";

/// Creates and fills `gaps` and `samples` in `conn` where `trace` has them; `temp` makes them
/// TEMP tables (beside the views of a read-only export).
pub fn add(conn: &Connection, trace: &Trace, temp: bool) -> rusqlite::Result<()> {
    conn.execute_batch("BEGIN")?;
    let filled = (|| {
        for name in create(conn, trace, temp)? {
            fill_table(conn, trace, name)?;
        }
        Ok(())
    })();
    match filled {
        Ok(()) => conn.execute_batch("COMMIT"),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Creates `gaps` and `samples` where `trace` has them, empty, and returns the names made (for
/// [`fill_table`]).
pub fn create(conn: &Connection, trace: &Trace, temp: bool) -> rusqlite::Result<Vec<&'static str>> {
    let mut made = Vec::new();
    for (name, columns, has) in [
        ("gaps", GAPS, trace.gpu_span().is_some()),
        ("samples", SAMPLES, !trace.cpu_samples.is_empty()),
    ] {
        if !has {
            continue;
        }
        let list: Vec<String> = columns.split(", ").map(|c| format!("\"{c}\"")).collect();
        let temp = if temp { "TEMP " } else { "" };
        conn.execute_batch(&format!(
            "CREATE {temp}TABLE \"{name}\" ({})",
            list.join(", ")
        ))?;
        made.push(name);
    }
    Ok(made)
}

/// Fills `name` (`gaps` or `samples`, made by [`create`]) from `trace`.
pub fn fill_table(conn: &Connection, trace: &Trace, name: &str) -> rusqlite::Result<()> {
    match name {
        "gaps" => fill_gaps(conn, trace),
        "samples" => fill_samples(conn, trace),
        _ => Ok(()),
    }
}

fn fill_gaps(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let gaps = analysis::gpu_idle_gaps(trace, &Filter::all(), &GapOptions::default());
    let causes = gap_causes::gap_causes(trace, &gaps);
    let mut insert = conn.prepare("INSERT INTO gaps VALUES (?, ?, ?, ?, ?, ?, ?, ?)")?;
    for (i, g) in gaps.iter().enumerate() {
        insert.execute(params![
            g.start_ns,
            g.end_ns,
            g.duration_ns(),
            g.device,
            g.stream.map(|s| s.stream),
            causes.get(i).map(|c| c.cause.label()),
            g.before.map(|op| op.name(trace)),
            g.after.map(|op| op.name(trace)),
        ])?;
    }
    Ok(())
}

fn fill_samples(conn: &Connection, trace: &Trace) -> rusqlite::Result<()> {
    let s = &trace.cpu_samples;
    let mut insert = conn.prepare("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)")?;
    for i in 0..s.len() {
        let thread = s.thread.get(i).and_then(|&t| trace.threads.get(t as usize));
        let stack = s.stack.get(i).copied().unwrap_or(NO_STACK);
        let frames = if stack == NO_STACK {
            &[][..]
        } else {
            trace.stacks.frames(stack)
        };
        // Frames are innermost first: the first is where the sample landed.
        let top = frames.first();
        let name = thread.map(|t| trace.str(t.name)).filter(|n| !n.is_empty());
        insert.execute(params![
            s.time_ns[i],
            thread.map(|t| t.pid),
            thread.map(|t| t.tid),
            name,
            top.map(|f| trace.str(f.function)),
            top.map(|f| trace.str(f.module)),
            frames.len() as i64,
        ])?;
    }
    Ok(())
}
