//! Readers for the GPU activity tables: kernels, memory copies, memory sets and synchronization.
//! Each returns its table in file order with the stream of every row; `assemble` sorts them.

use super::connection::{Row, int};
use super::reader::{AT_MISSING_STRINGS, FileStrings, Reader, checked_span as span, names_of};
use crate::load::LoadError;
use crate::trace::{
    CopyKind, GraphExecutions, Kernels, LoadWarnings, Memcpys, Memsets, NO_GRAPH_NODE, NO_INDEX,
    StreamKey, StringTable, SyncEvents, pid_of,
};

/// A table read in file order, with the stream each row ran on.
pub struct Read<T> {
    pub table: T,
    pub streams: Vec<StreamKey>,
    pub warnings: LoadWarnings,
}

impl<T: Default> Read<T> {
    fn new() -> Self {
        Self {
            table: T::default(),
            streams: Vec::new(),
            warnings: LoadWarnings::default(),
        }
    }
}

/// Joins the chunks of a table read in rowid ranges ([`Reader::read_in_chunks`]), in order, with
/// the per-chunk count of odd rows.
fn join_chunks<T>(
    chunks: Vec<(Read<T>, u64)>,
    append: impl Fn(&mut T, &mut T),
) -> Option<(Read<T>, u64)> {
    let mut chunks = chunks.into_iter();
    let (mut first, mut odd) = chunks.next()?;
    for (mut next, n) in chunks {
        append(&mut first.table, &mut next.table);
        first.streams.append(&mut next.streams);
        first.warnings.extend(next.warnings);
        odd += n;
    }
    Some((first, odd))
}

/// The stream of every row when a lean load left the place columns out: what NULLs read as.
fn stream_key_unplaced() -> StreamKey {
    StreamKey {
        pid: pid_of(0),
        ..StreamKey::default()
    }
}

/// The stream of a row whose `deviceId, contextId, streamId, globalPid` are read from column
/// `first` on; the default stream when a lean load left them out (`placed` false).
fn stream_key(row: &Row, first: usize, placed: bool) -> StreamKey {
    if !placed {
        return stream_key_unplaced();
    }
    StreamKey {
        device: int(row, first).unwrap_or(0) as u32,
        context: int(row, first + 1).unwrap_or(0) as u32,
        stream: int(row, first + 2).unwrap_or(0) as u32,
        pid: pid_of(int(row, first + 3).unwrap_or(0)),
    }
}

/// A `srcKind` / `dstKind` / `memKind` value; NULL or out of range reads as 255, which
/// `ENUM_CUDA_MEM_KIND` does not list (nsys's LEFT JOIN then prints no label).
fn memory_kind(v: Option<i64>) -> u8 {
    v.filter(|k| (0..255).contains(k)).unwrap_or(255) as u8
}

/// File order of `n` rows read in rowid order: 0, 1, 2, ...
pub fn file_order(n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
        .collect()
}

/// A `graphNodeId` (`--cuda-graph-trace=node`, nsys 2021.x+): [`NO_GRAPH_NODE`] when NULL.
fn graph_node(v: Option<i64>) -> u64 {
    v.map_or(NO_GRAPH_NODE, |n| n as u64)
}

/// Keeps a table's `graph_node` column only when some row ran as a graph node: exports of graphs
/// traced as a whole, or of no graphs, have the column but NULL everywhere.
fn keep_graph_nodes(column: &mut Vec<u64>) {
    if column.iter().all(|&n| n == NO_GRAPH_NODE) {
        *column = Vec::new();
    }
}

fn clamp_u16(v: Option<i64>) -> u16 {
    v.unwrap_or(0).clamp(0, u16::MAX as i64) as u16
}

fn clamp_u32(v: Option<i64>) -> u32 {
    v.unwrap_or(0).clamp(0, u32::MAX as i64) as u32
}

pub const T_KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
pub const T_MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
pub const T_MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
pub const T_SYNC: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
pub const T_GRAPH: &str = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";

