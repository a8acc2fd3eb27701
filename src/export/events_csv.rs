//! Raw events as CSV, one row per event, for pandas and spreadsheets: the events a [`Filter`]
//! keeps (start in the range, not excluded) of the chosen kinds, ordered by start time. RFC 4180
//! quoting through the `csv` crate, one header row ([`COLUMNS`]); a cell that does not apply to
//! a kind (e.g. `bytes` of a kernel) is empty. Unified-memory page faults (`page_fault`) add a
//! last column, [`ADDRESS_COLUMN`], when they are among the kinds; backtraces
//! ([`CsvOptions::backtraces`]) add [`BACKTRACE_COLUMN`] after it, the very last. CPU samples
//! (`sample`, asked for by name: not part of `all`) are one row per sample, an instant on its
//! thread named by its innermost function.

use std::io::Write;

use crate::analysis::{EventTable, Filter};
use crate::trace::{GlobalTid, NO_INDEX, Needs, StackId, StringTable, Trace};

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

/// The column added after [`COLUMNS`] when `page_fault` is among the kinds: the faulting page's
/// virtual address in hex (`0x…`), empty on the rows of other kinds.
pub const ADDRESS_COLUMN: &str = "address";

/// The column added last with [`CsvOptions::backtraces`]: on `api` and `osrt` rows the function
/// names of the call's backtrace, innermost first, joined by [`BACKTRACE_SEPARATOR`]; empty when
/// the call has none and on the rows of other kinds.
pub const BACKTRACE_COLUMN: &str = "backtrace";

/// The columns added (before [`BACKTRACE_COLUMN`]) when `graph` is among the kinds and the trace
/// has graph executions: the graph's `graphId` and `graphExecId`.
pub const GRAPH_COLUMNS: [&str; 2] = ["graph_id", "graph_exec_id"];

/// Between two frames of a [`BACKTRACE_COLUMN`] cell.
pub const BACKTRACE_SEPARATOR: &str = " <- ";

/// What the CSV holds beyond the kinds' rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsvOptions {
    /// Add [`BACKTRACE_COLUMN`].
    pub backtraces: bool,
}

/// The header row for `kinds`: [`COLUMNS`], then [`ADDRESS_COLUMN`] when page faults are asked for.
pub fn columns(kinds: &[EventKind]) -> Vec<&'static str> {
    columns_with(kinds, CsvOptions::default())
}

/// The header row for `kinds` and `options`: [`columns`], then [`BACKTRACE_COLUMN`] when asked for.
pub fn columns_with(kinds: &[EventKind], options: CsvOptions) -> Vec<&'static str> {
    let mut columns = COLUMNS.to_vec();
    if kinds.contains(&EventKind::PageFault) {
        columns.push(ADDRESS_COLUMN);
    }
    if options.backtraces {
        columns.push(BACKTRACE_COLUMN);
    }
    columns
}

/// A kind of event, as the `kind` column and `--kinds` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    Kernel,
    Memcpy,
    Memset,
    Api,
    Nvtx,
    Osrt,
    /// Unified-memory page faults, CPU (`CUDA_UM_CPU_PAGE_FAULT_EVENTS`) and GPU
    /// (`CUDA_UM_GPU_PAGE_FAULT_EVENTS`).
    PageFault,
    /// CUDA graph executions traced as a whole (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`); their rows
    /// add [`GRAPH_COLUMNS`] when the trace has any.
    Graph,
    /// CPU samples (`COMPOSITE_EVENTS`): not in [`EventKind::ALL`] (a capture holds thousands a
    /// second per thread), asked for by name.
    Sample,
}

impl EventKind {
    pub const ALL: [EventKind; 8] = [
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::Graph,
        EventKind::Api,
        EventKind::Nvtx,
        EventKind::Osrt,
        EventKind::PageFault,
    ];

