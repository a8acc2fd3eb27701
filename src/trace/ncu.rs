//! An Nsight Compute report: one record per profiled workload (a kernel launch that `ncu`
//! replayed and measured) with its names, place, launch shape, NVTX state, every metric ncu
//! collected, and the report's sections and rule results. Filled by `load::ncu_rep` (and the CSV
//! pages ncu writes), read by the views, the command line and the join to a timeline.
//!
//! Section definitions (the layout ncu-ui draws: which metrics, under which labels, in which
//! tables and charts) are the same for every workload of a report, and ncu writes them again
//! with each one: they are kept once here ([`NcuReport::sections`]) and each workload names the
//! ones it has.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::trace::LoadWarnings;

/// Index of a metric name in [`NcuReport::metric_names`].
pub type MetricId = u32;

/// Index of a section definition in [`NcuReport::sections`].
pub type SectionId = u32;

/// A whole report.
#[derive(Debug, Default)]
pub struct NcuReport {
    pub path: PathBuf,
    /// The report file format's version (`FileHeader.Version`: 7 in 2020.2 and later, when the
    /// file says).
    pub format_version: u32,
    pub session: NcuSession,
    /// Every metric name any workload has, in the order first seen.
    pub metric_names: Vec<String>,
    metric_ids: HashMap<String, MetricId>,
    /// The unit of a metric's values, where the source says (ncu's CSV pages print one per
    /// metric: `us`, `Gbyte/s`, `%`; a report's values are in base units and leave this empty).
    pub units: HashMap<MetricId, String>,
    /// Metrics the report itself marks as having no unit (ncu prints none for them, whatever
    /// their name says): instanced metrics keyed by strings (`sass__inst_executed_per_opcode`:
    /// a count per opcode) and derived metrics whose section limits their definition to some
    /// architectures. See `analysis::ncu::units::metric_unit`.
    pub unitless: HashSet<MetricId>,
    /// Section definitions, each kept once.
    pub sections: Vec<NcuSection>,
    pub workloads: Vec<NcuWorkload>,
    pub warnings: LoadWarnings,
}

/// What the report says of the session that made it.
#[derive(Debug, Default, Clone)]
pub struct NcuSession {
    /// Seconds since the Unix epoch when the report was created.
    pub created_unix_s: Option<u64>,
    pub host: Option<NcuSystem>,
    pub target: Option<NcuSystem>,
    /// Each profiled process: pid, host name and executable path.
    pub processes: Vec<NcuProcess>,
    /// `(provider, version)` pairs, e.g. ("Nsight Compute Target", "2025.3.1.0 …").
    pub versions: Vec<(String, String)>,
    /// The command line ncu was started with, when the report keeps it.
    pub command_line: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct NcuSystem {
    pub os_name: String,
    pub build: String,
    pub processor: String,
    pub architecture: String,
    pub computer_name: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct NcuProcess {
    pub pid: u32,
    pub host_name: String,
    /// The executable's path as ncu recorded it (`/usr/bin/python3.12`).
    pub executable: String,
}

impl NcuProcess {
    /// The executable's file name, as ncu's pages print "Process Name" (`python3.12`).
    pub fn name(&self) -> &str {
        self.executable
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&self.executable)
    }
}

/// ncu's collection scope of a kernel launch, the scope of a workload whose report names none.
pub const LAUNCH_SCOPE: u32 = 1;

/// The prefix of a metric group's name: a metric whose value lists, comma-separated, the
/// metrics of a view its section does not name (`group:memory__shared_table`: ncu-ui's shared
/// memory table; `group:smsp__pcsamp_warp_stall_reasons`: the sampled warp stall reasons).
pub const GROUP_PREFIX: &str = "group:";

/// One profiled workload (ncu's "result"; a kernel launch).
#[derive(Debug, Default, Clone)]
pub struct NcuWorkload {
    /// ncu's ID: the workload's index in the report, from 0.
    pub id: u32,
    /// Index in [`NcuSession::processes`], when the report names the process.
    pub process: Option<u32>,
    pub pid: u32,
    pub thread_id: u32,
    pub api_call_id: u64,
    pub kernel_id: u64,
    pub mangled_name: String,
    pub function_name: String,
    pub demangled_name: String,
    pub context: u32,
    pub stream: u32,
    /// The collection scope ncu profiled the workload in, when the report says (none: a
    /// kernel launch, [`LAUNCH_SCOPE`]).
    pub scope: Option<u32>,
    /// Grid size in blocks (x, y, z).
    pub grid: [u64; 3],
    /// Block size in threads (x, y, z).
    pub block: [u64; 3],
    /// Nanoseconds since the Unix epoch when the workload was profiled, when recorded.
    pub creation_time: Option<u64>,
    pub nvtx: NcuNvtx,
    /// Metric values, sorted by [`MetricId`].
    pub metrics: Vec<(MetricId, MetricValue)>,
    /// The instance values of metrics that also have a single value (ncu writes both for the
    /// launch and device attributes and some ratios, e.g. `launch__grid_size`: the value and
    /// one instance per correlation id), sorted by [`MetricId`]. A metric of instances only is
    /// a [`MetricValue::List`] in `metrics`. Long lists (the Source Counters' per-instruction
    /// values) stay in the file until asked for: [`InstanceList::Deferred`].
    pub value_instances: Vec<(MetricId, InstanceList)>,
    /// The sections this workload has, in file order.
    pub sections: Vec<SectionId>,
    pub rules: Vec<NcuRule>,
}

impl NcuWorkload {
    /// The name ncu shows by default: the demangled name, else the mangled one, else the
    /// function name.
    pub fn display_name(&self) -> &str {
        [
            &self.demangled_name,
            &self.mangled_name,
            &self.function_name,
        ]
        .into_iter()
        .find(|n| !n.is_empty())
        .map(|s| s.as_str())
        .unwrap_or("")
    }