// The columns each reader selects, in the positions it reads them (also scanned by the bench floor).
// What every load reads comes first: a lean load selects only those (see `Schema::select`).
pub const KERNEL_COLUMNS: &[&str] = &[
    "start",
    "end",
    "demangledName",
    "shortName",
    "deviceId",
    "contextId",
    "streamId",
    "globalPid",
    "correlationId",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
    "registersPerThread",
    "staticSharedMemory",
    "dynamicSharedMemory",
    "mangledName",
    "greenContextId",
    "graphNodeId",
];
pub const MEMCPY_COLUMNS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "globalPid",
    "correlationId",
    "bytes",
    "copyKind",
    "srcKind",
    "dstKind",
    "srcDeviceId",
    "dstDeviceId",
    "greenContextId",
    "virtualAddress",
    "graphNodeId",
];
pub const MEMSET_COLUMNS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "globalPid",
    "correlationId",
    "bytes",
    "memKind",
    "greenContextId",
    "graphNodeId",
];
pub const GRAPH_COLUMNS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "contextId",
    "streamId",
    "globalPid",
    "correlationId",
    "graphId",
    "graphExecId",
];
pub const SYNC_COLUMNS: &[&str] = &[
    "start",
    "end",
    "deviceId",
    "streamId",
    "globalPid",
    "correlationId",
    "syncType",
    "eventId",
];

pub const T_CUDA_EVENT: &str = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
/// Where each CUDA event was recorded.
pub const CUDA_EVENT_COLUMNS: &[&str] = &[
    "correlationId",
    "globalPid",
    "deviceId",
    "streamId",
    "eventId",
];

pub fn read_kernels(r: &Reader, strings: &FileStrings) -> Result<Read<Kernels>, LoadError> {
    if !r.schema.has_table(T_KERNEL) {
        return Ok(Read::new());
    }
    let placed = r.schema.has_column(T_KERNEL, "streamId");
    // Columns a command left out (see `needs`) read as NULL: skip them rather than read each.
    let has = |c: &str| r.schema.has_column(T_KERNEL, c);
    let (has_config, has_links, has_green) =
        (has("gridX"), has("correlationId"), has("greenContextId"));
    let (has_nodes, has_mangled) = (has("graphNodeId"), has("mangledName"));
    // A lean load (the classic summaries) keeps only the kernels' times and names: the other
    // columns stay empty rather than be filled with what a row without them reads as.
    let lean = r.control.needs.closed().is_lean();
    let make = |rows: usize| {
        let mut out: Read<Kernels> = Read::new();
        if lean {
            out.table.spans.reserve(rows);
            out.table.short_name.reserve(rows);
        } else {
            out.table.reserve(rows);
            out.streams.reserve(rows);
        }
        (out, 0u64)
    };
    let chunks = r.read_in_chunks(
        T_KERNEL,
        KERNEL_COLUMNS,
        make,
        |(out, unknown_names), row| {
            let Some((s, e)) = span(int(row, 0), int(row, 1), T_KERNEL, &mut out.warnings) else {
                return;
            };
            let k = &mut out.table;
            let short = strings.get(int(row, 3));
            let demangled_id = int(row, 2);
            let demangled = strings.get(demangled_id);
            // A name id that points at no string shows as `<unknown name #ID>`: the demangled
            // name's id, or the short name's when the row has no demangled one.
            if demangled_id.is_some() && demangled.is_none() && short.is_some() {
                out.warnings.add(
                    T_KERNEL,
                    "[has|have] a demangled name missing from StringIds (shown by the short name)",
                    1,
                );
            }
            let name = match demangled.or(short) {
                Some(name) => name,
                None => strings
                    .name_or_unknown(demangled_id.or(int(row, 3)), unknown_names)
                    .unwrap_or_else(|| {
                        out.warnings
                            .add(T_KERNEL, "[has|have] no name (shown unnamed)", 1);
                        StringTable::EMPTY
                    }),
            };
            k.spans.push(s, e, name);
            k.short_name.push(short.unwrap_or(name));
            // Columns the export or the command leaves out are filled in whole after the loop.
            if has_mangled {
                k.mangled_name
                    .push(strings.get(int(row, 18)).unwrap_or(name));
            }
            if placed {
                out.streams.push(stream_key(row, 4, placed));
            }
            if has_links {
                k.correlation_id.push(clamp_u32(int(row, 8)));
            }
            if has_config {
                k.grid.push([
                    clamp_u32(int(row, 9)),
                    clamp_u32(int(row, 10)),
                    clamp_u32(int(row, 11)),
                ]);
                k.block.push([
                    clamp_u16(int(row, 12)),
                    clamp_u16(int(row, 13)),
                    clamp_u16(int(row, 14)),
                ]);
                k.registers_per_thread.push(clamp_u16(int(row, 15)));
                k.static_shared_bytes.push(clamp_u32(int(row, 16)));
                k.dynamic_shared_bytes.push(clamp_u32(int(row, 17)));
            }
            if has_green {
                k.green_context.push(clamp_u32(int(row, 19)));
            }
            if has_nodes {
                k.graph_node.push(graph_node(int(row, 20)));
            }
        },
    )?;
    let Some((mut out, unknown_names)) = join_chunks(chunks, Kernels::append) else {
        return Ok(Read::new());
    };
    if !lean {
        fill_unread_kernel_columns(
            &mut out,
            [has_mangled, placed, has_links, has_config, has_green],
        );
    }
    keep_graph_nodes(&mut out.table.graph_node);
    out.warnings.add_about(
        T_KERNEL,
        &names_of("kernel"),
        AT_MISSING_STRINGS,
        unknown_names,
    );
    Ok(out)
}

