//! The immutable in-memory trace: event tables, the tracks that slice them, interned strings and
//! the facts about the machine (GPUs, processes, threads). Built once by a loader, then only read.

pub mod call_stacks;
pub mod cpu_samples;
pub mod emit_nvtx;
pub mod events;
pub mod gpu_metrics;
pub mod graph_launches;
pub mod ids;
pub mod load_warnings;
pub mod ncu;
pub mod ncu_source;
pub mod needs;
pub mod openacc;
pub mod openmp;
pub mod profiler_overhead;
pub mod strings;
pub mod thread_states;
pub mod torch;
mod tracks;
pub mod unified_memory;
pub mod xla;

pub use call_stacks::{CallStacks, CallStacksBuilder, Frame, NO_STACK, StackId};
pub use cpu_samples::CpuSamples;
pub use events::*;
pub use gpu_metrics::{GpuMetricSeries, GpuMetrics, MetricStats};
pub use graph_launches::{GraphLaunches, GraphNodeOps, NO_GRAPH_NODE, group_graph_launches};
pub use ids::{GlobalTid, pid_of};
pub use load_warnings::{LoadWarning, LoadWarnings, TableRows};
pub use needs::Needs;
pub use openacc::{OpenAccEvents, OpenAccKind};
pub use openmp::OpenMpEvents;
pub use profiler_overhead::ProfilerOverhead;
pub use strings::{StrId, StringTable};
pub use thread_states::ThreadStates;
pub use torch::{CollectiveCall, TorchInfo, TorchMemoryEvents, TraceFormat};
pub use tracks::*;
pub use unified_memory::{CpuPageFaults, GpuPageFaults, UnifiedMemory, UnifiedMemoryTables};
pub use xla::{XlaGpuOp, XlaInfo};

use std::path::PathBuf;

/// What kind of accelerator a device is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DeviceKind {
    #[default]
    Gpu,
    /// A TPU of an XPlane (`/device:TPU:N`): its ops are ranges of its lane, no kernels.
    Tpu,
}

impl DeviceKind {
    pub fn label(self) -> &'static str {
        match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Tpu => "TPU",
        }
    }
}

/// A GPU of the profiled machine (or another accelerator: [`GpuInfo::kind`]).
#[derive(Debug, Clone, Default)]
pub struct GpuInfo {
    /// CUDA device id, as in the `deviceId` column of GPU activity.
    pub device: u32,
    pub name: String,
    pub sm_count: Option<u32>,
    pub memory_bytes: Option<u64>,
    pub bus_location: Option<String>,
    /// (major, minor), where the file says (PyTorch's `deviceProperties`).
    pub compute_capability: Option<(u32, u32)>,
    pub kind: DeviceKind,
}

/// A profiled process.
#[derive(Debug, Clone)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: StrId,
}

