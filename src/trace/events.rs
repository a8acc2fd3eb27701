//! Event tables in struct-of-arrays form. Each table holds every event of one kind, sorted by
//! (track, start), so the events of one track are a contiguous slice of the table and a name is a
//! 4-byte [`StrId`]. Indices into these tables are stable once the trace is built.

use super::strings::StrId;

/// Marks a missing link (e.g. a GPU op whose launching API call was not captured).
pub const NO_INDEX: u32 = u32::MAX;

/// Start, end and name of every event of a table.
#[derive(Debug, Default, Clone)]
pub struct Spans {
    pub start_ns: Vec<i64>,
    pub end_ns: Vec<i64>,
    pub name: Vec<StrId>,
}

impl Spans {
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    pub fn duration_ns(&self, i: usize) -> i64 {
        // Saturating: the timestamps come from the user's file.
        self.end_ns[i].saturating_sub(self.start_ns[i])
    }

    pub fn push(&mut self, start_ns: i64, end_ns: i64, name: StrId) {
        self.start_ns.push(start_ns);
        self.end_ns.push(end_ns);
        self.name.push(name);
    }

    /// Reorders every column by `order` (a permutation of `0..len`).
    pub fn permute(&mut self, order: &[u32]) {
        permute(&mut self.start_ns, order);
        permute(&mut self.end_ns, order);
        permute(&mut self.name, order);
    }

    pub fn heap_bytes(&self) -> usize {
        self.len() * (8 + 8 + 4)
    }

    /// Makes room for `additional` more events in every column.
    pub fn reserve(&mut self, additional: usize) {
        self.start_ns.reserve(additional);
        self.end_ns.reserve(additional);
        self.name.reserve(additional);
    }

    /// Moves every event of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut Self) {
        self.start_ns.append(&mut other.start_ns);
        self.end_ns.append(&mut other.end_ns);
        self.name.append(&mut other.name);
    }
}

/// Applies `order` to one column: element `i` of the result is element `order[i]` of the input.
pub fn permute<T: Copy>(column: &mut Vec<T>, order: &[u32]) {
    if column.is_empty() {
        return;
    }
    let sorted: Vec<T> = order.iter().map(|&i| column[i as usize]).collect();
    *column = sorted;
}

/// CUDA kernels (`CUPTI_ACTIVITY_KIND_KERNEL`); `spans.name` is the demangled name.
#[derive(Debug, Default, Clone)]
pub struct Kernels {
    pub spans: Spans,
    pub short_name: Vec<StrId>,
    /// The raw mangled name (`mangledName`, 2023.x exports); the demangled name where the export
    /// has none, as nsys's `:mangled` report option falls back (kernel_helper.py).
    pub mangled_name: Vec<StrId>,
    pub correlation_id: Vec<u32>,
    pub grid: Vec<[u32; 3]>,
    pub block: Vec<[u16; 3]>,
    pub registers_per_thread: Vec<u16>,
    pub static_shared_bytes: Vec<u32>,
    pub dynamic_shared_bytes: Vec<u32>,
    /// Index into [`ApiCalls`] of the call that launched it, or [`NO_INDEX`].
    pub api_call: Vec<u32>,
    /// Position of the row in `CUPTI_ACTIVITY_KIND_KERNEL` (rowid order): nsys's row dumps
    /// order rows with equal sort keys this way.
    pub file_order: Vec<u32>,
    /// `greenContextId` (CUDA 12.4+); 0 when none, or when the export predates the column.
    pub green_context: Vec<u32>,
    /// PyTorch's `External id` (the operator that launched it); empty in nsys exports.
    pub external_id: Vec<u64>,
    /// `graphNodeId` of each row run as a node of a CUDA graph launch (`--cuda-graph-trace=node`),
    /// [`super::NO_GRAPH_NODE`] for the others; empty when the export has no node ids.
    pub graph_node: Vec<u64>,
}

/// Direction of a memory copy, the CUPTI `copyKind` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CopyKind(pub u8);

impl CopyKind {
    pub const HOST_TO_DEVICE: CopyKind = CopyKind(1);
    pub const DEVICE_TO_HOST: CopyKind = CopyKind(2);
    pub const DEVICE_TO_DEVICE: CopyKind = CopyKind(8);
    pub const PEER_TO_PEER: CopyKind = CopyKind(10);