/// Gives the kernel columns the export or the command left out the value a row without them
/// reads as, and every kernel its place in the file and no launching call (yet).
fn fill_unread_kernel_columns(out: &mut Read<Kernels>, read: [bool; 5]) {
    let [has_mangled, placed, has_links, has_config, has_green] = read;
    let n = out.table.spans.len();
    let k = &mut out.table;
    k.file_order = file_order(n);
    k.api_call = vec![NO_INDEX; n];
    if !has_mangled {
        k.mangled_name = k.spans.name.clone();
    }
    if !placed {
        out.streams = vec![stream_key_unplaced(); n];
    }
    if !has_links {
        k.correlation_id = vec![0; n];
    }
    if !has_config {
        k.grid = vec![[0; 3]; n];
        k.block = vec![[0; 3]; n];
        k.registers_per_thread = vec![0; n];
        k.static_shared_bytes = vec![0; n];
        k.dynamic_shared_bytes = vec![0; n];
    }
    if !has_green {
        k.green_context = vec![0; n];
    }
}

pub fn read_memcpys(r: &Reader) -> Result<Read<Memcpys>, LoadError> {
    if !r.schema.has_table(T_MEMCPY) {
        return Ok(Read::new());
    }
    let placed = r.schema.has_column(T_MEMCPY, "streamId");
    let has_nodes = r.schema.has_column(T_MEMCPY, "graphNodeId");
    let make = |rows: usize| {
        let mut out: Read<Memcpys> = Read::new();
        out.table.reserve(rows);
        out.streams.reserve(rows);
        (out, 0u64)
    };
    let chunks = r.read_in_chunks(
        T_MEMCPY,
        MEMCPY_COLUMNS,
        make,
        |(out, unknown_kind), row| {
            let Some((s, e)) = span(int(row, 0), int(row, 1), T_MEMCPY, &mut out.warnings) else {
                return;
            };
            let kind = int(row, 8).unwrap_or(0);
            if !(0..=13).contains(&kind) {
                *unknown_kind += 1;
            }
            let m = &mut out.table;
            // The name is set from the copy kind once all strings are merged.
            m.spans.push(s, e, StringTable::EMPTY);
            out.streams.push(stream_key(row, 2, placed));
            m.correlation_id.push(clamp_u32(int(row, 6)));
            m.bytes.push(int(row, 7).unwrap_or(0).max(0) as u64);
            m.copy_kind.push(CopyKind(kind.clamp(0, 255) as u8));
            m.src_kind.push(memory_kind(int(row, 9)));
            m.dst_kind.push(memory_kind(int(row, 10)));
            m.src_device.push(clamp_u16(int(row, 11)));
            m.dst_device.push(clamp_u16(int(row, 12)));
            m.api_call.push(NO_INDEX);
            m.green_context.push(clamp_u32(int(row, 13)));
            m.virtual_address.push(int(row, 14).map_or(0, |a| a as u64));
            if has_nodes {
                m.graph_node.push(graph_node(int(row, 15)));
            }
        },
    )?;
    let Some((mut out, unknown_kind)) = join_chunks(chunks, Memcpys::append) else {
        return Ok(Read::new());
    };
    out.table.file_order = file_order(out.table.spans.len());
    keep_graph_nodes(&mut out.table.graph_node);
    out.warnings.add(
        T_MEMCPY,
        "[has|have] an unknown copyKind (labelled Unknown)",
        unknown_kind,
    );
    Ok(out)
}

