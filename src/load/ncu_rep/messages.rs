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
    #[prost(message, repeated, tag = "13")]
    pub metric_results: Vec<MetricResult>,
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

// --- Sections -----------------------------------------------------------------------------

#[derive(Clone, PartialEq, Message)]
pub struct SectionMetricOption {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub label: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub filter: Option<ArchFilter>,
}

/// The architectures (SM versions: 90 for compute capability 9.0) a section entry applies
/// to: one range, or a list of them.
#[derive(Clone, PartialEq, Message)]
pub struct ArchFilter {
    #[prost(uint32, optional, tag = "1")]
    pub min_arch: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub max_arch: Option<u32>,
    #[prost(message, repeated, tag = "3")]
    pub ranges: Vec<ArchRange>,
    /// The collection scopes the entry is meant for (none: all).
    #[prost(message, optional, tag = "4")]
    pub scopes: Option<ScopeFilter>,
}

/// Collection scopes (1: a kernel launch).
#[derive(Clone, PartialEq, Message)]
pub struct ScopeFilter {
    #[prost(uint32, repeated, packed = "false", tag = "1")]
    pub scopes: Vec<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ArchRange {
    #[prost(uint32, optional, tag = "1")]
    pub min_arch: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub max_arch: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionMetric {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub label: Option<String>,
    #[prost(bool, optional, tag = "4")]
    pub show_instances: Option<bool>,
    #[prost(string, optional, tag = "5")]
    pub unit: Option<String>,
    /// The architectures the entry is meant for (none: all).
    #[prost(message, optional, tag = "6")]
    pub filter: Option<ArchFilter>,
    #[prost(message, repeated, tag = "7")]
    pub options: Vec<SectionMetricOption>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionTable {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(uint32, optional, tag = "2")]
    pub rows: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub columns: Option<u32>,
    #[prost(message, repeated, tag = "5")]
    pub metrics: Vec<SectionMetric>,
}

/// Bar and line charts: a label and metrics (the bar chart's are field 5, the line chart's 4).
#[derive(Clone, PartialEq, Message)]
pub struct SectionBarChart {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, repeated, tag = "5")]
    pub metrics: Vec<SectionMetric>,
    /// How the bars are sorted: 1 by value (a section file's `SortKey: ByValue`; absent: by
    /// name), in direction 2 descending (`SortDirection: Descending`), else ascending. Read
    /// from the shared reports, where the charts ncu prints by value carry 1 and 2 and the
    /// others neither.
    #[prost(uint32, optional, tag = "7")]
    pub sort_key: Option<u32>,
    #[prost(uint32, optional, tag = "8")]
    pub sort_direction: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionHistogramChart {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, optional, tag = "4")]
    pub metric: Option<SectionMetric>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionLineChart {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub metrics: Vec<SectionMetric>,
    /// The metrics whose values the chart marks on its x axis (the occupancy charts: the
    /// launch's registers per thread, block size, shared memory per block …).
    #[prost(message, optional, tag = "5")]
    pub highlight: Option<SectionMetrics>,
}

/// The memory tables and chart and other widgets: only their label is read.
#[derive(Clone, PartialEq, Message)]
pub struct SectionLabelled {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionBodyItem {
    #[prost(message, optional, tag = "1")]
    pub table: Option<SectionTable>,
    #[prost(message, optional, tag = "2")]
    pub bar_chart: Option<SectionBarChart>,
    #[prost(message, optional, tag = "3")]
    pub histogram_chart: Option<SectionHistogramChart>,
    #[prost(message, optional, tag = "4")]
    pub line_chart: Option<SectionLineChart>,
    /// Items laid out side by side (the throughput breakdowns, the pipe utilization charts).
    #[prost(message, optional, tag = "5")]
    pub container: Option<SectionContainer>,
    #[prost(message, optional, tag = "6")]
    pub roofline_chart: Option<SectionRooflineChart>,
    #[prost(message, optional, tag = "8")]
    pub metric_grid: Option<SectionMetricGrid>,
    #[prost(message, optional, tag = "101")]
    pub memory_shared_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "102")]
    pub memory_l1_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "103")]
    pub memory_l2_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "104")]
    pub memory_device_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "105")]
    pub memory_chart: Option<SectionLabelled>,
    #[prost(message, optional, tag = "108")]
    pub nvlink_topology: Option<SectionLabelled>,
}