    /// The per-instance values of a metric that has an aggregate value too, read or left in
    /// the file (`load::ncu_rep::read_instances` reads those).
    pub fn instances_of(&self, id: MetricId) -> Option<&InstanceList> {
        self.value_instances
            .binary_search_by_key(&id, |(m, _)| *m)
            .ok()
            .map(|i| &self.value_instances[i].1)
    }

    pub fn metric(&self, id: MetricId) -> Option<&MetricValue> {
        self.metrics
            .binary_search_by_key(&id, |(m, _)| *m)
            .ok()
            .map(|i| &self.metrics[i].1)
    }

    /// A metric's instance values: the list of an instanced metric, or the instances ncu
    /// wrote beside a single value; `None` when they are still encoded (in memory or in the
    /// file: `load::ncu_rep::read_instances` reads them).
    pub fn instances(&self, id: MetricId) -> Option<&[MetricInstance]> {
        if let Some(MetricValue::List(list)) = self.metric(id) {
            return Some(list);
        }
        match self.instances_of(id) {
            Some(InstanceList::Read(list)) => Some(list),
            Some(InstanceList::Packed { .. } | InstanceList::Deferred(_)) => None,
            None => Some(&[]),
        }
    }
}

/// Instance values written beside a metric's single value.
#[derive(Debug, Clone, PartialEq)]
pub enum InstanceList {
    Read(Vec<MetricInstance>),
    /// Kept as the report encodes them (a run of list elements, `count` of them), decoded when
    /// asked for (`load::ncu_rep::read_instances`): shorter lists beside a value, which no page
    /// but the Source page and a few charts reads.
    Packed {
        bytes: bytes::Bytes,
        count: u32,
    },
    /// Left in the file: where they are, to be read when asked for.
    Deferred(DeferredInstances),
}

impl InstanceList {
    /// How many instances there are (known without reading deferred ones).
    pub fn len(&self) -> usize {
        match self {
            InstanceList::Read(list) => list.len(),
            InstanceList::Packed { count, .. } => *count as usize,
            InstanceList::Deferred(d) => d.count as usize,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a long instance list sits in the report: `len` bytes at `offset` of the report's
/// (decompressed) byte stream, a run of the metric's list elements, `count` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeferredInstances {
    pub offset: u64,
    pub len: u32,
    pub count: u32,
}

/// A metric's value as ncu stored it: the kind is the file's, not ours.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValue {
    Str(String),
    F32(f32),
    F64(f64),
    U32(u32),
    U64(u64),
    /// An instanced metric: one value per instance (an SM, a pipe, a PC …), each with its
    /// correlation id when ncu wrote one.
    List(Vec<MetricInstance>),
    /// A value of a kind this reader does not know (a newer ncu's).
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetricInstance {
    pub correlation: Option<ScalarValue>,
    pub value: ScalarValue,
}

/// One value of an instanced metric.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Str(String),
    F32(f32),
    F64(f64),
    U32(u32),
    U64(u64),
    Unknown,
}

impl ScalarValue {
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ScalarValue::F32(v) => Some(f64::from(*v)),
            ScalarValue::F64(v) => Some(*v),
            ScalarValue::U32(v) => Some(f64::from(*v)),
            ScalarValue::U64(v) => Some(*v as f64),
            ScalarValue::Str(_) | ScalarValue::Unknown => None,
        }
    }
}

