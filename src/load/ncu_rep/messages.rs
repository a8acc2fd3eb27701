//! The protobuf 2 messages of an Nsight Compute report (package `NV.Profiler.Messages`), written
//! here by field number from the report format's public description (Nsight Compute
//! Customization Guide, "Report File Format", version 7) and what real reports hold. Only the
//! fields Sightline reads are declared: prost skips the others, so a newer ncu's fields cost
//! nothing. `required` fields are optional here — a damaged report gets defaults, not a panic.
//!
//! Large fields that are not needed to list the workloads (the sections' layout, the per-
//! instruction source data) are declared as bytes: decoding from a `Bytes` buffer slices them
//! without copying, and they are decoded (sections) or dropped (source) afterwards.

use bytes::Bytes;
use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct FileHeader {
    #[prost(uint32, optional, tag = "1")]
    pub version: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct BlockHeader {
    #[prost(uint32, optional, tag = "1")]
    pub num_sources: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub num_results: Option<u32>,
    #[prost(message, optional, tag = "3")]
    pub session_details: Option<SessionDetails>,
    #[prost(message, optional, tag = "4")]
    pub string_table: Option<StringTable>,
    #[prost(uint32, optional, tag = "5")]
    pub payload_size: Option<u32>,
    #[prost(message, optional, tag = "6")]
    pub process: Option<ProcessInfo>,
}

#[derive(Clone, PartialEq, Message)]
pub struct StringTable {
    #[prost(string, repeated, tag = "1")]
    pub strings: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessInfo {
    #[prost(uint32, optional, tag = "1")]
    pub process_id: Option<u32>,
    #[prost(string, optional, tag = "2")]
    pub hostname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub process_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SessionDetails {
    #[prost(uint32, optional, tag = "1")]
    pub process_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub creation_time: Option<u64>,
    #[prost(message, optional, tag = "3")]
    pub host_system: Option<SystemInfo>,
    #[prost(message, optional, tag = "4")]
    pub target_system: Option<SystemInfo>,
    #[prost(message, repeated, tag = "8")]
    pub versions: Vec<VersionInfo>,
    #[prost(message, optional, tag = "9")]
    pub executable: Option<ExecutableSettings>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(string, optional, tag = "1")]
    pub os_name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub build: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub processor: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub architecture: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub computer_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct VersionInfo {
    #[prost(string, optional, tag = "1")]
    pub provider: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub version: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ExecutableSettings {
    #[prost(string, optional, tag = "1")]
    pub executable_path: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub work_directory: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub arguments: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Uint64x3 {
    #[prost(uint64, optional, tag = "1")]
    pub x: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub y: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub z: Option<u64>,
}

impl Uint64x3 {
    pub fn xyz(&self) -> [u64; 3] {
        [
            self.x.unwrap_or(0),
            self.y.unwrap_or(0),
            self.z.unwrap_or(0),
        ]
    }
}

/// A metric value of one of the kinds ncu writes (one field is set).
#[derive(Clone, PartialEq, Message)]
pub struct MetricValue {
    #[prost(string, optional, tag = "1")]
    pub string_value: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub float_value: Option<f32>,
    #[prost(double, optional, tag = "3")]
    pub double_value: Option<f64>,
    #[prost(uint32, optional, tag = "4")]
    pub uint32_value: Option<u32>,
    #[prost(uint64, optional, tag = "5")]
    pub uint64_value: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct MetricListElement {
    #[prost(message, optional, tag = "1")]
    pub correlation_id: Option<MetricValue>,
    #[prost(message, optional, tag = "2")]
    pub element_value: Option<MetricValue>,
}

#[derive(Clone, PartialEq, Message)]
pub struct MetricResult {
    #[prost(uint32, optional, tag = "1")]
    pub name_id: Option<u32>,
    #[prost(message, optional, tag = "2")]
    pub metric_value: Option<MetricValue>,
    /// The list's elements, each a `MetricListElement` left encoded: most lists are decoded
    /// at once, long ones (per-instruction values) only when asked for.
    #[prost(bytes = "bytes", repeated, tag = "3")]
    pub metric_value_list: Vec<Bytes>,
}

/// One profiled workload.
#[derive(Clone, PartialEq, Message)]
pub struct ProfileResult {
    #[prost(uint32, optional, tag = "1")]
    pub thread_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub api_call_id: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub kernel_id: Option<u64>,
    #[prost(string, optional, tag = "5")]
    pub kernel_mangled_name: Option<String>,
    #[prost(string, optional, tag = "6")]
    pub kernel_function_name: Option<String>,
    #[prost(string, optional, tag = "7")]
    pub kernel_demangled_name: Option<String>,
    #[prost(message, optional, tag = "10")]
    pub grid_size: Option<Uint64x3>,
    #[prost(message, optional, tag = "11")]
    pub block_size: Option<Uint64x3>,
    /// Each `MetricResult`, left encoded: read by `metric_result::parse`.
    #[prost(bytes = "bytes", repeated, tag = "13")]
    pub metric_results: Vec<Bytes>,
    #[prost(uint64, optional, tag = "14")]
    pub creation_time: Option<u64>,
    /// Each section's definition, left encoded: ncu repeats the same ones for every workload.
    #[prost(bytes = "bytes", repeated, tag = "17")]
    pub sections: Vec<Bytes>,
    #[prost(message, repeated, tag = "19")]
    pub rule_results: Vec<RuleResult>,
    #[prost(message, optional, tag = "21")]
    pub nvtx: Option<NvtxState>,
    #[prost(uint32, optional, tag = "22")]
    pub context_id: Option<u32>,
    #[prost(uint32, optional, tag = "23")]
    pub stream_id: Option<u32>,
    /// The collection scope the workload was profiled in, when not a kernel launch's (2 in
    /// a report made with `--graph-profiling graph`).
    #[prost(uint32, optional, tag = "29")]
    pub collection_scope: Option<u32>,
}

// --- Sections: in section_messages.rs ------------------------------------------------

pub use super::section_messages::*;

// --- Rules --------------------------------------------------------------------------------

#[derive(Clone, PartialEq, Message)]
pub struct RuleMessage {
    #[prost(string, optional, tag = "1")]
    pub message: Option<String>,
    #[prost(uint32, optional, tag = "2")]
    pub kind: Option<u32>,
    #[prost(string, optional, tag = "4")]
    pub title: Option<String>,
}

/// The metric a rule points at (written by ncu 2023 and later).
#[derive(Clone, PartialEq, Message)]
pub struct RuleFocusMetric {
    #[prost(string, optional, tag = "2")]
    pub metric_name: Option<String>,
    #[prost(double, optional, tag = "3")]
    pub metric_value: Option<f64>,
}

/// A rule's estimated speedup (written by ncu 2023 and later).
#[derive(Clone, PartialEq, Message)]
pub struct RuleSpeedup {
    #[prost(uint32, optional, tag = "1")]
    pub kind: Option<u32>,
    #[prost(double, optional, tag = "2")]
    pub value: Option<f64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RuleBodyItem {
    #[prost(message, optional, tag = "1")]
    pub message: Option<RuleMessage>,
    #[prost(message, optional, tag = "8")]
    pub focus_metric: Option<RuleFocusMetric>,
    #[prost(message, optional, tag = "10")]
    pub speedup: Option<RuleSpeedup>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RuleBody {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<RuleBodyItem>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RuleResult {
    #[prost(string, optional, tag = "1")]
    pub identifier: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub display_name: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub body: Option<RuleBody>,
    #[prost(string, optional, tag = "4")]
    pub section_identifier: Option<String>,
}

// --- NVTX ---------------------------------------------------------------------------------

#[derive(Clone, PartialEq, Message)]
pub struct NvtxPushPopRange {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxStartEndRange {
    #[prost(uint64, optional, tag = "1")]
    pub id: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxPushPopDomain {
    #[prost(uint64, optional, tag = "1")]
    pub id: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub stack: Vec<NvtxPushPopRange>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxStartEndDomain {
    #[prost(uint64, optional, tag = "1")]
    pub id: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub ranges: Vec<NvtxStartEndRange>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxDomainInfo {
    #[prost(uint64, optional, tag = "1")]
    pub id: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxThread {
    #[prost(uint32, optional, tag = "1")]
    pub tid: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub push_pop_domains: Vec<NvtxPushPopDomain>,
}

#[derive(Clone, PartialEq, Message)]
pub struct NvtxState {
    #[prost(message, repeated, tag = "1")]
    pub domains: Vec<NvtxDomainInfo>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<NvtxThread>,
    #[prost(message, repeated, tag = "3")]
    pub start_end_domains: Vec<NvtxStartEndDomain>,
    #[prost(uint64, optional, tag = "4")]
    pub default_domain: Option<u64>,
}