/// A roofline chart: its rooflines (peak work and traffic) and achieved values, each a
/// labelled set of metrics.
#[derive(Clone, PartialEq, Message)]
pub struct SectionRooflineChart {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, repeated, tag = "4")]
    pub rooflines: Vec<SectionRoofline>,
    #[prost(message, repeated, tag = "5")]
    pub achieved: Vec<SectionRoofline>,
}

/// A roofline (peak work, peak traffic) or an achieved value (work, traffic), and its label.
#[derive(Clone, PartialEq, Message)]
pub struct SectionRoofline {
    #[prost(message, optional, tag = "1")]
    pub work: Option<RooflineQuantity>,
    #[prost(message, optional, tag = "2")]
    pub traffic: Option<RooflineQuantity>,
    #[prost(message, optional, tag = "3")]
    pub options: Option<SectionLabelled>,
}

/// A quantity of a roofline: one metric, or metrics per cycle with the cycles' frequency.
#[derive(Clone, PartialEq, Message)]
pub struct RooflineQuantity {
    #[prost(message, optional, tag = "2")]
    pub metric: Option<SectionMetric>,
    #[prost(message, optional, tag = "3")]
    pub per_cycle: Option<RooflinePerCycle>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RooflinePerCycle {
    #[prost(message, repeated, tag = "1")]
    pub metrics: Vec<SectionMetric>,
    #[prost(message, optional, tag = "2")]
    pub frequency: Option<SectionMetric>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionContainer {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<SectionBodyItem>,
}

/// A table of counters by rollup (the Workload Distribution): each row a counter, each
/// column a suffix (`.avg`, `.min`, …) that makes it a metric.
#[derive(Clone, PartialEq, Message)]
pub struct SectionMetricGrid {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub columns: Option<SectionGridColumns>,
    #[prost(message, optional, tag = "3")]
    pub rows: Option<SectionMetrics>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionGridColumns {
    #[prost(message, repeated, tag = "1")]
    pub columns: Vec<SectionGridColumn>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionGridColumn {
    #[prost(string, optional, tag = "1")]
    pub suffix: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub label: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionBody {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<SectionBodyItem>,
    #[prost(string, optional, tag = "2")]
    pub display_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionHeader {
    #[prost(uint32, optional, tag = "1")]
    pub rows: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub metrics: Vec<SectionMetric>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SectionMetrics {
    #[prost(message, repeated, tag = "1")]
    pub metrics: Vec<SectionMetric>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Section {
    #[prost(string, optional, tag = "1")]
    pub identifier: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub display_name: Option<String>,
    #[prost(uint32, optional, tag = "3")]
    pub order: Option<u32>,
    #[prost(message, optional, tag = "4")]
    pub header: Option<SectionHeader>,
    #[prost(message, repeated, tag = "5")]
    pub body: Vec<SectionBody>,
    #[prost(message, optional, tag = "6")]
    pub metrics: Option<SectionMetrics>,
    #[prost(string, optional, tag = "7")]
    pub description: Option<String>,
    #[prost(message, optional, tag = "10")]
    pub metric_definitions: Option<MetricDefinitions>,
}

/// The derived metrics a section defines (`derived__…`), each an expression over others.
#[derive(Clone, PartialEq, Message)]
pub struct MetricDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub definitions: Vec<MetricDefinition>,
}

#[derive(Clone, PartialEq, Message)]
pub struct MetricDefinition {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub expression: Option<String>,
    /// The architectures the definition is limited to (a section file's `Filter`), kept
    /// encoded: only whether there is one is read.
    #[prost(bytes = "bytes", optional, tag = "3")]
    pub filter: Option<Bytes>,
}

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