impl MetricValue {
    /// The value as a number, for the scalar kinds.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            MetricValue::F32(v) => Some(f64::from(*v)),
            MetricValue::F64(v) => Some(*v),
            MetricValue::U32(v) => Some(f64::from(*v)),
            MetricValue::U64(v) => Some(*v as f64),
            MetricValue::Str(_) | MetricValue::List(_) | MetricValue::Unknown => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            MetricValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// The NVTX state when the workload was launched (recorded with `ncu --nvtx`).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NcuNvtx {
    /// Push/pop ranges open on the launching thread (the workload's `thread_id`), per domain,
    /// outermost first.
    pub push_pop: Vec<NvtxDomainStack>,
    /// Start/end ranges open at the launch, per domain.
    pub start_end: Vec<NvtxDomainStack>,
    /// The thread the push/pop stacks belong to.
    pub thread: Option<u32>,
}

impl NcuNvtx {
    /// No NVTX state recorded for the launch (a report made without `--nvtx`).
    pub fn is_empty(&self) -> bool {
        self.push_pop.is_empty() && self.start_end.is_empty()
    }

    /// Some range open at the launch (a report made with `--nvtx` keeps its threads' and
    /// domains' state even where every stack is empty; ncu's pages print no NVTX columns then).
    pub fn has_ranges(&self) -> bool {
        self.push_pop
            .iter()
            .chain(&self.start_end)
            .any(|d| !d.ranges.is_empty())
    }
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct NvtxDomainStack {
    /// The domain's name; `None` for the default domain.
    pub domain: Option<String>,
    pub ranges: Vec<String>,
}

/// A section definition: what ncu-ui's Details page shows under one heading.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NcuSection {
    /// `SpeedOfLight`, `LaunchStats`, `Occupancy` …
    pub identifier: String,
    /// `GPU Speed Of Light Throughput` …
    pub display_name: String,
    pub order: u32,
    pub description: String,
    /// The metrics of the section's header table, in order.
    pub header: Vec<SectionMetric>,
    /// Rows of the header table (ncu lays its metrics out in two columns).
    pub header_rows: u32,
    pub bodies: Vec<SectionBody>,
    /// Metrics the section collects beside its header and body (its own metrics, and the Source
    /// Counters' source-view metrics): ncu's details page prints them with the header's; ncu-ui
    /// does not draw them in the section.
    pub extra_metrics: Vec<SectionMetric>,
    /// The Source Counters' source-view metrics, in the order of the Source page's columns.
    pub source_metrics: Vec<SectionMetric>,
}

impl NcuSection {
    /// The section's items meant for a workload of architecture `arch`, bodies in order.
    pub fn items_for(&self, arch: Option<u32>) -> impl Iterator<Item = &BodyItem> {
        self.bodies
            .iter()
            .flat_map(|b| &b.items)
            .filter(move |i| i.is_for(arch))
    }

    /// Whether one of the section's bodies has an item of `kind`.
    pub fn has_item(&self, kind: BodyItemKind) -> bool {
        self.bodies
            .iter()
            .flat_map(|b| &b.items)
            .any(|i| i.kind == kind)
    }
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct SectionBody {
    pub display_name: String,
    pub items: Vec<BodyItem>,
}

/// The order a section's item lists its metrics in: by metric name, or by value (a bar chart
/// the section sorts `ByValue`; ties in name order).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum ItemOrder {
    #[default]
    ByName,
    ValueAscending,
    ValueDescending,
}