    /// A unified-memory migration (kinds 11–13): moved by the driver on a page fault or a
    /// prefetch, launched by no CUDA call of its own.
    pub fn is_unified_migration(self) -> bool {
        matches!(self.0, 11..=13)
    }

    /// The label nsys prints (`ENUM_CUDA_MEMCPY_OPER.label`), fixed across versions.
    pub fn label(self) -> &'static str {
        match self.0 {
            1 => "Host-to-Device",
            2 => "Device-to-Host",
            3 => "Host-to-Array",
            4 => "Array-to-Host",
            5 => "Array-to-Array",
            6 => "Array-to-Device",
            7 => "Device-to-Array",
            8 => "Device-to-Device",
            9 => "Host-to-Host",
            10 => "Peer-to-Peer",
            11 => "Unified Host-to-Device",
            12 => "Unified Device-to-Host",
            13 => "Unified Device-to-Device",
            _ => "Unknown",
        }
    }

    /// Short form for tight labels: HtoD, DtoH, ...
    pub fn short(self) -> &'static str {
        match self.0 {
            1 | 11 => "HtoD",
            2 | 12 => "DtoH",
            3 => "HtoA",
            4 => "AtoH",
            5 => "AtoA",
            6 => "AtoD",
            7 => "DtoA",
            8 | 13 => "DtoD",
            9 => "HtoH",
            10 => "PtoP",
            _ => "?",
        }
    }
}

/// Kind of memory at either end of a copy (`srcKind` / `dstKind`) or of a memset (`memKind`).
pub fn memory_kind_label(kind: u8) -> &'static str {
    memory_kind_name(kind).unwrap_or("Unknown")
}

/// The label of `ENUM_CUDA_MEM_KIND`, `None` for a value the enum lacks. Every export, from
/// 2021.x to 2025.x, stores nsys's own numbering (0 pageable, 1 pinned, 2 device, ... 7 unknown),
/// not CUPTI's (where 1 is pageable and 7 pinned).
pub fn memory_kind_name(kind: u8) -> Option<&'static str> {
    Some(match kind {
        0 => "Pageable",
        1 => "Pinned",
        2 => "Device",
        3 => "Array",
        4 => "Managed",
        5 => "Device Static",
        6 => "Managed Static",
        7 => "Unknown",
        _ => return None,
    })
}

/// Memory copies (`CUPTI_ACTIVITY_KIND_MEMCPY`); `spans.name` is `[CUDA memcpy <label>]`.
#[derive(Debug, Default, Clone)]
pub struct Memcpys {
    pub spans: Spans,
    pub correlation_id: Vec<u32>,
    pub bytes: Vec<u64>,
    pub copy_kind: Vec<CopyKind>,
    pub src_kind: Vec<u8>,
    pub dst_kind: Vec<u8>,
    /// Source and destination CUDA device of a peer copy (`srcDeviceId`, `dstDeviceId`).
    pub src_device: Vec<u16>,
    pub dst_device: Vec<u16>,
    pub api_call: Vec<u32>,
    /// Position of the row in `CUPTI_ACTIVITY_KIND_MEMCPY` (rowid order), for ties.
    pub file_order: Vec<u32>,
    /// `greenContextId`, 0 when none.
    pub green_context: Vec<u32>,
    /// `virtualAddress` of a unified-memory migration (the page range moved); 0 when none.
    pub virtual_address: Vec<u64>,
    /// PyTorch's `External id` (the operator that launched it); empty in nsys exports.
    pub external_id: Vec<u64>,
    /// The name a PyTorch trace gives it (`Memcpy HtoD (Pageable -> Device)`, `Memset (Device)`),
    /// which PyTorch's own tables group by; empty in nsys exports.
    pub kineto_name: Vec<StrId>,
    /// `graphNodeId` of each copy run as a graph node, as in [`Kernels::graph_node`].
    pub graph_node: Vec<u64>,
}