    /// Every kind `--kinds` names: [`EventKind::ALL`] and [`EventKind::Sample`].
    pub const NAMED: [EventKind; 9] = [
        EventKind::Kernel,
        EventKind::Memcpy,
        EventKind::Memset,
        EventKind::Graph,
        EventKind::Api,
        EventKind::Nvtx,
        EventKind::Osrt,
        EventKind::PageFault,
        EventKind::Sample,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::Kernel => "kernel",
            EventKind::Memcpy => "memcpy",
            EventKind::Memset => "memset",
            EventKind::Graph => "graph",
            EventKind::Api => "api",
            EventKind::Nvtx => "nvtx",
            EventKind::Osrt => "osrt",
            EventKind::PageFault => "page_fault",
            EventKind::Sample => "sample",
        }
    }

    pub fn from_name(name: &str) -> Option<EventKind> {
        EventKind::NAMED.into_iter().find(|k| k.name() == name)
    }

    /// What rows of this kind read from a trace: GPU rows name the thread of their launching
    /// call, API rows their correlation id; thread names come with every part.
    pub fn needs(self) -> Needs {
        match self {
            EventKind::Kernel => Needs::GPU_LINKS | Needs::KERNEL_CONFIG,
            EventKind::Memcpy | EventKind::Memset | EventKind::Graph | EventKind::Api => {
                Needs::GPU_LINKS
            }
            EventKind::Nvtx => Needs::NVTX,
            EventKind::Osrt => Needs::OSRT,
            EventKind::PageFault => Needs::UNIFIED_MEMORY,
            EventKind::Sample => Needs::CPU_SAMPLES,
        }
    }

    /// The trace table that holds this kind; page faults live in `trace.unified_memory`, outside
    /// the tables that warm-up exclusion covers.
    pub fn table(self) -> Option<EventTable> {
        match self {
            EventKind::Kernel => Some(EventTable::Kernels),
            EventKind::Memcpy => Some(EventTable::Memcpys),
            EventKind::Memset => Some(EventTable::Memsets),
            EventKind::Api => Some(EventTable::ApiCalls),
            EventKind::Nvtx => Some(EventTable::Nvtx),
            EventKind::Osrt => Some(EventTable::Osrt),
            EventKind::PageFault | EventKind::Sample | EventKind::Graph => None,
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
            let known: Vec<&str> = EventKind::NAMED.iter().map(|k| k.name()).collect();
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

/// A `page_fault` row's index: CPU faults first, then GPU faults, in one numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PageFault {
    Cpu(usize),
    Gpu(usize),
}

impl PageFault {
    fn at(trace: &Trace, i: usize) -> PageFault {
        let cpu = trace.unified_memory.cpu_page_faults.spans.len();
        if i < cpu {
            PageFault::Cpu(i)
        } else {
            PageFault::Gpu(i - cpu)
        }
    }
}

/// The page faults whose start lies in the filter's range, in the numbering of [`PageFault`].
/// Warm-up exclusion does not reach them: it flags only the tables of [`EventTable`].
fn page_fault_rows(trace: &Trace, filter: &Filter) -> Vec<(i64, usize)> {
    let um = &trace.unified_memory;
    um.cpu_page_faults
        .spans
        .start_ns
        .iter()
        .chain(&um.gpu_page_faults.spans.start_ns)
        .copied()
        .enumerate()
        .filter(|&(_, start)| filter.range.contains(start))
        .map(|(i, start)| (start, i))
        .collect()
}

/// Fills a `page_fault` row: named by its side, `device` for a GPU fault, `pid` (faults are
/// recorded per process, `globalPid`, not per thread), the address in hex in column `address_at`.
fn page_fault_cells(trace: &Trace, fault: PageFault, address_at: Option<usize>, r: &mut [String]) {
    let um = &trace.unified_memory;
    let (spans, i, global_pid, address) = match fault {
        PageFault::Cpu(i) => {
            let f = &um.cpu_page_faults;
            r[1] = "CPU page fault".to_string();
            (&f.spans, i, f.global_pid[i], f.address[i])
        }
        PageFault::Gpu(i) => {
            let f = &um.gpu_page_faults;
            r[1] = "GPU page fault".to_string();
            r[5] = f.device[i].to_string();
            (&f.spans, i, f.global_pid[i], f.address[i])
        }
    };
    r[2] = spans.start_ns[i].to_string();
    r[3] = spans.end_ns[i].to_string();
    r[4] = spans.duration_ns(i).to_string();
    r[7] = GlobalTid(global_pid).pid().to_string();
    if let Some(cell) = address_at.and_then(|c| r.get_mut(c)) {
        *cell = format!("{address:#x}");
    }
}

/// The graph executions the filter keeps: start in range, launching call not excluded.
fn graph_rows(trace: &Trace, filter: &Filter) -> Vec<(i64, usize)> {
    let g = &trace.graphs;
    (0..g.spans.len())
        .filter(|&i| filter.range.contains(g.spans.start_ns[i]))
        .filter(|&i| {
            let call = g.api_call[i];
            call == NO_INDEX
                || !filter
                    .excluded
                    .is_some_and(|e| e.is_excluded(EventTable::ApiCalls, call as usize))
        })
        .map(|i| (g.spans.start_ns[i], i))
        .collect()
}

/// Where each graph execution ran: (device, stream, pid), by table index.
fn graph_placement(trace: &Trace) -> Vec<(u32, u32, u32)> {
    let mut out = vec![(0, 0, 0); trace.graphs.spans.len()];
    for s in &trace.streams {
        for i in s.graphs.range.clone() {
            if let Some(cell) = out.get_mut(i) {
                *cell = (s.key.device, s.key.stream, s.key.pid);
            }
        }
    }
    out
}

/// The CPU samples taken in the filter's range: (time, index into `trace.cpu_samples`). Warm-up
/// exclusion does not reach them: it flags only the tables of [`EventTable`].
fn sample_rows(trace: &Trace, filter: &Filter) -> Vec<(i64, usize)> {
    trace
        .cpu_samples
        .time_ns
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, t)| filter.range.contains(t))
        .map(|(i, t)| (t, i))
        .collect()
}

