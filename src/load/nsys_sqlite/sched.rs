//! Reader for thread scheduling (`SCHED_EVENTS`): pairs each sched-in with the next scheduling
//! event of the same thread (by `start`, ties in table order) when that is a sched-out, giving
//! the thread's running intervals; unpaired events are dropped.

use super::connection::int;
use super::reader::Reader;
use crate::load::LoadError;
use crate::trace::LoadWarnings;

pub const T_SCHED: &str = "SCHED_EVENTS";
pub const SCHED_COLUMNS: &[&str] = &["start", "cpu", "isSchedIn", "globalTid"];

/// Running intervals in (thread, start) order, and each thread's first and last event time.
#[derive(Debug, Default)]
pub struct SchedRead {
    pub global_tid: Vec<i64>,
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    pub cpu: Vec<u16>,
    /// (globalTid, first event, last event), by globalTid.
    pub spans: Vec<(i64, i64, i64)>,
}

/// One scheduling event as read: (globalTid, start, file order, cpu, sched-in).
type Event = (i64, i64, u32, u16, bool);

pub fn read_sched(r: &Reader) -> Result<(SchedRead, LoadWarnings), LoadError> {
    let mut warnings = LoadWarnings::default();
    let mut out = SchedRead::default();
    if !r.schema.has_table(T_SCHED) {
        return Ok((out, warnings));
    }
    let conn = r.open()?;
    let sql = format!("{} ORDER BY rowid", r.schema.select(T_SCHED, SCHED_COLUMNS));
    let mut events: Vec<Event> = Vec::new();
    let mut skipped = 0u64;
    r.for_each_row(&conn, T_SCHED, &sql, |row| {
        let (Some(start), Some(tid), Some(is_in)) = (int(row, 0), int(row, 3), int(row, 2)) else {
            skipped += 1;
            return;
        };
        let cpu = int(row, 1).unwrap_or(0).clamp(0, i64::from(u16::MAX)) as u16;
        let order = u32::try_from(events.len()).unwrap_or(u32::MAX);
        events.push((tid, start, order, cpu, is_in != 0));
    })?;
    warnings.skip(
        T_SCHED,
        "[has|have] no time, thread or direction (skipped)",
        skipped,
    );
    events.sort_unstable_by_key(|e| (e.0, e.1, e.2));
    for run in events.chunk_by(|a, b| a.0 == b.0) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        out.spans.push((first.0, first.1, last.1));
        for pair in run.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.4 && !b.4 {
                out.global_tid.push(a.0);
                out.start_ns.push(a.1);
                out.end_ns.push(b.1);
                out.cpu.push(a.3);
            }
        }
    }
    Ok((out, warnings))
}