/// Memory sets (`CUPTI_ACTIVITY_KIND_MEMSET`); `spans.name` is `[CUDA memset]`.
#[derive(Debug, Default, Clone)]
pub struct Memsets {
    pub spans: Spans,
    pub correlation_id: Vec<u32>,
    pub bytes: Vec<u64>,
    pub api_call: Vec<u32>,
    /// Kind of the memory set (`memKind`, see [`memory_kind_name`]).
    pub mem_kind: Vec<u8>,
    /// Position of the row in `CUPTI_ACTIVITY_KIND_MEMSET` (rowid order), for ties.
    pub file_order: Vec<u32>,
    /// `greenContextId`, 0 when none.
    pub green_context: Vec<u32>,
    /// PyTorch's `External id` (the operator that launched it); empty in nsys exports.
    pub external_id: Vec<u64>,
    /// The name a PyTorch trace gives it (`Memcpy HtoD (Pageable -> Device)`, `Memset (Device)`),
    /// which PyTorch's own tables group by; empty in nsys exports.
    pub kineto_name: Vec<StrId>,
    /// `graphNodeId` of each memset run as a graph node, as in [`Kernels::graph_node`].
    pub graph_node: Vec<u64>,
}

/// CUDA graph executions traced as a whole (`CUPTI_ACTIVITY_KIND_GRAPH_TRACE`, the default of
/// nsys since 2024, `--cuda-graph-trace=graph`): one row per launch of a graph, the graph's GPU
/// work as one block on its stream. `spans.name` is `CUDA graph <graphId>`. These are GPU work for
/// every busy/idle figure, but not kernels: nsys's kernel reports leave them out.
#[derive(Debug, Default, Clone)]
pub struct GraphExecutions {
    pub spans: Spans,
    pub correlation_id: Vec<u32>,
    pub graph_id: Vec<u32>,
    pub graph_exec_id: Vec<u32>,
    /// Index into [`ApiCalls`] of the `cudaGraphLaunch` that launched it, or [`NO_INDEX`].
    pub api_call: Vec<u32>,
}

impl GraphExecutions {
    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.graph_id, order);
        permute(&mut self.graph_exec_id, order);
        permute(&mut self.api_call, order);
    }
}

/// CUDA runtime or driver API call (`CUPTI_ACTIVITY_KIND_RUNTIME`); `spans.name` is the raw name
/// (e.g. `cudaLaunchKernel_v7000`).
#[derive(Debug, Default, Clone)]
pub struct ApiCalls {
    pub spans: Spans,
    pub correlation_id: Vec<u32>,
    /// `globalTid` of the calling thread.
    pub global_tid: Vec<i64>,
    /// `returnValue` (the CUresult or cudaError_t), [`ApiCalls::NO_RESULT`] when NULL.
    pub return_value: Vec<i32>,
    /// Position of the row in file order: the rows of `CUPTI_ACTIVITY_KIND_RUNTIME` in rowid
    /// order, then those of `CUPTI_ACTIVITY_KIND_DRIVER` where an old export has that table.
    pub file_order: Vec<u32>,
    /// The first `file_order` of a `CUPTI_ACTIVITY_KIND_DRIVER` row, `None` when there are none.
    /// nsys 2023.4's reports read only the RUNTIME table.
    pub driver_rows_from: Option<u32>,
    /// The call's backtrace (`--cudabacktrace`) in `trace.stacks`, [`super::NO_STACK`] when none.
    /// The loader reads the file's `callchainId` here and turns it into a stack id.
    pub callchain: Vec<u32>,
    /// PyTorch's `External id` (the operator that launched it); empty in nsys exports.
    pub external_id: Vec<u64>,
}

/// How an NVTX range was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum NvtxStyle {
    /// `nvtxRangePush` / `nvtxRangePop` (eventType 59, or 70 for the payload variant).
    PushPop,
    /// `nvtxRangeStart` / `nvtxRangeEnd` (eventType 60 / 71).
    StartEnd,
    /// `nvtxMark` (eventType 34): an instant, `end == start`.
    Mark,
}

impl NvtxStyle {
    pub fn label(self) -> &'static str {
        match self {
            NvtxStyle::PushPop => "PushPop",
            NvtxStyle::StartEnd => "StartEnd",
            NvtxStyle::Mark => "Mark",
        }
    }
}