pub fn read_memsets(r: &Reader) -> Result<Read<Memsets>, LoadError> {
    if !r.schema.has_table(T_MEMSET) {
        return Ok(Read::new());
    }
    let placed = r.schema.has_column(T_MEMSET, "streamId");
    let has_nodes = r.schema.has_column(T_MEMSET, "graphNodeId");
    let make = |rows: usize| {
        let mut out: Read<Memsets> = Read::new();
        out.table.reserve(rows);
        out.streams.reserve(rows);
        (out, 0u64)
    };
    let chunks = r.read_in_chunks(T_MEMSET, MEMSET_COLUMNS, make, |(out, _), row| {
        let Some((s, e)) = span(int(row, 0), int(row, 1), T_MEMSET, &mut out.warnings) else {
            return;
        };
        let m = &mut out.table;
        m.spans.push(s, e, StringTable::EMPTY);
        out.streams.push(stream_key(row, 2, placed));
        m.correlation_id.push(clamp_u32(int(row, 6)));
        m.bytes.push(int(row, 7).unwrap_or(0).max(0) as u64);
        m.api_call.push(NO_INDEX);
        m.mem_kind.push(memory_kind(int(row, 8)));
        m.green_context.push(clamp_u32(int(row, 9)));
        if has_nodes {
            m.graph_node.push(graph_node(int(row, 10)));
        }
    })?;
    let mut out = join_chunks(chunks, Memsets::append).map_or_else(Read::new, |(out, _)| out);
    out.table.file_order = file_order(out.table.spans.len());
    keep_graph_nodes(&mut out.table.graph_node);
    Ok(out)
}

/// CUDA graph executions traced as a whole (nsys 2024+); `assemble` names them.
pub fn read_graphs(r: &Reader) -> Result<Read<GraphExecutions>, LoadError> {
    let mut out: Read<GraphExecutions> = Read::new();
    if !r.schema.has_table(T_GRAPH) {
        return Ok(out);
    }
    let conn = r.open()?;
    let sql = r.schema.select(T_GRAPH, GRAPH_COLUMNS);
    let placed = r.schema.has_column(T_GRAPH, "streamId");
    r.for_each_row(&conn, T_GRAPH, &sql, |row| {
        let Some((s, e)) = span(int(row, 0), int(row, 1), T_GRAPH, &mut out.warnings) else {
            return;
        };
        let g = &mut out.table;
        g.spans.push(s, e, StringTable::EMPTY);
        out.streams.push(stream_key(row, 2, placed));
        g.correlation_id.push(clamp_u32(int(row, 6)));
        g.graph_id.push(clamp_u32(int(row, 7)));
        g.graph_exec_id.push(clamp_u32(int(row, 8)));
        g.api_call.push(NO_INDEX);
    })?;
    Ok(out)
}

/// Synchronization events, with `spans.name` left empty and the sync type in `stream`'s place
/// resolved by the caller; returns the raw `syncType` of each row beside the table.
pub fn read_syncs(r: &Reader) -> Result<(SyncEvents, Vec<i64>, LoadWarnings), LoadError> {
    let mut table = SyncEvents::default();
    let mut types = Vec::new();
    let mut warnings = LoadWarnings::default();
    if !r.schema.has_table(T_SYNC) {
        return Ok((table, types, warnings));
    }
    let conn = r.open()?;
    let sql = r.schema.select(T_SYNC, SYNC_COLUMNS);
    r.for_each_row(&conn, T_SYNC, &sql, |row| {
        let Some((s, e)) = span(int(row, 0), int(row, 1), T_SYNC, &mut warnings) else {
            return;
        };
        table.spans.push(s, e, StringTable::EMPTY);
        table.device.push(clamp_u16(int(row, 2)));
        table.stream.push(clamp_u32(int(row, 3)));
        table.global_pid.push(int(row, 4).unwrap_or(0));
        table.correlation_id.push(clamp_u32(int(row, 5)));
        types.push(int(row, 6).unwrap_or(0));
        table.event_id.push(
            int(row, 7)
                .and_then(|e| u64::try_from(e).ok())
                .unwrap_or(SyncEvents::NO_EVENT),
        );
    })?;
    if r.schema.has_table(T_CUDA_EVENT) {
        let sql = r.schema.select(T_CUDA_EVENT, CUDA_EVENT_COLUMNS);
        let rec = &mut table.records;
        r.for_each_row(&conn, T_CUDA_EVENT, &sql, |row| {
            let Some(event) = int(row, 4).and_then(|e| u64::try_from(e).ok()) else {
                return;
            };
            rec.correlation_id.push(clamp_u32(int(row, 0)));
            rec.global_pid.push(int(row, 1).unwrap_or(0));
            rec.device.push(clamp_u16(int(row, 2)));
            rec.stream.push(clamp_u32(int(row, 3)));
            rec.event_id.push(event);
        })?;
    }
    Ok((table, types, warnings))
}