/// A whole trace. Times are nanoseconds from the session start (nsys's own zero).
#[derive(Debug, Default)]
pub struct Trace {
    pub path: PathBuf,
    pub strings: StringTable,
    pub kernels: Kernels,
    pub memcpys: Memcpys,
    pub memsets: Memsets,
    /// CUDA graphs traced as a whole: GPU work that is not kernels (see [`GraphExecutions`]).
    pub graphs: GraphExecutions,
    /// CUDA graphs traced node by node: each launch's nodes grouped (see [`GraphLaunches`]); the
    /// nodes themselves are in `kernels`, `memcpys` and `memsets`.
    pub graph_launches: GraphLaunches,
    pub api_calls: ApiCalls,
    pub nvtx: NvtxRanges,
    pub osrt: OsrtCalls,
    pub syncs: SyncEvents,
    /// Time the profiler took in the profiled processes (`PROFILER_OVERHEAD`), in file order.
    pub profiler_overhead: ProfilerOverhead,
    /// Unified-memory page faults (the migrations are in `memcpys`).
    pub unified_memory: UnifiedMemory,
    pub openacc: OpenAccEvents,
    pub openmp: OpenMpEvents,
    /// GPU memory in use over time, per (pid, device), from `CUDA_GPU_MEMORY_USAGE_EVENTS`.
    pub memory_usage: Vec<MemoryUsageTrack>,
    /// GPU metric counters (`--gpu-metrics-device`), one series per (device, metric).
    pub gpu_metrics: GpuMetrics,
    /// Every distinct call stack: of CPU samples and of CUDA / OS-runtime call backtraces.
    pub stacks: CallStacks,
    /// CPU samples (`COMPOSITE_EVENTS`), sorted by (thread, time).
    pub cpu_samples: CpuSamples,
    /// Running intervals of threads (`SCHED_EVENTS`), sorted by (thread, start).
    pub thread_states: ThreadStates,
    pub gpus: Vec<GpuInfo>,
    pub processes: Vec<ProcessInfo>,
    /// One per CUDA stream that ran anything, ordered by (device, pid, context, stream).
    pub streams: Vec<StreamTrack>,
    /// One per CPU thread that has API calls, NVTX, OS runtime events, CPU samples or running
    /// intervals, ordered by (pid, tid).
    pub threads: Vec<ThreadTrack>,
    /// UTC time of the session start, when the file records it.
    pub session_start_utc_ns: Option<i64>,
    /// The rank set in the profiled processes' environment (`RANK`, `OMPI_COMM_WORLD_RANK` or
    /// `SLURM_PROCID`: the variable and its value), when the export records it.
    pub env_rank: Option<(String, u32)>,
    /// Earliest and latest timestamp of any event.
    pub first_ns: i64,
    pub last_ns: i64,
    /// The nsys version that wrote the export, when the file says.
    pub exporter_version: Option<String>,
    pub warnings: LoadWarnings,
    /// The format the trace was read from.
    pub format: TraceFormat,
    /// A PyTorch profiler trace's allocator events and metadata; `None` for nsys exports.
    pub torch: Option<TorchInfo>,
    /// An Nsight Compute report: the whole content of a trace opened from an `.ncu-rep` (which
    /// has no timeline), `None` otherwise.
    pub ncu: Option<std::sync::Arc<ncu::NcuReport>>,
    /// A JAX / XLA profile's own facts (XPlane), `None` for other formats.
    pub xla: Option<XlaInfo>,
    /// The parts the loader was asked to read ([`Needs::ALL`] for the window): the others are
    /// empty here whatever the file holds. A lean load ([`Needs::lean`]) is no timeline: its
    /// events are in file order, with no place and no tracks (`streams` empty, `threads` only
    /// for NVTX), and its kernels have only their times and names (the other columns empty).
    pub loaded: Needs,
}

impl Trace {
    /// Number of timeline events (GPU ops, API calls, NVTX, OS runtime).
    pub fn event_count(&self) -> usize {
        self.kernels.spans.len()
            + self.memcpys.spans.len()
            + self.memsets.spans.len()
            + self.graphs.spans.len()
            + self.api_calls.spans.len()
            + self.nvtx.spans.len()
            + self.osrt.spans.len()
    }

    /// Name of a string id.
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// Name of a string id, shared with the trace rather than copied (see [`StringTable::shared`]).
    pub fn shared_str(&self, id: StrId) -> std::sync::Arc<str> {
        self.strings.shared(id)
    }

    pub fn gpu(&self, device: u32) -> Option<&GpuInfo> {
        self.gpus.iter().find(|g| g.device == device)
    }

    /// Human title of a GPU, e.g. "GPU 0 · NVIDIA H100 80GB HBM3".
    pub fn gpu_title(&self, device: u32) -> String {
        match self.gpu(device) {
            Some(g) if !g.name.is_empty() => format!("{} {device} · {}", g.kind.label(), g.name),
            Some(g) => format!("{} {device}", g.kind.label()),
            _ => format!("GPU {device}"),
        }
    }

    pub fn process_name(&self, pid: u32) -> &str {
        self.processes
            .iter()
            .find(|p| p.pid == pid)
            .map_or("", |p| self.str(p.name))
    }

    /// The time that views count from: an nsys export's session start (0), a PyTorch trace's first
    /// event (its times count from an epoch).
    pub fn time_origin_ns(&self) -> i64 {
        match self.format {
            TraceFormat::NsysSqlite | TraceFormat::NsightCompute | TraceFormat::XPlane => 0,
            TraceFormat::Kineto => self.first_ns,
        }
    }

    /// First start and last end of any GPU operation (kernel, copy, memset), `None` without any.
    pub fn gpu_span(&self) -> Option<(i64, i64)> {
        let tables = [
            &self.kernels.spans,
            &self.memcpys.spans,
            &self.memsets.spans,
        ];
        let first = tables
            .iter()
            .filter_map(|s| s.start_ns.iter().min())
            .min()?;
        let last = tables.iter().filter_map(|s| s.end_ns.iter().max()).max()?;
        Some((*first, *last))
    }

    /// Devices that ran anything, ascending.
    pub fn devices(&self) -> Vec<u32> {
        let mut d: Vec<u32> = self.streams.iter().map(|s| s.key.device).collect();
        d.dedup();
        d.sort_unstable();
        d.dedup();
        d
    }
}