/// What made a range: an NVTX range in an nsys export, or one of PyTorch's own ranges in a
/// PyTorch profiler (Kineto) trace. Ranges of one kind nest among themselves, so each kind has
/// its own rows on a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(u8)]
pub enum RangeKind {
    /// `record_function` and `ProfilerStep#N` on a CPU thread (Kineto `user_annotation`).
    Annotation,
    /// A PyTorch operator (Kineto `cpu_op`, 2021 schema `Operator`).
    Operator,
    /// Time the profiler spent inside the program (Kineto `overhead`: CUPTI's `Activity Buffer
    /// Request`, `Buffer Flush`), placed on the thread whose operators were running then: Kineto
    /// writes no thread (pid -1, tid 0).
    ProfilerOverhead,
    /// NVTX (nsys exports).
    #[default]
    Nvtx,
    /// A Python frame (`with_stack`: Kineto `python_function`).
    Python,
    /// A `record_function` range as the GPU ran it (Kineto `gpu_user_annotation`), on a GPU lane.
    GpuAnnotation,
}

impl RangeKind {
    /// Row titles and legends: "Annotations", "Operators", ...
    pub fn label(self) -> &'static str {
        match self {
            RangeKind::Annotation => "Annotations",
            RangeKind::Operator => "Operators",
            RangeKind::ProfilerOverhead => "Profiler overhead",
            RangeKind::Nvtx => "NVTX",
            RangeKind::Python => "Python",
            RangeKind::GpuAnnotation => "GPU annotations",
        }
    }
}

/// NVTX ranges and marks (`NVTX_EVENTS`); `spans.name` is the text, without the domain.
///
/// A PyTorch profiler trace keeps its operators, annotations and Python frames here too, told
/// apart by [`NvtxRanges::kind`]; its GPU annotations are on GPU lanes (threads whose
/// `gpu_lane` is set).
#[derive(Debug, Default, Clone)]
pub struct NvtxRanges {
    pub spans: Spans,
    /// Name of the range's domain, [`super::strings::StringTable::EMPTY`] for the default domain.
    pub domain: Vec<StrId>,
    /// ARGB colour set by the application, 0 when none.
    pub color_argb: Vec<u32>,
    pub style: Vec<NvtxStyle>,
    /// Nesting depth on its thread, 0 outermost.
    pub depth: Vec<u16>,
    /// `globalTid` of the thread that opened it.
    pub global_tid: Vec<i64>,
    /// True when the file has no end (an unclosed range): `end_ns` is then the last NVTX timestamp.
    pub unclosed: Vec<bool>,
    /// The row's `rowid` in `NVTX_EVENTS` (nsys prints it as the range id, and it orders ties).
    pub row_id: Vec<i64>,
    /// The row has an `endGlobalTid`: a start/end range ended on another thread. nsys's
    /// projection and range-kernel reports leave such ranges out (`endGlobalTid IS NULL`).
    pub ended_on_other_thread: Vec<bool>,
    /// What made each range; empty when every range is NVTX (nsys exports). Read it with
    /// [`NvtxRanges::kind_of`].
    pub kind: Vec<RangeKind>,
    /// PyTorch's `External id` of each range (empty in nsys exports): the id its CUDA calls and GPU
    /// work carry in their own `external_id`.
    pub external_id: Vec<u64>,
    /// `Input Dims` of each range as PyTorch prints `input_shapes` (`[[2048, 2048], []]`); in an
    /// nsys export, the `sizes = …` of PyTorch's emit_nvtx texts ([`super::emit_nvtx`]), empty
    /// when no range has them; [`super::strings::StringTable::EMPTY`] where a range has none.
    pub input_shapes: Vec<StrId>,
    /// `Input type`, `Input Strides` and `Concrete Inputs` of each range (`record_shapes`), the
    /// JSON text as the trace writes it (`["float", "Scalar"]`); empty in nsys exports,
    /// [`super::strings::StringTable::EMPTY`] where the trace has none. The operator-efficiency
    /// models read them (data types, strides, flags such as `is_causal`).
    pub input_types: Vec<StrId>,
    pub input_strides: Vec<StrId>,
    pub concrete_inputs: Vec<StrId>,
}

impl NvtxRanges {
    /// What made range `i`.
    pub fn kind_of(&self, i: usize) -> RangeKind {
        self.kind.get(i).copied().unwrap_or_default()
    }