/// Fills a `sample` row: an instant on its thread, named by its innermost function (empty when
/// the sample has no call stack).
fn sample_cells(trace: &Trace, i: usize, r: &mut [String]) {
    let s = &trace.cpu_samples;
    let (Some(&time), Some(&thread), Some(&stack)) =
        (s.time_ns.get(i), s.thread.get(i), s.stack.get(i))
    else {
        return;
    };
    if let Some(leaf) = trace.stacks.frames(stack).first() {
        r[1] = trace.str(leaf.function).to_string();
    }
    r[2] = time.to_string();
    r[3] = time.to_string();
    r[4] = "0".to_string();
    if let Some(t) = trace.threads.get(thread as usize) {
        r[7] = t.pid.to_string();
        r[8] = t.tid.to_string();
    }
}

/// A [`BACKTRACE_COLUMN`] cell: the function names of `stack`, innermost first.
pub fn backtrace_text(trace: &Trace, stack: StackId) -> String {
    let names: Vec<&str> = trace
        .stacks
        .frames(stack)
        .iter()
        .map(|f| trace.str(f.function))
        .collect();
    names.join(BACKTRACE_SEPARATOR)
}

/// Writes the events `filter` keeps, of the `kinds` given, as CSV to `out`; returns the number
/// of rows written (without the header).
pub fn write_events_csv(
    trace: &Trace,
    filter: &Filter,
    kinds: &[EventKind],
    out: impl Write,
) -> csv::Result<usize> {
    write_events_csv_with(trace, filter, kinds, CsvOptions::default(), out)
}

