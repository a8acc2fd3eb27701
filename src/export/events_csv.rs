//! Raw events as CSV, one row per event, for pandas and spreadsheets: the events a [`Filter`]
//! keeps (start in the range, not excluded) of the chosen kinds, ordered by start time. RFC 4180
//! quoting through the `csv` crate, one header row ([`COLUMNS`]); a cell that does not apply to
//! a kind (e.g. `bytes` of a kernel) is empty.

use std::io::Write;

use crate::analysis::{EventTable, Filter};
use crate::trace::{GlobalTid, NO_INDEX, StringTable, Trace};

/// The header row.
pub const COLUMNS: [&str; 16] = [
    "kind",
    "name",
    "start_ns",
    "end_ns",
    "duration_ns",
    "device",
    "stream",
    "pid",
    "tid",
    "correlation_id",
    "bytes",
    "copy_kind",
    "grid",
    "block",
    "nvtx_depth",
    "domain",
];

/// A kind of event, as the `kind` column and `--kinds` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    Kernel,
    Memcpy,
    Memset,
    Api,
    Nvtx,
    Osrt,
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::Api,
        EventKind::Nvtx,
        EventKind::Osrt,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Kernel => "kernel",
            EventKind::Memcpy => "memcpy",
            EventKind::Memset => "memset",
            EventKind::Api => "api",
            EventKind::Nvtx => "nvtx",
            EventKind::Osrt => "osrt",
        }
    }

    pub fn from_name(name: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The trace table that holds this kind.
    pub fn table(self) -> EventTable {
        match self {
            EventKind::Kernel => EventTable::Kernels,
            EventKind::Memcpy => EventTable::Memcpys,
            EventKind::Memset => EventTable::Memsets,
            EventKind::Api => EventTable::ApiCalls,
            EventKind::Nvtx => EventTable::Nvtx,
            EventKind::Osrt => EventTable::Osrt,
        }
    }
}

/// Parses `kernel,memcpy,…` or `all`; the error names the unknown kind and the known ones.
pub fn parse_kinds(text: &str) -> Result<Vec<EventKind>, String> {
    if text.trim() == "all" {
        return Ok(EventKind::ALL.to_vec());
    }
    let mut kinds = Vec::new();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = EventKind::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown event kind '{name}' (known: {}, all)",
                known.join(", ")
            )
        })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    if kinds.is_empty() {
        return Err("no event kind given (e.g. --kinds kernel,memcpy)".into());
    }
    Ok(kinds)
}

/// Where a GPU op ran: (device, stream, pid), by table index.
fn gpu_placement(trace: &Trace, kind: EventKind) -> Vec<(u32, u32, u32)> {
    let len = match kind {
        EventKind::Kernel => trace.kernels.spans.len(),
        EventKind::Memcpy => trace.memcpys.spans.len(),
        _ => trace.memsets.spans.len(),
    };
    let mut out = vec![(0, 0, 0); len];
    for s in &trace.streams {
        let slice = match kind {
            EventKind::Kernel => &s.kernels,
            EventKind::Memcpy => &s.memcpys,
            _ => &s.memsets,
        };
        for i in slice.range.clone() {
            if let Some(cell) = out.get_mut(i) {
                *cell = (s.key.device, s.key.stream, s.key.pid);
            }
        }
    }
    out
}

