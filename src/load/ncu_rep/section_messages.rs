//! The protobuf 2 messages of an Nsight Compute report's sections (package
//! `NV.Profiler.Messages`): a section's layout as its section file gives it (header, bodies of
//! tables, charts, rooflines, grids and ncu-ui's own widgets, metric entries with their
//! architecture and collection-scope filters), written by field number as in [`super::messages`],
//! which re-exports them.

use bytes::Bytes;
use prost::Message;

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
pub struct SectionHotspotTable {
    #[prost(string, optional, tag = "1")]
    pub label: Option<String>,
    #[prost(message, optional, tag = "3")]
    pub metric: Option<SectionMetric>,
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
    /// Source Counters' hotspot tables ("Most Instructions Executed"): a label and a metric.
    #[prost(message, optional, tag = "7")]
    pub hotspot_table: Option<SectionHotspotTable>,
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
    #[prost(message, optional, tag = "106")]
    pub memory_l1tex_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "107")]
    pub memory_l2_cache_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "108")]
    pub nvlink_topology: Option<SectionLabelled>,
    #[prost(message, optional, tag = "111")]
    pub memory_l2_evict_table: Option<SectionLabelled>,
    #[prost(message, optional, tag = "112")]
    pub numa_table: Option<SectionLabelled>,
    /// The architectures the item is meant for (none: all): Occupancy's "Impact of Varying
    /// Block Barriers" chart is for SM 9.0 and later.
    #[prost(message, optional, tag = "200")]
    pub filter: Option<ArchFilter>,
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
    /// The source view's column groups (`group_l1`, `group_warp_stall` …): a section that has
    /// them is a source view's (Source Counters).
    #[prost(bytes = "bytes", repeated, tag = "12")]
    pub source_groups: Vec<Bytes>,
    /// Source Counters: metrics of the source view, printed with the header's. Reports of ncu
    /// before 2024 keep them in `metrics` (a section with source groups and no field 13).
    #[prost(message, optional, tag = "13")]
    pub source_metrics: Option<SectionMetrics>,
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