/// One item of a section's body.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyItem {
    pub kind: BodyItemKind,
    pub label: String,
    pub metrics: Vec<SectionMetric>,
    /// Whether a roofline chart's item is an achieved value (not a roofline).
    pub achieved: bool,
    /// The order the item lists its metrics in.
    pub order: ItemOrder,
    /// A table's rows and columns, when it is one.
    pub rows: u32,
    pub columns: u32,
    /// A roofline item's two quantities as the section defines them (ncu-ui draws its point
    /// or ceiling from them).
    pub roofline: Option<RooflineSpec>,
    /// The architectures the item is meant for (inclusive ranges of SM versions; empty: all).
    pub archs: Vec<(u32, u32)>,
}

impl BodyItem {
    /// Whether the item is meant for a workload of architecture `arch` (SM version; unknown:
    /// yes).
    pub fn is_for(&self, arch: Option<u32>) -> bool {
        arch.is_none_or(|a| {
            self.archs.is_empty() || self.archs.iter().any(|&(lo, hi)| (lo..=hi).contains(&a))
        })
    }
}

/// A roofline's or an achieved value's work (operations per second) and traffic (bytes per
/// second).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RooflineSpec {
    pub work: RooflineQuantity,
    pub traffic: RooflineQuantity,
}

/// A quantity of a roofline: one metric's value, or the sum of metrics counted per cycle times
/// a frequency (cycles per second).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RooflineQuantity {
    pub metrics: Vec<SectionMetric>,
    pub frequency: Option<SectionMetric>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyItemKind {
    Table,
    BarChart,
    HistogramChart,
    LineChart,
    /// One roofline or achieved value of a roofline chart (work metrics, then traffic).
    Roofline,
    /// ncu-ui's memory tables and chart: one entry each, the metric group that lists their
    /// metrics (`group:memory__shared_table`, …; `analysis::ncu::groups`).
    MemoryTable,
    MemoryChart,
    /// ncu-ui's drawing of the GPU's NVLink connections (from the `nvlink__…` metrics).
    NvlinkTopology,
    /// ncu-ui's table of each GPU's NUMA affinities (from the `numa__…` metrics' instances).
    NumaTable,
    /// An unlabelled metric grid (the tensor roofline's operations by data type): a row per
    /// operation, its metrics labelled with the row's label, a column's suffix each, in name
    /// order.
    OperationGrid,
    /// An item kind this reader does not draw (its metrics are still listed).
    Other,
}

/// A metric as a section names it.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SectionMetric {
    pub name: String,
    pub label: String,
    /// The section gives the entry an empty label (`Label: ""`, ncu 2020–2022's Instruction
    /// Statistics): ncu prints no name for it, where an entry with no label prints its metric's.
    pub blank_label: bool,
    /// The unit the section asks for, when it overrides the metric's own.
    pub unit: String,
    pub show_instances: bool,
    /// The architectures the entry is meant for (inclusive ranges of SM versions; empty:
    /// all).
    pub archs: Vec<(u32, u32)>,
    /// The collection scopes the entry is meant for (empty: all): SpeedOfLight's "Waves Per
    /// SM" is for kernel launches ([`LAUNCH_SCOPE`]) only, not for a graph-profiling session.
    pub scopes: Vec<u32>,
    /// Alternatives by architecture: the first one the workload has is shown.
    pub options: Vec<(String, String)>,
    /// Beside each option, the architectures it is meant for (inclusive ranges of SM
    /// versions, `90` for compute capability 9.0; empty: the section says none).
    pub option_archs: Vec<Vec<(u32, u32)>>,
}

impl SectionMetric {
    /// Whether the entry is meant for a workload profiled in collection scope `scope`.
    pub fn is_for_scope(&self, scope: Option<u32>) -> bool {
        self.scopes.is_empty() || self.scopes.contains(&scope.unwrap_or(LAUNCH_SCOPE))
    }

    /// Whether the entry's own metric is meant for architecture `arch` (SM version).
    pub fn is_for(&self, arch: u32) -> bool {
        self.archs.is_empty() || self.archs.iter().any(|&(lo, hi)| (lo..=hi).contains(&arch))
    }

    /// The options meant for architecture `arch` (SM version), in the section's order.
    pub fn options_for(&self, arch: u32) -> impl Iterator<Item = &(String, String)> {
        self.options
            .iter()
            .zip(&self.option_archs)
            .filter_map(move |(o, ranges)| {
                ranges
                    .iter()
                    .any(|&(lo, hi)| (lo..=hi).contains(&arch))
                    .then_some(o)
            })
    }
}