    /// Range `i` is a PyTorch operator: Kineto's `cpu_op`, or an NVTX range of emit_nvtx with
    /// recorded shapes.
    pub fn is_operator(&self, i: usize) -> bool {
        match self.kind_of(i) {
            RangeKind::Operator => true,
            RangeKind::Nvtx => self
                .input_shapes
                .get(i)
                .is_some_and(|&s| s != super::StringTable::EMPTY),
            _ => false,
        }
    }

    /// Some range is a PyTorch operator ([`NvtxRanges::is_operator`]).
    pub fn has_operators(&self) -> bool {
        self.kind.contains(&RangeKind::Operator)
            || self
                .input_shapes
                .iter()
                .any(|&s| s != super::StringTable::EMPTY)
    }
}

/// OS runtime calls (`OSRT_API`).
#[derive(Debug, Default, Clone)]
pub struct OsrtCalls {
    pub spans: Spans,
    /// `eventClass`: [`OsrtCalls::CALL`] for a call; the table also holds instants such as "OS
    /// runtime libraries profiling started" (31, 32), which `osrt_sum` leaves out.
    pub event_class: Vec<u8>,
    /// The call's backtrace in `trace.stacks`, [`super::NO_STACK`] when none (the loader reads
    /// the file's `callchainId` here and turns it into a stack id).
    pub callchain: Vec<u32>,
}

/// CUDA synchronization events (`CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`), sorted by start.
#[derive(Debug, Default, Clone)]
pub struct SyncEvents {
    pub spans: Spans,
    pub correlation_id: Vec<u32>,
    pub global_pid: Vec<i64>,
    pub device: Vec<u16>,
    pub stream: Vec<u32>,
    /// PyTorch traces: the `External id` of the op that made the call (`cuda_sync` events of
    /// `enable_cuda_sync_events`); empty for nsys exports.
    pub external_id: Vec<u64>,
    /// PyTorch traces: Kineto's own name ("Stream Sync", "Context Sync", "Stream Wait Event"),
    /// the key `key_averages()` gives it; empty for nsys exports.
    pub kineto_name: Vec<StrId>,
    /// nsys exports: the CUDA event a stream-wait or event synchronize waited for (`eventId`),
    /// [`SyncEvents::NO_EVENT`] where none; empty for PyTorch traces.
    pub event_id: Vec<u64>,
    /// nsys exports: where each CUDA event was recorded (`CUPTI_ACTIVITY_KIND_CUDA_EVENT`), in
    /// file order; not permuted with the rows above.
    pub records: CudaEventRecords,
}

/// Records of CUDA events (`cudaEventRecord`, `CUPTI_ACTIVITY_KIND_CUDA_EVENT`): the call (by
/// correlation id, within its process) and the stream the event was recorded on.
#[derive(Debug, Default, Clone)]
pub struct CudaEventRecords {
    pub correlation_id: Vec<u32>,
    pub global_pid: Vec<i64>,
    pub device: Vec<u16>,
    pub stream: Vec<u32>,
    pub event_id: Vec<u64>,
}

/// Label of a CUPTI synchronization type (`ENUM_CUPTI_SYNC_TYPE`).
pub fn sync_type_label(sync_type: i64) -> &'static str {
    match sync_type {
        1 => "Event synchronize",
        2 => "Stream wait event",
        3 => "Stream synchronize",
        4 => "Context synchronize",
        _ => "Synchronize",
    }
}

/// One step of the GPU memory in use by a process on a device (`CUDA_GPU_MEMORY_USAGE_EVENTS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsageSample {
    pub time_ns: i64,
    pub bytes_in_use: i64,
}

impl Kernels {
    /// Makes room for `additional` more rows in every column.
    pub fn reserve(&mut self, additional: usize) {
        self.spans.reserve(additional);
        self.short_name.reserve(additional);
        self.mangled_name.reserve(additional);
        self.correlation_id.reserve(additional);
        self.grid.reserve(additional);
        self.block.reserve(additional);
        self.registers_per_thread.reserve(additional);
        self.static_shared_bytes.reserve(additional);
        self.dynamic_shared_bytes.reserve(additional);
        self.api_call.reserve(additional);
        self.file_order.reserve(additional);
        self.green_context.reserve(additional);
    }