/// Writes the events `filter` keeps, of the `kinds` given, as CSV to `out`; returns the number
/// of rows written (without the header).
pub fn write_events_csv(
    trace: &Trace,
    filter: &Filter,
    kinds: &[EventKind],
    out: impl Write,
) -> csv::Result<usize> {
    let mut rows: Vec<(i64, EventKind, usize)> = Vec::new();
    for &kind in kinds {
        for i in filter.indices(trace, kind.table()) {
            let start = match kind {
                EventKind::Kernel => trace.kernels.spans.start_ns[i],
                EventKind::Memcpy => trace.memcpys.spans.start_ns[i],
                EventKind::Memset => trace.memsets.spans.start_ns[i],
                EventKind::Api => trace.api_calls.spans.start_ns[i],
                EventKind::Nvtx => trace.nvtx.spans.start_ns[i],
                EventKind::Osrt => trace.osrt.spans.start_ns[i],
            };
            rows.push((start, kind, i));
        }
    }
    rows.sort_unstable();

    let wanted = |k: EventKind| kinds.contains(&k);
    let placement = |k: EventKind| {
        if wanted(k) {
            gpu_placement(trace, k)
        } else {
            Vec::new()
        }
    };
    let (kernel_at, memcpy_at, memset_at) = (
        placement(EventKind::Kernel),
        placement(EventKind::Memcpy),
        placement(EventKind::Memset),
    );
    let mut osrt_tid = vec![
        0i64;
        if wanted(EventKind::Osrt) {
            trace.osrt.spans.len()
        } else {
            0
        }
    ];
    for t in &trace.threads {
        for i in t.osrt.range.clone() {
            if let Some(cell) = osrt_tid.get_mut(i) {
                *cell = t.global_tid;
            }
        }
    }

    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(out);
    w.write_record(COLUMNS)?;
    let int = |v: i64| v.to_string();
    // The thread of a GPU op is the thread of its launching call.
    let launcher_tid = |api_call: u32| match api_call {
        NO_INDEX => String::new(),
        a => trace
            .api_calls
            .global_tid
            .get(a as usize)
            .map_or(String::new(), |&g| GlobalTid(g).tid().to_string()),
    };
    for &(_, kind, i) in &rows {
        let mut r: [String; 16] = Default::default();
        r[0] = kind.name().to_string();
        let spans = match kind {
            EventKind::Kernel => &trace.kernels.spans,
            EventKind::Memcpy => &trace.memcpys.spans,
            EventKind::Memset => &trace.memsets.spans,
            EventKind::Api => &trace.api_calls.spans,
            EventKind::Nvtx => &trace.nvtx.spans,
            EventKind::Osrt => &trace.osrt.spans,
        };
        r[1] = trace.str(spans.name[i]).to_string();
        r[2] = int(spans.start_ns[i]);
        r[3] = int(spans.end_ns[i]);
        r[4] = int(spans.duration_ns(i));
        let mut gpu = |(device, stream, pid): (u32, u32, u32), corr: u32, api_call: u32| {
            r[5] = device.to_string();
            r[6] = stream.to_string();
            r[7] = pid.to_string();
            r[8] = launcher_tid(api_call);
            r[9] = corr.to_string();
        };
        match kind {
            EventKind::Kernel => {
                let k = &trace.kernels;
                gpu(kernel_at[i], k.correlation_id[i], k.api_call[i]);
                let [gx, gy, gz] = k.grid[i];
                let [bx, by, bz] = k.block[i];
                r[12] = format!("{gx}x{gy}x{gz}");
                r[13] = format!("{bx}x{by}x{bz}");
            }
            EventKind::Memcpy => {
                let m = &trace.memcpys;
                gpu(memcpy_at[i], m.correlation_id[i], m.api_call[i]);
                r[10] = m.bytes[i].to_string();
                r[11] = m.copy_kind[i].label().to_string();
            }
            EventKind::Memset => {
                let m = &trace.memsets;
                gpu(memset_at[i], m.correlation_id[i], m.api_call[i]);
                r[10] = m.bytes[i].to_string();
            }
            EventKind::Api => {
                let a = &trace.api_calls;
                let g = GlobalTid(a.global_tid[i]);
                r[7] = g.pid().to_string();
                r[8] = g.tid().to_string();
                r[9] = a.correlation_id[i].to_string();
            }
            EventKind::Nvtx => {
                let n = &trace.nvtx;
                let g = GlobalTid(n.global_tid[i]);
                r[7] = g.pid().to_string();
                r[8] = g.tid().to_string();
                r[14] = n.depth[i].to_string();
                if n.domain[i] != StringTable::EMPTY {
                    r[15] = trace.str(n.domain[i]).to_string();
                }
            }
            EventKind::Osrt => {
                if let Some(&g) = osrt_tid.get(i) {
                    let g = GlobalTid(g);
                    r[7] = g.pid().to_string();
                    r[8] = g.tid().to_string();
                }
            }
        }
        w.write_record(&r)?;
    }
    w.flush()?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kind_lists() {
        assert_eq!(
            parse_kinds("kernel, memcpy,kernel"),
            Ok(vec![EventKind::Kernel, EventKind::Memcpy])
        );
        assert_eq!(parse_kinds("all"), Ok(EventKind::ALL.to_vec()));
        assert!(parse_kinds("kernels").is_err_and(|e| e.contains("known: kernel")));
        assert!(parse_kinds(" , ").is_err());
    }

    #[test]
    fn writes_a_header_only_for_an_empty_trace() {
        let mut buf = Vec::new();
        let n = write_events_csv(&Trace::default(), &Filter::all(), &EventKind::ALL, &mut buf);
        assert_eq!(n.ok(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&buf),
            format!("{}\n", COLUMNS.join(","))
        );
    }
}