/// The result of one of ncu's rules on a workload.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct NcuRule {
    /// `SOLBottleneck`, `AchievedOccupancy` …
    pub identifier: String,
    pub display_name: String,
    /// The section the rule belongs to (`SpeedOfLight`).
    pub section: String,
    pub messages: Vec<RuleMessage>,
    /// The rule's estimated speedup, when it gives one (its last message's, when several do).
    pub speedup: Option<RuleSpeedup>,
    /// The metrics the rule points at (metric name, value), when it names them.
    pub focus_metrics: Vec<(String, f64)>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub struct RuleMessage {
    pub text: String,
    /// The file's message type: 0 none, 1 information, 2 warning, 3 error, 4 optimisation
    /// (ncu 2025.3 prints them INF, WRN, ERR, OPT: `SOLFPRoofline` is 1 and printed INF).
    pub kind: u32,
    /// A short title ("Small Grid"), when the rule gives one.
    pub title: String,
    /// The estimated speedup the rule gives with this message, when it gives one.
    pub speedup: Option<RuleSpeedup>,
}

impl RuleMessage {
    /// The type as ncu prints it in the Details page ("OPT", "WRN" …).
    pub fn kind_label(&self) -> &'static str {
        match self.kind {
            2 => "WRN",
            3 => "ERR",
            4 => "OPT",
            _ => "INF",
        }
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct RuleSpeedup {
    /// 1: local (the part of the kernel the rule looks at), 2: global (the whole kernel).
    pub kind: u32,
    /// Percent of the kernel's duration the rule estimates could be saved.
    pub percent: f64,
}

impl RuleSpeedup {
    pub fn kind_label(&self) -> &'static str {
        match self.kind {
            1 => "local",
            2 => "global",
            _ => "",
        }
    }
}

impl NcuReport {
    pub fn new(path: PathBuf) -> Self {
        NcuReport {
            path,
            ..Default::default()
        }
    }

    /// The id of a metric name, adding it when new.
    pub fn intern_metric(&mut self, name: &str) -> MetricId {
        if let Some(&id) = self.metric_ids.get(name) {
            return id;
        }
        let id = self.metric_names.len() as MetricId;
        self.metric_names.push(name.to_string());
        self.metric_ids.insert(name.to_string(), id);
        id
    }

    /// A workload's SM version as section filters name architectures (`90` for compute
    /// capability 9.0), when the report says.
    pub fn sm_version(&self, workload: &NcuWorkload) -> Option<u32> {
        let major = self.number(workload, "device__attribute_compute_capability_major")?;
        let minor = self.number(workload, "device__attribute_compute_capability_minor")?;
        ((0.0..1e6).contains(&major) && (0.0..10.0).contains(&minor))
            .then(|| major as u32 * 10 + minor as u32)
    }

    /// The id of a metric name, when some workload has it.
    pub fn metric_id(&self, name: &str) -> Option<MetricId> {
        self.metric_ids.get(name).copied()
    }

    pub fn metric_name(&self, id: MetricId) -> &str {
        self.metric_names
            .get(id as usize)
            .map(|s| s.as_str())
            .unwrap_or("")
    }

    /// A workload's value of a metric, by name.
    pub fn value<'w>(&self, workload: &'w NcuWorkload, name: &str) -> Option<&'w MetricValue> {
        self.metric_id(name).and_then(|id| workload.metric(id))
    }

    /// A workload's value of a metric as a number, by name.
    pub fn number(&self, workload: &NcuWorkload, name: &str) -> Option<f64> {
        self.value(workload, name).and_then(MetricValue::as_f64)
    }

    pub fn section(&self, id: SectionId) -> Option<&NcuSection> {
        self.sections.get(id as usize)
    }

    /// A workload's sections in the order ncu shows them: by the sections' `Order`, then by
    /// name.
    pub fn sections_in_order(&self, workload: &NcuWorkload) -> Vec<&NcuSection> {
        let mut sections: Vec<&NcuSection> = workload
            .sections
            .iter()
            .filter_map(|&id| self.section(id))
            .collect();
        sections.sort_by(|a, b| (a.order, &a.display_name).cmp(&(b.order, &b.display_name)));
        sections
    }

    /// The process a workload ran in, when the report names it.
    pub fn process(&self, workload: &NcuWorkload) -> Option<&NcuProcess> {
        workload
            .process
            .and_then(|i| self.session.processes.get(i as usize))
    }
}