    /// Moves every row of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut Self) {
        self.external_id.append(&mut other.external_id);
        self.spans.append(&mut other.spans);
        self.short_name.append(&mut other.short_name);
        self.mangled_name.append(&mut other.mangled_name);
        self.correlation_id.append(&mut other.correlation_id);
        self.grid.append(&mut other.grid);
        self.block.append(&mut other.block);
        self.registers_per_thread
            .append(&mut other.registers_per_thread);
        self.static_shared_bytes
            .append(&mut other.static_shared_bytes);
        self.dynamic_shared_bytes
            .append(&mut other.dynamic_shared_bytes);
        self.api_call.append(&mut other.api_call);
        self.file_order.append(&mut other.file_order);
        self.green_context.append(&mut other.green_context);
        self.graph_node.append(&mut other.graph_node);
    }

    /// Reorders every column by `order` (see [`permute`]).
    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.short_name, order);
        permute(&mut self.mangled_name, order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.grid, order);
        permute(&mut self.block, order);
        permute(&mut self.registers_per_thread, order);
        permute(&mut self.static_shared_bytes, order);
        permute(&mut self.dynamic_shared_bytes, order);
        permute(&mut self.api_call, order);
        permute(&mut self.file_order, order);
        permute(&mut self.green_context, order);
        permute(&mut self.external_id, order);
        permute(&mut self.graph_node, order);
    }
}

impl Memcpys {
    /// Makes room for `additional` more rows in every column.
    pub fn reserve(&mut self, additional: usize) {
        self.spans.reserve(additional);
        self.correlation_id.reserve(additional);
        self.bytes.reserve(additional);
        self.copy_kind.reserve(additional);
        self.src_kind.reserve(additional);
        self.dst_kind.reserve(additional);
        self.src_device.reserve(additional);
        self.dst_device.reserve(additional);
        self.api_call.reserve(additional);
        self.file_order.reserve(additional);
        self.green_context.reserve(additional);
        self.virtual_address.reserve(additional);
    }

    /// Moves every row of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut Self) {
        self.spans.append(&mut other.spans);
        self.correlation_id.append(&mut other.correlation_id);
        self.bytes.append(&mut other.bytes);
        self.copy_kind.append(&mut other.copy_kind);
        self.src_kind.append(&mut other.src_kind);
        self.dst_kind.append(&mut other.dst_kind);
        self.src_device.append(&mut other.src_device);
        self.dst_device.append(&mut other.dst_device);
        self.api_call.append(&mut other.api_call);
        self.file_order.append(&mut other.file_order);
        self.green_context.append(&mut other.green_context);
        self.virtual_address.append(&mut other.virtual_address);
        self.external_id.append(&mut other.external_id);
        self.kineto_name.append(&mut other.kineto_name);
        self.graph_node.append(&mut other.graph_node);
    }

    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.bytes, order);
        permute(&mut self.copy_kind, order);
        permute(&mut self.src_kind, order);
        permute(&mut self.dst_kind, order);
        permute(&mut self.src_device, order);
        permute(&mut self.dst_device, order);
        permute(&mut self.api_call, order);
        permute(&mut self.file_order, order);
        permute(&mut self.green_context, order);
        permute(&mut self.virtual_address, order);
        permute(&mut self.external_id, order);
        permute(&mut self.kineto_name, order);
        permute(&mut self.graph_node, order);
    }
}

impl Memsets {
    /// Makes room for `additional` more rows in every column.
    pub fn reserve(&mut self, additional: usize) {
        self.spans.reserve(additional);
        self.correlation_id.reserve(additional);
        self.bytes.reserve(additional);
        self.api_call.reserve(additional);
        self.mem_kind.reserve(additional);
        self.file_order.reserve(additional);
        self.green_context.reserve(additional);
    }