/// [`write_events_csv`] with the columns `options` add.
pub fn write_events_csv_with(
    trace: &Trace,
    filter: &Filter,
    kinds: &[EventKind],
    options: CsvOptions,
    out: impl Write,
) -> csv::Result<usize> {
    let mut rows: Vec<(i64, EventKind, usize)> = Vec::new();
    for &kind in kinds {
        let Some(table) = kind.table() else {
            let extra = match kind {
                EventKind::Sample => sample_rows(trace, filter),
                EventKind::Graph => graph_rows(trace, filter),
                _ => page_fault_rows(trace, filter),
            };
            rows.extend(extra.into_iter().map(|(start, i)| (start, kind, i)));
            continue;
        };
        for i in filter.indices(trace, table) {
            let start = match kind {
                EventKind::Kernel => trace.kernels.spans.start_ns[i],
                EventKind::Memcpy => trace.memcpys.spans.start_ns[i],
                EventKind::Memset => trace.memsets.spans.start_ns[i],
                EventKind::Api => trace.api_calls.spans.start_ns[i],
                EventKind::Nvtx => trace.nvtx.spans.start_ns[i],
                EventKind::Osrt => trace.osrt.spans.start_ns[i],
                EventKind::PageFault | EventKind::Sample | EventKind::Graph => continue,
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
    let mut header = columns_with(kinds, options);
    let graph_at = if wanted(EventKind::Graph) && !trace.graphs.spans.is_empty() {
        let at = header.len() - usize::from(options.backtraces);
        header.splice(at..at, GRAPH_COLUMNS);
        Some(at)
    } else {
        None
    };
    let graph_at_place = if graph_at.is_some() {
        graph_placement(trace)
    } else {
        Vec::new()
    };
    w.write_record(&header)?;
    let address_at = header.iter().position(|&c| c == ADDRESS_COLUMN);
    let backtrace_at = header.iter().position(|&c| c == BACKTRACE_COLUMN);
    let backtrace = |r: &mut [String], chain: Option<&StackId>| {
        if let (Some(col), Some(&stack)) = (backtrace_at, chain) {
            r[col] = backtrace_text(trace, stack);
        }
    };
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
        let mut r = vec![String::new(); header.len()];
        r[0] = kind.name().to_string();
        let spans = match kind {
            EventKind::Kernel => &trace.kernels.spans,
            EventKind::Memcpy => &trace.memcpys.spans,
            EventKind::Memset => &trace.memsets.spans,
            EventKind::Graph => &trace.graphs.spans,
            EventKind::Api => &trace.api_calls.spans,
            EventKind::Nvtx => &trace.nvtx.spans,
            EventKind::Osrt => &trace.osrt.spans,
            EventKind::PageFault => {
                page_fault_cells(trace, PageFault::at(trace, i), address_at, &mut r);
                w.write_record(&r)?;
                continue;
            }
            EventKind::Sample => {
                sample_cells(trace, i, &mut r);
                w.write_record(&r)?;
                continue;
            }
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
            EventKind::Graph => {
                let g = &trace.graphs;
                let place = graph_at_place.get(i).copied().unwrap_or_default();
                gpu(place, g.correlation_id[i], g.api_call[i]);
                if let Some(at) = graph_at {
                    r[at] = g.graph_id[i].to_string();
                    r[at + 1] = g.graph_exec_id[i].to_string();
                }
            }
            EventKind::Api => {
                let a = &trace.api_calls;
                let g = GlobalTid(a.global_tid[i]);
                r[7] = g.pid().to_string();
                r[8] = g.tid().to_string();
                r[9] = a.correlation_id[i].to_string();
                backtrace(&mut r, a.callchain.get(i));
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
                backtrace(&mut r, trace.osrt.callchain.get(i));
            }
            EventKind::PageFault | EventKind::Sample => {}
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
            format!("{},address\n", COLUMNS.join(","))
        );
    }

    #[test]
    fn the_address_column_comes_only_with_page_faults() {
        assert_eq!(columns(&[EventKind::Kernel]), COLUMNS.to_vec());
        let with = columns(&[EventKind::PageFault, EventKind::Api]);
        assert_eq!(with.len(), COLUMNS.len() + 1);
        assert_eq!(with.last(), Some(&ADDRESS_COLUMN));
        assert_eq!(parse_kinds("page_fault"), Ok(vec![EventKind::PageFault]));
    }

    #[test]
    fn samples_are_asked_for_by_name_and_backtraces_come_last() {
        assert_eq!(parse_kinds("sample"), Ok(vec![EventKind::Sample]));
        assert!(parse_kinds("all").is_ok_and(|k| !k.contains(&EventKind::Sample)));
        let options = CsvOptions { backtraces: true };
        let with = columns_with(&[EventKind::Api, EventKind::PageFault], options);
        assert_eq!(&with[COLUMNS.len()..], [ADDRESS_COLUMN, BACKTRACE_COLUMN]);
        let mut buf = Vec::new();
        let n = write_events_csv_with(
            &Trace::default(),
            &Filter::all(),
            &[EventKind::Sample],
            options,
            &mut buf,
        );
        assert_eq!(n.ok(), Some(0));
        assert_eq!(
            String::from_utf8_lossy(&buf),
            format!("{},backtrace\n", COLUMNS.join(","))
        );
    }
}
