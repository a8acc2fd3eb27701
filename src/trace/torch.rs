//! What a PyTorch profiler (Kineto) trace holds beyond the events every format shares: its
//! allocator events (`[memory]`), the distributed setup and the profiler's own metadata. The
//! operators, annotations and Python frames themselves are ranges in [`super::NvtxRanges`].

/// `[memory]` instant events (`profile_memory=True`): one per allocation (positive `bytes`) or
/// free (negative), sorted by time.
#[derive(Debug, Default, Clone)]
pub struct TorchMemoryEvents {
    pub time_ns: Vec<i64>,
    /// Thread that allocated, as a `globalTid` (pid << 24 | tid).
    pub global_tid: Vec<i64>,
    pub bytes: Vec<i64>,
    /// `Device Type`: 0 CPU, 1 CUDA (c10's `DeviceType`).
    pub device_type: Vec<u8>,
    /// `Device Id`, -1 for the CPU.
    pub device_id: Vec<i16>,
}

impl TorchMemoryEvents {
    pub const CPU: u8 = 0;
    pub const CUDA: u8 = 1;

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }
}

/// The PyTorch side of a Kineto trace.
#[derive(Debug, Default, Clone)]
pub struct TorchInfo {
    pub memory: TorchMemoryEvents,
    /// `distributedInfo.rank` / `world_size` / `backend`, when the trace has them.
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub backend: Option<String>,
    /// `baseTimeNanoseconds`: the UTC time (ns) that the trace's `ts` values count from.
    pub base_time_ns: Option<i64>,
    /// `schemaVersion`.
    pub schema_version: Option<i64>,
    /// The collective arguments PyTorch writes on `record_param_comms` (and on NCCL kernels):
    /// by `External id`, ascending; several rows may share an id (the op and its kernel).
    pub collective_calls: Vec<CollectiveCall>,
    /// The trace's capture options as written (`record_shapes`, `profile_memory`, `with_stack`,
    /// CUDA versions …), as (key, value) text in file order.
    pub metadata: Vec<(String, String)>,
}

/// One operator's or kernel's collective arguments (`Collective name`, `Seq`, `Process Group
/// Name`), found by the `External id` the operator shares with the kernels it launched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CollectiveCall {
    pub external_id: u64,
    /// `allreduce`, `broadcast`, …; empty where not written.
    pub collective: String,
    /// The collective's sequence number in its process group, where written.
    pub seq: Option<u64>,
    pub group: String,
}

/// The format a trace was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceFormat {
    /// `nsys export --type=sqlite` (or an `.nsys-rep` converted to one).
    #[default]
    NsysSqlite,
    /// A PyTorch profiler / Kineto Chrome trace (`.pt.trace.json`, gzipped or not).
    Kineto,
    /// An Nsight Compute report (`.ncu-rep`, gzipped or zstd): profiled kernels, no timeline.
    NsightCompute,
    /// A JAX / XLA profile (`.xplane.pb`, what `jax.profiler.trace` writes).
    XPlane,
}

impl TraceFormat {
    pub fn label(self) -> &'static str {
        match self {
            TraceFormat::NsysSqlite => "Nsight Systems export",
            TraceFormat::Kineto => "PyTorch profiler trace",
            TraceFormat::NsightCompute => "Nsight Compute report",
            TraceFormat::XPlane => "JAX / XLA profile (XPlane)",
        }
    }
}