    /// Moves every row of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut Self) {
        self.spans.append(&mut other.spans);
        self.correlation_id.append(&mut other.correlation_id);
        self.bytes.append(&mut other.bytes);
        self.api_call.append(&mut other.api_call);
        self.mem_kind.append(&mut other.mem_kind);
        self.file_order.append(&mut other.file_order);
        self.green_context.append(&mut other.green_context);
        self.external_id.append(&mut other.external_id);
        self.kineto_name.append(&mut other.kineto_name);
        self.graph_node.append(&mut other.graph_node);
    }

    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.bytes, order);
        permute(&mut self.api_call, order);
        permute(&mut self.mem_kind, order);
        permute(&mut self.file_order, order);
        permute(&mut self.green_context, order);
        permute(&mut self.external_id, order);
        permute(&mut self.kineto_name, order);
        permute(&mut self.graph_node, order);
    }
}

impl ApiCalls {
    /// `return_value` of a row whose `returnValue` is NULL.
    pub const NO_RESULT: i32 = i32::MIN;

    /// Was row `i` read from `CUPTI_ACTIVITY_KIND_RUNTIME` (rather than an old export's DRIVER
    /// table)?
    pub fn is_from_runtime_table(&self, i: usize) -> bool {
        match (self.driver_rows_from, self.file_order.get(i)) {
            (Some(first), Some(&order)) => order < first,
            _ => true,
        }
    }

    /// Makes room for `additional` more rows in every column.
    pub fn reserve(&mut self, additional: usize) {
        self.spans.reserve(additional);
        self.correlation_id.reserve(additional);
        self.global_tid.reserve(additional);
        self.return_value.reserve(additional);
        self.file_order.reserve(additional);
        self.callchain.reserve(additional);
    }

    /// Moves every row of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut Self) {
        self.spans.append(&mut other.spans);
        self.correlation_id.append(&mut other.correlation_id);
        self.global_tid.append(&mut other.global_tid);
        self.return_value.append(&mut other.return_value);
        self.file_order.append(&mut other.file_order);
        self.callchain.append(&mut other.callchain);
        self.external_id.append(&mut other.external_id);
    }

    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.global_tid, order);
        permute(&mut self.return_value, order);
        permute(&mut self.file_order, order);
        permute(&mut self.callchain, order);
        permute(&mut self.external_id, order);
    }
}

impl NvtxRanges {
    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.domain, order);
        permute(&mut self.color_argb, order);
        permute(&mut self.style, order);
        permute(&mut self.depth, order);
        permute(&mut self.global_tid, order);
        permute(&mut self.unclosed, order);
        permute(&mut self.row_id, order);
        permute(&mut self.ended_on_other_thread, order);
        permute(&mut self.kind, order);
        permute(&mut self.external_id, order);
        permute(&mut self.input_shapes, order);
        permute(&mut self.input_types, order);
        permute(&mut self.input_strides, order);
        permute(&mut self.concrete_inputs, order);
    }
}

impl OsrtCalls {
    /// The `eventClass` of an OS runtime call (osrt_sum.py counts only these).
    pub const CALL: u8 = 27;

    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.event_class, order);
        permute(&mut self.callchain, order);
    }
}

impl SyncEvents {
    /// `event_id` of a row that names no event.
    pub const NO_EVENT: u64 = u64::MAX;

    pub fn permute(&mut self, order: &[u32]) {
        self.spans.permute(order);
        permute(&mut self.event_id, order);
        permute(&mut self.correlation_id, order);
        permute(&mut self.global_pid, order);
        permute(&mut self.device, order);
        permute(&mut self.stream, order);
        permute(&mut self.external_id, order);
        permute(&mut self.kineto_name, order);
    }

    /// Moves `other`'s rows to the end of these.
    pub fn append(&mut self, other: &mut SyncEvents) {
        self.spans.append(&mut other.spans);
        self.correlation_id.append(&mut other.correlation_id);
        self.global_pid.append(&mut other.global_pid);
        self.device.append(&mut other.device);
        self.stream.append(&mut other.stream);
        self.external_id.append(&mut other.external_id);
        self.kineto_name.append(&mut other.kineto_name);
        self.event_id.append(&mut other.event_id);
        let (r, o) = (&mut self.records, &mut other.records);
        r.correlation_id.append(&mut o.correlation_id);
        r.global_pid.append(&mut o.global_pid);
        r.device.append(&mut o.device);
        r.stream.append(&mut o.stream);
        r.event_id.append(&mut o.event_id);
    }
}
